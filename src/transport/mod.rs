//! Transports: each carries JSON-RPC text to the server and pushes what comes back, already
//! parsed, into one inbound channel through `observe::Inbound`, which sees every message first.

pub(crate) mod cassette;
pub(crate) mod http;
pub(crate) mod inprocess;
pub(crate) mod oauth;
pub mod observe;
pub(crate) mod pipe_writer;
pub(crate) mod process;
pub mod sse;
pub(crate) mod stderr;
pub(crate) mod stdio;
pub(crate) mod stdout;
pub(crate) mod web;

use futures::future::BoxFuture;

/// Largest single message accepted from a server (a line, an SSE event, a JSON body).
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// Why a connection ended when the server sent more than `MAX_FRAME_BYTES` in one message:
/// the same words on every transport.
pub fn frame_limit_refusal() -> String {
    format!(
        "mcp: the server sent a message larger than the {} MiB frame limit",
        MAX_FRAME_BYTES / (1024 * 1024)
    )
}

/// Frees a frame buffer; a large one is handed back to the system at once, so a refused or
/// finished huge message does not stay resident after its connection went quiet.
pub fn release_buffer(buffer: Vec<u8>) {
    let large = buffer.capacity() > LARGE_BUFFER;
    drop(buffer);
    if large {
        crate::allocator::return_free_memory();
    }
}

/// From this size on, a freed buffer is worth a collection pass of the allocator.
const LARGE_BUFFER: usize = 1024 * 1024;

/// What a transport may mirror of a modern (2026-07-28) request outside its body: streamable
/// HTTP carries the version, the method and the tool's name in headers, so that intermediaries
/// route without reading the body. The client says it; the transport needs no era of its own.
pub struct Route<'a> {
    pub version: &'static str,
    pub method: &'a str,
    pub name: Option<&'a str>,
    /// `Mcp-Param-*` headers (lower-case names) and their values, as the tool declared them.
    pub params: Vec<(String, String)>,
}

/// The outbound half of a connection.
pub trait Wire: Send + Sync {
    /// Queues one serialized JSON-RPC message. Replies arrive through the inbound channel; a
    /// transport that cannot deliver a request answers it there with an error response.
    fn send(&self, message: String, request_id: Option<u64>) -> Result<(), String>;
    /// `send` for a modern request, with what its transport may mirror of it.
    /// Borrowed: a transport that mirrors nothing (a pipe) copies nothing of it.
    fn send_routed(
        &self,
        message: String,
        request_id: u64,
        _route: Route<'_>,
    ) -> Result<(), String> {
        self.send(message, Some(request_id))
    }
    /// Sends the `notifications/initialized` text once the handshake agreed on a protocol
    /// version; a transport with a session to set up does it here. The handshake awaits the
    /// future before its first request: over HTTP it resolves once the server accepted the
    /// notification and its notification stream answered (a server sets up the session, and may
    /// register tools, while it takes the notification). Over a pipe the text is queued at once,
    /// in order before anything sent later, so there is nothing to wait for.
    fn initialized(
        &self,
        _protocol_version: &str,
        notification: String,
    ) -> BoxFuture<'static, Result<(), String>> {
        let sent = self.send(notification, None);
        Box::pin(async move { sent })
    }
    /// What the transport knows of why the server failed, for errors about a connect: a stdio
    /// child's last stderr lines.
    fn diagnostics(&self) -> Option<String> {
        None
    }
    /// The session the server gave this connection (a stateful HTTP server's `Mcp-Session-Id`),
    /// for tracing.
    fn session_id(&self) -> Option<String> {
        None
    }
    /// Cancels a request by closing the stream that carries it, where the transport can and
    /// the era says so (a 2026-07-28 request over HTTP): true when it did, and no
    /// `notifications/cancelled` is then sent.
    fn close_stream(&self, _request_id: u64) -> bool {
        false
    }
    /// Releases everything: the child process, the HTTP session, the in-process attachment.
    fn shutdown(&self) -> BoxFuture<'static, ()>;
    /// Releases at once (a failed or timed-out connect).
    fn abort(&self) -> BoxFuture<'static, ()> {
        self.shutdown()
    }
}
