//! Cassettes: what passed between this client and a server, kept as a file so that a host's
//! test suite can replay it with no process and no socket (`transport::cassette`).
//!
//! A cassette is a list of interactions: a request of the client (method and params, without
//! its id or `_meta`, which are the client's own) and what the server sent for it, in order
//! (its answer, the notifications and requests it sent meanwhile, and where the client's reply
//! to such a request was awaited). Everything here is pure: reading and writing the text,
//! recording (`record`), matching and serving (`replay`).

mod matching;
pub(crate) mod record;
mod replay;
#[cfg(test)]
mod tests;

pub(crate) use matching::Ignore;
pub(crate) use record::Recording;
pub(crate) use replay::{Miss, Replay};

use crate::core::revisions::{Protocol, MODERN, SUPPORTED_VERSIONS};
use serde_json::{json, Map, Value};

/// The format this client writes and reads; a file of another is refused, never guessed at.
pub(crate) const FORMAT: u64 = 1;

/// The largest cassette read: a file is the host's (in its repository), but a replay must not
/// be where a runaway recording takes the host's memory.
pub(crate) const MAX_CASSETTE_BYTES: u64 = 256 * 1024 * 1024;

/// What stands for the live progress token in a recorded notification.
pub(crate) const PROGRESS_TOKEN: &str = "<progressToken>";
/// The `_meta` member by which a modern server names the subscription a message is on.
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// What stands for the live subscription's id in a recorded message.
pub(crate) const SUBSCRIPTION: &str = "<subscriptionId>";

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Interaction {
    pub(crate) method: String,
    /// `Null` when the request had none.
    pub(crate) params: Value,
    /// The server's messages for it, as `record` normalizes them (see `Event`).
    pub(crate) answer: Vec<Value>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Cassette {
    /// The revision spoken (`2025-11-25`, ..., `2026-07-28`); empty when no opening was seen.
    pub(crate) protocol: String,
    /// The server's `serverInfo`, `Null` when it sent none.
    pub(crate) server: Value,
    /// The toolset hash of the last import, as the source computed it.
    pub(crate) toolset_hash: Option<String>,
    /// What the server sent before the client asked anything.
    pub(crate) early: Vec<Value>,
    pub(crate) interactions: Vec<Interaction>,
}

/// One recorded message of the server, told apart by its members.
#[derive(Debug, PartialEq)]
pub(crate) enum Event<'a> {
    /// The answer (`result` or `error`) to the interaction's request.
    Answer,
    /// A notification (`method`, `params`).
    Notification,
    /// A request of the server, numbered `n` in the cassette.
    Ask(u64),
    /// Where the client's reply to ask `n` came (what it replied is kept for the reader).
    Reply(u64),
    Unknown(&'a str),
}

pub(crate) fn event_of(event: &Value) -> Event<'_> {
    let Some(m) = event.as_object() else {
        return Event::Unknown("an object");
    };
    if let Some(n) = m.get("reply") {
        return n
            .as_u64()
            .map_or(Event::Unknown("'reply' a count"), Event::Reply);
    }
    if m.contains_key("result") || m.contains_key("error") {
        return Event::Answer;
    }
    if !m.get("method").is_some_and(Value::is_string) {
        return Event::Unknown("'result', 'error', 'reply' or a string 'method'");
    }
    match m.get("ask") {
        None => Event::Notification,
        Some(n) => n
            .as_u64()
            .map_or(Event::Unknown("'ask' a count"), Event::Ask),
    }
}

impl Cassette {
    /// The file's text: two-space JSON with members in a fixed order, so that recording the
    /// same exchange again writes the same bytes.
    pub(crate) fn to_text(&self) -> String {
        let mut top = Map::new();
        top.insert("rulvarCassette".into(), json!(FORMAT));
        top.insert("protocol".into(), json!(self.protocol));
        top.insert("server".into(), self.server.clone());
        if let Some(hash) = &self.toolset_hash {
            top.insert("toolsetHash".into(), json!(hash));
        }
        if !self.early.is_empty() {
            top.insert("early".into(), Value::Array(self.early.clone()));
        }
        let interactions = self.interactions.iter().map(|i| {
            let mut m = Map::new();
            m.insert("method".into(), json!(i.method));
            if !i.params.is_null() {
                m.insert("params".into(), i.params.clone());
            }
            m.insert("answer".into(), Value::Array(i.answer.clone()));
            Value::Object(m)
        });
        top.insert("interactions".into(), interactions.collect());
        let mut text = serde_json::to_string_pretty(&Value::Object(top)).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a cassette's text; `Err` says what is wrong and where (a JSON pointer), in words
    /// that follow "the cassette ... ".
    pub(crate) fn parse(text: &str) -> Result<Cassette, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("is not JSON ({e})"))?;
        let Some(top) = value.as_object() else {
            return Err("is not a JSON object".into());
        };
        match top.get("rulvarCassette").and_then(Value::as_u64) {
            Some(FORMAT) => {}
            Some(other) => {
                return Err(format!(
                    "is of format {other}; this version reads format {FORMAT}"
                ))
            }
            None => return Err("has no 'rulvarCassette' format number".into()),
        }
        let protocol = match top.get("protocol").and_then(Value::as_str) {
            Some(p) if p == MODERN || SUPPORTED_VERSIONS.contains(&p) => p.to_owned(),
            Some(p) => {
                return Err(format!(
                    "names protocol '{}', which this client does not speak",
                    clip(p)
                ))
            }
            None => return Err("has no 'protocol'".into()),
        };
        let toolset_hash = match top.get("toolsetHash") {
            None => None,
            Some(Value::String(h)) => Some(h.clone()),
            Some(_) => {
                return Err("has a 'toolsetHash' that is not a string (at /toolsetHash)".into())
            }
        };
        let early = events(top.get("early"), "/early", true)?;
        let Some(list) = top.get("interactions").and_then(Value::as_array) else {
            return Err("has no 'interactions' array".into());
        };
        let interactions = list
            .iter()
            .enumerate()
            .map(|(i, v)| interaction(v, i))
            .collect::<Result<_, _>>()?;
        Ok(Cassette {
            protocol,
            server: top.get("server").cloned().unwrap_or(Value::Null),
            toolset_hash,
            early,
            interactions,
        })
    }

    /// Whether a source that pins `protocol` may replay this cassette: `Err` the refusal.
    pub(crate) fn check_era(&self, protocol: Protocol) -> Result<(), String> {
        let modern = self.protocol == MODERN;
        match protocol {
            Protocol::Auto => Ok(()),
            Protocol::Legacy if modern => Err(format!(
                "was recorded in protocol {MODERN}; this source pins 'protocol: 2025-11-25'"
            )),
            Protocol::Modern if !modern => Err(format!(
                "was recorded in protocol {}; this source pins 'protocol: {MODERN}'",
                self.protocol
            )),
            _ => Ok(()),
        }
    }
}

fn interaction(value: &Value, i: usize) -> Result<Interaction, String> {
    let at = format!("/interactions/{i}");
    let Some(m) = value.as_object() else {
        return Err(format!(
            "has an interaction that is not an object (at {at})"
        ));
    };
    let Some(method) = m.get("method").and_then(Value::as_str) else {
        return Err(format!(
            "has an interaction without a string 'method' (at {at})"
        ));
    };
    Ok(Interaction {
        method: method.to_owned(),
        params: m.get("params").cloned().unwrap_or(Value::Null),
        answer: events(m.get("answer"), &format!("{at}/answer"), false)?,
    })
}

fn events(value: Option<&Value>, at: &str, optional: bool) -> Result<Vec<Value>, String> {
    let list = match value {
        None if optional => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        _ => return Err(format!("has no array at {at}")),
    };
    for (i, event) in list.iter().enumerate() {
        if let Event::Unknown(wants) = event_of(event) {
            return Err(format!(
                "has a message at {at}/{i} that is not one it can replay: it needs {wants}"
            ));
        }
    }
    Ok(list.clone())
}

/// A name from the file, short enough for a message.
pub(super) fn clip(text: &str) -> String {
    crate::core::shown::for_a_person(text, false, 80)
}

/// `cassette.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Record,
    Replay,
    /// Replay when the file exists, else record.
    Auto,
}

/// The environment variable that overrides every source's `cassette.mode` (`record`,
/// `replay`, `auto`): a suite is re-recorded, or held to its cassettes (CI), as a whole.
pub(crate) const MODE_VARIABLE: &str = "RULVAR_CASSETTE_MODE";

/// `cassette`, as the config gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    pub(crate) path: String,
    pub(crate) mode: Mode,
    pub(crate) ignore: Ignore,
}

impl Settings {
    /// Whether this connect records (`Ok(true)`) or replays, given the variable's value and
    /// whether the file exists; `Err` a refusal.
    pub(crate) fn records(&self, forced: Option<&str>, exists: bool) -> Result<bool, String> {
        let mode = match forced {
            None | Some("") => self.mode,
            Some("record") => Mode::Record,
            Some("replay") => Mode::Replay,
            Some("auto") => Mode::Auto,
            Some(other) => {
                return Err(format!(
                    "mcp: {MODE_VARIABLE} must be 'record', 'replay' or 'auto', got '{}'",
                    clip(other)
                ))
            }
        };
        match mode {
            Mode::Record => Ok(true),
            Mode::Auto => Ok(!exists),
            Mode::Replay if exists => Ok(false),
            Mode::Replay => {
                let why = match forced {
                    Some("replay") => format!(" ({MODE_VARIABLE}=replay: nothing is recorded)"),
                    _ => String::new(),
                };
                Err(format!(
                    "mcp: cassette '{}' does not exist{why}; record it with mode 'record' or 'auto'",
                    self.path
                ))
            }
        }
    }
}
