//! The native half of an `McpToolSource`: config, connector, and the napi surface of
//! `tools()`, `close()` and tool calls. Policy lives in `core::source`.

use super::convert::to_raw;
use super::errors::{from_napi, refusal};
use super::hooks::{HeaderHook, Hook, JsBridge, WakeHook};
use crate::client::rpc::Listener;
use crate::core::completions::Completions;
use crate::core::config::{Config, Headers, Transport};
use crate::core::result::CallFailure;
use crate::core::secrets::Secrets;
use crate::core::source::{Connector, Snapshot, Source, SourceError};
use crate::transport::http::{self, HeaderSource, StaticHeaders};
use crate::transport::inprocess::{collect_sends, Bridge, InProcessWire};
use crate::transport::observe::Inbound;
use crate::transport::process::Children;
use crate::transport::stdio::{self, StdioSpec};
use crate::transport::Wire;
use futures::future::BoxFuture;
use napi::bindgen_prelude::{Either, Env, FunctionRef, JsValue, Promise, PromiseRaw, Unknown};
use napi::sys;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use std::sync::{Arc, Mutex};

/// The in-process attachment: `attach()` connects the host's server to a fresh JS transport.
struct InProcessHooks {
    attach: Arc<Hook<(), Promise<String>>>,
    bridge: Arc<JsBridge>,
    /// Where `deliver()` pushes the server's messages; replaced per connection.
    inbound: Arc<Mutex<Option<Inbound>>>,
}

struct NodeConnector {
    config: Arc<Config>,
    headers: Option<Arc<dyn HeaderSource>>,
    inprocess: Option<InProcessHooks>,
    /// The stdio children of the Node environment that made this source.
    children: Arc<Children>,
    secrets: Arc<Secrets>,
}

impl Connector for NodeConnector {
    fn open(&self, inbound: Inbound) -> BoxFuture<'static, Result<Arc<dyn Wire>, SourceError>> {
        match &self.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
                stderr,
            } => {
                let spec = StdioSpec {
                    command: command.clone(),
                    args: args.clone(),
                    env: env.clone(),
                    cwd: cwd.clone(),
                    stderr: *stderr,
                    children: self.children.clone(),
                    secrets: self.secrets.clone(),
                };
                let result = stdio::spawn(&spec, inbound).map(|w| w as Arc<dyn Wire>);
                Box::pin(async move { result.map_err(SourceError::Failed) })
            }
            Transport::Http { url, .. } => {
                let headers = self
                    .headers
                    .clone()
                    .unwrap_or_else(|| Arc::new(StaticHeaders(Vec::new())));
                let result = http::open(url, headers, inbound, self.secrets.clone())
                    .map(|w| w as Arc<dyn Wire>);
                Box::pin(async move { result.map_err(SourceError::Failed) })
            }
            Transport::InProcess => {
                let Some(hooks) = &self.inprocess else {
                    return Box::pin(async {
                        Err(SourceError::Failed(
                            "mcp: the in-process bridge is missing".into(),
                        ))
                    });
                };
                if let Ok(mut slot) = hooks.inbound.lock() {
                    *slot = Some(inbound);
                }
                let attach = hooks.attach.clone();
                let bridge = hooks.bridge.clone();
                Box::pin(async move {
                    // The very error the server's connect() threw is handed back untouched.
                    let host = |e: napi::Error| SourceError::Host(Box::new(e));
                    attach
                        .call_async_catch(())
                        .await
                        .map_err(host)?
                        .await
                        .map_err(host)?;
                    Ok(InProcessWire::new(bridge) as Arc<dyn Wire>)
                })
            }
        }
    }

    /// An in-process server left half-connected would refuse the next connect.
    fn abandon(&self) -> BoxFuture<'static, ()> {
        match &self.inprocess {
            Some(hooks) => crate::transport::inprocess::Bridge::detach(hooks.bridge.as_ref()),
            None => Box::pin(async {}),
        }
    }
}

/// What every call of a source shares: where finished calls and progress reports go, and the in-process server's `onmessage` for sends made on the JS thread.
struct Calls {
    completions: Arc<Completions>,
    direct: Option<(Arc<dyn Bridge>, FunctionRef<String, Unknown<'static>>)>,
}

#[napi]
pub struct NativeSource {
    source: Arc<Source>,
    inbound: Option<Arc<Mutex<Option<Inbound>>>>,
    calls: Arc<Calls>,
    wake: Arc<Mutex<WakeHook>>,
}

#[napi]
impl NativeSource {
    /// Validates the config before any I/O; the first failed check is a `ConfigError`.
    /// The hooks are the JS side's: the header hook, the in-process bridge, progress reports.
    #[napi(constructor, catch_unwind)]
    // Each hook is a separate JS function napi turns into its own thread-safe function; an
    // options object would have to be unpacked by hand into the same list.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        env: Env,
        config: Unknown,
        headers: Option<Hook<(), Promise<String>>>,
        attach: Option<Hook<(), Promise<String>>>,
        to_server: Option<Hook<String, Unknown<'static>>>,
        detach: Option<Hook<(), Promise<String>>>,
        wake: WakeHook,
        to_server_soon: Option<FunctionRef<String, Unknown<'static>>>,
    ) -> napi::Result<Self, String> {
        let raw = to_raw(env.raw(), config.raw()).map_err(from_napi)?;
        let children = environment_children(env.raw());
        let config = Arc::new(Config::parse(&raw).map_err(refusal)?);
        let secrets = Arc::new(Secrets::new(config.secret_values()));
        let headers: Option<Arc<dyn HeaderSource>> = match &config.transport {
            Transport::Http {
                headers: Headers::Static(h),
                ..
            } => Some(Arc::new(StaticHeaders(h.clone()))),
            Transport::Http {
                headers: Headers::Hook,
                ..
            } => headers.map(|h| {
                Arc::new(HeaderHook {
                    hook: Arc::new(h),
                    secrets: secrets.clone(),
                }) as Arc<dyn HeaderSource>
            }),
            _ => None,
        };
        let inprocess = match (attach, to_server, detach) {
            (Some(attach), Some(to_server), Some(detach))
                if config.transport == Transport::InProcess =>
            {
                Some(InProcessHooks {
                    attach: Arc::new(attach),
                    bridge: Arc::new(JsBridge {
                        to_server,
                        detach: Arc::new(detach),
                    }),
                    inbound: Arc::new(Mutex::new(None)),
                })
            }
            _ => None,
        };
        let inbound = inprocess.as_ref().map(|h| h.inbound.clone());
        let direct = match (&inprocess, to_server_soon) {
            (Some(hooks), Some(f)) => Some((hooks.bridge.clone() as Arc<dyn Bridge>, f)),
            _ => None,
        };
        let connector = Arc::new(NodeConnector {
            config: config.clone(),
            headers,
            inprocess,
            children,
            secrets: secrets.clone(),
        });
        let wake = Arc::new(Mutex::new(wake));
        let waker = wake.clone();
        let completions = Arc::new(Completions::new(move || {
            if let Ok(hook) = waker.lock() {
                hook.call((), ThreadsafeFunctionCallMode::NonBlocking);
            }
        }));
        Ok(Self {
            source: Source::new(config, connector, secrets),
            inbound,
            calls: Arc::new(Calls {
                completions,
                direct,
            }),
            wake,
        })
    }

    /// Keeps Node's event loop alive while calls are in flight (`true`) and lets it go when
    /// none are (`false`): a script awaiting a call must not exit before the reply.
    #[napi(catch_unwind)]
    #[allow(deprecated)] // `refer`/`unref` are exactly napi_ref/unref_threadsafe_function.
    pub fn hold(&self, env: Env, held: bool) -> napi::Result<()> {
        let mut hook = self
            .wake
            .lock()
            .map_err(|_| napi::Error::from_reason("poisoned"))?;
        if held {
            hook.refer(&env)
        } else {
            hook.unref(&env)
        }
    }

    /// What finished since the last take, as JSON text `[[id, kind, value], ...]` (one
    /// segment of it: call until null); `null` when nothing did.
    #[napi(catch_unwind, ts_return_type = "string | null")]
    pub fn take_completions<'env>(&self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        batch_to_js(env, &self.calls.completions)
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

    /// Resolves with the current snapshot; the JS side keeps one array per snapshot key.
    #[napi(ts_return_type = "Promise<NativeSnapshot>")]
    pub fn tools<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, NativeSnapshot>> {
        let source = self.source.clone();
        let sweeping = self.source.clone();
        let calls = self.calls.clone();
        env.spawn_future_with_callback(
            async move { Ok(sweeping.tools().await) },
            move |env, outcome| match outcome {
                Ok(snapshot) => Ok(NativeSnapshot {
                    source,
                    snapshot,
                    calls,
                }),
                Err(e) => Err(to_js_error(env, e)),
            },
        )
    }

    /// Idempotent; resolves once the connection (and any child process) is gone.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let source = self.source.clone();
        env.spawn_future(async move {
            source.close().await;
            Ok(())
        })
    }

    /// The in-process server's `send`: runs on the JS thread, so a listChanged is seen before
    /// `send` returns (a host waits one setImmediate and expects the next tools() to list again).
    /// A reply that finishes a call is routed right here; what finished comes back as
    /// `takeCompletions()` would give it.
    #[napi(catch_unwind, ts_return_type = "string | null")]
    pub fn deliver<'env>(&self, env: &'env Env, text: String) -> napi::Result<Unknown<'env>> {
        let inbound = self.inbound.as_ref().and_then(|slot| slot.lock().ok());
        let Some(inbound) = inbound.as_ref().and_then(|slot| slot.as_ref()) else {
            return js_null(env);
        };
        Completions::taken_by_caller(|| inbound.push_text(text.as_bytes()));
        batch_to_js(env, &self.calls.completions)
    }

    /// The in-process server side closed: pending requests fail now.
    #[napi(catch_unwind)]
    pub fn detached(&self) {
        if let Some(slot) = &self.inbound {
            if let Ok(mut slot) = slot.lock() {
                if let Some(inbound) = slot.take() {
                    inbound.close("mcp: the in-process server closed the connection".into());
                }
            }
        }
    }
}

/// The finished calls as a JS string (null when there are none), copied straight from the
/// batch's buffer.
fn batch_to_js<'env>(env: &'env Env, completions: &Completions) -> napi::Result<Unknown<'env>> {
    let raw = env.raw();
    let value = completions
        .take_with(|text| super::js::create_text(raw, text))
        .transpose()?;
    match value {
        Some(v) => Ok(unsafe { Unknown::from_raw_unchecked(raw, v) }),
        None => js_null(env),
    }
}

fn js_null(env: &Env) -> napi::Result<Unknown<'_>> {
    let null = super::js::null(env.raw())?;
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), null) })
}

/// Builds the JS error for a failure: a refusal carries `code: 'RULVAR_CONFIG'` for the JS
/// wrapper; a host error object is handed back as it was thrown.
fn to_js_error(env: &Env, e: SourceError) -> napi::Error {
    match e {
        SourceError::Refused(c) => js_error(env, &c.message, Some(super::errors::CONFIG_CODE)),
        SourceError::Failed(m) => js_error(env, &m, None),
        SourceError::Host(any) => match any.downcast::<napi::Error>() {
            Ok(e) => *e,
            Err(_) => js_error(env, "mcp: the in-process connect failed", None),
        },
    }
}

fn js_error(env: &Env, message: &str, code: Option<&str>) -> napi::Error {
    let raw = env.raw();
    let build = || -> napi::Result<sys::napi_value> {
        let msg = super::js::create_string(raw, message)?;
        let code = match code {
            Some(c) => super::js::create_string(raw, c)?,
            None => std::ptr::null_mut(),
        };
        let mut out = std::ptr::null_mut();
        super::js::check(
            raw,
            unsafe { sys::napi_create_error(raw, code, msg, &mut out) },
            "error creation",
        )?;
        Ok(out)
    };
    match build() {
        Ok(value) => napi::Error::from(unsafe { Unknown::from_raw_unchecked(raw, value) }),
        Err(e) => e,
    }
}

/// One snapshot of admitted tools, held by the ToolDefs built from it.
#[napi]
pub struct NativeSnapshot {
    source: Arc<Source>,
    snapshot: Arc<Snapshot>,
    calls: Arc<Calls>,
}

#[napi]
impl NativeSnapshot {
    #[napi(getter)]
    pub fn key(&self) -> String {
        self.snapshot.key()
    }

    /// The admitted tools as JSON text: `[{ name, description, parameters, needsApproval, risk? }]`.
    #[napi(catch_unwind)]
    pub fn json(&self) -> String {
        super::tooldefs::tools_json(&self.snapshot.tools)
    }

    /// Starts tool `index` with `input` (JSON text of `input ?? {}`). Returns the call's id,
    /// under which its outcome arrives in `takeCompletions()`, or the message of a refusal
    /// made before anything was sent (input that is not valid). No Promise, no task: the
    /// request is on its way when this returns.
    #[napi(catch_unwind, ts_return_type = "number | string")]
    pub fn call(
        &self,
        env: Env,
        index: u32,
        input: String,
        wants_progress: bool,
    ) -> napi::Result<Either<i64, String>> {
        let calls = &self.calls;
        let progress = wants_progress.then(|| {
            let completions = calls.completions.clone();
            Arc::new(move |p: serde_json::Value| {
                let id = p.get("progressToken").and_then(serde_json::Value::as_u64);
                if let Some(id) = id {
                    completions.push_progress(id, &serde_json::to_string(&p).unwrap_or_default());
                }
            }) as Listener
        });
        let completions = calls.completions.clone();
        let start = || {
            self.source.start_call(
                &self.snapshot,
                index as usize,
                &input,
                progress,
                move |id, outcome| completions.push(id, outcome),
            )
        };
        let started = match &calls.direct {
            None => start(),
            Some((bridge, to_server)) => {
                let (started, frames) = collect_sends(bridge, start);
                let to_server = to_server.borrow_back(&env)?;
                for frame in frames {
                    to_server.call(frame)?;
                }
                started
            }
        };
        Ok(match started {
            Ok(id) => Either::A(id as i64),
            Err(CallFailure(message)) => Either::B(message),
        })
    }

    /// Gives up on a call (its `ctx.signal` aborted); its outcome is "was aborted".
    #[napi(catch_unwind)]
    pub fn cancel(&self, id: i64) {
        if let Ok(id) = u64::try_from(id) {
            self.source.cancel_call(&self.snapshot, id);
        }
    }
}

thread_local! {
    /// This thread's Node environment's children (one environment per JS thread: the main
    /// thread's, or a worker's).
    static CHILDREN: std::cell::OnceCell<Arc<Children>> = const { std::cell::OnceCell::new() };
}

/// The children of the environment `env`; the first call registers the cleanup hook that kills
/// them when the environment is torn down without `close()`. A worker's exit so ends only the
/// children its own sources started.
fn environment_children(env: sys::napi_env) -> Arc<Children> {
    unsafe extern "C" fn cleanup(data: *mut std::ffi::c_void) {
        // SAFETY: `data` is the `Arc` leaked below, taken back exactly once.
        let children = unsafe { Arc::from_raw(data as *const Children) };
        children.kill_all();
    }
    CHILDREN.with(|cell| {
        cell.get_or_init(|| {
            let children = Children::new();
            let data = Arc::into_raw(children.clone()) as *mut std::ffi::c_void;
            unsafe { sys::napi_add_env_cleanup_hook(env, Some(cleanup), data) };
            children
        })
        .clone()
    })
}
