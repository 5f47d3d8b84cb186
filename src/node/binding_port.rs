//! `NativePort`: the JS face of the JS thread's port and executor (`jsthread`). lib/hooks.js
//! makes one per environment and dispatches each call, `(key, which, text, reply)`, to hook
//! `which` of the source registered under `key`, and settles an awaited one's answer under
//! `reply`; key 0 drains the executor (`which` 0) or tidies the allocator after dead sources
//! (`which` 1).

use super::jsthread::{Args, Executor, Port, PortFn};
use napi::bindgen_prelude::{Env, FunctionRef, Unknown};
use napi_derive::napi;
use std::sync::Arc;

#[napi]
pub struct NativePort {
    executor: Arc<Executor>,
}

#[napi]
impl NativePort {
    #[napi(
        constructor,
        catch_unwind,
        ts_args_type = "dispatch: (key: number, which: number, text: string, reply: number) => unknown, here: (key: number, which: number, text: string, reply: number) => unknown"
    )]
    /// `here` is `dispatch` again, as the JS thread calls it directly.
    pub fn new(dispatch: PortFn, here: FunctionRef<Args, Unknown<'static>>) -> Self {
        Self {
            executor: Executor::new(Port::new(dispatch, here)),
        }
    }

    /// Keeps Node's event loop alive (`true`: some source has calls in flight) or lets it go.
    #[napi(catch_unwind)]
    pub fn hold(&self, env: Env, held: bool) -> napi::Result<()> {
        self.executor.port().hold_calls(&env, held)
    }

    /// Polls the tasks on the JS thread that were woken (the dispatch of `(0, 0, "")`).
    #[napi(catch_unwind)]
    pub fn drain(&self, env: Env) {
        self.executor.drain(&env);
    }

    /// The answer to the awaited hook call `reply`: `outcome` 0 and its text, 1 and what it
    /// threw or rejected with, 2 (its promise was collected unsettled). Never throws: lib/hooks.js
    /// calls it from promise reactions and a finalization callback. An entry of the port: a
    /// task of this thread the answer wakes (an in-process opening awaiting the server's
    /// `connect()`, a close awaiting its detach) is polled before this returns, not at a later
    /// turn of the loop the port's drain would take.
    #[napi(catch_unwind)]
    pub fn settle(&self, env: Env, reply: u32, outcome: u32, value: Unknown) {
        let port = self.executor.port();
        self.executor
            .entered(&env, || port.settle(reply, outcome, value));
    }

    /// Hands what the allocator keeps of this thread's freed memory back to the system (the
    /// dispatch of `(0, 1, "")`, after dead sources' finalizers ran).
    #[napi(catch_unwind)]
    pub fn tidy(&self) {
        self.executor.port().tidy();
    }
}

impl NativePort {
    pub(super) fn executor(&self) -> &Arc<Executor> {
        &self.executor
    }
}
