//! What the host offers to answer when a server asks back: `elicit`, `sample`, `roots`,
//! `maxInputRounds`, `tasks`, `asksOutsideCalls` and `serverLogs`, each absent by default (and then nothing is
//! offered: the client declares no capability). The checks of what a server then asks are
//! `core::asks`'s.

use super::read::{boolean, count, describe_type, flag, hook_object, refuse};
use crate::core::error::Result;
use crate::core::raw::Raw;
use serde_json::{Map, Value};

/// How many `input_required` rounds one call may take before it ends with an error.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;

/// The most messages and bytes one sampling request may carry to the host's model.
pub const DEFAULT_MAX_MESSAGES: u64 = 100;

pub const DEFAULT_MAX_SAMPLE_BYTES: u64 = 1_048_576;

#[derive(Debug, Clone, PartialEq)]
pub struct Elicit {
    pub form: bool,
    pub url: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Requests that carry `tools` (sampling with tool use) are admitted.
    pub tools: bool,
    pub max_messages: u64,
    pub max_bytes: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Roots {
    /// A fixed list, answered without calling the host.
    List(Vec<Value>),
    Hook,
}

/// The host's offer: `elicit`, `sample`, `roots`, `maxInputRounds`.
#[derive(Debug, Clone, PartialEq)]
pub struct Asks {
    pub elicit: Option<Elicit>,
    pub sample: Option<Sample>,
    pub roots: Option<Roots>,
    pub max_rounds: u32,
    /// `tasks`: a call may come back as a task, followed to its end (MCP Tasks).
    pub tasks: bool,
    /// `serverLogs`: the least severe level of the server's log messages the host hears.
    pub logs: Option<&'static str>,
    /// `asksOutsideCalls`: a 2025 server's own requests reach the hooks while none of the
    /// source's tool calls is in flight too (at connect, between calls).
    pub outside_calls: bool,
}

/// MCP's log levels, least severe first (RFC 5424's).
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

impl Default for Asks {
    fn default() -> Self {
        Self {
            elicit: None,
            sample: None,
            roots: None,
            max_rounds: DEFAULT_MAX_ROUNDS,
            tasks: false,
            logs: None,
            outside_calls: false,
        }
    }
}

/// A root as the specification has it: a `file://` URI and an optional name.
pub(crate) fn check_root(root: &Value) -> std::result::Result<(), String> {
    let uri = root.get("uri").and_then(Value::as_str);
    if !uri.is_some_and(|u| u.starts_with("file://")) {
        return Err("a root's uri must be a file:// URI".into());
    }
    if root.get("name").is_some_and(|n| !n.is_string()) {
        return Err("a root's name must be a string".into());
    }
    Ok(())
}

/// Reads `elicit`, `sample`, `roots`, `maxInputRounds`, `tasks` and `serverLogs`.
pub fn parse(raw: &Raw) -> Result<Asks> {
    let elicit = elicit(raw.get("elicit"))?;
    let sample = sample(raw.get("sample"))?;
    let roots = roots(raw.get("roots"))?;
    let max_rounds = match raw.get("maxInputRounds") {
        Raw::Undefined => DEFAULT_MAX_ROUNDS,
        Raw::Number(n) if *n >= 1.0 && *n <= 1000.0 && n.fract() == 0.0 => *n as u32,
        other => {
            return Err(refuse(format!(
                "mcp: maxInputRounds must be an integer from 1 to 1000, got {}",
                other.display()
            )))
        }
    };
    let tasks = boolean(raw.get("tasks"), "tasks", false)?;
    let outside_calls = boolean(raw.get("asksOutsideCalls"), "asksOutsideCalls", false)?;
    let logs = match raw.get("serverLogs") {
        Raw::Undefined => None,
        Raw::String(level) if LOG_LEVELS.contains(&level.as_str()) => {
            LOG_LEVELS.iter().copied().find(|l| l == level)
        }
        other => {
            return Err(refuse(format!(
                "mcp: serverLogs must be one of {}, got {}",
                LOG_LEVELS.join(", "),
                describe_type(other)
            )))
        }
    };
    Ok(Asks {
        elicit,
        sample,
        roots,
        max_rounds,
        tasks,
        outside_calls,
        logs,
    })
}

/// `elicit`: a function (form mode), or `{ handler, form?, url? }` offering at least one mode.
fn elicit(value: &Raw) -> Result<Option<Elicit>> {
    match value {
        Raw::Undefined => Ok(None),
        Raw::Function => Ok(Some(Elicit {
            form: true,
            url: false,
        })),
        Raw::Object(_) => {
            hook_object(value, "elicit", &["handler", "form", "url"])?;
            let form = flag(value, "elicit", "form", true)?;
            let url = flag(value, "elicit", "url", false)?;
            if !form && !url {
                return Err(refuse(
                    "mcp: elicit offers neither form nor url mode; set one, or leave elicit out"
                        .into(),
                ));
            }
            Ok(Some(Elicit { form, url }))
        }
        other => Err(refuse(format!(
            "mcp: elicit must be a function or {{ handler, form?, url? }}, got {}",
            describe_type(other)
        ))),
    }
}

/// `sample`: a function, or `{ handler, tools?, maxMessages?, maxBytes? }`.
fn sample(value: &Raw) -> Result<Option<Sample>> {
    match value {
        Raw::Undefined => Ok(None),
        Raw::Function => Ok(Some(Sample {
            tools: false,
            max_messages: DEFAULT_MAX_MESSAGES,
            max_bytes: DEFAULT_MAX_SAMPLE_BYTES,
        })),
        Raw::Object(_) => {
            hook_object(value, "sample", &["handler", "tools", "maxMessages", "maxBytes"])?;
            Ok(Some(Sample {
                tools: flag(value, "sample", "tools", false)?,
                max_messages: count(value, "sample", "maxMessages")?.unwrap_or(DEFAULT_MAX_MESSAGES),
                max_bytes: count(value, "sample", "maxBytes")?.unwrap_or(DEFAULT_MAX_SAMPLE_BYTES),
            }))
        }
        other => Err(refuse(format!(
            "mcp: sample must be a function or {{ handler, tools?, maxMessages?, maxBytes? }}, got {}",
            describe_type(other)
        ))),
    }
}

/// `roots`: a function, or a list of `{ uri, name? }` the specification accepts.
fn roots(value: &Raw) -> Result<Option<Roots>> {
    match value {
        Raw::Undefined => Ok(None),
        Raw::Function => Ok(Some(Roots::Hook)),
        Raw::Array(items) => {
            let mut list = Vec::with_capacity(items.len());
            for item in items {
                let root = plain_root(item).ok_or_else(|| {
                    refuse(
                        "mcp: roots must be a list of { uri, name? } objects or a function".into(),
                    )
                })?;
                check_root(&root).map_err(|why| refuse(format!("mcp: roots: {why}")))?;
                list.push(root);
            }
            Ok(Some(Roots::List(list)))
        }
        other => Err(refuse(format!(
            "mcp: roots must be a list of {{ uri, name? }} objects or a function, got {}",
            describe_type(other)
        ))),
    }
}

/// A root given in the config as JSON: only strings under `uri` and `name`.
fn plain_root(raw: &Raw) -> Option<Value> {
    let Raw::Object(members) = raw else {
        return None;
    };
    let mut out = Map::new();
    for (k, v) in members {
        match (k.as_str(), v) {
            (_, Raw::Undefined) => {}
            ("uri" | "name", Raw::String(s)) => {
                out.insert(k.clone(), Value::String(s.clone()));
            }
            _ => return None,
        }
    }
    Some(Value::Object(out))
}
