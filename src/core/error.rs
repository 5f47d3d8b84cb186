//! The one error type of the pure core: a typed refusal.
//!
//! Every refusal the contract names (config checks, discovery bounds, canonicalization) is a
//! `ConfigError` on the JS side; the node layer maps this type to the host's class. Runtime
//! failures of a tool call are a different thing and never use this type.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub message: String,
}

impl ConfigError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

pub type Result<T> = std::result::Result<T, ConfigError>;

/// `message` followed by what is known of why the server failed (a stdio child's last stderr
/// lines), when anything is.
pub fn with_diagnostics(message: String, diagnostics: Option<String>) -> String {
    match diagnostics {
        Some(tail) => format!("{message}; its stderr ended with:\n{tail}"),
        None => message,
    }
}
