//! The native half of an `McpToolSource`: config, connector, and the napi surface of
//! `tools()`, `close()` and tool calls. Policy lives in `core::source`.

use super::convert::to_raw;
use super::errors::{from_napi, refusal};
use super::hooks::{HeaderHook, Hook, JsBridge, ProgressHook};
use crate::core::config::{Config, Headers, Transport};
use crate::core::source::{Connector, Snapshot, Source, SourceError};
use crate::transport::http::{self, HeaderSource, StaticHeaders};
use crate::transport::inprocess::InProcessWire;
use crate::transport::observe::Inbound;
use crate::transport::stdio::{self, StdioSpec};
use crate::transport::Wire;
use futures::future::BoxFuture;
use napi::bindgen_prelude::{Env, FnArgs, JsValue, Promise, PromiseRaw, Unknown};
use napi::sys;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

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
                };
                let result = stdio::spawn(&spec, inbound).map(|w| w as Arc<dyn Wire>);
                Box::pin(async move { result.map_err(SourceError::Failed) })
            }
            Transport::Http { url, .. } => {
                let headers = self
                    .headers
                    .clone()
                    .unwrap_or_else(|| Arc::new(StaticHeaders(Vec::new())));
                let result = http::open(url, headers, inbound).map(|w| w as Arc<dyn Wire>);
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

#[napi]
pub struct NativeSource {
    source: Arc<Source>,
    inbound: Option<Arc<Mutex<Option<Inbound>>>>,
    progress: Option<Arc<ProgressHook>>,
    calls: Arc<Mutex<HashMap<u32, oneshot::Sender<()>>>>,
}

#[napi]
impl NativeSource {
    /// Validates the config (contract §2) before any I/O; a refusal is a `ConfigError`.
    /// The hooks are the JS side's: the header hook, the in-process bridge, progress reports.
    #[napi(constructor, catch_unwind)]
    pub fn new(
        env: Env,
        config: Unknown,
        headers: Option<Hook<(), Promise<String>>>,
        attach: Option<Hook<(), Promise<String>>>,
        to_server: Option<Hook<String, Unknown<'static>>>,
        detach: Option<Hook<(), Promise<String>>>,
        progress: Option<ProgressHook>,
    ) -> napi::Result<Self, String> {
        let raw = to_raw(env.raw(), config.raw()).map_err(from_napi)?;
        ensure_cleanup_hook(env.raw());
        let config = Arc::new(Config::parse(&raw).map_err(refusal)?);
        let headers: Option<Arc<dyn HeaderSource>> = match &config.transport {
            Transport::Http {
                headers: Headers::Static(h),
                ..
            } => Some(Arc::new(StaticHeaders(h.clone()))),
            Transport::Http {
                headers: Headers::Hook,
                ..
            } => headers.map(|h| Arc::new(HeaderHook(Arc::new(h))) as Arc<dyn HeaderSource>),
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
        let connector = Arc::new(NodeConnector {
            config: config.clone(),
            headers,
            inprocess,
        });
        Ok(Self {
            source: Source::new(config, connector),
            inbound,
            progress: progress.map(Arc::new),
            calls: Default::default(),
        })
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

    /// Resolves with the current snapshot. `known` is the key of the snapshot the JS side
    /// already holds an array for; the snapshot is still returned, its key decides.
    #[napi(ts_return_type = "Promise<NativeSnapshot>")]
    pub fn tools<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, NativeSnapshot>> {
        let source = self.source.clone();
        let sweeping = self.source.clone();
        let calls = self.calls.clone();
        let progress = self.progress.clone();
        env.spawn_future_with_callback(
            async move { Ok(sweeping.tools().await) },
            move |env, outcome| match outcome {
                Ok(snapshot) => Ok(NativeSnapshot {
                    source,
                    snapshot,
                    calls,
                    progress,
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
    /// `send` returns (design hazard 1).
    #[napi(catch_unwind)]
    pub fn deliver(&self, text: String) -> bool {
        let Some(slot) = &self.inbound else {
            return false;
        };
        let Ok(slot) = slot.lock() else { return false };
        match slot.as_ref() {
            Some(inbound) => inbound.push_text(text.as_bytes()),
            None => false,
        }
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

    /// Gives up on a call (its `ctx.signal` aborted).
    #[napi(catch_unwind)]
    pub fn cancel(&self, call_id: u32) {
        if let Some(tx) = self.calls.lock().ok().and_then(|mut c| c.remove(&call_id)) {
            let _ = tx.send(());
        }
    }
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
    calls: Arc<Mutex<HashMap<u32, oneshot::Sender<()>>>>,
    progress: Option<Arc<ProgressHook>>,
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

    /// Executes tool `index` with `input` (JSON text of `input ?? {}`); resolves with the JSON
    /// text of the mapped result. `call_id` names the call for `cancel` and progress reports;
    /// 0 means neither can happen, and the call is not registered at all.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn call<'env>(
        &self,
        env: &'env Env,
        index: u32,
        input: String,
        call_id: u32,
        wants_progress: bool,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let source = self.source.clone();
        let snapshot = self.snapshot.clone();
        let cancel_rx = (call_id != 0).then(|| {
            let (tx, rx) = oneshot::channel::<()>();
            if let Ok(mut calls) = self.calls.lock() {
                calls.insert(call_id, tx);
            }
            rx
        });
        let calls = self.calls.clone();
        let progress = self.progress.clone().filter(|_| wants_progress);
        env.spawn_future_with_callback(
            async move {
                let listener = progress.map(|hook| {
                    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<serde_json::Value>();
                    tokio::spawn(async move {
                        while let Some(p) = rx.recv().await {
                            hook.call(
                                FnArgs::from((call_id, p.to_string())),
                                ThreadsafeFunctionCallMode::NonBlocking,
                            );
                        }
                    });
                    tx
                });
                // Only an explicit cancel() gives up; a sender dropped unused never does.
                let cancelled = async move {
                    let cancelled = match cancel_rx {
                        Some(rx) => rx.await.is_ok(),
                        None => false,
                    };
                    if !cancelled {
                        std::future::pending::<()>().await;
                    }
                };
                let result = source
                    .call(&snapshot, index as usize, &input, listener, cancelled)
                    .await;
                if call_id != 0 {
                    if let Ok(mut calls) = calls.lock() {
                        calls.remove(&call_id);
                    }
                }
                Ok(result)
            },
            move |env, outcome| match outcome {
                Ok(text) => Ok(text),
                Err(failure) => Err(js_error(env, &failure.0, None)),
            },
        )
    }
}

thread_local! {
    static CLEANUP_REGISTERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Children die with the host even when `close()` was never called (design hazard 7).
fn ensure_cleanup_hook(env: sys::napi_env) {
    unsafe extern "C" fn cleanup(_: *mut std::ffi::c_void) {
        stdio::kill_all_children();
    }
    if CLEANUP_REGISTERED.with(|r| r.replace(true)) {
        return;
    }
    unsafe { sys::napi_add_env_cleanup_hook(env, Some(cleanup), std::ptr::null_mut()) };
}
