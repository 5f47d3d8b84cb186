//! JSON-RPC 2.0 over a transport: ids, pending replies, timeouts, cancellation, server pings.

use super::router::Router;
use super::trace::{Ended, Tracer};
use crate::core::error::Failure;
use crate::core::lite::RawObject;
use crate::sync::lock;
use crate::transport::{Route, Wire};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, Notify};

#[derive(Debug, Clone, PartialEq)]
pub enum RpcError {
    /// The server answered with a JSON-RPC error.
    Remote {
        code: i64,
        message: String,
    },
    /// Our transport could not deliver the request (its text is ours, already redacted).
    Transport(Failure),
    /// The connection is gone (closed by us, or the server died).
    Closed(String),
    TimedOut,
    /// The caller gave up (an abort signal).
    Cancelled,
}

impl RpcError {
    pub fn describe(&self) -> String {
        match self {
            RpcError::Remote { code, message } => format!("MCP error {code}: {message}"),
            RpcError::Transport(failure) => failure.message.clone(),
            RpcError::Closed(reason) => reason.clone(),
            RpcError::TimedOut => "request timed out".into(),
            RpcError::Cancelled => "request was cancelled".into(),
        }
    }

    /// What the caller is told: `describe()`'s text, with the OAuth kind our transport gave it.
    pub fn into_failure(self) -> Failure {
        match self {
            RpcError::Transport(failure) => failure,
            other => other.describe().into(),
        }
    }
}

pub type Reply = Result<Value, RpcError>;

/// The requests sent again, once, when a modern connection lost their answer.
const REISSUED: [&str; 2] = ["tools/list", "server/discover"];
/// Receives the params of each `notifications/progress` for one request, on the reading thread.
pub type Listener = Arc<dyn Fn(Value) + Send + Sync>;

/// Maps a reply's `result` while it is still text (see `Router::frame`): the outcome, or
/// `None` to have the reply parsed into a `Value` and answered as any other.
pub type Fast = Arc<dyn Fn(&RawObject<'_>) -> Option<Result<String, Failure>> + Send + Sync>;

/// What a waiter is answered with: the reply, or what its `Fast` made of it.
pub enum Answer {
    Reply(Reply),
    Mapped(Result<String, Failure>),
}

/// Takes a request's reply exactly once. One dropped unanswered (its connection torn down
/// without a reason) answers "connection closed", so no caller ever waits forever.
pub struct Waiter {
    f: Option<Box<dyn FnOnce(Answer) + Send>>,
    fast: Option<Fast>,
}

impl Waiter {
    pub fn new(f: impl FnOnce(Reply) + Send + 'static) -> Self {
        Self::answered(None, move |answer| match answer {
            Answer::Reply(reply) => f(reply),
            // Never given without a `Fast`.
            Answer::Mapped(_) => f(Err(RpcError::Closed("connection closed".into()))),
        })
    }

    /// A waiter whose reply `fast` may map from its text, `f` then getting `Answer::Mapped`.
    pub fn answered(fast: Option<Fast>, f: impl FnOnce(Answer) + Send + 'static) -> Self {
        Self {
            f: Some(Box::new(f)),
            fast,
        }
    }

    pub(super) fn answer(self, reply: Reply) {
        self.give(Answer::Reply(reply));
    }

    pub(super) fn give(mut self, answer: Answer) {
        if let Some(f) = self.f.take() {
            f(answer);
        }
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if let Some(f) = self.f.take() {
            f(Answer::Reply(Err(RpcError::Closed(
                "connection closed".into(),
            ))));
        }
    }
}

pub(super) struct Entry {
    waiter: Waiter,
    deadline: Option<Instant>,
}

#[derive(Default)]
pub(super) struct Pending {
    replies: HashMap<u64, Entry>,
    pub(super) progress: HashMap<u64, Listener>,
    /// Requests with a deadline, earliest first; the timer task expires them.
    deadlines: BTreeSet<(Instant, u64)>,
    /// The deadline the timer task sleeps toward; an earlier one must wake it.
    timer_target: Option<Instant>,
    /// Set once the connection is gone: every later request fails with it.
    closed: Option<String>,
    /// Waiters in `replies` with a `Fast`: none (a sweep's pages, the handshake), and the
    /// router does not read a reply's text for one.
    fast_waiters: usize,
}

impl Pending {
    /// Whether any waiter has a `Fast`.
    pub(super) fn expects_fast(&self) -> bool {
        self.fast_waiters > 0
    }

    /// The `Fast` of request `id`'s waiter, if it has one.
    pub(super) fn fast(&self, id: u64) -> Option<Fast> {
        self.replies.get(&id)?.waiter.fast.clone()
    }

    fn insert(&mut self, id: u64, entry: Entry) {
        self.fast_waiters += usize::from(entry.waiter.fast.is_some());
        self.replies.insert(id, entry);
    }

    pub(super) fn take(&mut self, id: u64) -> Option<Waiter> {
        self.progress.remove(&id);
        let entry = self.replies.remove(&id)?;
        self.fast_waiters -= usize::from(entry.waiter.fast.is_some());
        if let Some(at) = entry.deadline {
            self.deadlines.remove(&(at, id));
        }
        Some(entry.waiter)
    }
}

pub(super) type Shared = Arc<Mutex<Pending>>;

pub struct Rpc {
    wire: Arc<dyn Wire>,
    next_id: AtomicU64,
    pending: Shared,
    timer: Arc<Notify>,
    /// The `_meta` members of every request on a modern connection (`era::modern_meta`).
    meta: OnceLock<String>,
    /// The protocol revision agreed (legacy) or spoken (modern), for the tracer.
    version: OnceLock<String>,
    /// Told of every `request` (the opening and the sweeps), when the host traces them.
    tracer: OnceLock<Arc<dyn Tracer>>,
}

impl Rpc {
    /// The router a connection's transport delivers to; `start` joins it to the wire.
    pub fn router() -> Arc<Router> {
        Arc::new(Router::new(
            Arc::new(Mutex::new(Pending::default())),
            Arc::new(Notify::new()),
        ))
    }

    /// Must run inside the tokio runtime: it starts the connection's timer task.
    pub fn start(wire: Arc<dyn Wire>, router: &Router) -> Arc<Rpc> {
        let _ = router.wire.set(wire.clone());
        tokio::spawn(expire_deadlines(
            Arc::downgrade(&router.pending),
            router.timer.clone(),
            Arc::downgrade(&wire),
        ));
        Arc::new(Rpc {
            wire,
            next_id: AtomicU64::new(1),
            pending: router.pending.clone(),
            timer: router.timer.clone(),
            meta: OnceLock::new(),
            version: OnceLock::new(),
            tracer: OnceLock::new(),
        })
    }

    /// Whether the connection speaks 2026-07-28 (the modern envelope is in use).
    pub fn modern(&self) -> bool {
        self.meta.get().is_some()
    }

    /// From now on every request carries the modern `_meta` (protocol version, client info and
    /// capabilities): the connection speaks 2026-07-28.
    pub fn speak_modern(&self, capabilities: &str, log_level: Option<&str>) {
        let _ = self
            .meta
            .set(super::era::modern_meta(capabilities, log_level));
        let _ = self.version.set(super::era::MODERN.to_owned());
    }

    /// From now on every `request` is told to `tracer` (set once, before the opening).
    pub(crate) fn trace_with(&self, tracer: Arc<dyn Tracer>) {
        let _ = self.tracer.set(tracer);
    }

    pub fn wire(&self) -> &Arc<dyn Wire> {
        &self.wire
    }

    pub fn is_closed(&self) -> Option<String> {
        lock(&self.pending).closed.clone()
    }

    /// Fails every pending and later request with `reason`.
    pub fn close(&self, reason: &str) {
        fail_all(&self.pending, &self.timer, reason);
    }

    /// Tells the server the handshake is done (and the transport which version it agreed);
    /// resolves once the transport has delivered it (`Wire::initialized` says what that means).
    pub fn initialized(
        &self,
        protocol_version: &str,
    ) -> impl std::future::Future<Output = Result<(), RpcError>> + Send + 'static {
        let _ = self.version.set(protocol_version.to_owned());
        let text = envelope(None, "notifications/initialized", "{}");
        let delivered = self.wire.initialized(protocol_version, text);
        async move { delivered.await.map_err(RpcError::Closed) }
    }

    /// The id the next `submit` should use, known to the caller before the reply can arrive.
    pub fn reserve_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends one request without waiting: `waiter` gets the reply, the timeout, or the
    /// connection's end, on whichever thread that happens. Safe to call from any thread; no
    /// task is spawned per request. `progress` receives the request's progress notifications.
    pub fn submit(
        &self,
        id: u64,
        method: &str,
        mut params: Value,
        timeout: Option<Duration>,
        progress: Option<Listener>,
        waiter: Waiter,
    ) {
        if progress.is_some() {
            if let Value::Object(p) = &mut params {
                // `_meta` goes first, where a modern connection's members are spliced in.
                let mut meta = match p.remove("_meta") {
                    Some(Value::Object(meta)) => meta,
                    _ => serde_json::Map::new(),
                };
                meta.insert("progressToken".into(), json!(id));
                let rest = std::mem::take(p);
                p.insert("_meta".into(), Value::Object(meta));
                p.extend(rest);
            }
        }
        let text = serde_json::to_string(&params).unwrap_or_else(|_| "{}".into());
        self.submit_text(id, method, &text, timeout, progress, waiter);
    }

    /// `submit` with the params already JSON text, written as they are: a caller that holds
    /// the text does not parse and print it again. One that asks for progress has put
    /// `"_meta": {"progressToken": id}` in it.
    pub fn submit_text(
        &self,
        id: u64,
        method: &str,
        params: &str,
        timeout: Option<Duration>,
        progress: Option<Listener>,
        waiter: Waiter,
    ) {
        self.submit_named(
            id,
            method,
            None,
            Vec::new(),
            params,
            timeout,
            progress,
            waiter,
        )
    }

    /// `submit_text` for a request about one named thing (`tools/call`: the tool's name, which a
    /// modern HTTP request mirrors in a header, with the arguments its tool declares mirrored).
    #[allow(clippy::too_many_arguments)]
    pub fn submit_named(
        &self,
        id: u64,
        method: &str,
        name: Option<&str>,
        mirrored: Vec<(String, String)>,
        params: &str,
        timeout: Option<Duration>,
        progress: Option<Listener>,
        waiter: Waiter,
    ) {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut wake_timer = false;
        {
            let mut pending = lock(&self.pending);
            if let Some(reason) = pending.closed.clone() {
                drop(pending);
                waiter.answer(Err(RpcError::Closed(reason)));
                return;
            }
            if let Some(listener) = progress {
                pending.progress.insert(id, listener);
            }
            if let Some(at) = deadline {
                pending.deadlines.insert((at, id));
                wake_timer = pending.timer_target.is_none_or(|t| at < t);
            }
            pending.insert(id, Entry { waiter, deadline });
        }
        if wake_timer {
            self.timer.notify_one();
        }
        let sent = match self.meta.get() {
            Some(members) => {
                let text = envelope(Some(id), method, &super::era::with_meta(params, members));
                let route = Route {
                    version: super::era::MODERN,
                    method: method.to_owned(),
                    name: name.map(str::to_owned),
                    params: mirrored,
                };
                self.wire.send_routed(text, id, route)
            }
            None => self.wire.send(envelope(Some(id), method, params), Some(id)),
        };
        if let Err(reason) = sent {
            if let Some(waiter) = lock(&self.pending).take(id) {
                waiter.answer(Err(RpcError::Closed(reason)));
            }
        }
    }

    /// One request, awaited. `timeout` is its deadline, kept by the connection's timer like
    /// every other (which also tells the server it may stop).
    /// A traced request waits for its trace context (bounded by its own timeout) before it is
    /// sent; a tracer that does not answer in time leaves it untraced on the wire.
    pub async fn request(&self, method: &str, params: Value, timeout: Option<Duration>) -> Reply {
        let started = Instant::now();
        let reply = self.request_once(method, params.clone(), timeout).await;
        // A 2026-07-28 request lost with its stream must be sent again as a new one; the
        // opening's and a list's are safe to repeat (a tool call is the caller's to decide).
        match &reply {
            Err(RpcError::Transport(f))
                if f.lost && self.meta.get().is_some() && REISSUED.contains(&method) =>
            {
                let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
                self.request_once(method, params, left).await
            }
            _ => reply,
        }
    }

    async fn request_once(
        &self,
        method: &str,
        mut params: Value,
        timeout: Option<Duration>,
    ) -> Reply {
        let id = self.reserve_id();
        let tracer = self.tracer.get().cloned();
        if let Some(tracer) = &tracer {
            let begun = tracer.begin(method, id);
            let members = match timeout {
                Some(limit) => tokio::time::timeout(limit, begun).await.unwrap_or_default(),
                None => begun.await,
            };
            super::trace::with_members(&mut params, members);
        }
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter::new(move |reply| {
            let _ = tx.send(reply);
        });
        self.submit(id, method, params, timeout, None, waiter);
        let reply = rx
            .await
            .unwrap_or_else(|_| Err(RpcError::Closed("connection closed".into())));
        if let Some(tracer) = tracer {
            // `initialize` is answered before the version it agreed is recorded.
            let agreed = match (&reply, method) {
                (Ok(result), "initialize") => result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .filter(|v| super::handshake::SUPPORTED_VERSIONS.contains(v))
                    .map(str::to_owned),
                _ => None,
            };
            let ended = Ended {
                error: reply.as_ref().err().map(super::trace::rpc_error_type),
                protocol: agreed.or_else(|| self.version.get().cloned()),
                session: self.wire.session_id(),
            };
            tracer.end(id, ended);
        }
        reply
    }

    /// Gives up on a submitted request: its waiter gets `error`, the server is told it may
    /// stop working on it. A request already answered is left alone.
    pub fn abandon(&self, id: u64, reason: &str, error: RpcError) {
        let waiter = lock(&self.pending).take(id);
        if let Some(waiter) = waiter {
            waiter.answer(Err(error));
            tell_cancelled(self.wire.as_ref(), &self.pending, id, reason);
        }
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        // Lets the timer task see its connection is gone.
        self.timer.notify_one();
    }
}

fn tell_cancelled(wire: &dyn Wire, pending: &Mutex<Pending>, id: u64, reason: &str) {
    if wire.close_stream(id) {
        return;
    }
    if lock(pending).closed.is_none() {
        let params = json!({ "requestId": id, "reason": reason });
        let _ = wire.send(
            envelope(None, "notifications/cancelled", &params.to_string()),
            None,
        );
    }
}

/// Expires requests whose deadline passed. One task per connection: it sleeps toward the
/// earliest deadline, so a steady stream of calls with the same timeout never wakes it early.
async fn expire_deadlines(pending: Weak<Mutex<Pending>>, timer: Arc<Notify>, wire: Weak<dyn Wire>) {
    loop {
        let Some(shared) = pending.upgrade() else {
            return;
        };
        let now = Instant::now();
        let (due, next) = {
            let mut p = lock(&shared);
            if p.closed.is_some() {
                return;
            }
            let mut due = Vec::new();
            while let Some(&(at, id)) = p.deadlines.first() {
                if at > now {
                    break;
                }
                if let Some(w) = p.take(id) {
                    due.push((id, w));
                } else {
                    p.deadlines.pop_first();
                }
            }
            let next = p.deadlines.first().map(|&(at, _)| at);
            p.timer_target = next;
            (due, next)
        };
        for (id, waiter) in due {
            waiter.answer(Err(RpcError::TimedOut));
            if let Some(wire) = wire.upgrade() {
                tell_cancelled(wire.as_ref(), &shared, id, "timed out");
            }
        }
        drop(shared);
        match next {
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at.into()) => {}
                    _ = timer.notified() => {}
                }
            }
            None => timer.notified().await,
        }
    }
}

/// The JSON-RPC text of a request or notification around params already serialized: this is
/// on the path of every call.
fn envelope(id: Option<u64>, method: &str, params: &str) -> String {
    let mut out = String::with_capacity(params.len() + method.len() + 48);
    out.push_str("{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        let _ = write!(out, "\"id\":{id},");
    }
    out.push_str("\"method\":");
    crate::core::jcs::write_string(&mut out, method);
    out.push_str(",\"params\":");
    out.push_str(params);
    out.push('}');
    out
}

pub(super) fn fail_all(pending: &Mutex<Pending>, timer: &Notify, reason: &str) {
    let replies = {
        let mut p = lock(pending);
        if p.closed.is_none() {
            p.closed = Some(reason.to_owned());
        }
        p.progress.clear();
        p.deadlines.clear();
        p.fast_waiters = 0;
        std::mem::take(&mut p.replies)
    };
    timer.notify_one();
    for (_, entry) in replies {
        entry
            .waiter
            .answer(Err(RpcError::Closed(reason.to_owned())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::drift::Drift;
    use crate::transport::observe::Inbound;

    /// A wire that records what was sent and can answer through the router.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<Value>>);

    impl Wire for Recorder {
        fn send(&self, message: String, _: Option<u64>) -> Result<(), String> {
            self.0
                .lock()
                .unwrap()
                .push(serde_json::from_str(&message).unwrap());
            Ok(())
        }
        fn shutdown(&self) -> futures::future::BoxFuture<'static, ()> {
            Box::pin(async {})
        }
    }

    fn connection() -> (Arc<Rpc>, Arc<Recorder>, Inbound) {
        let router = Rpc::router();
        let wire = Arc::new(Recorder::default());
        let rpc = Rpc::start(wire.clone(), &router);
        let inbound = Inbound::with_sink(Arc::new(Drift::new(false)), router);
        (rpc, wire, inbound)
    }

    fn waiter() -> (Waiter, oneshot::Receiver<Reply>) {
        let (tx, rx) = oneshot::channel();
        (Waiter::new(move |r| drop(tx.send(r))), rx)
    }

    #[tokio::test]
    async fn a_submitted_request_gets_its_reply_and_progress() {
        let (rpc, wire, inbound) = connection();
        let (w, rx) = waiter();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let listener: Listener = Arc::new(move |p| s.lock().unwrap().push(p));
        let id = rpc.reserve_id();
        rpc.submit(
            id,
            "tools/call",
            json!({}),
            Some(Duration::from_secs(5)),
            Some(listener),
            w,
        );
        let sent = wire.0.lock().unwrap()[0].clone();
        assert_eq!(sent["params"]["_meta"]["progressToken"], json!(id));
        inbound.push(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": id, "progress": 1}}));
        inbound.push(json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}}));
        assert_eq!(rx.await.unwrap(), Ok(json!({"ok": true})));
        assert_eq!(seen.lock().unwrap().len(), 1);
        // Nothing is left behind: no entry, no deadline, no listener.
        let p = lock(&rpc.pending);
        assert!(p.replies.is_empty() && p.deadlines.is_empty() && p.progress.is_empty());
    }

    /// A waiter with a `Fast` gets its reply mapped from the frame's text; what is not a plain
    /// reply (an error, a notification, an array, a key given twice) or what `Fast` declines
    /// takes the `Value` path, answered as before.
    #[tokio::test]
    async fn a_fast_waiter_is_answered_from_the_text_and_anything_else_from_a_value() {
        let (rpc, _wire, inbound) = connection();
        let fast: Fast = Arc::new(|r: &RawObject| {
            r.get("decline")
                .is_none()
                .then(|| Ok(r.get("a").unwrap_or("").to_owned()))
        });
        let start = |rpc: &Rpc| {
            let (tx, rx) = oneshot::channel();
            let id = rpc.reserve_id();
            let waiter = Waiter::answered(Some(fast.clone()), move |a| {
                drop(tx.send(match a {
                    Answer::Mapped(m) => format!("mapped {m:?}"),
                    Answer::Reply(r) => format!("value {r:?}"),
                }))
            });
            rpc.submit(id, "tools/call", json!({}), None, None, waiter);
            (id, rx)
        };
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":ID,"result":{"a":[1, 2]}}"#,
                r#"mapped Ok("[1, 2]")"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":ID,"result":{"decline":1}}"#,
                r#"value Ok(Object {"decline": Number(1)})"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":ID,"result":{},"error":null}"#,
                r#"value Err(Remote { code: -32603, message: "unknown error" })"#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":ID,"id":ID,"result":{}}"#,
                r#"value Ok(Object {})"#,
            ),
        ];
        for (frame, expected) in cases {
            let (id, rx) = start(&rpc);
            assert!(inbound.push_text(frame.replace("ID", &id.to_string()).as_bytes()));
            assert_eq!(rx.await.unwrap(), expected, "{frame}");
        }
        // A positional array is no reply: it is not taken, and the call stays pending.
        let (id, _rx) = start(&rpc);
        inbound.push_text(format!("[{id},{{}}]").as_bytes());
        assert!(lock(&rpc.pending).replies.contains_key(&id));
        // Every answered fast waiter was counted out; the one still pending is counted in.
        assert_eq!(lock(&rpc.pending).fast_waiters, 1);
        rpc.close("done");
        assert!(!lock(&rpc.pending).expects_fast());
    }

    #[tokio::test]
    async fn the_timer_expires_a_request_and_tells_the_server() {
        let (rpc, wire, _inbound) = connection();
        let (w, rx) = waiter();
        let id = rpc.reserve_id();
        rpc.submit(
            id,
            "tools/call",
            json!({}),
            Some(Duration::from_millis(30)),
            None,
            w,
        );
        // A later request with a longer deadline does not hold the earlier one back.
        let (w2, mut rx2) = waiter();
        rpc.submit(
            rpc.reserve_id(),
            "tools/call",
            json!({}),
            Some(Duration::from_secs(30)),
            None,
            w2,
        );
        let started = Instant::now();
        assert_eq!(rx.await.unwrap(), Err(RpcError::TimedOut));
        assert!(started.elapsed() < Duration::from_secs(2));
        let sent = wire.0.lock().unwrap().clone();
        assert_eq!(sent[2]["method"], "notifications/cancelled");
        assert_eq!(sent[2]["params"]["requestId"], json!(id));
        assert!(rx2.try_recv().is_err());
    }

    #[tokio::test]
    async fn an_earlier_deadline_wakes_a_timer_sleeping_toward_a_later_one() {
        let (rpc, _wire, _inbound) = connection();
        let (w1, _rx1) = waiter();
        rpc.submit(
            rpc.reserve_id(),
            "a",
            json!({}),
            Some(Duration::from_secs(60)),
            None,
            w1,
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        let (w2, rx2) = waiter();
        rpc.submit(
            rpc.reserve_id(),
            "b",
            json!({}),
            Some(Duration::from_millis(20)),
            None,
            w2,
        );
        let r = tokio::time::timeout(Duration::from_secs(2), rx2).await;
        assert_eq!(r.unwrap().unwrap(), Err(RpcError::TimedOut));
    }

    #[tokio::test]
    async fn abandon_answers_once_and_close_fails_the_rest() {
        let (rpc, _wire, inbound) = connection();
        let (w1, rx1) = waiter();
        let id1 = rpc.reserve_id();
        rpc.submit(id1, "a", json!({}), None, None, w1);
        let (w2, rx2) = waiter();
        rpc.submit(rpc.reserve_id(), "b", json!({}), None, None, w2);
        rpc.abandon(id1, "cancelled by the caller", RpcError::Cancelled);
        // A reply after giving up is ignored.
        inbound.push(json!({"jsonrpc": "2.0", "id": id1, "result": {}}));
        assert_eq!(rx1.await.unwrap(), Err(RpcError::Cancelled));
        rpc.close("gone");
        assert_eq!(rx2.await.unwrap(), Err(RpcError::Closed("gone".into())));
        let (w3, rx3) = waiter();
        rpc.submit(rpc.reserve_id(), "c", json!({}), None, None, w3);
        assert_eq!(rx3.await.unwrap(), Err(RpcError::Closed("gone".into())));
    }

    #[test]
    fn a_waiter_dropped_unanswered_answers_closed() {
        let (w, mut rx) = waiter();
        drop(w);
        assert_eq!(
            rx.try_recv().unwrap(),
            Err(RpcError::Closed("connection closed".into()))
        );
    }
}
