//! The inbound half of a connection: routes each message the transport read to its caller
//! (replies, progress), answers the server's own requests, and fails everything pending when
//! the connection ends.

use super::era::Speaking;
use super::error::RpcError;
use super::pending::{fail_all, Answer, Shared};
use crate::core::ask_budget::{self, Rate};
use crate::core::lite::RawObject;
use crate::sync::lock;
use crate::transport::observe::{Event, Sink};
use crate::transport::Wire;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::Notify;

/// What a server asks the client in the middle of a call (an elicitation, a model completion,
/// the roots) is answered by whoever the source set here: the host's hooks, with the checks of
/// `core::asks`. The answer is a result, or a JSON-RPC error's code and message.
pub trait Answerer: Send + Sync {
    fn answer(
        &self,
        method: &str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, (i64, String)>>;
    /// A log message of the server's (`notifications/message`).
    fn log(&self, _params: Value) {}
    /// Whether a request of `method` may be answered at all now, decided before anything is
    /// spent on it (its refusal, else); `answer` may still refuse it.
    fn admit(&self, _method: &str) -> Result<(), (i64, String)> {
        Ok(())
    }
    /// The host's own calls in flight: the bounds on a server's requests grow with them
    /// (`core::ask_budget`).
    fn calls_in_flight(&self) -> usize {
        0
    }
}

/// Routes inbound messages to their callers, on whichever thread the transport read them.
pub struct Router {
    /// Set once the transport exists; a server request that comes earlier goes unanswered.
    pub(super) wire: OnceLock<Arc<dyn Wire>>,
    pub(super) pending: Shared,
    pub(super) timer: Arc<Notify>,
    /// Set when the host offers answers; the runtime each answer is awaited on (a request
    /// can arrive on a thread that has none: an in-process server's, on the JS thread).
    asks: OnceLock<(Arc<dyn Answerer>, tokio::runtime::Handle)>,
    /// The era the connection speaks, which says whether a server's own requests are answered
    /// (`Rules::answers_server_requests`).
    pub(super) speaking: Speaking,
    /// The server's requests being answered now, and its rate (`core::ask_budget`).
    asking: Arc<AtomicUsize>,
    rate: Mutex<Rate>,
}

/// One of the server's requests being answered: counted until it ends, however it ends.
struct Asking(Arc<AtomicUsize>);

impl Drop for Asking {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
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
    pub(super) fn new(pending: Shared, timer: Arc<Notify>) -> Self {
        Self {
            wire: OnceLock::new(),
            pending,
            timer,
            asks: OnceLock::new(),
            speaking: Speaking::default(),
            asking: Arc::new(AtomicUsize::new(0)),
            rate: Mutex::new(Rate::default()),
        }
    }

    /// Counts one more of the server's requests in, with `calls` of the host's in flight, or
    /// says why it is refused.
    fn admit_ask(&self, calls: usize) -> Result<Asking, (i64, String)> {
        if !lock(&self.rate).take(std::time::Instant::now(), calls) {
            return Err((ask_budget::REFUSED_CODE, ask_budget::too_fast()));
        }
        let before = self.asking.fetch_add(1, Ordering::Relaxed);
        let asking = Asking(self.asking.clone());
        if before >= ask_budget::at_once(calls) {
            return Err((ask_budget::REFUSED_CODE, ask_budget::too_many_at_once()));
        }
        Ok(asking)
    }

    /// From now on a server's requests other than ping go to `answerer`, awaited on `runtime`.
    pub fn answer_with(&self, answerer: Arc<dyn Answerer>, runtime: tokio::runtime::Handle) {
        let _ = self.asks.set((answerer, runtime));
    }

    fn handle(&self, message: Value) {
        let Value::Object(mut m) = message else {
            return;
        };
        if let Some(Value::String(method)) = m.remove("method") {
            match m.remove("id") {
                Some(id) => self.answer_server_request(&method, id, m.remove("params")),
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
            (_, Some(mut error)) => {
                let message = match error.get_mut("message").map(Value::take) {
                    Some(Value::String(m)) => m,
                    _ => "unknown error".to_owned(),
                };
                let data = error.get_mut("data").map(Value::take);
                Err(RpcError::answered(error.get("code"), message, data))
            }
            (None, None) => Err(RpcError::answered(
                None,
                "the response has neither result nor error".into(),
                None,
            )),
        };
        waiter.answer(reply);
    }

    fn notification(&self, method: &str, params: Option<Value>) {
        if method == "notifications/message" {
            if let (Some((answerer, _)), Some(params)) = (self.asks.get(), params) {
                answerer.log(params);
            }
            return;
        }
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

    /// Ping is answered here; anything else goes to the answerer when the host offers one and
    /// the era answers a server's requests, and is "not found" when not (the client declared no
    /// capability then).
    fn answer_server_request(&self, method: &str, id: Value, params: Option<Value>) {
        let Some(wire) = self.wire.get().cloned() else {
            return;
        };
        if method != "ping" && self.speaking.rules().answers_server_requests() {
            if let Some((answerer, runtime)) = self.asks.get() {
                let calls = answerer.calls_in_flight();
                let asking = match answerer.admit(method).and_then(|()| self.admit_ask(calls)) {
                    Ok(asking) => asking,
                    Err(refused) => {
                        let _ = wire.send(reply(id, Err(refused)).to_string(), None);
                        return;
                    }
                };
                let answering = answerer.answer(method, params.unwrap_or(Value::Null));
                start_in_order(
                    runtime,
                    Box::pin(async move {
                        let reply = reply(id, answering.await);
                        drop(asking);
                        let _ = wire.send(reply.to_string(), None);
                    }),
                );
                return;
            }
        }
        let answer = match method {
            "ping" => Ok(json!({})),
            _ => Err((-32601, format!("Method not found: {method}"))),
        };
        let _ = wire.send(reply(id, answer).to_string(), None);
    }
}

/// Polls `task` once here, on the thread that read the server's request, then leaves the rest
/// to the runtime. The first poll queues the host hook's call to JS, so the server's requests
/// reach the hooks in the order it sent them: two tasks spawned at once were first polled by
/// whichever runtime thread came first, and a person at the CLI was asked the second question
/// first. The spawned task is polled again at once, so the waker of this first poll (which
/// wakes nothing) loses no wake-up.
fn start_in_order(runtime: &tokio::runtime::Handle, mut task: BoxFuture<'static, ()>) {
    let _in_runtime = runtime.enter();
    let waker = futures::task::noop_waker();
    let first = task
        .as_mut()
        .poll(&mut std::task::Context::from_waker(&waker));
    if first.is_pending() {
        runtime.spawn(task);
    }
}

fn reply(id: Value, answer: Result<Value, (i64, String)>) -> Value {
    match answer {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, message)) => {
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
        }
    }
}
