//! The opening of a connection. The legacy `initialize` handshake comes first, byte for byte
//! what 2025-era servers and the TypeScript original's tests expect; a server that refuses it
//! with a JSON-RPC error is asked `server/discover` once, on the same connection, and one that
//! answers with this client's modern revision is spoken to in it. No second server process is
//! started to learn the era (some 2025 servers exit on a request before `initialize`).

use super::era::Era;
use super::rpc::{Rpc, RpcError};
use serde_json::{json, Value};
use std::time::Duration;

pub const PROTOCOL_VERSION: &str = "2025-11-25";
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The client's version, as `clientInfo` reports it.
pub const CLIENT_VERSION: &str = "1.0.0";

/// Opens the connection in the era the server speaks; `timeout` bounds the whole opening.
pub async fn open(rpc: &Rpc, timeout: Option<Duration>) -> Result<Era, RpcError> {
    let started = std::time::Instant::now();
    let refused = match initialize(rpc, timeout).await {
        Ok(version) => return Ok(Era::Legacy(version)),
        Err(refused @ RpcError::Remote { .. }) => refused,
        Err(other) => return Err(other),
    };
    let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
    rpc.speak_modern();
    match rpc.request("server/discover", json!({}), left).await {
        Ok(result) => Era::from_discover(&result).ok_or(refused),
        Err(RpcError::TimedOut) => Err(RpcError::TimedOut),
        // Not a modern server either: what it said to `initialize` is the error.
        Err(_) => Err(refused),
    }
}

/// Initializes the session; resolves with the protocol version the server agreed to. As the
/// SDK client does, the initialized notification is delivered before any later request goes out;
/// `timeout` bounds the whole exchange.
async fn initialize(rpc: &Rpc, timeout: Option<Duration>) -> Result<String, RpcError> {
    let started = std::time::Instant::now();
    let params = json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
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
