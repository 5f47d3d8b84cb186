//! Reads `cassette`: `{ path, mode?, ignore? }`, for a stdio or streamable HTTP source, each
//! refusal naming the key path.

use super::read::{describe_type, literal, only_known_keys, refuse};
use crate::core::cassette::{Ignore, Mode, Settings};
use crate::core::error::Result;
use crate::core::raw::Raw;

pub fn parse(raw: &Raw) -> Result<Option<Settings>> {
    let value = raw.get("cassette");
    let members = match value {
        Raw::Undefined => return Ok(None),
        Raw::Object(members) => members,
        other => {
            return Err(refuse(format!(
                "mcp: 'cassette' must be an object {{ path, mode?, ignore? }}, got {}",
                describe_type(other)
            )))
        }
    };
    only_known_keys("cassette", members, &["path", "mode", "ignore"])?;
    let path = match value.get("path") {
        Raw::String(p) if !p.is_empty() => p.clone(),
        other => {
            return Err(refuse(format!(
                "mcp: 'cassette.path' must be the path of the cassette file, got {}",
                describe_type(other)
            )))
        }
    };
    let mode = literal(
        value.get("mode"),
        "cassette.mode",
        &[
            ("record", Mode::Record),
            ("replay", Mode::Replay),
            ("auto", Mode::Auto),
        ],
        Mode::Auto,
    )?;
    Ok(Some(Settings {
        path,
        mode,
        ignore: ignore(value.get("ignore"))?,
    }))
}

/// `cassette.ignore`: `{ [tool]: pointer[] }`, each pointer `''` or starting with `/`.
fn ignore(value: &Raw) -> Result<Ignore> {
    let members = match value {
        Raw::Undefined => return Ok(Ignore::default()),
        Raw::Object(members) => members,
        other => {
            return Err(refuse(format!(
                "mcp: 'cassette.ignore' must be an object of tool names to lists of JSON pointers into their arguments, got {}",
                describe_type(other)
            )))
        }
    };
    let mut out = Vec::new();
    for (tool, paths) in members {
        let key = format!("cassette.ignore.{tool}");
        let Raw::Array(items) = paths else {
            return Err(refuse(format!(
                "mcp: '{key}' must be a list of JSON pointers, got {}",
                describe_type(paths)
            )));
        };
        let mut list = Vec::new();
        for item in items {
            match item {
                Raw::String(p) if p.starts_with('/') => list.push(p.clone()),
                other => {
                    return Err(refuse(format!(
                        "mcp: '{key}' holds {}, which is not a JSON pointer ('/name/0', ...)",
                        describe_type(other)
                    )))
                }
            }
        }
        out.push((tool.clone(), list));
    }
    Ok(Ignore(out))
}
