//! The protocol era of a connection: legacy (2025-11-25 and before: the `initialize`
//! handshake, a session) or modern (2026-07-28: no handshake, no session; every request
//! carries its protocol version, client info and capabilities in `_meta`).
//!
//! The era is the client's seam: the opening (`handshake::open`), the members every modern
//! request's `_meta` gets (`modern_meta`, written by `client::text`), and how list changes arrive (`listen`) are chosen here, once per
//! connection; transports carry text and stay unaware of the era.

use serde_json::Value;

pub use crate::core::revisions::{CLIENT_VERSION, MODERN, PROTOCOL_VERSION, SUPPORTED_VERSIONS};

#[derive(Clone, Debug, PartialEq)]
pub enum Era {
    /// The version `initialize` agreed.
    Legacy(String),
    /// A modern server; `list_changed` when it offers tool-list change notifications
    /// (through `subscriptions/listen`).
    Modern { list_changed: bool },
}

impl Era {
    /// The revision spoken.
    pub fn version(&self) -> &str {
        match self {
            Era::Legacy(v) => v,
            Era::Modern { .. } => MODERN,
        }
    }

    /// What `server/discover` answered, if it names this client's modern revision.
    pub fn from_discover(result: &Value) -> Option<Era> {
        let speaks = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|v| v.as_str() == Some(MODERN)));
        let list_changed = result
            .pointer("/capabilities/tools/listChanged")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        speaks.then_some(Era::Modern { list_changed })
    }
}

/// The `_meta` members of every modern request, as JSON text (without braces): written once
/// per connection, spliced into each request's params.
pub fn modern_meta(capabilities: &str, log_level: Option<&str>) -> String {
    let log = match log_level {
        Some(level) => format!(",\"io.modelcontextprotocol/logLevel\":\"{level}\""),
        None => String::new(),
    };
    format!(
        "\"io.modelcontextprotocol/protocolVersion\":\"{MODERN}\",\"io.modelcontextprotocol/clientInfo\":{{\"name\":\"rulvar\",\"version\":\"{}\"}},\"io.modelcontextprotocol/clientCapabilities\":{capabilities}{log}",
        CLIENT_VERSION
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modern_members_are_json() {
        serde_json::from_str::<Value>(&format!("{{{}}}", modern_meta("{}", Some("info")))).unwrap();
    }

    #[test]
    fn discover_names_the_era() {
        let modern = serde_json::json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": true}}});
        assert_eq!(
            Era::from_discover(&modern),
            Some(Era::Modern { list_changed: true })
        );
        assert_eq!(
            Era::from_discover(&serde_json::json!({"supportedVersions": ["2099-01-01"]})),
            None
        );
        assert_eq!(Era::from_discover(&serde_json::json!({})), None);
    }
}
