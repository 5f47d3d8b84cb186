//! The JS thread's machinery, in one home. Everything the native side does on, or for, the
//! thread of one Node environment is here; of the rest of the napi edge it uses only the
//! checked N-API helpers (`js`).
//!
//! - `turn`: what this thread is doing right now (an entry of the port running, a task being
//!   polled, a call being started, a batch the caller returns itself), one struct with scoped
//!   accessors. Nothing else keeps state of what the thread is doing (`environment` keeps
//!   only which stdio children the environment started).
//! - `port`: the one thread-safe function every source calls its JS hooks through (`JsHook`),
//!   what holds Node's event loop, and the tidy after dead sources (`TidyOnDrop`).
//! - `executor`: futures polled on the JS thread (an in-process source's opening and close),
//!   drained at the end of each entry or when the port is fired.
//! - `handover`: the in-process server's side of the bridge, and the direct hand-over of what
//!   the JS thread itself sends to it.
//! - `completions`: finished calls batched for the JS thread. A reply routed on the JS thread
//!   (the deliverer, the feeder) comes back in the entry's return value (`Completions::replying`); any
//!   other reaches JS through a wake-up.

pub(crate) mod completions;
mod executor;
mod handover;
mod port;
mod turn;

pub(crate) use completions::Completions;
pub(crate) use executor::{Executor, Settle};
pub(crate) use handover::HandOver;
pub(crate) use port::{hooks_awaited, never_settles, Args, JsHook, Port, PortFn, TidyOnDrop};
