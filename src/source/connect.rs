//! Opening a connection: the transport from the host's connector, the handshake in the era the
//! config or the server chose, the race with `close()` (a connect it overtakes ends with its
//! transport released, whatever phase it was in), the list-change subscription an era may
//! need, and the `tools/list` sweep.

use super::{asks, redacted, Connector, Error, Source, SourceError};
use crate::client::handshake::{self, Opened, Refusal};
use crate::client::rpc::{Rpc, RpcError, Waiter};
use crate::core::drift::Drift;
use crate::core::error::{with_diagnostics, ConfigError, Failure};
use crate::core::jcs::format_f64;
use crate::core::sweep::{sweep, PageError, SweepBounds, SweepError};
use crate::sync::lock;
use crate::transport::observe::Inbound;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::{Arc, Weak};
use std::time::Duration;

pub struct Connection {
    pub rpc: Arc<Rpc>,
    /// Unique per connection in this process: a snapshot of a replaced connection never
    /// shares its key with one of the new connection.
    pub serial: u64,
}

/// Holds open the request that brings list changes in an era that needs one
/// (`Rules::list_changes`), which the server answers only when it ends the subscription. Its
/// notifications reach the same observer (`transport::observe`) as a legacy server's
/// unsolicited ones, so invalidation, the race guard and the drift policy are the same. Its
/// end, graceful or not, may have lost a notification: the cached list is treated as stale,
/// and the request is opened again with a bounded back-off while the connection lives.
fn listen(conn: &Arc<Connection>, drift: Arc<Drift>) {
    // The end of the request may be read on any thread (the JS thread, for an in-process
    // server): the next one is opened from the runtime the connection started on.
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    fn open(rpc: Weak<Rpc>, drift: Arc<Drift>, pause: Duration, runtime: tokio::runtime::Handle) {
        let Some(live) = rpc.upgrade() else { return };
        let Some((method, params)) = live.rules().list_changes() else {
            return;
        };
        let id = live.reserve_id();
        let again = rpc.clone();
        let opened = std::time::Instant::now();
        let waiter = Waiter::new(move |_ended| {
            let Some(rpc) = again.upgrade() else { return };
            if rpc.is_closed().is_some() {
                return;
            }
            drift.stale();
            // A server that ends it soon after it opened, again and again, cleanly or not, is
            // asked ever more slowly (each end makes the next import sweep again); one that
            // held it a while is asked again soon.
            let pause = match opened.elapsed() < LISTEN_HELD {
                true => (pause * 2).min(LISTEN_PAUSE_MAX),
                false => LISTEN_PAUSE,
            };
            let again = Arc::downgrade(&rpc);
            let on = runtime.clone();
            runtime.spawn(async move {
                tokio::time::sleep(pause).await;
                open(again, drift, pause, on);
            });
        });
        live.submit_text(id, method, params, None, None, waiter);
    }
    open(Arc::downgrade(&conn.rpc), drift, LISTEN_PAUSE, runtime);
}

/// How long a listen request that ended waits before it is opened again, and the most that
/// doubles to when it keeps failing.
const LISTEN_PAUSE: Duration = Duration::from_millis(100);
const LISTEN_PAUSE_MAX: Duration = Duration::from_secs(30);
/// A listen request that lasted less than this ended "at once": the pause before the next
/// one doubles.
const LISTEN_HELD: Duration = Duration::from_secs(5);

static CONNECTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Connection {
    pub(super) fn alive(&self) -> bool {
        self.rpc.is_closed().is_none()
    }

    /// Ends the connection gracefully (a child is given time to exit on its own).
    pub(super) async fn release(&self, reason: &str) {
        self.rpc.close(reason);
        to_the_end(self.rpc.wire().shutdown()).await;
    }

    /// Ends the connection at once (a connect that failed, timed out or was overtaken).
    pub(super) async fn abort(&self, reason: &str) {
        self.rpc.close(reason);
        to_the_end(self.rpc.wire().abort()).await;
    }
}

/// Runs a wire's release to its end. Whoever waits may be dropped half-way (a `select!` that
/// another branch won, a connect that `close()` overtook); the release must still reach its
/// end, or a child would be left killed but unreaped, its process group still registered for a
/// later kill. It is polled where it is awaited, and only what is left of it when its waiter is
/// dropped goes on as a task of its own: a task for every release was two more crossings
/// between threads in every `close()`.
pub(super) async fn to_the_end(release: BoxFuture<'static, ()>) {
    ToTheEnd(Some(release)).await
}

struct ToTheEnd(Option<BoxFuture<'static, ()>>);

impl std::future::Future for ToTheEnd {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        use std::task::Poll;
        let Some(release) = self.0.as_mut() else {
            return Poll::Ready(());
        };
        // A release that panics ends there, as it did on a task of its own.
        let polled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| release.as_mut().poll(cx)));
        match polled {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(())) | Err(_) => {
                self.0 = None;
                Poll::Ready(())
            }
        }
    }
}

impl Drop for ToTheEnd {
    fn drop(&mut self) {
        if let (Some(rest), Ok(runtime)) = (self.0.take(), tokio::runtime::Handle::try_current()) {
            runtime.spawn(rest);
        }
    }
}

impl<C: Connector> Source<C> {
    pub(super) async fn connect(&self) -> Result<Arc<Connection>, Error<C>> {
        let epoch = lock(&self.live).epoch;
        if let Some(conn) = self.connect_in().await? {
            return Ok(conn);
        }
        // The server ended the connection on which it refused `initialize`: a new one, opened
        // in the era it named (its own `connectMs`), which the source remembers by now.
        if lock(&self.live).epoch != epoch {
            return Err(SourceError::Failed(format!(
                "mcp: '{}' was closed while connecting",
                self.id
            )));
        }
        self.connect_in().await?.ok_or_else(|| {
            SourceError::Failed(format!("mcp: '{}' could not be opened again", self.id))
        })
    }

    /// One connection, opened in the era the source remembers or else as the config says;
    /// `None` when it has to be opened again in another era, which the source remembers from
    /// then on (the connection is gone by then).
    async fn connect_in(&self) -> Result<Option<Arc<Connection>>, Error<C>> {
        let protocol = self.era.get().map_or(self.config.protocol, |era| era.pin());
        let connect = self.config.timeouts.connect;
        let conn = self.wired(connect.duration, connect.ms).await?;
        if let Some(tracer) = self.connector.tracer() {
            conn.rpc.trace_with(tracer);
        }
        // The remaining opening shares the same budget.
        let capabilities = self.asker.capabilities();
        let opening = handshake::open(&conn.rpc, Some(connect.duration), protocol, &capabilities);
        match opening.await {
            Ok(opened) => {
                self.opened(&conn, opened, connect.duration).await;
                Ok(Some(conn))
            }
            Err(refusal) => self.refused(&conn, refusal, connect.ms).await,
        }
    }

    /// The connection's transport, from the host's connector within `budget`, registered as
    /// the live connection unless `close()` overtook it (then released, whatever phase it was
    /// in).
    async fn wired(&self, budget: Duration, connect_ms: f64) -> Result<Arc<Connection>, Error<C>> {
        let (epoch, mut closed) = {
            let live = lock(&self.live);
            (live.epoch, live.closed.subscribe())
        };
        let router = Rpc::router();
        // Where a call's further rounds (and a repeat of one whose answer was lost) are sent from.
        let runtime = tokio::runtime::Handle::current();
        self.asker.set_runtime(runtime.clone());
        if self.asker.offered() {
            router.answer_with(Arc::new(asks::ForServer(self.asker.clone())), runtime);
        }
        let inbound = Inbound::with_sink(self.drift.clone(), router.clone());
        let attempt = async {
            let wire = self.connector.open(inbound).await?;
            let conn = Arc::new(Connection {
                rpc: Rpc::start(wire, &router, |task| self.connector.spawn(task)),
                serial: CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            });
            let registered = {
                let mut live = lock(&self.live);
                let current = live.epoch == epoch;
                if current {
                    live.conn = Some(conn.clone());
                }
                current
            };
            if !registered {
                conn.abort("mcp: the source was closed while connecting")
                    .await;
                return Err(SourceError::Failed(format!(
                    "mcp: '{}' was closed while connecting",
                    self.id
                )));
            }
            Ok::<_, Error<C>>(conn)
        };
        let closed_meanwhile = async {
            let _ = closed.wait_for(|e| *e != epoch).await;
        };
        tokio::select! {
            result = tokio::time::timeout(budget, attempt) => match result {
                Ok(Ok(conn)) => Ok(conn),
                Ok(Err(e)) => {
                    to_the_end(self.connector.abandon()).await;
                    Err(e)
                }
                Err(_) => Err(self.connect_timeout(connect_ms, None).await),
            },
            _ = closed_meanwhile => {
                to_the_end(self.connector.abandon()).await;
                Err(SourceError::Failed(format!("mcp: '{}' was closed while connecting", self.id)))
            }
        }
    }

    /// An opening that failed, with its connection released: `None` when the server is to be
    /// opened again in the era it named (which the source remembers from now on).
    async fn refused(
        &self,
        conn: &Arc<Connection>,
        refusal: Refusal,
        connect_ms: f64,
    ) -> Result<Option<Arc<Connection>>, Error<C>> {
        match refusal {
            Refusal::Reopen(era) => {
                let _ = self.era.set(era);
                self.forget_live(conn);
                conn.abort("mcp: the server ended the connection it refused")
                    .await;
                Ok(None)
            }
            Refusal::Rpc(RpcError::TimedOut) => {
                Err(self.connect_timeout(connect_ms, Some(conn)).await)
            }
            Refusal::Pin(why) => {
                self.forget_live(conn);
                conn.abort("mcp: the opening was refused").await;
                let why = self.secrets.redact(&why);
                Err(SourceError::Refused(ConfigError::new(format!(
                    "mcp: '{}' cannot be opened: {why}",
                    self.id
                ))))
            }
            Refusal::Rpc(e) => {
                self.forget_live(conn);
                let failure = self.opening_failed(e, conn);
                conn.abort("mcp: the handshake failed").await;
                Err(failure.into())
            }
        }
    }

    /// What an era asks once it is open: the subscription that brings list changes, when the
    /// server offers them, and the log level the host hears, when the era sets it with a
    /// request (one the server refuses keeps its own).
    async fn opened(&self, conn: &Arc<Connection>, opened: Opened, timeout: Duration) {
        let rules = opened.era.rules();
        if opened.list_changed && rules.list_changes().is_some() {
            listen(conn, self.drift.clone());
        }
        let asked = self
            .asker
            .log_level()
            .and_then(|level| rules.log_level(level));
        if let Some((method, params)) = asked {
            let _ = conn.rpc.request(method, params, Some(timeout)).await;
        }
    }

    /// Why an opening failed. A connection that ended says how (stderr included); any other
    /// failure gets the server's last words here: beside a server's error answer, whose message
    /// stays the SDK client's as in the original, and at the end of any other.
    fn opening_failed(&self, e: RpcError, conn: &Connection) -> Failure {
        if let RpcError::Closed(reason) = e {
            return reason.into();
        }
        let diagnostics = conn.rpc.wire().diagnostics();
        let mut failure = redacted(&self.secrets, e).into_failure();
        match &mut failure.server {
            Some(server) => server.stderr = diagnostics,
            None => failure = failure.map_message(|m| with_diagnostics(m, diagnostics)),
        }
        failure
    }

    async fn connect_timeout(&self, connect_ms: f64, conn: Option<&Arc<Connection>>) -> Error<C> {
        let live = self.live.lock().ok().and_then(|mut l| l.conn.take());
        let mut released = false;
        let mut diagnostics = None;
        for c in conn.into_iter().cloned().chain(live) {
            diagnostics = diagnostics.or_else(|| c.rpc.wire().diagnostics());
            c.abort("mcp: connect timed out").await;
            released = true;
        }
        if !released {
            to_the_end(self.connector.abandon()).await;
        }
        let message = format!(
            "mcp: connect to '{}' timed out after {}ms",
            self.id,
            format_f64(connect_ms)
        );
        SourceError::Refused(ConfigError::connect_timeout(with_diagnostics(
            message,
            diagnostics,
        )))
    }

    fn forget_live(&self, conn: &Arc<Connection>) {
        if let Ok(mut live) = self.live.lock() {
            if live.conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
                live.conn = None;
            }
        }
    }

    pub(super) async fn sweep(
        &self,
        conn: &Arc<Connection>,
        on_page: impl FnMut(Vec<Value>),
    ) -> Result<(), Error<C>> {
        let bounds = SweepBounds {
            max_tools: self.config.max_tools,
            max_pages: self.config.max_pages,
            list: Some(self.config.timeouts.list),
            discovery: self.config.timeouts.discovery,
        };
        let rpc = conn.rpc.clone();
        let secrets = self.secrets.clone();
        let result = sweep(
            &self.id,
            bounds,
            |cursor, timeout| {
                let rpc = rpc.clone();
                let secrets = secrets.clone();
                async move {
                    let params = match cursor {
                        Some(c) => json!({ "cursor": c }),
                        None => json!({}),
                    };
                    rpc.request("tools/list", params, timeout)
                        .await
                        .map_err(|e| match e {
                            RpcError::TimedOut => PageError::TimedOut,
                            other => PageError::Failed(redacted(&secrets, other).into_failure()),
                        })
                }
            },
            on_page,
        )
        .await;
        result.map_err(|e| match e {
            SweepError::Refused(r) => SourceError::Refused(r),
            // A server's error answer in the SDK client's words, as the original's host saw
            // it; the source it came from travels beside it (lib/errors.js).
            SweepError::Failed(f) => f
                .in_context(|m| format!("mcp: tools/list of '{}' failed: {m}", self.id))
                .into(),
        })
    }
}
