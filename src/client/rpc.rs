//! JSON-RPC 2.0 over a transport: ids, pending replies, timeouts, cancellation, server pings.

use crate::transport::observe::{Event, Sink, TRANSPORT_FAILURE};
use crate::transport::Wire;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

#[derive(Debug, Clone, PartialEq)]
pub enum RpcError {
    /// The server answered with a JSON-RPC error.
    Remote {
        code: i64,
        message: String,
    },
    /// The connection is gone (closed by us, or the server died).
    Closed(String),
    TimedOut,
    /// The caller gave up (an abort signal).
    Cancelled,
}

impl RpcError {
    pub fn describe(&self) -> String {
        match self {
            RpcError::Remote { code, message } if *code == TRANSPORT_FAILURE => message.clone(),
            RpcError::Remote { code, message } => format!("MCP error {code}: {message}"),
            RpcError::Closed(reason) => reason.clone(),
            RpcError::TimedOut => "request timed out".into(),
            RpcError::Cancelled => "request was cancelled".into(),
        }
    }
}

type Reply = Result<Value, RpcError>;
type Listener = mpsc::UnboundedSender<Value>;

#[derive(Default)]
struct Pending {
    replies: HashMap<u64, oneshot::Sender<Reply>>,
    progress: HashMap<u64, Listener>,
    /// Set once the connection is gone: every later request fails with it.
    closed: Option<String>,
}

pub struct Rpc {
    wire: Arc<dyn Wire>,
    next_id: AtomicU64,
    pending: Arc<Mutex<Pending>>,
}

impl Rpc {
    /// The router a connection's transport delivers to; `start` joins it to the wire.
    pub fn router() -> Arc<Router> {
        Arc::new(Router {
            wire: OnceLock::new(),
            pending: Arc::new(Mutex::new(Pending::default())),
        })
    }

    pub fn start(wire: Arc<dyn Wire>, router: &Router) -> Arc<Rpc> {
        let _ = router.wire.set(wire.clone());
        Arc::new(Rpc {
            wire,
            next_id: AtomicU64::new(1),
            pending: router.pending.clone(),
        })
    }

    pub fn wire(&self) -> &Arc<dyn Wire> {
        &self.wire
    }

    pub fn is_closed(&self) -> Option<String> {
        lock(&self.pending).closed.clone()
    }

    /// Fails every pending and later request with `reason`.
    pub fn close(&self, reason: &str) {
        fail_all(&self.pending, reason);
    }

    pub fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        self.wire
            .send(envelope(None, method, &params), None)
            .map_err(RpcError::Closed)
    }

    /// Tells the server the handshake is done (and the transport which version it agreed).
    pub fn initialized(&self, protocol_version: &str) -> Result<(), RpcError> {
        let text = envelope(None, "notifications/initialized", &json!({}));
        self.wire
            .initialized(protocol_version, text)
            .map_err(RpcError::Closed)
    }

    /// One request. `progress` receives the params of `notifications/progress` for it;
    /// `cancel` resolving gives up on it (and tells the server).
    pub async fn request(
        &self,
        method: &str,
        mut params: Value,
        timeout: Option<Duration>,
        progress: Option<Listener>,
        cancel: impl Future<Output = ()>,
    ) -> Reply {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            if let Some(reason) = &pending.closed {
                return Err(RpcError::Closed(reason.clone()));
            }
            pending.replies.insert(id, tx);
            if let Some(listener) = progress {
                pending.progress.insert(id, listener);
                if let Value::Object(p) = &mut params {
                    let meta = p.entry("_meta").or_insert_with(|| json!({}));
                    if let Value::Object(meta) = meta {
                        meta.insert("progressToken".into(), json!(id));
                    }
                }
            }
        }
        if let Err(reason) = self
            .wire
            .send(envelope(Some(id), method, &params), Some(id))
        {
            self.forget(id);
            return Err(RpcError::Closed(reason));
        }
        let timer = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            // The router already removed this id (and its progress listener).
            reply = rx => {
                reply.unwrap_or_else(|_| Err(RpcError::Closed(self.is_closed().unwrap_or_else(|| "connection closed".into()))))
            }
            _ = timer => {
                self.give_up(id, "timed out");
                Err(RpcError::TimedOut)
            }
            _ = cancel => {
                self.give_up(id, "cancelled by the caller");
                Err(RpcError::Cancelled)
            }
        }
    }

    fn forget(&self, id: u64) {
        let mut pending = lock(&self.pending);
        pending.replies.remove(&id);
        pending.progress.remove(&id);
    }

    /// Drops the request and tells the server, which may stop working on it.
    fn give_up(&self, id: u64, reason: &str) {
        self.forget(id);
        if self.is_closed().is_none() {
            let _ = self.notify(
                "notifications/cancelled",
                json!({ "requestId": id, "reason": reason }),
            );
        }
    }
}

/// The JSON-RPC text of a request or notification, params serialized once and never copied:
/// this is on the path of every call.
fn envelope(id: Option<u64>, method: &str, params: &Value) -> String {
    let params = serde_json::to_string(params).unwrap_or_else(|_| "{}".into());
    let mut out = String::with_capacity(params.len() + method.len() + 48);
    out.push_str("{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        out.push_str("\"id\":");
        out.push_str(&id.to_string());
        out.push(',');
    }
    out.push_str("\"method\":");
    crate::core::jcs::write_string(&mut out, method);
    out.push_str(",\"params\":");
    out.push_str(&params);
    out.push('}');
    out
}

fn lock(m: &Mutex<Pending>) -> std::sync::MutexGuard<'_, Pending> {
    // A panic while holding the lock cannot leave the maps inconsistent; keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn fail_all(pending: &Mutex<Pending>, reason: &str) {
    let replies = {
        let mut p = lock(pending);
        if p.closed.is_none() {
            p.closed = Some(reason.to_owned());
        }
        p.progress.clear();
        std::mem::take(&mut p.replies)
    };
    for (_, tx) in replies {
        let _ = tx.send(Err(RpcError::Closed(reason.to_owned())));
    }
}

/// Routes inbound messages to their callers, on whichever thread the transport read them.
pub struct Router {
    /// Set once the transport exists; a server request that comes earlier goes unanswered.
    wire: OnceLock<Arc<dyn Wire>>,
    pending: Arc<Mutex<Pending>>,
}

impl Sink for Router {
    fn event(&self, event: Event) {
        match event {
            Event::Message(Value::Array(batch)) => batch.into_iter().for_each(|m| self.handle(m)),
            Event::Message(message) => self.handle(message),
            Event::Closed(reason) => fail_all(&self.pending, &reason),
        }
    }
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
        let tx = {
            let mut pending = lock(&self.pending);
            pending.progress.remove(&id);
            pending.replies.remove(&id)
        };
        let Some(tx) = tx else {
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
        let _ = tx.send(reply);
    }

    fn notification(&self, method: &str, params: Option<Value>) {
        if method != "notifications/progress" {
            return;
        }
        let Some(params) = params else { return };
        let Some(token) = params.get("progressToken").and_then(Value::as_u64) else {
            return;
        };
        if let Some(listener) = lock(&self.pending).progress.get(&token) {
            let _ = listener.send(params);
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
