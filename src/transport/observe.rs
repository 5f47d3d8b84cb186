//! The first reader of every inbound message.
//!
//! A `tools/list_changed` must invalidate the cache before any later message from the same
//! server is processed, so the generation is bumped here, synchronously, before the message
//! reaches the JSON-RPC router.

use crate::core::drift::Drift;
use crate::core::error::Failure;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

/// serde_json's nesting limit for one message, which bounds the parser's stack.
pub const MAX_JSON_DEPTH: usize = 128;

#[derive(Debug)]
pub enum Event {
    Message(Value),
    /// Our own transport could not deliver request `id` (not the server's answer: no server
    /// message can pose as one, so its text is ours and its OAuth kind is trusted).
    Failed(u64, Failure),
    /// The connection is gone; pending requests fail with this reason.
    Closed(String),
}

/// Where inbound events go once observed: the JSON-RPC router of the connection, handling
/// each one on the thread that read it (no extra task hop per message).
pub trait Sink: Send + Sync {
    /// Offered every frame first, before it is parsed: `true` when the sink took it as it is
    /// (see `Router::frame`), `false` to have it parsed and pushed as an event.
    fn frame(&self, _frame: &[u8]) -> bool {
        false
    }
    fn event(&self, event: Event);
}

struct ChannelSink(mpsc::UnboundedSender<Event>);

impl Sink for ChannelSink {
    fn event(&self, event: Event) {
        let _ = self.0.send(event);
    }
}

/// Shows each message to a tap, then hands it on; every frame is parsed first (no text-only
/// fast path), since the tap needs the message.
struct TapSink {
    inner: Arc<dyn Sink>,
    tap: Arc<dyn Fn(&Value) + Send + Sync>,
}

impl Sink for TapSink {
    fn event(&self, event: Event) {
        if let Event::Message(message) = &event {
            (self.tap)(message);
        }
        self.inner.event(event);
    }
}

/// The inbound side every transport writes to.
#[derive(Clone)]
pub struct Inbound {
    sink: Arc<dyn Sink>,
    drift: Arc<Drift>,
}

impl Inbound {
    pub fn with_sink(drift: Arc<Drift>, sink: Arc<dyn Sink>) -> Self {
        Self { sink, drift }
    }

    /// An inbound side that queues its events, for tests and tools that read them later.
    pub fn new(drift: Arc<Drift>) -> (Self, mpsc::UnboundedReceiver<Event>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self::with_sink(drift, Arc::new(ChannelSink(tx))), rx)
    }

    /// This inbound side with `tap` shown every message (parsed) before it goes on: what a
    /// cassette records.
    pub(crate) fn tapped(&self, tap: Arc<dyn Fn(&Value) + Send + Sync>) -> Self {
        let sink = Arc::new(TapSink {
            inner: self.sink.clone(),
            tap,
        });
        Self::with_sink(self.drift.clone(), sink)
    }

    pub fn push(&self, message: Value) {
        observe(&self.drift, &message);
        self.sink.event(Event::Message(message));
    }

    /// Parses one frame; text that is not JSON is dropped (servers print banners to stdout).
    /// A message nested too deeply to parse cannot be answered or skipped safely: its request
    /// would wait for a reply that never comes, so the connection ends with a typed reason.
    pub fn push_text(&self, frame: &[u8]) -> bool {
        if self.sink.frame(frame) {
            return true;
        }
        match self.parse(frame) {
            Some(message) => {
                self.push(message);
                true
            }
            None => false,
        }
    }

    /// One frame as JSON, for a transport that looks at it before pushing it; `None` for text
    /// that is not JSON. Every transport parses through here, so the depth rule holds for all.
    pub fn parse(&self, frame: &[u8]) -> Option<Value> {
        match serde_json::from_slice::<Value>(frame) {
            Ok(message) => Some(message),
            Err(_) if nests_deeper_than(frame, MAX_JSON_DEPTH) => {
                self.close(format!(
                    "mcp: the server sent a message nested deeper than {MAX_JSON_DEPTH} levels; the connection was closed"
                ));
                None
            }
            Err(_) => None,
        }
    }

    pub fn close(&self, reason: String) {
        self.sink.event(Event::Closed(reason));
    }

    /// Answers a request the transport could not deliver, so its caller fails at once.
    pub fn fail_request(&self, id: u64, failure: impl Into<Failure>) {
        self.sink.event(Event::Failed(id, failure.into()));
    }
}

/// Whether the brackets of `frame` (outside strings) nest deeper than `limit`: why a frame
/// that failed to parse failed, told apart from text that is simply not JSON. Only frames
/// that failed to parse are scanned.
fn nests_deeper_than(frame: &[u8], limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in frame {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn observe(drift: &Drift, message: &Value) {
    match message {
        Value::Object(m)
            if m.get("method").and_then(Value::as_str)
                == Some("notifications/tools/list_changed") =>
        {
            drift.list_changed()
        }
        Value::Array(batch) => batch.iter().for_each(|m| observe(drift, m)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_a_too_deep_frame_from_text_that_is_not_json() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        assert!(nests_deeper_than(deep.as_bytes(), MAX_JSON_DEPTH));
        // Brackets inside strings do not count, escaped quotes do not end them.
        let quoted = format!("{{\"a\": \"\\\" {}\"}}", "[".repeat(300));
        assert!(!nests_deeper_than(quoted.as_bytes(), MAX_JSON_DEPTH));
        assert!(!nests_deeper_than(
            b"Welcome to the server!",
            MAX_JSON_DEPTH
        ));
    }
}
