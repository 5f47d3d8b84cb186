//! How a request can fail, as the client reports it to whoever sent it.

use crate::core::error::Failure;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum RpcError {
    /// The server answered with a JSON-RPC error.
    Remote {
        code: i64,
        message: String,
    },
    /// Our transport could not deliver the request (its text is ours, already redacted).
    Transport(Failure),
    /// The connection is gone (closed by us, or the server died).
    Closed(String),
    TimedOut,
    /// The caller gave up (an abort signal).
    Cancelled,
}

impl RpcError {
    pub fn describe(&self) -> String {
        match self {
            RpcError::Remote { code, message } => format!("MCP error {code}: {message}"),
            RpcError::Transport(failure) => failure.message.clone(),
            RpcError::Closed(reason) => reason.clone(),
            RpcError::TimedOut => "request timed out".into(),
            RpcError::Cancelled => "request was cancelled".into(),
        }
    }

    /// What the caller is told: `describe()`'s text, with the OAuth kind our transport gave it.
    pub fn into_failure(self) -> Failure {
        match self {
            RpcError::Transport(failure) => failure,
            other => other.describe().into(),
        }
    }
}

pub type Reply = Result<Value, RpcError>;
