//! The port: the one thread-safe function through which the native side of every source
//! calls its JS hooks (lib/hooks.js makes one, `NativePort`, and dispatches each call,
//! `(key, which, text)`, to hook `which` of the source registered under `key`).
//!
//! Why one and not one per hook: a thread-safe function is a libuv async handle, and libuv
//! walks every live one each time any of them wakes the loop. Per-source functions lived until
//! the source's wrapper was collected, so sources opened and closed by the thousand (an
//! in-process server per task) left thousands of handles between two collections, and every
//! reply's wake-up walked them all: a fifth of all the process's time in such a loop.

use super::turn::{self, Fire};
use crate::sync::lock;
use napi::bindgen_prelude::{Env, FnArgs, FunctionRef, Promise, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Status};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// `(key, which, text)`: the source's key, the index of the hook among those it registered,
/// and the hook's argument ("" for those that take none).
pub(crate) type Args = FnArgs<(u32, u32, String)>;

/// The port's own entries, under key 0 (lib/hooks.js `dispatch`): drain the executor, or tidy
/// the allocator after dead sources.
const DRAIN: u32 = 0;
const TIDY: u32 = 1;

/// Weak (it never keeps Node's event loop alive by itself: `hold` does, while calls are in
/// flight) and not callee-handled, so each awaited call is `call_async_catch`, and a hook that
/// throws or rejects is an ordinary error.
pub(crate) type PortFn = ThreadsafeFunction<Args, Promise<String>, Args, Status, false, true>;

pub(crate) struct Port {
    tsfn: PortFn,
    /// The same dispatch, called on the JS thread (hooks fired while a task was polled).
    here: FunctionRef<Args, Unknown<'static>>,
    /// What holds the event loop: calls in flight (lib/calls.js) or unfinished tasks of the
    /// executor (which a spawned future held before, through napi-rs's own function). Changed
    /// only on the JS thread.
    holds: Mutex<Holds>,
    /// A tidy was asked for and has not run yet (`tidy_later`).
    tidying: AtomicBool,
}

#[derive(Default)]
struct Holds {
    calls: bool,
    tasks: usize,
    applied: bool,
}

impl Port {
    /// `here` is `tsfn`'s dispatch again, as the JS thread calls it directly.
    pub(crate) fn new(tsfn: PortFn, here: FunctionRef<Args, Unknown<'static>>) -> Self {
        Self {
            tsfn,
            here,
            holds: Default::default(),
            tidying: AtomicBool::new(false),
        }
    }

    /// Asks the JS thread to hand what its allocator keeps of freed memory back to the system:
    /// `(0, 1, "")`, once however many ask before it runs. A dead source's memory is freed on
    /// the JS thread by its wrapper's finalizer, often a few thousand sources in one batch
    /// after a collection, and mimalloc returns freed pages only as that thread allocates
    /// again: a host idle after a burst of sources kept the whole batch resident (18 MB after
    /// 3,000 in-process sources). The port's call runs after the batch, in a later turn.
    pub(crate) fn tidy_later(&self) {
        if !self.tidying.swap(true, Ordering::Relaxed) {
            self.fire_own(TIDY);
        }
    }

    /// The tidy `tidy_later` asked for, on the JS thread.
    pub(crate) fn tidy(&self) {
        self.tidying.store(false, Ordering::Relaxed);
        crate::allocator::return_free_memory();
    }

    /// Asks the JS thread to drain the executor's tasks: `(0, 0, "")`, a key no source has.
    pub(super) fn fire_drain(&self) {
        self.fire_own(DRAIN);
    }

    /// Calls the port's own entry `which` (key 0, which no source has) on the JS thread, later.
    fn fire_own(&self, which: u32) {
        self.tsfn.call(
            FnArgs::from((0, which, String::new())),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }

    /// Calls a fire-and-forget hook on the JS thread, now. What it throws is dropped, as the
    /// port would (those hooks never throw).
    pub(super) fn fire_here(&self, env: &Env, (key, which, text): Fire) {
        let called = self
            .here
            .borrow_back(env)
            .and_then(|f| f.call(FnArgs::from((key, which, text))));
        if called.is_err() {
            let mut thrown = std::ptr::null_mut();
            // SAFETY: `env` is the live env of the napi call this runs in, on its JS thread;
            // `thrown` is a local the call writes.
            unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &mut thrown) };
        }
    }

    /// Keeps Node's event loop alive (`true`: some source has calls in flight) or lets it go.
    pub(crate) fn hold_calls(&self, env: &Env, held: bool) -> napi::Result<()> {
        let mut holds = lock(&self.holds);
        holds.calls = held;
        self.apply(env, &mut holds)
    }

    /// One more (`1`) or one fewer (`-1`) unfinished task of the executor.
    pub(super) fn hold_task(&self, env: &Env, delta: isize) -> napi::Result<()> {
        let mut holds = lock(&self.holds);
        holds.tasks = holds.tasks.saturating_add_signed(delta);
        self.apply(env, &mut holds)
    }

    fn apply(&self, env: &Env, holds: &mut Holds) -> napi::Result<()> {
        let wanted = holds.calls || holds.tasks > 0;
        if holds.applied == wanted || self.tsfn.aborted() {
            return Ok(());
        }
        let raw = self.tsfn.raw();
        // SAFETY: `env` is the live env of this call, on its JS thread, and `raw` is this
        // port's thread-safe function, which is not aborted (checked just above, on the same
        // thread that would abort it at the environment's teardown) and not released (the
        // port owns it). napi-rs's own ref/unref need `&mut` of a function every runtime
        // thread calls through a shared `Arc`; its `referred` flag is not read on this path.
        let status = unsafe {
            match wanted {
                true => sys::napi_ref_threadsafe_function(env.raw(), raw),
                false => sys::napi_unref_threadsafe_function(env.raw(), raw),
            }
        };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::from_reason(format!(
                "mcp: the event-loop hold failed ({status})"
            )));
        }
        holds.applied = wanted;
        Ok(())
    }
}

/// Held by what every part of a source's native memory holds (its connector), so it goes with
/// the last of them, wherever that is dropped: then the JS thread tidies (`tidy_later`).
pub(crate) struct TidyOnDrop(Arc<Port>);

impl TidyOnDrop {
    pub(crate) fn new(port: &Arc<Port>) -> Self {
        Self(port.clone())
    }
}

impl Drop for TidyOnDrop {
    fn drop(&mut self) {
        self.0.tidy_later();
    }
}

/// One hook of one source, as the native side calls it.
#[derive(Clone)]
pub(crate) struct JsHook {
    port: Arc<Port>,
    key: u32,
    which: u32,
}

impl JsHook {
    pub(crate) fn new(port: &Arc<Port>, key: u32, which: u32) -> Self {
        Self {
            port: port.clone(),
            key,
            which,
        }
    }

    /// Calls the hook without waiting for it (what it returns is dropped): after the poll when
    /// a task of its port is being polled on this thread, else through the port. The JS side's
    /// fire-and-forget hooks never throw: a throw here would be an uncaught exception.
    pub(crate) fn fire(&self, text: String) -> Status {
        let port = turn::whose(&*self.port);
        match turn::fire_later(port, (self.key, self.which, text)) {
            None => Status::Ok,
            Some(fire) => self
                .port
                .tsfn
                .call(FnArgs::from(fire), ThreadsafeFunctionCallMode::NonBlocking),
        }
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
