//! inprocess: messages carried between the Rust client and an SDK server object in the same
//! process. The JS half (lib/inprocess.js) is the SDK `Transport` the server is connected to;
//! the server's `send` lands in `Inbound::push_text` synchronously, on the JS thread. Every
//! message the client sends goes to the bridge, whoever sends it: how it reaches the server
//! (at once on the JS thread, or through a thread-safe call) is the bridge's business.

use super::Wire;
use futures::future::BoxFuture;
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

impl Wire for InProcessWire {
    fn send(&self, message: String, _request_id: Option<u64>) -> Result<(), String> {
        self.bridge.to_server(message)
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        self.bridge.detach()
    }
}
