//! One tool source: lazy connect, the cached snapshot and its generation, single-flight
//! sweeps, the drift poison, and close (which resets all of it, so tools() connects afresh).

use crate::client::era::Era;
use crate::client::handshake::{self, Refusal};
use crate::client::rpc::{Listener, Rpc, RpcError, Waiter};
use crate::client::trace::Tracer;
use crate::core::admit::{Admission, AdmissionError, ToolSpec};
use crate::core::config::{wait_of, Config, Drift as DriftPolicy, Protocol};
use crate::core::drift::Drift;
use crate::core::error::{with_diagnostics, ConfigError, Failure, OAuthFailure};
use crate::core::headers;
use crate::core::jcs::format_f64;
use crate::core::lite;
use crate::core::lock::{Lock, Report};
use crate::core::secrets::Secrets;
use crate::core::sweep::{sweep, PageError, SweepBounds, SweepError};
use crate::core::validate::describe;
use crate::transport::observe::{Inbound, MAX_JSON_DEPTH};
use crate::transport::Wire;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

mod asks;
mod call;
mod lock;
mod tasks;

pub use asks::{AskHook, HookFailure};

/// A call's `error.type` (`client::trace`), beside its failure.
pub type ErrorType = std::borrow::Cow<'static, str>;

/// The SDK's default request timeout, used where the config declares none.
pub const DEFAULT_TIMEOUT_MS: f64 = 60_000.0;

/// A mapped result's failure, redacted: its text is the server's (an `isError` result's
/// content, which the SDK server makes of every error a tool throws, or the values a schema
/// check quotes from structured content), and may echo a header or env value as a JSON-RPC
/// error's message may.
pub(crate) fn redacted_failure(secrets: &Secrets, f: Failure) -> Failure {
    f.map_message(|m| secrets.redact(&m))
}

/// `e` with the server's own error message redacted: it can echo a header or env value.
/// Failures our transports report carry their server text redacted already.
pub(crate) fn redacted(secrets: &Secrets, e: RpcError) -> RpcError {
    match e {
        RpcError::Remote { code, message } => RpcError::Remote {
            code,
            message: secrets.redact(&message),
        },
        other => other,
    }
}

/// Why a source operation failed, sorted by how the host must surface it. `H` is an error of
/// the host's own that a connect may end with (its in-process server's `connect` threw it),
/// handed back untouched.
#[derive(Debug)]
pub enum SourceError<H> {
    /// A typed refusal (`ConfigError`).
    Refused(ConfigError),
    /// A plain `Error`.
    Failed(String),
    /// An OAuth failure the host can tell apart by its kind (`OAuthError`).
    OAuth(OAuthFailure, String),
    /// The host's own error, as it was thrown.
    Host(H),
}

impl<H> From<ConfigError> for SourceError<H> {
    fn from(e: ConfigError) -> Self {
        SourceError::Refused(e)
    }
}

impl<H> From<Failure> for SourceError<H> {
    fn from(f: Failure) -> Self {
        match f.oauth {
            Some(kind) => SourceError::OAuth(kind, f.message),
            None => SourceError::Failed(f.message),
        }
    }
}

/// Creates the transport of one connection; the host's edge supplies it per transport kind.
pub trait Connector: Send + Sync + 'static {
    /// What a connect can fail with that belongs to the host (see `SourceError::Host`).
    type HostError: Send + 'static;
    #[allow(clippy::type_complexity)]
    fn open(
        &self,
        inbound: Inbound,
    ) -> BoxFuture<'static, Result<Arc<dyn Wire>, SourceError<Self::HostError>>>;
    /// Undoes a connect that failed or timed out before its wire existed.
    fn abandon(&self) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
    /// The issuer of the authorization server whose token the connection uses (OAuth).
    fn issuer(&self) -> Option<String> {
        None
    }
    /// The host's hooks for what a server asks back (`elicit`, `sample`, `roots`), if any.
    fn ask_hook(&self) -> Option<Arc<dyn AskHook>> {
        None
    }
    /// What the host's tracing is told of the opening's and the sweeps' requests.
    fn tracer(&self) -> Option<Arc<dyn Tracer>> {
        None
    }
}

pub struct Connection {
    pub rpc: Arc<Rpc>,
    /// Unique per connection in this process: a snapshot of a replaced connection never
    /// shares its key with one of the new connection.
    pub serial: u64,
    /// What the opening found the server speaks.
    pub era: std::sync::OnceLock<Era>,
}

/// On a modern connection list changes arrive only on a `subscriptions/listen` request, which
/// the server answers only when it ends the subscription. Its notifications reach the same
/// observer (`transport::observe`) as a legacy server's unsolicited ones, so invalidation, the
/// race guard and the drift policy are the same. Its end, graceful or not, may have lost a
/// notification: the cached list is treated as stale, and the request is opened again with a
/// bounded back-off while the connection lives.
fn listen(conn: &Arc<Connection>, drift: Arc<Drift>) {
    // The end of the request may be read on any thread (the JS thread, for an in-process
    // server): the next one is opened from the runtime the connection started on.
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    fn open(rpc: Weak<Rpc>, drift: Arc<Drift>, pause: Duration, runtime: tokio::runtime::Handle) {
        let Some(live) = rpc.upgrade() else { return };
        let id = live.reserve_id();
        let again = rpc.clone();
        let waiter = Waiter::new(move |ended| {
            let Some(rpc) = again.upgrade() else { return };
            if rpc.is_closed().is_some() {
                return;
            }
            drift.stale();
            // A server that ends it at once, again and again, is not asked faster than this.
            let pause = match ended {
                Ok(_) => LISTEN_PAUSE,
                Err(_) => (pause * 2).min(LISTEN_PAUSE_MAX),
            };
            let again = Arc::downgrade(&rpc);
            let on = runtime.clone();
            runtime.spawn(async move {
                tokio::time::sleep(pause).await;
                open(again, drift, pause, on);
            });
        });
        live.submit_text(
            id,
            "subscriptions/listen",
            "{\"notifications\":{\"toolsListChanged\":true}}",
            None,
            None,
            waiter,
        );
    }
    open(Arc::downgrade(&conn.rpc), drift, LISTEN_PAUSE, runtime);
}

/// How long a listen request that ended waits before it is opened again, and the most that
/// doubles to when it keeps failing.
const LISTEN_PAUSE: Duration = Duration::from_millis(100);
const LISTEN_PAUSE_MAX: Duration = Duration::from_secs(30);

static CONNECTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Connection {
    fn alive(&self) -> bool {
        self.rpc.is_closed().is_none()
    }

    /// Ends the connection gracefully (a child is given time to exit on its own).
    async fn release(&self, reason: &str) {
        self.rpc.close(reason);
        to_the_end(self.rpc.wire().shutdown()).await;
    }

    /// Ends the connection at once (a connect that failed, timed out or was overtaken).
    async fn abort(&self, reason: &str) {
        self.rpc.close(reason);
        to_the_end(self.rpc.wire().abort()).await;
    }
}

/// `listener` for a call of further rounds: a round's progress (its token is that request's
/// id) and a task's status are told as the call's, under the id the host knows it by.
fn told_as(listener: Listener, id: u64) -> Listener {
    Arc::new(move |mut p: Value| {
        p["progressToken"] = Value::from(id);
        listener(p)
    })
}

/// Runs a wire's release on a task of its own and waits for it. Whoever waits may be dropped
/// half-way (a `select!` that another branch won, a connect that `close()` overtook); the
/// release must still reach its end, or a child would be left killed but unreaped, its process
/// group still registered for a later kill.
async fn to_the_end(release: BoxFuture<'static, ()>) {
    let _ = tokio::spawn(release).await;
}

/// What one sweep admitted, bound to the connection that listed it.
pub struct Snapshot {
    pub generation: u64,
    pub tools: Vec<ToolSpec>,
    pub conn: Arc<Connection>,
    /// Tools the import left out (a modern tool's invalid `x-mcp-header`), each with why.
    pub left_out: Vec<(String, String)>,
}

impl Snapshot {
    /// Identifies the snapshot to the JS side, which keeps one array per snapshot.
    pub fn key(&self) -> String {
        format!("{}:{}", self.conn.serial, self.generation)
    }
}

#[derive(Default)]
struct State {
    conn: Option<Arc<Connection>>,
    snapshot: Option<Arc<Snapshot>>,
}

struct Live {
    epoch: u64,
    conn: Option<Arc<Connection>>,
    /// Tells a connect in progress that close() ran, so close() never waits out connectMs.
    closed: tokio::sync::watch::Sender<u64>,
}

impl Default for Live {
    fn default() -> Self {
        Self {
            epoch: 0,
            conn: None,
            closed: tokio::sync::watch::channel(0).0,
        }
    }
}

impl<C: Connector> Drop for Source<C> {
    fn drop(&mut self) {
        lock::neighbours::forget(self.key());
    }
}

pub struct Source<C: Connector> {
    config: Arc<Config>,
    id: String,
    connector: Arc<C>,
    drift: Arc<Drift>,
    /// Held across a whole connect + sweep: concurrent cold calls make one sweep.
    state: tokio::sync::Mutex<State>,
    /// The connection being set up or in use, reachable by close() without waiting for a sweep.
    live: Mutex<Live>,
    /// What no failure message may show (a server can echo a header or env value).
    secrets: Arc<Secrets>,
    /// The toolset lock every import is checked against (`lock`), if any.
    lock: Option<Arc<Lock>>,
    /// What the latest import's check found (a lock or `strict` in use), for `lockReport()`.
    report: Mutex<Option<Report>>,
    /// Answers what a server asks back, by the host's hooks (nothing when none are set).
    asker: Arc<asks::Asker>,
    /// Set once an `auto` opening had to be made again in the modern era (`Refusal::Reopen`):
    /// later connections to this server open in it at once.
    modern_only: std::sync::atomic::AtomicBool,
}

fn ms(v: Option<f64>) -> f64 {
    v.unwrap_or(DEFAULT_TIMEOUT_MS)
}

fn duration(ms: f64) -> Duration {
    wait_of(ms)
}

/// The errors of one source's connector.
type Error<C> = SourceError<<C as Connector>::HostError>;

impl<C: Connector> Source<C> {
    pub fn new(
        config: Arc<Config>,
        connector: Arc<C>,
        secrets: Arc<Secrets>,
        lock: Option<Lock>,
    ) -> Arc<Self> {
        let lock = lock.map(Arc::new);
        if let Some(lock) = &lock {
            // The pinned trees are built off the host's thread, ready by the first sweep's end.
            let lock = lock.clone();
            std::thread::spawn(move || lock.prepare());
        }
        let asker = asks::Asker::new(
            config.asks.clone(),
            connector.ask_hook(),
            duration(ms(config.timeouts.call_ms)),
        );
        Arc::new(Source {
            lock,
            report: Mutex::new(None),
            asker,
            id: config.id(),
            drift: Arc::new(Drift::new(config.drift == DriftPolicy::Refuse)),
            config,
            connector,
            state: Default::default(),
            live: Default::default(),
            secrets,
            modern_only: Default::default(),
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    fn poison_refusal(&self) -> Error<C> {
        Error::<C>::Refused(ConfigError::new(format!(
            "mcp: the tool list of '{}' changed after import (listChanged) and drift policy 'refuse' holds the source closed; close() and re-create the source (and re-record any toolset attestation) to import the changed list deliberately",
            self.id
        )))
    }

    /// `tools()`: the cached snapshot while it is current, else connect (lazily) and sweep.
    pub async fn tools(&self) -> Result<Arc<Snapshot>, Error<C>> {
        if self.drift.poisoned() {
            return Err(self.poison_refusal());
        }
        let mut state = self.state.lock().await;
        if self.drift.poisoned() {
            return Err(self.poison_refusal());
        }
        if let Some(snapshot) = &state.snapshot {
            // A dead connection invalidates its list too: its tools could no longer run.
            if snapshot.generation == self.drift.generation() && snapshot.conn.alive() {
                return Ok(snapshot.clone());
            }
        }
        let conn = match &state.conn {
            Some(c) if c.alive() => c.clone(),
            stale => {
                if let Some(old) = stale.clone() {
                    old.release("mcp: the connection was replaced").await;
                }
                state.conn = None;
                let c = self.connect().await?;
                state.conn = Some(c.clone());
                c
            }
        };
        let generation = self.drift.generation();
        // Each page is admitted while the server works on the next one, on one thread off the
        // async workers (canonicalization and validator compiles are CPU work), in page order;
        // admission reports the refusal the original reports first (admit.rs says which).
        let (pages, admitting) = std::sync::mpsc::channel::<(u64, Vec<Value>)>();
        let sweep_failed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let modern = matches!(conn.era.get(), Some(Era::Modern { .. }));
        let pins = self.lock.clone().map(|lock| {
            Arc::new(move |name: &str, contract: &Value| lock.pins(name, contract))
                as crate::core::admit::Pinned
        });
        let mut admission =
            Admission::new(self.config.clone(), sweep_failed.clone(), modern).pinned_by(pins);
        let admission = tokio::task::spawn_blocking(move || {
            for (page, tools) in admitting {
                admission.page(page, tools);
            }
            admission
        });
        let mut listed = 0;
        let swept = self
            .sweep(&conn, |page| {
                listed += 1;
                let _ = pages.send((listed, page));
            })
            .await;
        if swept.is_err() {
            sweep_failed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        drop(pages);
        let admitted = admission
            .await
            .map_err(|_| SourceError::Failed("mcp: admission of the tool list panicked".into()))?;
        let mut admitted = admitted;
        let left_out = admitted.take_left_out();
        let tools = admitted
            .finish(swept.map_err(|e| (e, listed)))
            .map_err(|e| match e {
                AdmissionError::Sweep(e) => e,
                AdmissionError::Refused(r) => SourceError::Refused(r),
            })?;
        // The lock is checked here, on every import (a listChanged makes the next tools() sweep
        // again), never per call. Off the async workers: a big toolset is real CPU work.
        let tools = self.check_lock(tools).await?;
        let snapshot = Arc::new(Snapshot {
            generation,
            tools,
            conn,
            left_out,
        });
        // A listChanged that arrived during the sweep keeps this result from being cached.
        if self.drift.generation() == generation {
            state.snapshot = Some(snapshot.clone());
        }
        Ok(snapshot)
    }

    /// The current cached snapshot's key, without waiting (None while a sweep holds the state).
    pub fn cached_key(&self) -> Option<String> {
        if self.drift.poisoned() {
            return None;
        }
        let state = self.state.try_lock().ok()?;
        let snapshot = state.snapshot.as_ref()?;
        (snapshot.generation == self.drift.generation() && snapshot.conn.alive())
            .then(|| snapshot.key())
    }

    async fn connect(&self) -> Result<Arc<Connection>, Error<C>> {
        use std::sync::atomic::Ordering::Relaxed;
        let protocol = match self.modern_only.load(Relaxed) {
            true => Protocol::Modern,
            false => self.config.protocol,
        };
        let epoch = self.live.lock().unwrap_or_else(|e| e.into_inner()).epoch;
        if let Some(conn) = self.connect_in(protocol).await? {
            return Ok(conn);
        }
        // The server ended the connection on which it refused `initialize`: a new one, opened
        // with `server/discover` (its own `connectMs`), and remembered for the reconnects.
        self.modern_only.store(true, Relaxed);
        if self.live.lock().unwrap_or_else(|e| e.into_inner()).epoch != epoch {
            return Err(SourceError::Failed(format!(
                "mcp: '{}' was closed while connecting",
                self.id
            )));
        }
        self.connect_in(Protocol::Modern).await?.ok_or_else(|| {
            SourceError::Failed(format!("mcp: '{}' could not be opened again", self.id))
        })
    }

    /// One connection opened in `protocol`; `None` when it has to be opened again in the
    /// modern era (the connection is gone by then).
    async fn connect_in(&self, protocol: Protocol) -> Result<Option<Arc<Connection>>, Error<C>> {
        let connect_ms = ms(self.config.timeouts.connect_ms);
        let (epoch, mut closed) = {
            let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
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
                rpc: Rpc::start(wire, &router),
                serial: CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                era: std::sync::OnceLock::new(),
            });
            let registered = {
                let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
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
        let conn = tokio::select! {
            result = tokio::time::timeout(duration(connect_ms), attempt) => match result {
                Ok(Ok(conn)) => conn,
                Ok(Err(e)) => {
                    to_the_end(self.connector.abandon()).await;
                    return Err(e);
                }
                Err(_) => return Err(self.connect_timeout(connect_ms, None).await),
            },
            _ = closed_meanwhile => {
                to_the_end(self.connector.abandon()).await;
                return Err(SourceError::Failed(format!("mcp: '{}' was closed while connecting", self.id)));
            }
        };
        if let Some(tracer) = self.connector.tracer() {
            conn.rpc.trace_with(tracer);
        }
        // The remaining opening shares the same budget.
        let capabilities = self.asker.capabilities();
        let opening = handshake::open(
            &conn.rpc,
            Some(duration(connect_ms)),
            protocol,
            &capabilities,
        );
        match opening.await {
            Ok(era) => {
                if era == (Era::Modern { list_changed: true }) {
                    listen(&conn, self.drift.clone());
                }
                // A 2025 server is asked once for the log level the host hears (a modern one
                // is asked in every request's `_meta`). One that refuses keeps its own.
                if let (Era::Legacy(_), Some(level)) = (&era, self.asker.log_level()) {
                    let asked = json!({ "level": level });
                    let _ = conn
                        .rpc
                        .request("logging/setLevel", asked, Some(duration(connect_ms)))
                        .await;
                }
                let _ = conn.era.set(era);
                Ok(Some(conn))
            }
            Err(Refusal::Reopen) => {
                self.forget_live(&conn);
                conn.abort("mcp: the server ended the connection it refused")
                    .await;
                Ok(None)
            }
            Err(Refusal::Rpc(RpcError::TimedOut)) => {
                Err(self.connect_timeout(connect_ms, Some(&conn)).await)
            }
            Err(Refusal::Pin(why)) => {
                self.forget_live(&conn);
                conn.abort("mcp: the opening was refused").await;
                let why = self.secrets.redact(&why);
                Err(SourceError::Refused(ConfigError::new(format!(
                    "mcp: '{}' cannot be opened: {why}",
                    self.id
                ))))
            }
            Err(Refusal::Rpc(e)) => {
                self.forget_live(&conn);
                // A connection that ended says how (stderr included); any other failure gets
                // the server's last words here.
                let failure = match e {
                    RpcError::Closed(reason) => reason.into(),
                    other => redacted(&self.secrets, other)
                        .into_failure()
                        .map_message(|m| with_diagnostics(m, conn.rpc.wire().diagnostics())),
                };
                conn.abort("mcp: the handshake failed").await;
                Err(failure.into())
            }
        }
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
        SourceError::Refused(ConfigError::new(with_diagnostics(message, diagnostics)))
    }

    fn forget_live(&self, conn: &Arc<Connection>) {
        if let Ok(mut live) = self.live.lock() {
            if live.conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
                live.conn = None;
            }
        }
    }

    async fn sweep(
        &self,
        conn: &Arc<Connection>,
        on_page: impl FnMut(Vec<Value>),
    ) -> Result<(), Error<C>> {
        let bounds = SweepBounds {
            max_tools: self.config.max_tools,
            max_pages: self.config.max_pages,
            list_ms: Some(ms(self.config.timeouts.list_ms)),
            discovery_ms: self.config.timeouts.discovery_ms,
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
            SweepError::Failed(f) => f
                .map_message(|m| format!("mcp: tools/list of '{}' failed: {m}", self.id))
                .into(),
        })
    }

    /// `execute`, started: validates the input, sends tools/call with the original name, and
    /// hands `done` the call's id and the mapped result's JSON text (`result.rs`) on
    /// whichever thread the reply, the timeout or the connection's end arrives (a failure with
    /// its `error.type` for tracing). Input that fails validation is refused here, before
    /// anything is sent. `meta`: trace members for the request's `_meta` (`client::trace`).
    /// Returns the request id, which `cancel` takes.
    pub fn start_call(
        &self,
        snapshot: &Arc<Snapshot>,
        index: usize,
        input: &str,
        progress: Option<Listener>,
        meta: Option<&str>,
        done: impl FnOnce(u64, Result<String, (Failure, ErrorType)>) + Send + 'static,
    ) -> Result<u64, Failure> {
        let Some(spec) = snapshot.tools.get(index) else {
            return Err(Failure::from(format!(
                "mcp: '{}' has no tool #{index}",
                self.id
            )));
        };
        // Valid input is judged in a borrowed tree (`core::lite`); anything else is read as a
        // `Value`, which words why it is refused.
        let valid = lite::parse(input, MAX_JSON_DEPTH).and_then(|t| spec.input.lite_valid(&t));
        if valid != Some(true) {
            let arguments: Value = serde_json::from_str(input).map_err(|e| {
                Failure::from(format!(
                    "mcp: the input of tool '{}' is not JSON: {e}",
                    spec.name
                ))
            })?;
            let issues = spec.input.issues(&arguments);
            if !issues.is_empty() {
                return Err(Failure::from(format!(
                    "mcp: invalid input for tool '{}': {}",
                    spec.name,
                    describe(&issues)
                )));
            }
        }
        let call_ms = ms(self.config.timeouts.call_ms);
        let id = snapshot.conn.rpc.reserve_id();
        // A 2025 server runs a call as a task only when asked, per request, and only for a tool
        // that says it can; a 2026 one decides itself (the client declared the extension).
        let legacy = matches!(snapshot.conn.era.get(), Some(Era::Legacy(_)));
        let task = match legacy && spec.tasks && self.asker.tasks() {
            true => format!(",\"task\":{{\"ttl\":{}}}", call_ms.min(9e15) as u64),
            false => String::new(),
        };
        let text = call::params(id, progress.is_some(), meta, &spec.original, input, &task);
        // Arguments a modern HTTP request mirrors into headers (read only for tools that
        // declare some).
        let mirrored = match spec.headers.is_empty() {
            true => Vec::new(),
            false => serde_json::from_str::<Value>(input)
                .map(|arguments| headers::values(&spec.headers, &arguments))
                .unwrap_or_default(),
        };
        let timeout = duration(call_ms);
        let mut plan = call::Plan {
            snapshot: snapshot.clone(),
            index,
            secrets: self.secrets.clone(),
            call_ms,
            first: id,
            rounds: None,
        };
        // A host that answers input requests: the call may take further rounds, which need
        // its arguments again and a runtime to answer on. A call of any other source pays
        // nothing for it.
        // A modern call the host said is safe to repeat is sent again when its answer is lost.
        let repeatable = matches!(snapshot.conn.era.get(), Some(Era::Modern { .. }))
            && self.config.repeatable(&spec.original);
        let runtime = (self.asker.offered() || repeatable)
            .then(|| self.asker.runtime())
            .flatten();
        let Some(runtime) = runtime else {
            let plan = Arc::new(plan);
            call::submit(plan, id, &text, mirrored, timeout, progress, done);
            return Ok(id);
        };
        let deadline = std::time::Instant::now() + timeout;
        let told = progress.clone().map(|listener| told_as(listener, id));
        plan.rounds = Some(call::Rounds {
            asker: self.asker.clone(),
            input: input.to_owned(),
            mirrored: mirrored.clone(),
            progress: told,
            meta: meta.map(str::to_owned),
            deadline,
            runtime,
            taken: Default::default(),
            repeatable,
            repeated: Default::default(),
        });
        let done = self.tracked(&plan, id, deadline, done);
        call::submit(Arc::new(plan), id, &text, mirrored, timeout, progress, done);
        Ok(id)
    }

    /// `done`, with call `id` among the calls in flight until it runs (the table a 2025
    /// server's request and a log message are tied to a call by).
    fn tracked<D>(
        &self,
        plan: &call::Plan,
        id: u64,
        deadline: std::time::Instant,
        done: D,
    ) -> impl FnOnce(u64, Result<String, call::Failed>) + Send + 'static
    where
        D: FnOnce(u64, Result<String, call::Failed>) + Send + 'static,
    {
        let told = plan.rounds.as_ref().and_then(|r| r.progress.clone());
        self.asker.begin(id, deadline, told);
        let asker = self.asker.clone();
        move |first, outcome| {
            asker.end(first);
            done(first, outcome);
        }
    }

    /// Follows a task the host kept the id of (a run resumed after a restart) to its end, as
    /// a call of tool `index` that came back as that task would be: `done` as for
    /// `start_call`, under the id returned (which `cancel_call` takes).
    pub fn resume_task(
        &self,
        snapshot: &Arc<Snapshot>,
        index: usize,
        task_id: &str,
        progress: Option<Listener>,
        done: impl FnOnce(u64, Result<String, call::Failed>) + Send + 'static,
    ) -> Result<u64, Failure> {
        if snapshot.tools.get(index).is_none() {
            return Err(format!("mcp: '{}' has no tool #{index}", self.id).into());
        }
        let runtime = self.asker.tasks().then(|| self.asker.runtime()).flatten();
        let Some(runtime) = runtime else {
            return Err(format!(
                "mcp: '{}' resumes a task only with 'tasks: true' set",
                self.id
            )
            .into());
        };
        let call_ms = ms(self.config.timeouts.call_ms);
        let id = snapshot.conn.rpc.reserve_id();
        let deadline = std::time::Instant::now() + duration(call_ms);
        let told = progress.map(|listener| told_as(listener, id));
        let plan = call::Plan {
            snapshot: snapshot.clone(),
            index,
            secrets: self.secrets.clone(),
            call_ms,
            first: id,
            rounds: Some(call::Rounds {
                asker: self.asker.clone(),
                input: "{}".into(),
                mirrored: Vec::new(),
                progress: told,
                meta: None,
                deadline,
                runtime,
                taken: Default::default(),
                repeatable: false,
                repeated: Default::default(),
            }),
        };
        let done = self.tracked(&plan, id, deadline, done);
        let modern = matches!(snapshot.conn.era.get(), Some(Era::Modern { .. }));
        // Polled at once: the task has run while the host was away.
        let task = json!({ "taskId": task_id, "status": "working", "pollIntervalMs": 0, "pollInterval": 0 });
        tasks::follow(Arc::new(plan), modern, task, Box::new(done));
        Ok(id)
    }

    /// Gives up on a call started by `start_call`; its `done` gets "was aborted".
    pub fn cancel_call(&self, snapshot: &Snapshot, id: u64) {
        // A call in a further round is on the wire under another id.
        let current = self.asker.cancel(id).unwrap_or(id);
        snapshot
            .conn
            .rpc
            .abandon(current, "cancelled by the caller", RpcError::Cancelled);
    }

    /// `close()`: idempotent; fails in-flight work, releases the connection, resets the source.
    pub async fn close(&self) {
        lock::neighbours::forget(self.key());
        let live = {
            let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
            live.epoch += 1;
            let epoch = live.epoch;
            live.closed.send_replace(epoch);
            live.conn.take()
        };
        let reason = format!("mcp: '{}' was closed", self.id);
        if let Some(conn) = &live {
            conn.release(&reason).await;
        }
        let mut state = self.state.lock().await;
        if let Some(conn) = state.conn.take() {
            if !live.as_ref().is_some_and(|l| Arc::ptr_eq(l, &conn)) {
                conn.release(&reason).await;
            }
        }
        state.snapshot = None;
        *self.report.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.drift.reset();
    }
}
