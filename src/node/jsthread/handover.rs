//! The in-process server's side of the bridge (lib/inprocess.js), and the JS thread's direct
//! hand-over to it.
//!
//! A message the client sends goes to the server's `onmessage` through the port (`toServer`)
//! from any thread. When the JS thread itself sends it, while it starts a call
//! (a snapshot's starter) or polls a task of the source (`executor`), the message is
//! collected instead and handed to `toServerSoon` right after, on that thread: the server gets
//! it in the turn's microtask (or before `execute()` returns, for a call made alone) rather
//! than at the loop's next turn. The transport knows none of this: it hands every message to
//! the bridge, which asks this thread's turn whether its sends are being collected.

use super::port::JsHook;
use super::turn;
use crate::transport::inprocess::Bridge;
use futures::future::BoxFuture;
use napi::bindgen_prelude::{Env, FunctionRef, Unknown};
use napi::Status;

pub(crate) struct HandOver {
    /// `toServer`, through the port.
    pub(crate) to_server: JsHook,
    /// `detach`: the server side's `onclose`, so the same server object can connect again.
    pub(crate) detach: JsHook,
    /// `toServerSoon`, called directly on the JS thread: the server takes it in a microtask.
    pub(crate) soon: FunctionRef<String, Unknown<'static>>,
}

impl Bridge for HandOver {
    fn to_server(&self, text: String) -> Result<(), String> {
        let Some(text) = turn::send_later(turn::whose(self), text) else {
            return Ok(());
        };
        match self.to_server.fire(text) {
            Status::Ok => Ok(()),
            status => Err(format!("mcp: the in-process server is gone ({status})")),
        }
    }

    fn detach(&self) -> BoxFuture<'static, ()> {
        let hook = self.detach.clone();
        Box::pin(async move {
            let _ = hook.settled(String::new()).await;
        })
    }
}

impl HandOver {
    /// Runs `f` (which starts a call, on the JS thread) and hands what it sent to the server
    /// right after; a hand-over JS refused is the call's error.
    pub(crate) fn starting<R>(&self, env: &Env, f: impl FnOnce() -> R) -> napi::Result<R> {
        let (out, frames) = self.collecting(f);
        let soon = self.soon.borrow_back(env)?;
        for frame in frames {
            soon.call(frame)?;
        }
        Ok(out)
    }

    /// Runs `f` with what it sends to this server collected, for `hand_over`.
    pub(super) fn collecting<R>(&self, f: impl FnOnce() -> R) -> (R, Vec<String>) {
        turn::sending_later(turn::whose(self), f)
    }

    /// What a poll sent to the server goes to it in a microtask, in order; what cannot goes
    /// through the port, as from any other thread.
    pub(super) fn hand_over(&self, env: &Env, frames: Vec<String>) {
        if frames.is_empty() {
            return;
        }
        let mut sent = 0;
        if let Ok(soon) = self.soon.borrow_back(env) {
            // Copies: a frame the call refused still goes, below. An opening's requests are
            // short.
            for frame in &frames {
                if soon.call(frame.clone()).is_err() {
                    break;
                }
                sent += 1;
            }
        }
        for frame in frames.into_iter().skip(sent) {
            let _ = self.to_server(frame);
        }
    }
}
