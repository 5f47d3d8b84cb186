//! `NativePort`: the one thread-safe function through which the native side of every source
//! calls its JS hooks (lib/hooks.js makes one and dispatches each call, `(key, which, text)`,
//! to hook `which` of the source registered under `key`).
//!
//! Why one and not one per hook: a thread-safe function is a libuv async handle, and libuv
//! walks every live one each time any of them wakes the loop. Per-source functions lived until
//! the source's wrapper was collected, so sources opened and closed by the thousand (an
//! in-process server per task) left thousands of handles between two collections, and every
//! reply's wake-up walked them all: a fifth of all the process's time in such a loop.

use napi::bindgen_prelude::{Env, FnArgs, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Status};
use napi_derive::napi;
use std::sync::Arc;

/// `(key, which, text)`: the source's key, the index of the hook among those it registered,
/// and the hook's argument ("" for those that take none).
type Args = FnArgs<(u32, u32, String)>;

/// Weak (it never keeps Node's event loop alive by itself: `hold` does, while calls are in
/// flight) and not callee-handled, so each awaited call is `call_async_catch`, and a hook that
/// throws or rejects is an ordinary error.
pub(super) type PortFn = ThreadsafeFunction<Args, Promise<String>, Args, Status, false, true>;

pub(super) struct Port {
    tsfn: PortFn,
}

/// One hook of one source, as the native side calls it.
#[derive(Clone)]
pub(crate) struct JsHook {
    port: Arc<Port>,
    key: u32,
    which: u32,
}

impl JsHook {
    pub(super) fn new(port: &Arc<Port>, key: u32, which: u32) -> Self {
        Self {
            port: port.clone(),
            key,
            which,
        }
    }

    /// Calls the hook without waiting for it (what it returns is dropped). The JS side's
    /// fire-and-forget hooks never throw: a throw here would be an uncaught exception.
    pub(crate) fn fire(&self, text: String) -> Status {
        self.port.tsfn.call(
            FnArgs::from((self.key, self.which, text)),
            ThreadsafeFunctionCallMode::NonBlocking,
        )
    }

    /// Calls the hook and awaits the Promise it returns: the two waits fail alike (it threw,
    /// it rejected, its source is gone so it answered nothing, or its promise can never settle).
    pub(crate) async fn settled(&self, text: String) -> napi::Result<String> {
        self.port
            .tsfn
            .call_async_catch(FnArgs::from((self.key, self.which, text)))
            .await?
            .await
    }
}

#[napi]
pub struct NativePort {
    port: Arc<Port>,
    held: bool,
}

#[napi]
impl NativePort {
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "dispatch: (key: number, which: number, text: string) => unknown"
    )]
    pub fn new(dispatch: PortFn) -> Self {
        Self {
            port: Arc::new(Port { tsfn: dispatch }),
            held: false,
        }
    }

    /// Keeps Node's event loop alive (`true`: some source has calls in flight) or lets it go.
    #[napi(catch_unwind)]
    pub fn hold(&mut self, env: Env, held: bool) -> napi::Result<()> {
        if self.held == held || self.port.tsfn.aborted() {
            return Ok(());
        }
        let raw = self.port.tsfn.raw();
        // SAFETY: `env` is the live env of this call, on its JS thread, and `raw` is this
        // port's thread-safe function, which is not aborted (checked just above, on the same
        // thread that would abort it at the environment's teardown) and not released (the
        // port owns it). napi-rs's own ref/unref need `&mut` of a function every runtime
        // thread calls through a shared `Arc`; its `referred` flag is not read on this path.
        let status = unsafe {
            match held {
                true => sys::napi_ref_threadsafe_function(env.raw(), raw),
                false => sys::napi_unref_threadsafe_function(env.raw(), raw),
            }
        };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::from_reason(format!(
                "mcp: the event-loop hold failed ({status})"
            )));
        }
        self.held = held;
        Ok(())
    }
}

impl NativePort {
    pub(super) fn port(&self) -> &Arc<Port> {
        &self.port
    }
}
