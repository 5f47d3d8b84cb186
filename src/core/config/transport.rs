//! The keys of each transport: the server URL (`http://` or `https://`, its credentials kept
//! for redaction), static headers or a header hook, the stdio child's environment and stderr,
//! and the in-process server object.

use super::read::{describe_type, header_record, literal, non_empty_string, refuse, HeaderValue};
use super::{Headers, StderrMode};
use crate::core::error::Result;
use crate::core::raw::Raw;
use crate::core::url::shown_url;

pub(super) fn parse_headers(http: &Raw) -> Result<Headers> {
    let headers = match http {
        Raw::Undefined => return Ok(Headers::None),
        Raw::Object(_) => http.get("headers"),
        other => {
            return Err(refuse(format!(
                "mcp: 'http' must be an object with an optional 'headers' member, got {}",
                other.display()
            )))
        }
    };
    match headers {
        Raw::Undefined => Ok(Headers::None),
        Raw::Function => Ok(Headers::Hook),
        Raw::Object(members) => {
            let members = members.iter().map(|(name, value)| {
                let value = match value {
                    Raw::Undefined | Raw::Null => HeaderValue::Absent,
                    Raw::String(s) => HeaderValue::Text(s),
                    _ => HeaderValue::Other,
                };
                (name.as_str(), value)
            });
            // Values are secrets: the message names the header, never its value.
            header_record(members).map(Headers::Static).map_err(|name| {
                refuse(format!(
                    "mcp: 'http.headers' value of '{name}' must be a string"
                ))
            })
        }
        _ => Err(refuse(
            "mcp: 'http.headers' must be a record of header values or a (possibly async) function returning one"
                .into(),
        )),
    }
}

pub(super) fn parse_url(raw: &Raw) -> Result<String> {
    let url = non_empty_string(raw, "url")?;
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(refuse(format!(
            "mcp: 'url' must be an http:// or https:// URL, got '{}'",
            shown_url(&url)
        )));
    }
    Ok(url)
}

pub(super) fn check_server(server: &Raw) -> Result<()> {
    if let Raw::Object(_) = server {
        if matches!(server.get("connect"), Raw::Function) {
            return Ok(());
        }
    }
    Err(refuse(
        "mcp: 'server' must be an object with a connect(transport) method (an @modelcontextprotocol/sdk Server or McpServer)".into(),
    ))
}

pub(super) fn parse_env(value: &Raw) -> Result<Vec<(String, String)>> {
    let members = match value {
        Raw::Undefined => return Ok(Vec::new()),
        Raw::Object(members) => members,
        other => {
            return Err(refuse(format!(
                "mcp: 'env' must be a record of environment variable values, got {}",
                describe_type(other)
            )))
        }
    };
    let mut out = Vec::with_capacity(members.len());
    for (name, value) in members {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(refuse(format!(
                "mcp: 'env' has an invalid variable name '{name}'"
            )));
        }
        match value {
            Raw::Undefined => {}
            // Values are secrets: never echo them.
            Raw::String(s) if !s.contains('\0') => out.push((name.clone(), s.clone())),
            _ => {
                return Err(refuse(format!(
                    "mcp: 'env.{name}' must be a string without NUL characters"
                )))
            }
        }
    }
    Ok(out)
}

pub(super) fn parse_stderr(value: &Raw) -> Result<StderrMode> {
    literal(
        value,
        "stderr",
        &[
            ("inherit", StderrMode::Inherit),
            ("ignore", StderrMode::Ignore),
            ("pipe", StderrMode::Pipe),
        ],
        StderrMode::Inherit,
    )
}
