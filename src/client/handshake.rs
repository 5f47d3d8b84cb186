//! The opening of a connection. The legacy `initialize` handshake comes first, byte for byte
//! what 2025-era servers and the TypeScript original's tests expect; a server that refuses it
//! with a JSON-RPC error is asked `server/discover` once, on the same connection, and one that
//! answers with this client's modern revision is spoken to in it. No second server process is
//! started to learn the era (some 2025 servers exit on a request before `initialize`), with one
//! exception: a server that refuses `initialize` with the modern revision's refusal of a
//! version (-32022) and then ends the connection (rmcp's modern-only servers do, on stdio) is
//! opened again in the modern era (`Refusal::Reopen`).

use super::era::{Era, CLIENT_VERSION, MODERN, PROTOCOL_VERSION, SUPPORTED_VERSIONS};
use super::rpc::{Rpc, RpcError};
use crate::core::config::Protocol;
use serde_json::{json, Value};
use std::time::Duration;

/// The client's capabilities as each era declares them (JSON text).
pub struct Capabilities {
    pub legacy: String,
    pub modern: String,
    /// The log level every modern request asks for (`serverLogs`), if the host asks.
    pub log_level: Option<&'static str>,
}

/// The modern revision's error for a protocol version the server does not serve; a server that
/// answers `initialize` with it knows 2026-07-28 (a 2025 server has no such code).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Why an opening failed: the server's or the connection's error, or a refused era pin
/// (`protocol`), which the host is told typed.
#[derive(Debug)]
pub enum Refusal {
    Rpc(RpcError),
    Pin(String),
    /// The server refused `initialize` as a modern server does and ended the connection before
    /// `server/discover` could be asked: a new connection, opened in the modern era, is the
    /// way to it.
    Reopen,
}

impl From<RpcError> for Refusal {
    fn from(e: RpcError) -> Self {
        Refusal::Rpc(e)
    }
}

/// Opens the connection in the era the server speaks (`protocol`: `Auto`), or in the pinned
/// one; `timeout` bounds the whole opening. `capabilities` are the client's in each era, as
/// JSON text (`{}` unless the host offers to answer what a server asks back).
pub async fn open(
    rpc: &Rpc,
    timeout: Option<Duration>,
    protocol: Protocol,
    capabilities: &Capabilities,
) -> Result<Era, Refusal> {
    let started = std::time::Instant::now();
    if protocol == Protocol::Modern {
        return discover(rpc, timeout, capabilities)
            .await
            .map_err(|e| match e {
                Refusal::Rpc(refused @ RpcError::Remote { .. }) => Refusal::Pin(format!(
                    "the server refused protocol {MODERN} ('protocol' pins it): {}",
                    refused.describe()
                )),
                other => other,
            });
    }
    let refused = match initialize(rpc, timeout, &capabilities.legacy).await {
        Ok(version) => return Ok(Era::Legacy(version)),
        Err(refused @ RpcError::Remote { .. }) if protocol == Protocol::Legacy => {
            return Err(Refusal::Pin(format!(
                "the server refused protocol {PROTOCOL_VERSION} ('protocol' pins it): {}",
                refused.describe()
            )))
        }
        Err(refused @ RpcError::Remote { .. }) => refused,
        Err(other) => return Err(other.into()),
    };
    let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
    match discover(rpc, left, capabilities).await {
        Ok(era) => Ok(era),
        Err(Refusal::Rpc(RpcError::TimedOut)) => Err(RpcError::TimedOut.into()),
        Err(Refusal::Rpc(RpcError::Closed(_) | RpcError::Transport(_)))
            if matches!(
                refused,
                RpcError::Remote {
                    code: UNSUPPORTED_PROTOCOL_VERSION,
                    ..
                }
            ) =>
        {
            Err(Refusal::Reopen)
        }
        // Not a modern server either: what it said to `initialize` is the error.
        Err(_) => Err(refused.into()),
    }
}

/// `server/discover`, with every request from now on in the modern envelope.
async fn discover(
    rpc: &Rpc,
    timeout: Option<Duration>,
    capabilities: &Capabilities,
) -> Result<Era, Refusal> {
    rpc.speak_modern(&capabilities.modern, capabilities.log_level);
    let started = std::time::Instant::now();
    let mut result = rpc.request("server/discover", json!({}), timeout).await;
    // UnsupportedProtocolVersion to the one revision this client speaks in this envelope: a
    // server that negotiates refuses a first request it cannot yet place and serves the retry,
    // so it is asked once more before the refusal stands.
    if let Err(RpcError::Remote {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        ..
    }) = &result
    {
        let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
        result = rpc.request("server/discover", json!({}), left).await;
    }
    let result = result?;
    Era::from_discover(&result).ok_or_else(|| {
        let named = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .map(|s| s.chars().take(32).collect::<String>())
                    .take(8)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        Refusal::Pin(format!(
            "the server does not speak protocol {MODERN}; it names {}",
            if named.is_empty() {
                "no version"
            } else {
                &named
            }
        ))
    })
}

async fn initialize(
    rpc: &Rpc,
    timeout: Option<Duration>,
    capabilities: &str,
) -> Result<String, RpcError> {
    let started = std::time::Instant::now();
    let capabilities: Value = serde_json::from_str(capabilities).unwrap_or_else(|_| json!({}));
    let params = json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": capabilities,
        "clientInfo": { "name": "rulvar", "version": CLIENT_VERSION }
    });
    let result = rpc.request("initialize", params, timeout).await?;
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
        return Err(RpcError::Closed(format!(
            "the server answered initialize with unsupported protocol version '{version}'"
        )));
    }
    let delivered = rpc.initialized(&version);
    match timeout {
        Some(limit) => {
            let left = limit.saturating_sub(started.elapsed());
            tokio::time::timeout(left, delivered)
                .await
                .map_err(|_| RpcError::TimedOut)??
        }
        None => delivered.await?,
    }
    Ok(version)
}
