//! Replay: each request the client sends is matched to a recorded interaction (method and
//! canonical params, `matching`), and what the server sent for it comes back in the recorded
//! order, under the live request's id and progress token. Identical requests are served in
//! the order they were recorded, each once. Nothing is made up: a request that matches none
//! is a `Miss`, which names the first difference from the nearest recorded request.

use super::matching::{differences, key, normalized, Ignore};
use super::record::stream;
use super::{clip, event_of, Cassette, Event, PROGRESS_TOKEN, SUBSCRIPTION, SUBSCRIPTION_ID};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};

/// A request the cassette has no answer for.
#[derive(Debug, Clone, PartialEq)]
pub struct Miss {
    pub message: String,
    /// The tool, for a tool call.
    pub tool: Option<String>,
    /// The JSON pointer (into the request's params) of the first difference from the nearest
    /// recorded request, when one of the same method (and tool) was recorded.
    pub pointer: Option<String>,
}

/// What of the live request a replayed message carries.
#[derive(Debug, Clone)]
struct Live {
    /// The request's id (its answer's).
    id: u64,
    /// Its progress token, if it asked for progress.
    token: Option<Value>,
    /// The live subscription's id (the newest list-change stream opened).
    subscription: Option<u64>,
}

/// Where an interaction's replay waits for the client's reply to a request of the server.
#[derive(Debug)]
struct Resume {
    at: usize,
    next: usize,
    live: Live,
}

#[derive(Debug)]
pub(crate) struct Replay {
    cassette: Cassette,
    ignore: Ignore,
    /// What names the cassette in messages (its path).
    label: String,
    queues: HashMap<String, VecDeque<usize>>,
    served: HashMap<String, usize>,
    paused: HashMap<u64, Resume>,
    subscription: Option<u64>,
}

impl Replay {
    pub(crate) fn new(cassette: Cassette, ignore: Ignore, label: String) -> Self {
        let mut queues: HashMap<String, VecDeque<usize>> = HashMap::new();
        for (at, i) in cassette.interactions.iter().enumerate() {
            let k = key(&i.method, &normalized(&i.method, &i.params, &ignore));
            queues.entry(k).or_default().push_back(at);
        }
        Self {
            cassette,
            ignore,
            label,
            queues,
            served: HashMap::new(),
            paused: HashMap::new(),
            subscription: None,
        }
    }

    /// What the server sent before any request, as messages.
    pub(crate) fn early(&self) -> Vec<Value> {
        self.cassette
            .early
            .iter()
            .filter_map(|e| {
                message(
                    e,
                    &Live {
                        id: 0,
                        token: None,
                        subscription: None,
                    },
                )
            })
            .collect()
    }

    /// The messages that answer request `id` (`method`, `params` as sent), up to the first
    /// request of the server, whose reply resumes the rest (`reply`).
    pub(crate) fn request(
        &mut self,
        method: &str,
        params: &Value,
        id: u64,
    ) -> Result<Vec<Value>, Miss> {
        let live = normalized(method, params, &self.ignore);
        let k = key(method, &live);
        let Some(at) = self.queues.get_mut(&k).and_then(VecDeque::pop_front) else {
            return Err(self.miss(method, params, &live, &k));
        };
        *self.served.entry(k).or_default() += 1;
        if stream(method) {
            self.subscription = Some(id);
        }
        let live = Live {
            id,
            token: params.pointer("/_meta/progressToken").cloned(),
            subscription: self.subscription,
        };
        Ok(self.emit(at, 0, live))
    }

    /// The client replied to the server's request `id`: the rest of its interaction.
    pub(crate) fn reply(&mut self, id: &Value) -> Vec<Value> {
        match id.as_u64().and_then(|n| self.paused.remove(&n)) {
            Some(r) => self.emit(r.at, r.next, r.live),
            None => Vec::new(),
        }
    }

    fn emit(&mut self, at: usize, from: usize, live: Live) -> Vec<Value> {
        let mut out = Vec::new();
        let answer = &self.cassette.interactions[at].answer;
        for (i, event) in answer.iter().enumerate().skip(from) {
            if let Some(m) = message(event, &live) {
                out.push(m);
            }
            if let Event::Ask(n) = event_of(event) {
                let next = i + 1;
                self.paused.insert(n, Resume { at, next, live });
                break;
            }
        }
        out
    }

    fn miss(&self, method: &str, params: &Value, live: &Value, k: &str) -> Miss {
        let tool = (method == "tools/call")
            .then(|| params.get("name").and_then(Value::as_str))
            .flatten()
            .map(str::to_owned);
        let what = match &tool {
            Some(t) => format!("tool '{}'", clip(t)),
            None => format!("'{}'", clip(method)),
        };
        let prefix = format!("mcp: cassette '{}'", self.label);
        if let Some(&n) = self.served.get(k) {
            let message = format!(
                "{prefix}: {what} was called {} times with these arguments; the cassette recorded {n}",
                n + 1
            );
            return Miss {
                message,
                tool,
                pointer: None,
            };
        }
        let nearest = self
            .cassette
            .interactions
            .iter()
            .filter(|i| {
                i.method == method && (tool.is_none() || i.params.get("name") == params.get("name"))
            })
            .map(|i| differences(live, &normalized(method, &i.params, &self.ignore), 64))
            // Fewest differences; of those, the one that differs deepest (shares the most).
            .min_by_key(|d| {
                (
                    d.len(),
                    std::cmp::Reverse(d.first().map_or(0, |p| p.matches('/').count())),
                )
            });
        match nearest.and_then(|d| d.into_iter().next()) {
            Some(pointer) => Miss {
                message: format!(
                    "{prefix}: no recorded call of {what} matches; it differs from the nearest recorded call at {pointer}"
                ),
                tool,
                pointer: Some(pointer),
            },
            None => Miss {
                message: format!("{prefix}: no call of {what} was recorded"),
                tool,
                pointer: None,
            },
        }
    }
}

/// A recorded event as the message the server sends now: an answer under the live id, a
/// notification with the live progress token and subscription, a request of the server under
/// its number.
fn message(event: &Value, live: &Live) -> Option<Value> {
    let m = event.as_object()?;
    let mut out = Map::new();
    out.insert("jsonrpc".into(), json!("2.0"));
    match event_of(event) {
        Event::Answer => {
            out.insert("id".into(), json!(live.id));
            for key in ["result", "error"] {
                if let Some(v) = m.get(key) {
                    out.insert(key.into(), v.clone());
                }
            }
        }
        Event::Notification | Event::Ask(_) => {
            if let Some(n) = m.get("ask") {
                out.insert("id".into(), n.clone());
            }
            out.insert("method".into(), m.get("method")?.clone());
            if let Some(mut params) = m.get("params").cloned() {
                live_values(&mut params, live);
                out.insert("params".into(), params);
            }
        }
        Event::Reply(_) | Event::Unknown(_) => return None,
    }
    Some(Value::Object(out))
}

/// The stand-ins of a recorded message's params replaced by the live values.
fn live_values(params: &mut Value, live: &Live) {
    let Some(p) = params.as_object_mut() else {
        return;
    };
    if let Some(token) = &live.token {
        if p.get("progressToken").and_then(Value::as_str) == Some(PROGRESS_TOKEN) {
            p.insert("progressToken".into(), token.clone());
        }
    }
    let meta = p.get_mut("_meta").and_then(Value::as_object_mut);
    if let (Some(id), Some(meta)) = (live.subscription, meta) {
        if meta.get(SUBSCRIPTION_ID).and_then(Value::as_str) == Some(SUBSCRIPTION) {
            meta.insert(SUBSCRIPTION_ID.into(), json!(id));
        }
    }
}
