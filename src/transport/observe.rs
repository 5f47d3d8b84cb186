//! The first reader of every inbound message.
//!
//! A `tools/list_changed` must invalidate the cache before any later message from the same
//! server is processed, so the generation is bumped here, synchronously, before the message
//! reaches the JSON-RPC router.

use crate::core::drift::Drift;
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;

/// serde_json's nesting limit for one message, which bounds the parser's stack.
pub const MAX_JSON_DEPTH: usize = 128;

/// The JSON-RPC error code of a request our own transport failed (not the server's answer).
pub const TRANSPORT_FAILURE: i64 = -32099;

#[derive(Debug)]
pub enum Event {
    Message(Value),
    /// The connection is gone; pending requests fail with this reason.
    Closed(String),
}

/// Where inbound events go once observed: the JSON-RPC router of the connection, handling
/// each one on the thread that read it (no extra task hop per message).
pub trait Sink: Send + Sync {
    fn event(&self, event: Event);
}

struct ChannelSink(mpsc::UnboundedSender<Event>);

impl Sink for ChannelSink {
    fn event(&self, event: Event) {
        let _ = self.0.send(event);
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

    pub fn push(&self, message: Value) {
        observe(&self.drift, &message);
        self.sink.event(Event::Message(message));
    }

    /// Parses one frame; text that is not JSON is dropped (servers print banners to stdout).
    /// A message nested too deeply to parse cannot be answered or skipped safely: its request
    /// would wait for a reply that never comes, so the connection ends with a typed reason.
    pub fn push_text(&self, frame: &[u8]) -> bool {
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
            Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
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
    pub fn fail_request(&self, id: u64, message: String) {
        self.sink.event(Event::Message(serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": TRANSPORT_FAILURE, "message": message }
        })));
    }
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
