//! Recording: every message the client sent and the server sent, sorted into interactions as
//! they pass. A server's message belongs to the request it names (an answer by its id, a
//! progress notification by its token); one that names none (a log line, a request of the
//! server, a list change) to the newest request still waiting for its answer, else to the one
//! answered last, else to what came before any request (`early`). Replayed, each comes back
//! where it came, relative to that request's answer.

use super::{Cassette, Interaction, PROGRESS_TOKEN, SUBSCRIPTION, SUBSCRIPTION_ID};
use crate::core::jcs;
use crate::core::revisions::MODERN;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// A request whose answer is a stream that stays open (the modern era's list-change
/// subscription): what arrives on it is not its answer, and belongs to no call.
pub(super) fn stream(method: &str) -> bool {
    method == "subscriptions/listen"
}

/// The most messages of a server a recording keeps: past it (a server that floods), the
/// recording stops and its file is not written.
pub(crate) const MAX_RECORDED_MESSAGES: usize = 50_000;

/// Identifiers a server makes up anew each time (a task's id, an input round's state): below
/// this length a value is a counter, the same every run, and left as it is.
const MIN_ALIASED_LEN: usize = 8;

#[derive(Debug, Default)]
pub(crate) struct Recording {
    cassette: Cassette,
    /// Requests awaiting their answer: (connection, client id) -> interaction.
    pending: HashMap<(u64, u64), usize>,
    /// Those that are not streams, oldest first: who a message naming no request belongs to.
    waiting: Vec<(u64, usize)>,
    /// (connection, progress token as JSON text) -> interaction.
    progress: HashMap<(u64, String), usize>,
    /// A server's requests awaiting the client's reply: (connection, id as JSON text) ->
    /// (interaction, number in the cassette).
    asks: HashMap<(u64, String), (usize, u64)>,
    next_ask: u64,
    last_answered: Option<usize>,
    /// The server's messages kept and their JSON bytes, each bounded.
    kept: usize,
    bytes: u64,
    /// Why the recording stopped, once it did.
    overflow: Option<String>,
}

impl Recording {
    /// A message the client sent on connection `conn`.
    pub(crate) fn client(&mut self, conn: u64, message: &Value) {
        let Some(m) = message.as_object() else {
            if let Value::Array(batch) = message {
                batch.iter().for_each(|m| self.client(conn, m));
            }
            return;
        };
        match (m.get("method").and_then(Value::as_str), m.get("id")) {
            (Some(method), Some(id)) => {
                let Some(id) = id.as_u64() else { return };
                let mut params = m.get("params").cloned().unwrap_or(Value::Null);
                let token = params.pointer("/_meta/progressToken").map(jcs::serialize);
                if let Some(p) = params.as_object_mut() {
                    p.remove("_meta");
                }
                let at = self.cassette.interactions.len();
                self.cassette.interactions.push(Interaction {
                    method: method.to_owned(),
                    params,
                    answer: Vec::new(),
                });
                self.pending.insert((conn, id), at);
                if !stream(method) {
                    self.waiting.push((conn, at));
                }
                if let Some(token) = token {
                    self.progress.insert((conn, token), at);
                }
            }
            (None, Some(id)) => {
                if let Some((at, n)) = self.asks.remove(&(conn, jcs::serialize(id))) {
                    let mut event = answer_of(m);
                    event.insert("reply".into(), json!(n));
                    self.push(Some(at), Value::Object(event));
                }
            }
            _ => {}
        }
    }

    /// A message the server sent on connection `conn`.
    pub(crate) fn server(&mut self, conn: u64, message: &Value) {
        if !self.keeps(message) {
            return;
        }
        let Some(m) = message.as_object() else {
            if let Value::Array(batch) = message {
                batch.iter().for_each(|m| self.server(conn, m));
            }
            return;
        };
        match (m.get("method").and_then(Value::as_str), m.get("id")) {
            (None, Some(id)) => self.answered(conn, id, m),
            (Some(method), id) => self.sent(conn, method, id, m),
            _ => {}
        }
    }

    fn answered(&mut self, conn: u64, id: &Value, m: &Map<String, Value>) {
        let Some(at) = id.as_u64().and_then(|id| self.pending.remove(&(conn, id))) else {
            return;
        };
        self.waiting.retain(|&(_, i)| i != at);
        self.progress.retain(|_, i| *i != at);
        self.last_answered = Some(at);
        let event = answer_of(m);
        self.opening(at, &event);
        self.push(Some(at), Value::Object(event));
    }

    fn sent(&mut self, conn: u64, method: &str, id: Option<&Value>, m: &Map<String, Value>) {
        let mut params = m.get("params").cloned();
        let by_token = params
            .as_ref()
            .and_then(|p| p.get("progressToken"))
            .and_then(|t| self.progress.get(&(conn, jcs::serialize(t))).copied());
        if let (Some(_), Some(p)) = (by_token, params.as_mut().and_then(Value::as_object_mut)) {
            p.insert("progressToken".into(), json!(PROGRESS_TOKEN));
        }
        let by_subscription = self.subscription(conn, method, params.as_mut());
        let newest = self.waiting.iter().rev().find(|(c, _)| *c == conn);
        let at = by_token
            .or(by_subscription)
            .or(newest.map(|&(_, i)| i))
            .or(self.last_answered);
        let mut event = Map::new();
        if let Some(id) = id {
            self.next_ask += 1;
            event.insert("ask".into(), json!(self.next_ask));
            if let Some(at) = at {
                self.asks
                    .insert((conn, jcs::serialize(id)), (at, self.next_ask));
            }
        }
        event.insert("method".into(), json!(method));
        if let Some(params) = params {
            event.insert("params".into(), params);
        }
        self.push(at, Value::Object(event));
    }

    /// A message on a subscription's stream names it by its request's id, which is the
    /// client's own: replaced by a stand-in (replayed as the live subscription's id). Its
    /// acknowledgment belongs to the subscription request; what comes later on it (a list
    /// change) belongs where it arrived, as any other message.
    fn subscription(&self, conn: u64, method: &str, params: Option<&mut Value>) -> Option<usize> {
        let id = params?.get_mut("_meta")?.get_mut(SUBSCRIPTION_ID)?;
        let at = *self.pending.get(&(conn, id.as_u64()?))?;
        if !stream(&self.cassette.interactions[at].method) {
            return None;
        }
        *id = json!(SUBSCRIPTION);
        (method == "notifications/subscriptions/acknowledged").then_some(at)
    }

    fn push(&mut self, at: Option<usize>, event: Value) {
        match at.and_then(|at| self.cassette.interactions.get_mut(at)) {
            Some(interaction) => interaction.answer.push(event),
            None => self.cassette.early.push(event),
        }
    }

    /// The revision and the server's info, from the opening's answer.
    fn opening(&mut self, at: usize, event: &Map<String, Value>) {
        let Some(result) = event.get("result") else {
            return;
        };
        let method = self.cassette.interactions[at].method.as_str();
        let protocol = match method {
            "initialize" => result.get("protocolVersion").and_then(Value::as_str),
            "server/discover" => Some(MODERN),
            _ => return,
        };
        if let Some(protocol) = protocol {
            self.cassette.protocol = protocol.to_owned();
            self.cassette.server = result.get("serverInfo").cloned().unwrap_or(Value::Null);
        }
    }

    pub(crate) fn set_toolset_hash(&mut self, hash: String) {
        self.cassette.toolset_hash = Some(hash);
    }

    /// Counts `message` against the bounds: `false` once past them (and from then on).
    fn keeps(&mut self, message: &Value) -> bool {
        if self.overflow.is_some() {
            return false;
        }
        self.kept += 1;
        self.bytes += json_len(message);
        if self.kept > MAX_RECORDED_MESSAGES {
            self.overflow = Some(format!(
                "the server sent more than {MAX_RECORDED_MESSAGES} messages"
            ));
        } else if self.bytes > super::MAX_CASSETTE_BYTES {
            self.overflow = Some(format!(
                "the server sent more than the {} MiB a cassette may hold",
                super::MAX_CASSETTE_BYTES >> 20
            ));
        }
        self.overflow.is_none()
    }

    /// Why the recording stopped keeping messages, if it did: such a cassette is not written.
    pub(crate) fn overflow(&self) -> Option<&str> {
        self.overflow.as_deref()
    }

    /// Whether anything was recorded (an opening at least).
    pub(crate) fn is_empty(&self) -> bool {
        self.cassette.interactions.is_empty()
    }

    /// The cassette as it stands, with what a server makes up anew each run (task ids, input
    /// rounds' state, a task's timestamps) replaced by stable stand-ins, the same everywhere
    /// they occur: recording an unchanged server again writes the same bytes, and a replayed
    /// client sends back the stand-in it was given, which matches.
    pub(crate) fn cassette(&self) -> Cassette {
        let mut cassette = self.cassette.clone();
        let mut aliases = Vec::new();
        for i in &cassette.interactions {
            for event in &i.answer {
                if let Some(result) = event.get("result") {
                    collect_aliases(result, &mut aliases);
                }
            }
        }
        let aliases: HashMap<String, String> = aliases.into_iter().collect();
        for i in &mut cassette.interactions {
            apply_aliases(&mut i.params, &aliases);
            i.answer.iter_mut().for_each(|e| apply_aliases(e, &aliases));
        }
        cassette
            .early
            .iter_mut()
            .for_each(|e| apply_aliases(e, &aliases));
        cassette
    }
}

/// An answer's `result` or `error`, without the envelope.
fn answer_of(m: &Map<String, Value>) -> Map<String, Value> {
    let mut event = Map::new();
    for key in ["result", "error"] {
        if let Some(v) = m.get(key) {
            event.insert(key.into(), v.clone());
        }
    }
    event
}

fn collect_aliases(value: &Value, aliases: &mut Vec<(String, String)>) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                let kind = match k.as_str() {
                    "taskId" => "task",
                    "requestState" => "state",
                    _ => {
                        collect_aliases(v, aliases);
                        continue;
                    }
                };
                if let Value::String(s) = v {
                    if s.len() >= MIN_ALIASED_LEN && !aliases.iter().any(|(o, _)| o == s) {
                        let n = aliases.iter().filter(|(_, a)| a.starts_with(kind)).count();
                        aliases.push((s.clone(), format!("{kind}-{}", n + 1)));
                    }
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_aliases(v, aliases)),
        _ => {}
    }
}

/// A task's timestamps, which change every run, as one fixed instant.
const TASK_TIME: &str = "1970-01-01T00:00:00Z";

fn apply_aliases(value: &mut Value, aliases: &HashMap<String, String>) {
    match value {
        Value::String(s) => {
            if let Some(alias) = aliases.get(s.as_str()) {
                *s = alias.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| apply_aliases(v, aliases)),
        Value::Object(m) => {
            let task = m.contains_key("taskId");
            for (k, v) in m.iter_mut() {
                if task && (k == "createdAt" || k == "lastUpdatedAt") && v.is_string() {
                    *v = json!(TASK_TIME);
                } else {
                    apply_aliases(v, aliases);
                }
            }
        }
        _ => {}
    }
}

/// The length of `value`'s JSON text, counted without keeping the text.
fn json_len(value: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}
