//! The inbound half of a connection: routes each message the transport read to its caller
//! (replies, progress), answers the server's own requests, and fails everything pending when
//! the connection ends.

use super::rpc::{fail_all, lock, Answer, RpcError, Shared};
use crate::core::lite::RawObject;
use crate::transport::observe::{Event, Sink};
use crate::transport::Wire;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};
use tokio::sync::Notify;

/// Routes inbound messages to their callers, on whichever thread the transport read them.
pub struct Router {
    /// Set once the transport exists; a server request that comes earlier goes unanswered.
    pub(super) wire: OnceLock<Arc<dyn Wire>>,
    pub(super) pending: Shared,
    pub(super) timer: Arc<Notify>,
}

impl Sink for Router {
    /// A reply whose waiter can map its result from text (a tool call's) is answered here,
    /// without a `Value` of the whole message: the envelope is read with the result left as
    /// text, and the waiter's `Fast` does the rest. Anything else (a request, a notification,
    /// an error, a batch, a repeated key, a waiter without `Fast`, a result `Fast` declines)
    /// is left to the `Value` path, which alone decides what is unusual.
    fn frame(&self, frame: &[u8]) -> bool {
        // serde reads a struct from an array too (by position): only an object is a reply.
        // With no waiter to use it (a sweep's pages), the text is not read twice.
        if frame.trim_ascii_start().first() != Some(&b'{') || !lock(&self.pending).expects_fast() {
            return false;
        }
        let Ok(reply) = serde_json::from_slice::<ReplyText>(frame) else {
            return false;
        };
        if reply.method || reply.error {
            return false;
        }
        let Some(fast) = lock(&self.pending).fast(reply.id) else {
            return false;
        };
        let Some(outcome) = fast(&reply.result) else {
            return false;
        };
        // Gone meanwhile (timed out, cancelled): the outcome has no one to go to.
        let waiter = lock(&self.pending).take(reply.id);
        if let Some(waiter) = waiter {
            waiter.give(Answer::Mapped(outcome));
        }
        true
    }

    fn event(&self, event: Event) {
        match event {
            Event::Message(Value::Array(batch)) => batch.into_iter().for_each(|m| self.handle(m)),
            Event::Message(message) => self.handle(message),
            Event::Failed(id, failure) => {
                let waiter = lock(&self.pending).take(id);
                if let Some(waiter) = waiter {
                    waiter.answer(Err(RpcError::Transport(failure)));
                }
            }
            Event::Closed(reason) => fail_all(&self.pending, &self.timer, &reason),
        }
    }
}

/// A response as `Router::frame` reads it: `method` and `error` only noted as present.
#[derive(Deserialize)]
struct ReplyText<'a> {
    id: u64,
    #[serde(borrow)]
    result: RawObject<'a>,
    #[serde(default, deserialize_with = "present")]
    method: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

impl Router {
    fn handle(&self, message: Value) {
        let Value::Object(mut m) = message else {
            return;
        };
        if let Some(Value::String(method)) = m.remove("method") {
            match m.remove("id") {
                Some(id) => self.answer_server_request(&method, id),
                None => self.notification(&method, m.remove("params")),
            }
            return;
        }
        // A response: only ids we issued (numbers) can match; anything else is ignored.
        let Some(id) = m.get("id").and_then(Value::as_u64) else {
            return;
        };
        let waiter = lock(&self.pending).take(id);
        let Some(waiter) = waiter else {
            return;
        };
        let reply = match (m.remove("result"), m.remove("error")) {
            (Some(result), None) => Ok(result),
            (_, Some(error)) => Err(RpcError::Remote {
                code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_owned(),
            }),
            (None, None) => Err(RpcError::Remote {
                code: -32603,
                message: "the response has neither result nor error".into(),
            }),
        };
        waiter.answer(reply);
    }

    fn notification(&self, method: &str, params: Option<Value>) {
        if method != "notifications/progress" {
            return;
        }
        let Some(params) = params else { return };
        let Some(token) = params.get("progressToken").and_then(Value::as_u64) else {
            return;
        };
        let listener = lock(&self.pending).progress.get(&token).cloned();
        if let Some(listener) = listener {
            listener(params);
        }
    }

    /// The client offers no capabilities: ping is answered, anything else is "not found".
    fn answer_server_request(&self, method: &str, id: Value) {
        let reply = if method == "ping" {
            json!({ "jsonrpc": "2.0", "id": id, "result": {} })
        } else {
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": format!("Method not found: {method}") } })
        };
        if let Some(wire) = self.wire.get() {
            let _ = wire.send(reply.to_string(), None);
        }
    }
}
