//! The port: the one thread-safe function through which the native side of every source
//! calls its JS hooks (lib/hooks.js makes one, `NativePort`, and dispatches each call,
//! `(key, which, text)`, to hook `which` of the source registered under `key`).
//!
//! Why one and not one per hook: a thread-safe function is a libuv async handle, and libuv
//! walks every live one each time any of them wakes the loop. Per-source functions lived until
//! the source's wrapper was collected, so sources opened and closed by the thousand (an
//! in-process server per task) left thousands of handles between two collections, and every
//! reply's wake-up walked them all: a fifth of all the process's time in such a loop.
//!
//! An awaited hook's answer comes back through the port too (`NativePort.settle`), under the
//! number its call carried, not through napi-rs's `Promise`: that made two N-API functions
//! and two wraps per awaited Promise, the in-process open/close cycle's four hooks made eight,
//! and their native memory stayed on the system allocator's heap until V8 collected them.

use super::turn::{self, Fire};
use crate::sync::lock;
use futures::channel::oneshot;
use napi::bindgen_prelude::{Env, FnArgs, FunctionRef, Unknown};
use napi::threadsafe_function::{
    ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue,
};
use napi::{sys, Status, ValueType};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// `(key, which, text, reply)`: the source's key, the index of the hook among those it
/// registered, the hook's argument ("" for those that take none), and the number its answer
/// is settled under (0: none is awaited).
pub(crate) type Args = FnArgs<(u32, u32, String, u32)>;

/// The port's own entries, under key 0 (lib/hooks.js `dispatch`): drain the executor, or tidy
/// the allocator after dead sources.
const DRAIN: u32 = 0;
const TIDY: u32 = 1;

/// The `reply` of a call whose answer nobody awaits (a fired hook, the port's own entries).
const NO_REPLY: u32 = 0;

/// A fired hook's arguments: no answer is awaited.
fn fired((key, which, text): Fire) -> Args {
    FnArgs::from((key, which, text, NO_REPLY))
}

/// How the JS side settles an awaited hook (lib/hooks.js `answer`): with its text, with what
/// it threw or rejected with, or because V8 collected its promise unsettled.
const FULFILLED: u32 = 0;
const REJECTED: u32 = 1;

/// Why an awaited hook failed when its promise can never settle: V8 collected it (the JS
/// side's FinalizationRegistry saw it go), or the port went before any answer came.
const NEVER_SETTLES: &str = "its promise was collected without ever settling";

/// Weak (it never keeps Node's event loop alive by itself: `hold` does, while calls are in
/// flight) and not callee-handled: the JS side's dispatch never throws, and what an awaited
/// hook throws or rejects with comes back through `settle`.
pub(crate) type PortFn = ThreadsafeFunction<Args, UnknownReturnValue, Args, Status, false, true>;

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
    /// The awaited hooks not answered yet, by the number their answer comes back under.
    awaiting: Mutex<Awaiting>,
}

type Answer = napi::Result<String>;

/// Awaited hooks not answered yet, in every port of the process (`nativeMemory().hooksAwaited`):
/// a waiter that went and left its entry behind would show here.
static AWAITED: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn hooks_awaited() -> usize {
    AWAITED.load(Ordering::Relaxed)
}

#[derive(Default)]
struct Awaiting {
    last: u32,
    waiting: HashMap<u32, oneshot::Sender<Answer>>,
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
            awaiting: Default::default(),
        }
    }

    /// A number no awaited hook holds (never 0), and where its answer will come.
    fn awaiting(&self) -> (u32, oneshot::Receiver<Answer>) {
        let (tx, rx) = oneshot::channel();
        let mut awaiting = lock(&self.awaiting);
        let mut reply = awaiting.last;
        loop {
            reply = reply.checked_add(1).unwrap_or(1);
            if !awaiting.waiting.contains_key(&reply) {
                break;
            }
        }
        awaiting.last = reply;
        awaiting.waiting.insert(reply, tx);
        AWAITED.fetch_add(1, Ordering::Relaxed);
        (reply, rx)
    }

    /// Takes the awaited hook `reply` out: to answer it, or because its waiter went (then its
    /// answer, if one comes, is dropped).
    fn take(&self, reply: u32) -> Option<oneshot::Sender<Answer>> {
        let taken = lock(&self.awaiting).waiting.remove(&reply);
        if taken.is_some() {
            AWAITED.fetch_sub(1, Ordering::Relaxed);
        }
        taken
    }

    /// The answer to the awaited hook `reply`, on the JS thread (lib/hooks.js): `value` is its
    /// text (`FULFILLED`), what it threw or rejected with, the host's very object (`REJECTED`),
    /// or nothing (its promise was collected unsettled). An answer nobody waits for is dropped.
    pub(crate) fn settle(&self, reply: u32, outcome: u32, value: Unknown) {
        let Some(tx) = self.take(reply) else {
            return;
        };
        let answer = match outcome {
            FULFILLED => text_of(&value),
            REJECTED => Err(napi::Error::from_unknown_without_coercion(value)),
            _ => Err(never_settled()),
        };
        let _ = tx.send(answer);
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
            fired((0, which, String::new())),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }

    /// Calls a fire-and-forget hook on the JS thread, now. What it throws is dropped, as the
    /// port would (those hooks never throw).
    pub(super) fn fire_here(&self, env: &Env, fire: Fire) {
        let called = self.here.borrow_back(env).and_then(|f| f.call(fired(fire)));
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
                .call(fired(fire), ThreadsafeFunctionCallMode::NonBlocking),
        }
    }

    /// Calls the hook and awaits what its Promise settles with: it threw, it rejected, its
    /// source is gone so it answered no text, or its promise can never settle
    /// (`never_settles`). A waiter dropped first forgets its number.
    pub(crate) async fn settled(&self, text: String) -> napi::Result<String> {
        struct Waiting<'a>(&'a Port, u32);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.take(self.1);
            }
        }
        let (reply, answer) = self.port.awaiting();
        let _waiting = Waiting(&self.port, reply);
        let args = FnArgs::from((self.key, self.which, text, reply));
        match self
            .port
            .tsfn
            .call(args, ThreadsafeFunctionCallMode::NonBlocking)
        {
            Status::Ok => answer.await.unwrap_or_else(|_| Err(never_settled())),
            status => Err(napi::Error::new(
                status,
                format!("the JS thread took no call ({status})"),
            )),
        }
    }
}

/// An awaited hook's promise can never settle (`NEVER_SETTLES`).
pub(crate) fn never_settles(e: &napi::Error) -> bool {
    e.status == Status::Cancelled && e.reason == NEVER_SETTLES
}

fn never_settled() -> napi::Error {
    napi::Error::new(Status::Cancelled, NEVER_SETTLES)
}

/// A fulfilled hook's text; anything else (a source gone answers `undefined`) fails the hook.
fn text_of(value: &Unknown) -> Answer {
    match value.get_type() {
        // SAFETY: the value is a string (checked just above) of the live env of this napi
        // call, on its JS thread.
        Ok(ValueType::String) => unsafe { value.cast::<String>() },
        _ => Err(napi::Error::from_reason("it answered no text")),
    }
}
