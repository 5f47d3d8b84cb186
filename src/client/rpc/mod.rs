//! JSON-RPC 2.0 over a transport: ids, pending replies, timeouts, cancellation, server pings.

use super::era::{self, Capabilities, Era, Rules, Speaking};
pub use super::error::{Reply, RpcError};
use super::pending::{fail_all, Entry, Pending, Shared};
pub use super::pending::{Answer, Fast, Listener, Waiter};
use super::router::Router;
use super::text::{self, Meta};
use super::trace::{Ended, Tracer};
use crate::sync::lock;
use crate::transport::Wire;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, Notify};

/// The requests sent again, once, when their answer was lost and the era allows it
/// (`Rules::resends_lost`): the opening's and a list's are safe to repeat (a tool call is the
/// caller's to decide).
const REISSUED: [&str; 2] = ["tools/list", "server/discover"];
/// One request as its sender describes it; the client writes its text (`client::text`).
pub struct Request<'a> {
    pub method: &'a str,
    /// The params object's JSON text, without `_meta` (the client writes that).
    pub params: &'a str,
    /// The sender's own `_meta` members' text (a trace context).
    pub meta: Option<&'a str>,
    /// The one thing the request is about (`tools/call`: the tool) and the arguments its tool
    /// declares mirrored, for what the era mirrors outside the body (`Rules::route`).
    pub name: Option<&'a str>,
    pub mirrored: Vec<(String, String)>,
}

impl<'a> Request<'a> {
    pub fn new(method: &'a str, params: &'a str) -> Self {
        Self {
            method,
            params,
            meta: None,
            name: None,
            mirrored: Vec::new(),
        }
    }
}

pub struct Rpc {
    wire: Arc<dyn Wire>,
    next_id: AtomicU64,
    pending: Shared,
    timer: Arc<Notify>,
    /// The era the connection speaks and its envelope, set once by the opening; shared with
    /// the router (a server's own requests) and the deadline timer (a request's cancellation).
    speaking: Speaking,
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

    /// Joins `wire` to `router` and starts the connection's timer task with `spawn` (inside
    /// the tokio runtime's context: the task sleeps on its timers).
    pub fn start(
        wire: Arc<dyn Wire>,
        router: &Router,
        spawn: impl FnOnce(BoxFuture<'static, ()>),
    ) -> Arc<Rpc> {
        let _ = router.wire.set(wire.clone());
        spawn(Box::pin(expire_deadlines(
            Arc::downgrade(&router.pending),
            router.timer.clone(),
            Arc::downgrade(&wire),
            router.speaking.clone(),
        )));
        Arc::new(Rpc {
            wire,
            next_id: AtomicU64::new(1),
            pending: router.pending.clone(),
            timer: router.timer.clone(),
            speaking: router.speaking.clone(),
            tracer: OnceLock::new(),
        })
    }

    /// The era the opening chose, once it chose.
    pub(crate) fn era(&self) -> Option<Era> {
        self.speaking.era()
    }

    /// The answers of the era spoken (the legacy ones while the opening has not chosen).
    pub(crate) fn rules(&self) -> &'static dyn Rules {
        self.speaking.rules()
    }

    /// From now on every request is sent in `era`, which declares `capabilities` its own way
    /// (set once, by the opening, before it sends anything in that era).
    pub(super) fn speak(&self, era: Era, capabilities: &Capabilities) {
        self.speaking.set(era, capabilities);
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
        let text = text::notification("notifications/initialized", "{}");
        let delivered = self.wire.initialized(protocol_version, text);
        async move { delivered.await.map_err(RpcError::Closed) }
    }

    /// The id the next `submit` should use, known to the caller before the reply can arrive.
    pub fn reserve_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// `submit_text` with the params as a `Value`.
    #[cfg(test)]
    pub fn submit(
        &self,
        id: u64,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
        progress: Option<Listener>,
        waiter: Waiter,
    ) {
        let text = serde_json::to_string(&params).unwrap_or_else(|_| "{}".into());
        self.submit_text(id, method, &text, timeout, progress, waiter);
    }

    /// Sends one request without waiting: `waiter` gets the reply, the timeout, or the
    /// connection's end, on whichever thread that happens. Safe to call from any thread; no
    /// task is spawned per request. `progress` receives the request's progress notifications.
    /// The params are JSON text, written as they are: a caller that holds the text does not
    /// parse and print it again.
    pub fn submit_text(
        &self,
        id: u64,
        method: &str,
        params: &str,
        timeout: Option<Duration>,
        progress: Option<Listener>,
        waiter: Waiter,
    ) {
        self.send(id, Request::new(method, params), timeout, progress, waiter)
    }

    /// `submit_text` for a request described whole (`Request`: its own `_meta` members, the
    /// named thing the era may mirror). Its text is written here, once, in the era spoken.
    pub fn send(
        &self,
        id: u64,
        request: Request<'_>,
        timeout: Option<Duration>,
        progress: Option<Listener>,
        waiter: Waiter,
    ) {
        let meta = Meta {
            envelope: self.speaking.envelope(),
            own: request.meta,
            progress: progress.is_some(),
        };
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
        let text = text::request(id, request.method, meta, request.params);
        let sent = match self
            .rules()
            .route(request.method, request.name, request.mirrored)
        {
            Some(route) => self.wire.send_routed(text, id, route),
            None => self.wire.send(text, Some(id)),
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
        match &reply {
            Err(RpcError::Transport(f))
                if f.lost && self.rules().resends_lost() && REISSUED.contains(&method) =>
            {
                let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
                self.request_once(method, params, left).await
            }
            _ => reply,
        }
    }

    async fn request_once(&self, method: &str, params: Value, timeout: Option<Duration>) -> Reply {
        let id = self.reserve_id();
        let tracer = self.tracer.get().filter(|t| t.live()).cloned();
        let mut own = None;
        if let Some(tracer) = &tracer {
            let begun = tracer.begin(method, id);
            let members = match timeout {
                Some(limit) => tokio::time::timeout(limit, begun).await.unwrap_or_default(),
                None => begun.await,
            };
            own = super::trace::members_text(&members);
        }
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter::new(move |reply| {
            let _ = tx.send(reply);
        });
        let text = serde_json::to_string(&params).unwrap_or_else(|_| "{}".into());
        let request = Request {
            meta: own.as_deref(),
            ..Request::new(method, &text)
        };
        self.send(id, request, timeout, None, waiter);
        let reply = rx
            .await
            .unwrap_or_else(|_| Err(RpcError::Closed("connection closed".into())));
        if let Some(tracer) = tracer {
            // `initialize` is answered before the era it agreed is set.
            let agreed = match (&reply, method) {
                (Ok(result), "initialize") => era::legacy::agreed(result).ok(),
                _ => None,
            };
            let ended = Ended {
                error: reply.as_ref().err().map(super::trace::rpc_error_type),
                protocol: agreed.or(self.era()).map(|e| e.version().to_owned()),
                session: self
                    .wire
                    .session_id()
                    .map(|s| super::trace::attribute_text(&s)),
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
            tell_cancelled(self.wire.as_ref(), &self.pending, self.rules(), id, reason);
        }
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        // Lets the timer task see its connection is gone.
        self.timer.notify_one();
    }
}

/// Tells the server it may stop working on request `id`, as the era cancels a request.
fn tell_cancelled(
    wire: &dyn Wire,
    pending: &Mutex<Pending>,
    rules: &dyn Rules,
    id: u64,
    reason: &str,
) {
    if rules.closes_stream_to_cancel() && wire.close_stream(id) {
        return;
    }
    if lock(pending).closed.is_none() {
        let params = json!({ "requestId": id, "reason": reason });
        let _ = wire.send(
            text::notification("notifications/cancelled", &params.to_string()),
            None,
        );
    }
}

/// Expires requests whose deadline passed. One task per connection: it sleeps toward the
/// earliest deadline, so a steady stream of calls with the same timeout never wakes it early.
async fn expire_deadlines(
    pending: Weak<Mutex<Pending>>,
    timer: Arc<Notify>,
    wire: Weak<dyn Wire>,
    speaking: Speaking,
) {
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
                tell_cancelled(wire.as_ref(), &shared, speaking.rules(), id, "timed out");
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

#[cfg(test)]
mod tests;
