//! The opening of a connection. The legacy `initialize` handshake comes first, byte for byte
//! what 2025-era servers and the TypeScript original's tests expect; a server that refuses it
//! with a JSON-RPC error is asked `server/discover` once, on the same connection, and one that
//! answers with this client's modern revision is spoken to in it. No second server process is
//! started to learn the era (some 2025 servers exit on a request before `initialize`), with one
//! exception: a server that refuses `initialize` with the modern revision's refusal of a
//! version (-32022) and then ends the connection (rmcp's modern-only servers do, on stdio) is
//! opened again in the modern era (`Refusal::Reopen`). What each era's opening says and
//! expects back is the era's (`era::legacy::initialize`, `era::modern::discovered`); this file
//! holds the exchange, and sets the era on the connection once it is chosen.

use super::era::modern::UNSUPPORTED_PROTOCOL_VERSION;
use super::era::{self, legacy, modern, Capabilities, Era};
use super::rpc::{Rpc, RpcError};
use crate::core::config::Protocol;
use serde_json::json;
use std::time::Duration;

/// What the opening found: the era, and whether the server announces changes of its tools.
pub(crate) struct Opened {
    pub(crate) era: Era,
    pub(crate) list_changed: bool,
}

/// Why an opening failed: the server's or the connection's error, or a refused era pin
/// (`protocol`), which the host is told typed.
#[derive(Debug)]
pub enum Refusal {
    Rpc(RpcError),
    Pin(String),
    /// The server refused `initialize` as a modern server does and ended the connection before
    /// `server/discover` could be asked: a new connection, opened in this era, is the way to
    /// it.
    Reopen(Era),
}

impl From<RpcError> for Refusal {
    fn from(e: RpcError) -> Self {
        Refusal::Rpc(e)
    }
}

/// Opens the connection in the era the server speaks (`protocol`: `Auto`), or in the pinned
/// one; `timeout` bounds the whole opening. `capabilities`: what the host offers a server,
/// which each era declares its own way.
pub(crate) async fn open(
    rpc: &Rpc,
    timeout: Option<Duration>,
    protocol: Protocol,
    capabilities: &Capabilities,
) -> Result<Opened, Refusal> {
    let started = std::time::Instant::now();
    if protocol == Protocol::Modern {
        return discover(rpc, timeout, capabilities)
            .await
            .map_err(|e| pinned(e, modern::VERSION));
    }
    let refused = match initialize(rpc, timeout, capabilities).await {
        Ok(opened) => return Ok(opened),
        Err(refused @ RpcError::Remote { .. }) if protocol == Protocol::Legacy => {
            return Err(pinned(refused.into(), legacy::VERSION))
        }
        Err(refused @ RpcError::Remote { .. }) => refused,
        Err(other) => return Err(other.into()),
    };
    let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
    match discover(rpc, left, capabilities).await {
        Ok(opened) => Ok(opened),
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
            Err(Refusal::Reopen(Era::Modern))
        }
        // Not a modern server either: what it said to `initialize` is the error.
        Err(_) => Err(refused.into()),
    }
}

/// A server's refusal of the revision `protocol` pins, in the words the host is told.
fn pinned(refusal: Refusal, version: &str) -> Refusal {
    match refusal {
        Refusal::Rpc(refused @ RpcError::Remote { .. }) => Refusal::Pin(format!(
            "the server refused protocol {version} ('protocol' pins it): {}",
            refused.describe()
        )),
        other => other,
    }
}

/// `server/discover`, with every request from now on in the modern era.
async fn discover(
    rpc: &Rpc,
    timeout: Option<Duration>,
    capabilities: &Capabilities,
) -> Result<Opened, Refusal> {
    rpc.speak(Era::Modern, capabilities);
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
    modern::discovered(&result).map_err(Refusal::Pin)?;
    Ok(Opened {
        era: Era::Modern,
        list_changed: era::offers_list_changes(&result),
    })
}

/// `initialize`, then `notifications/initialized` in the era it agreed.
async fn initialize(
    rpc: &Rpc,
    timeout: Option<Duration>,
    capabilities: &Capabilities,
) -> Result<Opened, RpcError> {
    let started = std::time::Instant::now();
    let params = legacy::initialize(capabilities);
    let result = rpc.request("initialize", params, timeout).await?;
    let era = legacy::agreed(&result).map_err(RpcError::Closed)?;
    rpc.speak(era, capabilities);
    let delivered = rpc.initialized(era.version());
    match timeout {
        Some(limit) => {
            let left = limit.saturating_sub(started.elapsed());
            tokio::time::timeout(left, delivered)
                .await
                .map_err(|_| RpcError::TimedOut)??
        }
        None => delivered.await?,
    }
    Ok(Opened {
        era,
        list_changed: era::offers_list_changes(&result),
    })
}
