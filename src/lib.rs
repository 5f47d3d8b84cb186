//! `@rulvar/mcp-native`: the Rulvar engine's `mcp()` tool source as a Node addon.
//!
//! `core` holds every policy decision in plain Rust; `node` is the napi edge only.

mod allocator;
pub mod client;
pub mod core;
// napi-derive registers exports only outside `cfg(test)`, so unit tests see them as unused.
#[cfg_attr(test, allow(dead_code))]
mod node;
pub mod transport;
