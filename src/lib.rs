//! `@rulvar/mcp-native`: the Rulvar engine's `mcp()` tool source as a Node addon.
//!
//! The house reads top to bottom, each layer using only the ones below it:
//! - `node`: the napi edge. JS values in, calls down, JS values out; one file per JS type.
//! - `source`: one tool source's orchestration: lazy connect, the tools/list sweep, the cached
//!   snapshot and its drift, calls, close.
//! - `client`: JSON-RPC over a transport (ids, replies, deadlines) and the handshake.
//! - `transport`: stdio children, streamable HTTP, the in-process bridge.
//! - `core`: pure policy (config, admission, canonical form and hashes, validation, result
//!   mapping), used by every layer above and importing none of them.
//!
//! `core` and the parts of `transport` that the integration tests and fuzz targets drive are
//! public; everything else is the crate's own.

mod allocator;
mod client;
pub mod core;
// napi-derive registers exports only outside `cfg(test)`, so unit tests see them as unused.
#[cfg_attr(test, allow(dead_code))]
mod node;
mod source;
mod sync;
pub mod transport;
