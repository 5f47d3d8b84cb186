//! A lean MCP client over any `Wire`: JSON-RPC requests with per-request timeouts and
//! cancellation, and the initialize handshake. Messages stay `serde_json::Value`, so schemas
//! keep their wire order and a malformed page is seen as it is.

pub(crate) mod era;
mod error;
pub mod handshake;
mod pending;
pub mod router;
pub mod rpc;
mod text;
pub(crate) mod trace;
