//! Futures polled on the JS thread: an in-process source's `tools()` and `close()`, and its
//! connection's deadline timer.
//!
//! Why: the server lives on the JS thread, so every step of an opening (attach, `initialize`,
//! `tools/list`, admission, the ToolDefs) starts and ends there. On the runtime's threads each
//! step was a wake-up of a parked thread and one back (about 36 context switches an
//! open/tools()/close() cycle, each an inter-processor interrupt on a small VM); polled here,
//! a reply the server sends (`deliver`) moves its waiter on before `send()` returns, and what
//! the future sends next reaches the server in a microtask.
//!
//! A task is woken from three kinds of places. On the JS thread inside one of the port's
//! entries (`entered`: a delivery, a hook's settling), it is queued and polled when the entry
//! ends. Anywhere else (a timer on the runtime, a napi-rs promise callback) it is queued and
//! the port is fired, whose dispatch on the JS thread drains the queue (`NativePort.drain`).
//! The runtime's context is entered while polling: timers and tasks spawned there still live
//! on the runtime.

use super::binding_port::Port;
use super::calls::Calls;
use crate::sync::lock;
use crate::transport::inprocess::collect_sends;
use futures::future::BoxFuture;
use futures::task::ArcWake;
use napi::bindgen_prelude::{Env, ToNapiValue};
use napi::sys;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// What a finished task settles its promise with, made on the JS thread.
pub(super) type Settle = Box<dyn FnOnce(&Env) -> napi::Result<sys::napi_value> + Send>;

/// The tasks of one port (one environment, one JS thread) waiting to be polled.
#[derive(Default)]
pub(super) struct Queue {
    ready: Mutex<VecDeque<Arc<Task>>>,
    /// The port was fired to drain, and has not yet.
    scheduled: AtomicBool,
}

/// A napi deferred, touched only on the JS thread that made it.
struct Deferred(sys::napi_deferred);

// SAFETY: the deferred is created, resolved and rejected on the JS thread of its environment
// (in `spawn` and `drain`, both called from that thread's napi calls); other threads only move
// the task that holds it.
unsafe impl Send for Deferred {}

pub(super) struct Task {
    port: Arc<Port>,
    future: Mutex<Option<BoxFuture<'static, Settle>>>,
    deferred: Mutex<Option<Deferred>>,
    /// Sends to this source's in-process server made while polling go to it in a microtask
    /// (a connection's own task has none: its rare sends go through the port).
    calls: Option<Arc<Calls>>,
    queued: AtomicBool,
}

/// A fire-and-forget hook call: `(key, which, text)`.
type Fire = (u32, u32, String);

thread_local! {
    /// The port whose entry is running on this thread: its wake-ups wait for the entry's end.
    static ENTERED: Cell<*const Port> = const { Cell::new(std::ptr::null()) };
    /// While a task of a port is polled: the hooks it fires, called right after the poll, on
    /// this thread (through the port they would reach JS only at the loop's next turn, after
    /// the promise the task settles: a request's trace span would end after the import).
    static FIRES: RefCell<Option<(*const Port, Vec<Fire>)>> = const { RefCell::new(None) };
}

/// Keeps a hook call of `port` for the end of the poll running on this thread, if one is;
/// otherwise hands it back.
pub(super) fn defer_fire(port: &Arc<Port>, fire: Fire) -> Option<Fire> {
    FIRES.with_borrow_mut(|slot| match slot {
        Some((polling, fires)) if *polling == Arc::as_ptr(port) => {
            fires.push(fire);
            None
        }
        _ => Some(fire),
    })
}

/// How many polls one drain makes before it leaves the rest to another turn of the loop (a
/// future that wakes itself forever must not hold the JS thread).
const POLLS_PER_DRAIN: usize = 1024;

impl ArcWake for Task {
    fn wake_by_ref(task: &Arc<Self>) {
        if task.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let port = &task.port;
        lock(&port.local.ready).push_back(task.clone());
        let inside = ENTERED.get() == Arc::as_ptr(port);
        if !inside && !port.local.scheduled.swap(true, Ordering::AcqRel) {
            port.fire_drain();
        }
    }
}

/// Starts `future` on the JS thread (its first poll happens before this returns) and returns
/// the promise its `Settle` settles.
pub(super) fn spawn(
    env: &Env,
    port: &Arc<Port>,
    calls: Arc<Calls>,
    future: BoxFuture<'static, Settle>,
) -> napi::Result<sys::napi_value> {
    let mut deferred = std::ptr::null_mut();
    let mut promise = std::ptr::null_mut();
    // SAFETY: `env` is the live env of the napi call this runs in, on its JS thread; both out
    // pointers are valid locals.
    let status = unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) };
    super::js::check(env.raw(), status, "create a promise")?;
    let task = Arc::new(Task {
        port: port.clone(),
        future: Mutex::new(Some(future)),
        deferred: Mutex::new(Some(Deferred(deferred))),
        calls: Some(calls),
        queued: AtomicBool::new(true),
    });
    port.hold_local(env, 1)?;
    lock(&port.local.ready).push_back(task);
    drain(env, port);
    Ok(promise)
}

/// Starts a task that settles nothing and does not hold the event loop (a connection's
/// deadline timer, which lives as long as the connection): polled at once when this runs in a
/// drain of `port`, otherwise at the drain the port is fired for.
pub(super) fn spawn_detached(port: &Arc<Port>, future: BoxFuture<'static, ()>) {
    let future = async move {
        future.await;
        Box::new(|env: &Env| super::js::undefined(env.raw())) as Settle
    };
    let task = Arc::new(Task {
        port: port.clone(),
        future: Mutex::new(Some(Box::pin(future))),
        deferred: Mutex::new(None),
        calls: None,
        queued: AtomicBool::new(false),
    });
    ArcWake::wake_by_ref(&task);
}

/// Runs `f` as an entry of `port` (a napi call on its JS thread): the tasks it wakes are
/// polled when it ends, before it returns to JS.
pub(super) fn entered<T>(env: &Env, port: &Arc<Port>, f: impl FnOnce() -> T) -> T {
    let before = ENTERED.replace(Arc::as_ptr(port));
    let out = f();
    ENTERED.set(before);
    if before.is_null() {
        drain(env, port);
    }
    out
}

/// Polls every queued task of `port` (on its JS thread).
pub(super) fn drain(env: &Env, port: &Arc<Port>) {
    let before = ENTERED.replace(Arc::as_ptr(port));
    if before == Arc::as_ptr(port) {
        // Already draining further up this thread's stack: that loop takes what was queued.
        return;
    }
    port.local.scheduled.store(false, Ordering::Release);
    // Most entries (an in-process call's reply) woke nothing: no runtime context for those.
    if lock(&port.local.ready).is_empty() {
        ENTERED.set(before);
        return;
    }
    // The runtime's context for the whole drain: what a poll registers (timers, tasks) and
    // what a finished future drops (a release left to run on) belong to the runtime.
    let runtime = std::panic::catch_unwind(|| {
        napi::bindgen_prelude::within_runtime_if_available(tokio::runtime::Handle::current)
    });
    let _context = runtime.as_ref().ok().map(|r| r.enter());
    let mut polls = 0;
    loop {
        let next = lock(&port.local.ready).pop_front();
        let Some(task) = next else { break };
        if polls == POLLS_PER_DRAIN {
            lock(&port.local.ready).push_front(task);
            if !port.local.scheduled.swap(true, Ordering::AcqRel) {
                port.fire_drain();
            }
            break;
        }
        polls += 1;
        task.queued.store(false, Ordering::Release);
        poll(env, &task);
    }
    ENTERED.set(before);
}

fn poll(env: &Env, task: &Arc<Task>) {
    let polled = {
        let mut slot = lock(&task.future);
        let Some(future) = slot.as_mut() else { return };
        let waker = futures::task::waker_ref(task);
        let mut cx = Context::from_waker(&waker);
        let direct = task.calls.as_ref().and_then(|calls| calls.direct.as_ref());
        let bridge = direct.map(|(bridge, _)| bridge);
        let mut step = || future.as_mut().poll(&mut cx);
        // A future that panics (as one would with the runtime gone) ends with an error.
        let run = std::panic::AssertUnwindSafe(|| match bridge {
            Some(bridge) => collect_sends(bridge, &mut step),
            None => (step(), Vec::new()),
        });
        let before = FIRES.replace(Some((Arc::as_ptr(&task.port), Vec::new())));
        let polled = std::panic::catch_unwind(run);
        let fires = FIRES.replace(before).map(|(_, f)| f).unwrap_or_default();
        let polled = polled.map(|(state, frames)| (state, frames, fires));
        if !matches!(polled, Ok((Poll::Pending, _, _))) {
            *slot = None;
        }
        polled
    };
    let settle: Option<Settle> = match polled {
        Ok((state, frames, fires)) => {
            if let Some(calls) = &task.calls {
                hand_over(env, calls, frames);
            }
            for fire in fires {
                task.port.fire_here(env, fire);
            }
            match state {
                Poll::Pending => return,
                Poll::Ready(settle) => Some(settle),
            }
        }
        Err(_) => None,
    };
    let Some(Deferred(deferred)) = lock(&task.deferred).take() else {
        return;
    };
    let _ = task.port.hold_local(env, -1);
    let outcome = match settle {
        Some(settle) => settle(env),
        None => Err(napi::Error::from_reason(
            "mcp: internal error (a native task panicked)",
        )),
    };
    // SAFETY: `env` is the live env of the napi call this runs in, on the JS thread that made
    // `deferred`, which is settled once (it was taken out of its slot above).
    unsafe {
        match outcome {
            Ok(value) => {
                sys::napi_resolve_deferred(env.raw(), deferred, value);
            }
            Err(error) => {
                let value = ToNapiValue::to_napi_value(env.raw(), napi::JsError::from(error))
                    .unwrap_or(std::ptr::null_mut());
                sys::napi_reject_deferred(env.raw(), deferred, value);
            }
        }
    }
}

/// What a poll sent to the in-process server goes to it in a microtask, in order.
fn hand_over(env: &Env, calls: &Calls, frames: Vec<String>) {
    if frames.is_empty() {
        return;
    }
    let Some((bridge, to_server)) = &calls.direct else {
        return;
    };
    let mut sent = 0;
    if let Ok(to_server) = to_server.borrow_back(env) {
        // Copies: a frame the call refused still goes, below. An opening's requests are short.
        for frame in &frames {
            if to_server.call(frame.clone()).is_err() {
                break;
            }
            sent += 1;
        }
    }
    // What could not go in a microtask goes through the port, as from any other thread.
    for frame in frames.into_iter().skip(sent) {
        let _ = bridge.to_server(frame);
    }
}
