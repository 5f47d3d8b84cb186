//! `NativeSource`: the native half of an `McpToolSource` (lib/source.js is the other):
//! construction from a checked config (`NativeConfig`) and the hooks the JS side picked for it,
//! `tools()`, `close()`, the in-process server's deliveries, and the batches of finished calls.

use super::binding_config::NativeConfig;
use super::binding_port::NativePort;
use super::binding_snapshot::NativeSnapshot;
use super::calls::{Calls, NodeSource};
use super::connector::NodeConnector;
use super::entry::{entry, Args};
use super::environment::environment_children;
use super::errors::{refusal, to_js_error};
use super::jsthread::{Completions, Executor, HandOver, Settle};
use super::pipe::Pipes;
use super::source_hooks::SourceHooks;
use crate::core::config::{Config, LockSource};
use crate::core::lock::{self, Lock};
use crate::core::secrets::Secrets;
use crate::source::Source;
use crate::sync::lock;
use crate::transport::cassette::Tape;
use crate::transport::observe::Inbound;
use crate::transport::stdout::Fed;
use napi::bindgen_prelude::{Env, PromiseRaw, ToNapiValue, Unknown};
use napi_derive::napi;
use std::sync::{Arc, Mutex};

#[napi]
pub struct NativeSource {
    source: Arc<NodeSource>,
    inbound: Option<Arc<Mutex<Option<Inbound>>>>,
    calls: Arc<Calls>,
    /// Its environment's executor: an in-process source's `tools()` and `close()` are polled
    /// on the JS thread (`jsthread`).
    executor: Arc<Executor>,
    /// Its stdio children's stdout pipes that Node reads (the feeder).
    pipes: Arc<Pipes>,
    /// Its connector, for what it keeps to tell the host (`sandboxWarning`).
    connector: Arc<NodeConnector>,
}

#[napi]
impl NativeSource {
    /// A source of a config the core accepted, with the hooks the JS side picked for it; a
    /// lock that cannot be read or is another source's is a `ConfigError` here, before any
    /// I/O with the server.
    #[napi(constructor, catch_unwind)]
    pub fn new(
        env: Env,
        config: &NativeConfig,
        port: &NativePort,
        hooks: SourceHooks,
    ) -> napi::Result<Self, String> {
        let executor = port.executor();
        let (hooks, lock_text) = hooks.grouped(executor.port())?;
        let children = environment_children(env.raw());
        let config = config.config.clone();
        let lock = read_lock(&config, lock_text).map_err(refusal)?;
        let secrets = Arc::new(Secrets::new(config.secret_values()));
        let pipes = Arc::new(Pipes::default());
        let wake = hooks.wake.clone();
        let connector = NodeConnector::new(&config, hooks, children, &secrets, &pipes, executor)?;
        let connector = Arc::new(connector);
        let in_process = connector.inprocess.as_ref();
        let completions = Arc::new(Completions::new(move || {
            wake.fire(String::new());
        }));
        Ok(Self {
            inbound: in_process.map(|h| h.inbound.clone()),
            calls: Arc::new(Calls {
                completions,
                direct: in_process.map(|h| h.bridge.clone()),
            }),
            source: Source::new(config, connector.clone(), secrets, lock),
            executor: executor.clone(),
            pipes,
            connector,
        })
    }

    /// What finished since the last take, as JSON text `[[id, kind, value], ...]` (one
    /// segment of it: call until null); `null` when nothing did.
    #[napi(catch_unwind, ts_return_type = "string | null")]
    pub fn take_completions<'env>(&self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        batch_to_js(env, &self.calls.completions)
    }

    /// What the latest import's lock check found, as JSON text; null before any import, or
    /// when neither `lock` nor `strict` is in use.
    #[napi(catch_unwind)]
    pub fn lock_report(&self) -> Option<String> {
        self.source.lock_report()
    }

    #[napi(getter)]
    pub fn id(&self) -> String {
        self.source.id().to_owned()
    }

    /// The key of the cached snapshot when it is current and no sweep is running, so a
    /// cached `tools()` answers without a round trip to the runtime.
    #[napi(catch_unwind)]
    pub fn cached_key(&self) -> Option<String> {
        self.source.cached_key()
    }

    /// Whether the requests of the sweeps from now on are traced through the `trace` hook
    /// (lib/telemetry.js asks before each: a span nothing would see is not begun).
    #[napi(catch_unwind)]
    pub fn trace_live(&self, live: bool) {
        if let Some(tracer) = &self.connector.tracer {
            tracer.set_live(live);
        }
    }

    /// Resolves with the current snapshot; the JS side keeps one array per snapshot key.
    #[napi(ts_return_type = "Promise<NativeSnapshot>")]
    pub fn tools<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, NativeSnapshot>> {
        let source = self.source.clone();
        let sweeping = self.source.clone();
        let calls = self.calls.clone();
        let connector = self.connector.clone();
        if let Some(hand_over) = &self.calls.direct {
            let future = async move {
                let outcome = sweeping.tools().await;
                Box::new(move |env: &Env| match outcome {
                    Ok(snapshot) => {
                        let snapshot = NativeSnapshot::new(env, source, snapshot, calls);
                        // SAFETY: `env` is the live env of the drain this settles in.
                        unsafe { ToNapiValue::to_napi_value(env.raw(), snapshot) }
                    }
                    Err(e) => Err(to_js_error(env, e)),
                }) as Settle
            };
            return self.spawn_local(env, hand_over, Box::pin(future));
        }
        env.spawn_future_with_callback(
            async move { Ok(recorded(&connector, sweeping.tools().await)) },
            move |env, outcome| match outcome {
                Ok(snapshot) => Ok(NativeSnapshot::new(env, source, snapshot, calls)),
                Err(e) => Err(to_js_error(env, e)),
            },
        )
    }

    /// Idempotent; resolves once the connection (and any child process) is gone.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let source = self.source.clone();
        if let Some(hand_over) = &self.calls.direct {
            let future = async move {
                source.close().await;
                Box::new(|env: &Env| super::js::undefined(env.raw())) as Settle
            };
            return self.spawn_local(env, hand_over, Box::pin(future));
        }
        env.spawn_future(async move {
            source.close().await;
            Ok(())
        })
    }

    /// The in-process server's `send`, `(text) => string | null`: runs on the JS thread, so a
    /// listChanged is seen before `send` returns (a host waits one setImmediate and expects the
    /// next tools() to list again). A reply that finishes a call is routed right there; what
    /// finished comes back as `takeCompletions()` would give it (the oldest segment; the rest,
    /// if any, by a wake-up). A plain function rather than a method: it runs once per reply
    /// (`entry`).
    #[napi(catch_unwind, ts_return_type = "(text: string) => string | null")]
    pub fn deliverer<'env>(&self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        let (inbound, calls, executor) = (
            self.inbound.clone(),
            self.calls.clone(),
            self.executor.clone(),
        );
        let body = move |raw: super::js::Env, args: &Args| {
            // `JSON.stringify` of what the server sent: undefined for a function or undefined.
            let text = super::js::string(raw, args[0]).map_err(|_| {
                napi::Error::new(
                    napi::Status::InvalidArg,
                    "mcp: the in-process server sent a message that is not JSON",
                )
            })?;
            let env = Env::from_raw(raw);
            let delivered = inbound
                .as_ref()
                .is_some_and(|slot| deliver(&env, slot, &calls, &executor, &text));
            if !delivered {
                return super::js::null(raw);
            }
            replied(raw, &calls.completions)
        };
        entry(env, "deliver", Box::new(body))
    }

    /// The in-process server side closed: pending requests fail now.
    #[napi(catch_unwind)]
    pub fn detached(&self, env: Env) {
        let inbound = self.inbound.as_ref().and_then(|slot| lock(slot).take());
        if let Some(inbound) = inbound {
            self.executor.entered(&env, || {
                inbound.close("mcp: the in-process server closed the connection".into())
            });
        }
    }
}

#[napi]
impl NativeSource {
    /// The reader of this source's stdio pipes that Node reads (lib/pipe.js), `(pipe, chunk)
    /// => string | null | boolean`: the lines a chunk completes are routed right there, on the
    /// JS thread. It returns the batch of finished calls (text, or null for none) as `deliverer`
    /// does, `false` once the connection is over (stop reading), `true` to pause reading until
    /// `fedBacklog` falls (the finished calls then come through the wake-up). A plain function
    /// rather than a method: it runs once per read (`entry`).
    #[napi(
        catch_unwind,
        ts_return_type = "(pipe: number, chunk: Uint8Array) => string | null | boolean"
    )]
    pub fn feeder<'env>(&self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        let (pipes, calls) = (self.pipes.clone(), self.calls.clone());
        let body = move |raw: super::js::Env, args: &Args| {
            // Not a pipe's number: no pipe of this source, so stop reading.
            let feed = super::js::whole(raw, args[0])?.and_then(|pipe| pipes.get(pipe));
            let Some(feed) = feed else {
                return super::js::create_bool(raw, false);
            };
            let completions = &calls.completions;
            let fed = super::js::with_bytes(raw, args[1], |chunk| {
                completions.replying(|| feed.fed(chunk))
            })?;
            if fed != Fed::Go {
                completions.wake_if_pending();
                return super::js::create_bool(raw, fed == Fed::Pause);
            }
            replied(raw, completions)
        };
        entry(env, "feed", Box::new(body))
    }

    /// What the system could not enforce of the `sandbox` (with `onUnsupported: 'warn'`), once:
    /// null after it was taken, and when everything was enforced.
    #[napi(catch_unwind)]
    pub fn sandbox_warning(&self) -> Option<String> {
        self.connector.take_warning()
    }

    /// How many bytes of stdio pipe `pipe` a runtime thread still has to work through; -1 once
    /// its connection is over. A paused reader reads on once it falls under `resumeBytes`.
    #[napi(catch_unwind)]
    pub fn fed_backlog(&self, pipe: u32) -> f64 {
        match self.pipes.get(pipe).and_then(|feed| feed.backlog()) {
            Some(bytes) => bytes as f64,
            None => -1.0,
        }
    }

    /// Stdio pipe `pipe` ended (`error`: reading it failed, in Node's words).
    #[napi(catch_unwind)]
    pub fn fed_end(&self, pipe: u32, error: Option<String>) {
        if let Some(feed) = self.pipes.get(pipe) {
            feed.end(error);
        }
    }
}

impl NativeSource {
    /// An in-process source's opening and close: polled on the JS thread, what they send
    /// handed over there.
    fn spawn_local<'env, T>(
        &self,
        env: &'env Env,
        hand_over: &Arc<HandOver>,
        future: futures::future::BoxFuture<'static, Settle>,
    ) -> napi::Result<PromiseRaw<'env, T>> {
        let promise = self.executor.spawn(env, hand_over.clone(), future)?;
        Ok(PromiseRaw::new(env.raw(), promise))
    }
}

/// The lock the config names, read and parsed at construction (a lock that cannot be read, is
/// not a lock, or is another source's refuses before any I/O with the server).
fn read_lock(
    config: &Config,
    text: Option<String>,
) -> Result<Option<Lock>, crate::core::ConfigError> {
    let (text, origin) = match (&config.lock, text) {
        (LockSource::None, _) => return Ok(None),
        (LockSource::Path(path), _) => match std::fs::read_to_string(path) {
            Ok(text) => (text, format!("the lock file '{path}'")),
            Err(e) => {
                return Err(crate::core::ConfigError::new(format!(
                    "mcp: cannot read the lock file '{path}': {e}"
                )))
            }
        },
        (LockSource::Object, Some(text)) => (text, "the lock object".to_owned()),
        (LockSource::Object, None) => {
            return Err(crate::core::ConfigError::new(
                "mcp: the lock object could not be serialized as JSON",
            ))
        }
    };
    let lock = lock::parse(text, &origin)?;
    lock.check_identity(config)?;
    Ok(Some(lock))
}

/// Routes the in-process server's message `text`; false when the connection is over. What
/// the reply wakes of the source's opening or close is polled before this returns, once the
/// slot's lock is let go (a poll may open the next connection).
fn deliver(
    env: &Env,
    slot: &Mutex<Option<Inbound>>,
    calls: &Calls,
    executor: &Executor,
    text: &str,
) -> bool {
    let completions = &calls.completions;
    executor.entered(env, || {
        let inbound = lock(slot);
        let Some(inbound) = inbound.as_ref() else {
            return false;
        };
        completions.replying(|| inbound.push_text(text.as_bytes()));
        true
    })
}

/// The finished calls as a JS string (null when there are none), copied straight from the
/// batch's buffer.
pub(super) fn batch_to_js<'env>(
    env: &'env Env,
    completions: &Completions,
) -> napi::Result<Unknown<'env>> {
    let value = batch_value(env.raw(), completions)?;
    // SAFETY: `value` was just made on `env`, the env of the call this runs in (on its
    // thread); the `Unknown` is bound to `env`'s lifetime and handed back from that call.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
}

/// What an entry that routed replies itself returns (the deliverer, the feeder): the oldest
/// segment of the batch as `batch_to_js` gives it, and a wake-up for any rest.
fn replied(raw: super::js::Env, completions: &Completions) -> napi::Result<super::js::Val> {
    let taken = batch_value(raw, completions)?;
    completions.wake_if_pending();
    Ok(taken)
}

/// The oldest segment of the batch as a raw JS value: its text, or null.
fn batch_value(raw: super::js::Env, completions: &Completions) -> napi::Result<super::js::Val> {
    match completions.take_with(|text| super::js::create_text(raw, text)) {
        Some(made) => made,
        None => super::js::null(raw),
    }
}

/// A recording source's import: its toolset hash kept and the cassette written. A cassette
/// that cannot be written fails the import: a suite would otherwise find out only when it
/// replays.
fn recorded(
    connector: &NodeConnector,
    outcome: Result<Arc<crate::source::Snapshot>, crate::source::SourceError<napi::Error>>,
) -> Result<Arc<crate::source::Snapshot>, crate::source::SourceError<napi::Error>> {
    let snapshot = outcome?;
    if let Some(recorder) = connector.tape.as_ref().and_then(Tape::recorder) {
        let hash = crate::core::lock::specs_toolset_hash(&snapshot.tools)?;
        recorder
            .imported(hash)
            .map_err(|e| crate::source::SourceError::Refused(crate::core::ConfigError::new(e)))?;
    }
    Ok(snapshot)
}
