//! inprocess: messages carried between the Rust client and an SDK server object in the same
//! process. The JS half (lib/inprocess.js) is the SDK `Transport` the server is connected to;
//! the server's `send` lands in `Inbound::push_text` synchronously, on the JS thread.

use super::Wire;
use futures::future::BoxFuture;
use std::cell::RefCell;
use std::sync::Arc;

/// The JS side of the bridge, as the node layer provides it.
pub trait Bridge: Send + Sync {
    /// Hands one message to the server's `onmessage`.
    fn to_server(&self, text: String) -> Result<(), String>;
    /// Fires the server side's `onclose`, so the same server object can connect again.
    fn detach(&self) -> BoxFuture<'static, ()>;
}

pub struct InProcessWire {
    bridge: Arc<dyn Bridge>,
}

impl InProcessWire {
    pub fn new(bridge: Arc<dyn Bridge>) -> Arc<Self> {
        Arc::new(Self { bridge })
    }
}

thread_local! {
    /// The bridge whose sends this thread collects, and what it collected.
    static COLLECTED: RefCell<Option<(usize, Vec<String>)>> = const { RefCell::new(None) };
}

fn identity(bridge: &Arc<dyn Bridge>) -> usize {
    Arc::as_ptr(bridge) as *const () as usize
}

/// Runs `f` with the messages it sends through `bridge` collected rather than queued: the JS
/// thread, already where the server lives, hands them over itself without waiting for a turn
/// of the event loop.
pub fn collect_sends<R>(bridge: &Arc<dyn Bridge>, f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let before = COLLECTED.replace(Some((identity(bridge), Vec::new())));
    let out = f();
    let collected = COLLECTED
        .replace(before)
        .map(|(_, v)| v)
        .unwrap_or_default();
    (out, collected)
}

impl Wire for InProcessWire {
    fn send(&self, message: String, _request_id: Option<u64>) -> Result<(), String> {
        let id = identity(&self.bridge);
        let message = COLLECTED.with_borrow_mut(|slot| match slot {
            Some((collecting, out)) if *collecting == id => {
                out.push(message);
                None
            }
            _ => Some(message),
        });
        match message {
            Some(message) => self.bridge.to_server(message),
            None => Ok(()),
        }
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        self.bridge.detach()
    }
}
