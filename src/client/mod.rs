//! A lean MCP client over any `Wire`: JSON-RPC requests with per-request timeouts and
//! cancellation, the opening, and the protocol era (`era/`: every difference between the
//! revisions, each revision's answers in a file of its own). Messages stay `serde_json::Value`,
//! so schemas keep their wire order and a malformed page is seen as it is.

pub(crate) mod era;
mod error;
pub mod handshake;
mod pending;
pub mod router;
pub mod rpc;
mod text;
pub(crate) mod trace;
