//! Pure policy, no napi and no I/O: every decision of the tool source (config, bounds, admission,
//! canonical form and hashes, validation, result mapping, drift, redaction), used by every
//! layer above and importing none of them; `cargo test` covers it all.

pub(crate) mod admit;
pub(crate) mod ask_budget;
pub(crate) mod asks;
pub mod canonical;
pub(crate) mod cassette;
pub(crate) mod config;
pub(crate) mod dialect;
pub mod drift;
pub mod error;
pub mod hash;
pub(crate) mod headers;
pub(crate) mod held;
pub mod jcs;
pub(crate) mod lite;
pub(crate) mod lock;
pub(crate) mod lockdiff;
pub(crate) mod oauth;
pub(crate) mod plain;
pub(crate) mod raw;
pub mod result;
pub(crate) mod revisions;
pub(crate) mod sandbox;
pub(crate) mod secrets;
pub(crate) mod shown;
pub(crate) mod signs;
pub(crate) mod sweep;
pub(crate) mod url;
pub mod validate;

pub use error::ConfigError;
