//! `@rulvar/mcp-native`: the Rulvar engine's `mcp()` tool source as a Node addon.
//!
//! `core` holds every policy decision in plain Rust; `node` is the napi edge only.

pub mod client;
pub mod core;
mod node;
pub mod transport;
