//! The executor: futures polled on the JS thread (an in-process source's `tools()` and
//! `close()`, and its connection's deadline timer).
//!
//! Why: the server lives on the JS thread, so every step of an opening (attach, `initialize`,
//! `tools/list`, admission, the ToolDefs) starts and ends there. On the runtime's threads each
//! step was a wake-up of a parked thread and one back (about 36 context switches an
//! open/tools()/close() cycle, each an inter-processor interrupt on a small VM); polled here,
//! a reply the server sends (the deliverer) moves its waiter on before `send()` returns, and what
//! the future sends next reaches the server in a microtask.
//!
//! A task is woken from three kinds of places. On the JS thread inside one of the port's
//! entries (`entered`: a delivery, a hook's settling), it is queued and polled when the entry
//! ends. Anywhere else (a timer on the runtime, a napi-rs promise callback) it is queued and
//! the port is fired, whose dispatch on the JS thread drains the queue (`NativePort.drain`).
//! The runtime's context is entered while polling: timers and tasks spawned there still live
//! on the runtime.

use super::handover::HandOver;
use super::port::Port;
use super::turn;
use crate::sync::lock;
use futures::future::BoxFuture;
use futures::task::ArcWake;
use napi::bindgen_prelude::{Env, ToNapiValue};
use napi::sys;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// What a finished task settles its promise with, made on the JS thread.
pub(crate) type Settle = Box<dyn FnOnce(&Env) -> napi::Result<sys::napi_value> + Send>;

/// One environment's JS thread: its port, and the tasks waiting to be polled there.
pub(crate) struct Executor {
    port: Arc<Port>,
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

struct Task {
    executor: Arc<Executor>,
    future: Mutex<Option<BoxFuture<'static, Settle>>>,
    deferred: Mutex<Option<Deferred>>,
    /// Sends to this source's in-process server made while polling go to it in a microtask
    /// (a connection's own task has none: its rare sends go through the port).
    hand_over: Option<Arc<HandOver>>,
    queued: AtomicBool,
}

/// How many polls one drain makes before it leaves the rest to another turn of the loop (a
/// future that wakes itself forever must not hold the JS thread).
const POLLS_PER_DRAIN: usize = 1024;

impl ArcWake for Task {
    fn wake_by_ref(task: &Arc<Self>) {
        if task.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let executor = &task.executor;
        lock(&executor.ready).push_back(task.clone());
        if !turn::entered(executor.whose()) && !executor.scheduled.swap(true, Ordering::AcqRel) {
            executor.port.fire_drain();
        }
    }
}

impl Executor {
    pub(crate) fn new(port: Port) -> Arc<Self> {
        Arc::new(Self {
            port: Arc::new(port),
            ready: Default::default(),
            scheduled: AtomicBool::new(false),
        })
    }

    pub(crate) fn port(&self) -> &Arc<Port> {
        &self.port
    }

    /// The address this thread's turn knows the port by (its hooks' too).
    fn whose(&self) -> turn::Whose {
        turn::whose(&*self.port)
    }

    /// Starts `future` on the JS thread (its first poll happens before this returns) and
    /// returns the promise its `Settle` settles.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        env: &Env,
        hand_over: Arc<HandOver>,
        future: BoxFuture<'static, Settle>,
    ) -> napi::Result<sys::napi_value> {
        let mut deferred = std::ptr::null_mut();
        let mut promise = std::ptr::null_mut();
        // SAFETY: `env` is the live env of the napi call this runs in, on its JS thread; both
        // out pointers are valid locals.
        let status = unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) };
        crate::node::js::check(env.raw(), status, "create a promise")?;
        let task = Arc::new(Task {
            executor: self.clone(),
            future: Mutex::new(Some(future)),
            deferred: Mutex::new(Some(Deferred(deferred))),
            hand_over: Some(hand_over),
            queued: AtomicBool::new(true),
        });
        self.port.hold_task(env, 1)?;
        lock(&self.ready).push_back(task);
        self.drain(env);
        Ok(promise)
    }

    /// Starts a task that settles nothing and does not hold the event loop (a connection's
    /// deadline timer, which lives as long as the connection): polled at once when this runs
    /// in a drain, otherwise at the drain the port is fired for.
    pub(crate) fn spawn_detached(self: &Arc<Self>, future: BoxFuture<'static, ()>) {
        let future = async move {
            future.await;
            Box::new(|env: &Env| crate::node::js::undefined(env.raw())) as Settle
        };
        let task = Arc::new(Task {
            executor: self.clone(),
            future: Mutex::new(Some(Box::pin(future))),
            deferred: Mutex::new(None),
            hand_over: None,
            queued: AtomicBool::new(false),
        });
        ArcWake::wake_by_ref(&task);
    }

    /// Runs `f` as an entry of the port (a napi call on its JS thread): the tasks it wakes are
    /// polled when it ends, before it returns to JS.
    pub(crate) fn entered<T>(&self, env: &Env, f: impl FnOnce() -> T) -> T {
        let (out, outermost) = turn::entering(self.whose(), f);
        if outermost {
            self.drain(env);
        }
        out
    }

    /// Polls every queued task (on the JS thread).
    pub(crate) fn drain(&self, env: &Env) {
        if turn::entered(self.whose()) {
            // Already draining further up this thread's stack: that loop takes what was queued.
            return;
        }
        self.scheduled.store(false, Ordering::Release);
        // Most entries (an in-process call's reply) woke nothing: no runtime context for those.
        if lock(&self.ready).is_empty() {
            return;
        }
        turn::entering(self.whose(), || self.poll_ready(env));
    }

    fn poll_ready(&self, env: &Env) {
        // The runtime's context for the whole drain: what a poll registers (timers, tasks) and
        // what a finished future drops (a release left to run on) belong to the runtime.
        let runtime = std::panic::catch_unwind(|| {
            napi::bindgen_prelude::within_runtime_if_available(tokio::runtime::Handle::current)
        });
        let _context = runtime.as_ref().ok().map(|r| r.enter());
        let mut polls = 0;
        loop {
            let next = lock(&self.ready).pop_front();
            let Some(task) = next else { break };
            if polls == POLLS_PER_DRAIN {
                lock(&self.ready).push_front(task);
                if !self.scheduled.swap(true, Ordering::AcqRel) {
                    self.port.fire_drain();
                }
                break;
            }
            polls += 1;
            task.queued.store(false, Ordering::Release);
            poll(env, &task);
        }
    }
}

/// A poll's state, with what it sent to the in-process server and the hooks it fired.
type Polled = (Poll<Settle>, Vec<String>, Vec<turn::Fire>);

fn poll(env: &Env, task: &Arc<Task>) {
    let polled = {
        let mut slot = lock(&task.future);
        let Some(future) = slot.as_mut() else { return };
        let waker = futures::task::waker_ref(task);
        let mut cx = Context::from_waker(&waker);
        let mut step = || future.as_mut().poll(&mut cx);
        let port = task.executor.whose();
        // A future that panics (as one would with the runtime gone) ends with an error.
        let run = std::panic::AssertUnwindSafe(|| {
            let ((state, frames), fires) = turn::firing_later(port, || match &task.hand_over {
                Some(hand_over) => hand_over.collecting(&mut step),
                None => (step(), Vec::new()),
            });
            (state, frames, fires)
        });
        let polled: std::thread::Result<Polled> = std::panic::catch_unwind(run);
        if !matches!(polled, Ok((Poll::Pending, _, _))) {
            *slot = None;
        }
        polled
    };
    let settle: Option<Settle> = match polled {
        Ok((state, frames, fires)) => {
            if let Some(hand_over) = &task.hand_over {
                hand_over.hand_over(env, frames);
            }
            for fire in fires {
                task.executor.port.fire_here(env, fire);
            }
            match state {
                Poll::Pending => return,
                Poll::Ready(settle) => Some(settle),
            }
        }
        Err(_) => None,
    };
    settled(env, task, settle);
}

/// Settles the task's promise, if it has one, with what its future ended with (`None`: it
/// panicked).
fn settled(env: &Env, task: &Task, settle: Option<Settle>) {
    let Some(Deferred(deferred)) = lock(&task.deferred).take() else {
        return;
    };
    let _ = task.executor.port.hold_task(env, -1);
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
