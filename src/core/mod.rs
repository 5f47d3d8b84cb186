//! Plain Rust, no napi: every policy decision of the tool source, testable with `cargo test`.

pub mod admit;
pub mod canonical;
pub mod completions;
pub mod config;
pub mod dialect;
pub mod error;
pub mod hash;
pub mod jcs;
pub mod raw;
pub mod result;
pub mod secrets;
pub mod source;
pub mod sweep;
pub mod validate;

pub use error::ConfigError;
