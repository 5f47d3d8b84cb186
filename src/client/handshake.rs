//! The initialize handshake. SDK 1.x servers speak the initialize-era protocol versions.

use super::rpc::{Rpc, RpcError};
use serde_json::{json, Value};
use std::time::Duration;

pub const PROTOCOL_VERSION: &str = "2025-11-25";
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Initializes the session; resolves with the protocol version the server agreed to. As the
/// SDK client does, the initialized notification is delivered before any later request goes out;
/// `timeout` bounds the whole exchange.
pub async fn initialize(rpc: &Rpc, timeout: Option<Duration>) -> Result<String, RpcError> {
    let started = std::time::Instant::now();
    let params = json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": { "name": "rulvar", "version": "1.0.0" }
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
