//! One tool source: lazy connect, the cached snapshot and its generation, single-flight
//! sweeps, the drift poison, and close (which resets all of it, so tools() connects afresh).
//!
//! Its rooms: `connect` (opening a connection and the sweep), `execute` (a call started,
//! resumed or cancelled), `plan` (what a call carries through its requests), `call` (one
//! call's requests and rounds on the wire), `tasks` (a call that became a task), `asks` (what a
//! server asks back, through the host's hooks), `lock` (the toolset lock at each import), and
//! `tests` (all of it against a fake connector).

use crate::client::era::Era;
use crate::client::rpc::RpcError;
use crate::client::trace::Tracer;
use crate::core::admit::{Admission, AdmissionError, ToolSpec};
use crate::core::config::{Config, Drift as DriftPolicy};
use crate::core::drift::Drift;
use crate::core::error::{ConfigError, Failure, OAuthFailure, ServerError};
use crate::core::lock::{Lock, Report};
use crate::core::secrets::Secrets;
use crate::sync::lock;
use crate::transport::observe::Inbound;
use crate::transport::Wire;
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::{Arc, Mutex};

mod asks;
mod call;
mod connect;
mod execute;
mod lock;
mod plan;
mod tasks;

pub use connect::Connection;

pub use asks::{AskHook, HookFailure};

/// A call's `error.type` (`client::trace`), beside its failure.
pub type ErrorType = std::borrow::Cow<'static, str>;

/// A mapped result's failure, redacted: its text is the server's (an `isError` result's
/// content, which the SDK server makes of every error a tool throws, or the values a schema
/// check quotes from structured content), and may echo a header or env value as a JSON-RPC
/// error's message may.
pub(crate) fn redacted_failure(secrets: &Secrets, f: Failure) -> Failure {
    f.map_message(|m| secrets.redact(&m))
}

/// `e` with the server's own error message and data redacted: either can echo a header or env
/// value. Failures our transports report carry their server text redacted already.
pub(crate) fn redacted(secrets: &Secrets, e: RpcError) -> RpcError {
    match e {
        RpcError::Remote {
            code,
            message,
            mut data,
        } => {
            if let Some(data) = &mut data {
                secrets.redact_value(data);
            }
            RpcError::Remote {
                code,
                message: secrets.redact(&message),
                data,
            }
        }
        other => other,
    }
}

/// A call's failure as the client reported it: a server's JSON-RPC error in the SDK client's
/// words (the model sees what it saw with the original), anything else naming the tool.
pub(crate) fn call_failure(secrets: &Secrets, tool: &str, e: RpcError) -> Failure {
    redacted(secrets, e)
        .into_failure()
        .in_context(|m| crate::core::error::call_failed(tool, &m))
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
    /// A server's JSON-RPC error answer (the SDK client's `McpError`), its message first.
    Server(String, ServerError),
    /// A replayed request the cassette has no answer for (`CassetteError`).
    Cassette(Box<crate::core::cassette::Miss>),
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
        if let Some(miss) = f.replay {
            return SourceError::Cassette(miss);
        }
        match (f.oauth, f.server) {
            (Some(kind), _) => SourceError::OAuth(kind, f.message),
            (None, Some(server)) => SourceError::Server(f.message, *server),
            (None, None) => SourceError::Failed(f.message),
        }
    }
}

/// Takes the admitted tools of a big import page by page, while the server lists the next:
/// `start` is how many of the sweep's tools came before these. The snapshot's tools are then
/// exactly what was handed over, in order, and what was not (`Snapshot::streamed` says how
/// many were).
pub trait Listed: Send + Sync {
    fn listed(&self, sweep: u64, start: usize, tools: &[ToolSpec]);
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
    /// Where a big import's admitted tools go as each page is admitted, if anywhere.
    fn listed(&self) -> Option<Arc<dyn Listed>> {
        None
    }
    /// Starts a task as long-lived as a connection (its deadline timer), from inside the
    /// runtime's context: on the runtime, unless the edge polls this connection elsewhere.
    fn spawn(&self, task: BoxFuture<'static, ()>) {
        tokio::spawn(task);
    }
}

/// What one sweep admitted, bound to the connection that listed it.
pub struct Snapshot {
    pub generation: u64,
    /// The sweep that listed it (a count per source), and how many of its tools, from the
    /// first, were handed to the connector's `Listed` as they were admitted.
    pub sweep: u64,
    pub streamed: usize,
    pub tools: Vec<ToolSpec>,
    pub conn: Arc<Connection>,
    /// Tools the import left out (a modern tool's invalid `x-mcp-header`), each with why.
    pub left_out: Vec<(String, String)>,
    /// What it holds of its own in native memory, estimated (`core::held`).
    pub held: usize,
    _alive: Alive,
}

/// Counts the snapshots alive in this process (`alive()`): an import's tools stay in memory
/// while anything holds its snapshot, and a closed source must not be that holder.
struct Alive;

static SNAPSHOTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Alive {
    fn new() -> Self {
        SNAPSHOTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Alive
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        SNAPSHOTS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// How many snapshots are alive in this process (`nativeMemory().snapshots`).
pub(crate) fn alive() -> usize {
    SNAPSHOTS.load(std::sync::atomic::Ordering::Relaxed)
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
    /// The era an `auto` opening found it had to open again in (`Refusal::Reopen`): later
    /// connections to this server open in it at once.
    era: std::sync::OnceLock<Era>,
    /// Sweeps made so far: the next one's number.
    sweeps: std::sync::atomic::AtomicU64,
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
            config.timeouts.call.duration,
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
            era: Default::default(),
            sweeps: Default::default(),
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
        let conn = self.live_connection(&mut state).await?;
        let generation = self.drift.generation();
        let sweep = self
            .sweeps
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (tools, streamed, left_out) = self.import(&conn, sweep).await?;
        // Under drift 'refuse' every import is held to the first, announced change or not.
        if self.drift.refuses() && !self.drift.imported(crate::core::admit::fingerprint(&tools)) {
            return Err(self.poison_refusal());
        }
        // The lock check hands back the very list admission made, so what was handed over is
        // still its first `streamed` tools; should that ever change, nothing counts as handed.
        let streamed = if tools.len() >= streamed { streamed } else { 0 };
        let snapshot = Arc::new(Snapshot {
            generation,
            sweep,
            streamed,
            held: crate::core::held::import_bytes(&tools, &left_out),
            tools,
            conn,
            left_out,
            _alive: Alive::new(),
        });
        // A listChanged that arrived during the sweep keeps this result from being cached.
        if self.drift.generation() == generation {
            state.snapshot = Some(snapshot.clone());
        }
        Ok(snapshot)
    }

    /// The connection in use while it lives, else a new one (the old one released).
    async fn live_connection(&self, state: &mut State) -> Result<Arc<Connection>, Error<C>> {
        if let Some(c) = state.conn.as_ref().filter(|c| c.alive()) {
            return Ok(c.clone());
        }
        if let Some(old) = state.conn.take() {
            old.release("mcp: the connection was replaced").await;
        }
        let c = self.connect().await?;
        state.conn = Some(c.clone());
        Ok(c)
    }

    /// Sweep number `sweep` of `conn`'s tools, admitted and checked against the lock: the
    /// tools, how many of them were handed to the connector's `Listed` as they were admitted,
    /// and the tools left out, each with why.
    ///
    /// Each page is admitted while the server works on the next one, on one thread off the
    /// async workers (canonicalization and validator compiles are CPU work), in page order;
    /// admission reports the refusal the original reports first (admit.rs says which). A list
    /// of one small page is admitted here once it is in (a few hundred microseconds at most),
    /// without the two crossings to the blocking pool and back.
    async fn import(&self, conn: &Arc<Connection>, sweep: u64) -> Result<Imported, Error<C>> {
        let sweep_failed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let pins = self.lock.clone().map(|lock| {
            Arc::new(move |name: &str, contract: &Value| lock.pins(name, contract))
                as crate::core::admit::Pinned
        });
        let headers = conn.rpc.rules().reads_header_declarations();
        let admission =
            Admission::new(self.config.clone(), sweep_failed.clone(), headers).pinned_by(pins);
        let stream = self.connector.listed().map(|sink| (sink, sweep));
        let mut admitting = Some(Admitting::Held(Box::new(admission), Vec::new()));
        let mut listed = 0;
        let swept = self
            .sweep(conn, |page| {
                listed += 1;
                admitting = admitting.take().map(|a| a.page(listed, page, &stream));
            })
            .await;
        if swept.is_err() {
            sweep_failed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let (mut admitted, streamed) = Admitting::end(admitting)
            .await
            .map_err(SourceError::Failed)?;
        let left_out = admitted.take_left_out();
        let tools = admitted
            .finish(swept.map_err(|e| (e, listed)))
            .map_err(|e| match e {
                AdmissionError::Sweep(e) => e,
                AdmissionError::Refused(r) => SourceError::Refused(r),
            })?;
        // The lock is checked here, on every import (a listChanged makes the next tools() sweep
        // again), never per call. Off the async workers: a big toolset is real CPU work.
        let era = conn.rpc.era().map(|e| e.version().to_owned());
        let tools = self.check_lock(tools, era).await?;
        Ok((tools, streamed, left_out))
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

    /// `close()`: idempotent; fails in-flight work, releases the connection, resets the source.
    pub async fn close(&self) {
        lock::neighbours::forget(self.key());
        let live = {
            let mut live = lock(&self.live);
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
        *lock(&self.report) = None;
        self.drift.reset();
    }
}

/// The largest single page admitted on the async worker that swept it: so many tools, and so
/// many JSON values in all (a hostile server's few tools with huge schemas go to the pool).
const INLINE_ADMISSION: usize = 32;
const INLINE_VALUES: usize = 8192;

/// Whether `tools` hold at most `budget` JSON values, counted until the budget runs out.
fn within(tools: &[Value], budget: usize) -> bool {
    let mut left = budget;
    let mut stack: Vec<&Value> = tools.iter().collect();
    while let Some(value) = stack.pop() {
        let Some(rest) = left.checked_sub(1) else {
            return false;
        };
        left = rest;
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
    true
}

/// Where a sweep's pages go: held while they are one short page, else to admission on a
/// blocking thread as they come (which hands each page's admitted tools to the stream, if
/// there is one, and says how many it handed).
enum Admitting {
    Held(Box<Admission>, Vec<(u64, Vec<Value>)>),
    Spawned(
        std::sync::mpsc::Sender<(u64, Vec<Value>)>,
        tokio::task::JoinHandle<(Admission, usize)>,
    ),
}

/// A sweep's `Listed` and its number.
type Stream = Option<(Arc<dyn Listed>, u64)>;

/// What an import hands back: the tools, how many were streamed, the tools left out and why.
type Imported = (Vec<ToolSpec>, usize, Vec<(String, String)>);

impl Admitting {
    /// Admission handed back once the sweep ended, with how many tools it streamed.
    async fn end(admitting: Option<Self>) -> Result<(Admission, usize), String> {
        match admitting {
            Some(Admitting::Held(mut admission, held)) => {
                for (page, tools) in held {
                    admission.page(page, tools);
                }
                Ok((*admission, 0))
            }
            Some(Admitting::Spawned(pages, admission)) => {
                drop(pages);
                let panicked = |_| "mcp: admission of the tool list panicked".to_owned();
                admission.await.map_err(panicked)
            }
            // Every page hands admission back; a typed failure rather than a panic regardless.
            None => Err("mcp: admission was lost".into()),
        }
    }

    fn page(self, page: u64, tools: Vec<Value>, stream: &Stream) -> Self {
        match self {
            Admitting::Held(admission, mut held) => {
                held.push((page, tools));
                if held.len() == 1
                    && held[0].1.len() <= INLINE_ADMISSION
                    && within(&held[0].1, INLINE_VALUES)
                {
                    return Admitting::Held(admission, held);
                }
                let (pages, admitting) = std::sync::mpsc::channel::<(u64, Vec<Value>)>();
                for page in held {
                    let _ = pages.send(page);
                }
                let mut admission = *admission;
                let stream = stream.clone();
                let handle = tokio::task::spawn_blocking(move || {
                    let mut streamed = 0;
                    for (page, tools) in admitting {
                        admission.page(page, tools);
                        let admitted = admission.admitted();
                        if let Some((sink, sweep)) = &stream {
                            if admitted.len() > streamed {
                                sink.listed(*sweep, streamed, &admitted[streamed..]);
                                streamed = admitted.len();
                            }
                        }
                    }
                    (admission, streamed)
                });
                Admitting::Spawned(pages, handle)
            }
            Admitting::Spawned(pages, handle) => {
                let _ = pages.send((page, tools));
                Admitting::Spawned(pages, handle)
            }
        }
    }
}

#[cfg(test)]
mod tests;
