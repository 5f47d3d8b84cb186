//! The protocol era of a connection: legacy (2025-11-25 and before: the `initialize`
//! handshake, a session) or modern (2026-07-28: no handshake, no session; every request
//! carries its protocol version, client info and capabilities in `_meta`).
//!
//! The era is the client's seam: the opening (`handshake::open`), the envelope every request
//! gets (`Era::meta`), and how list changes arrive (`listen`) are chosen here, once per
//! connection; transports carry text and stay unaware of the era.

use serde_json::Value;

/// The modern revision this client speaks.
pub const MODERN: &str = "2026-07-28";

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
        super::handshake::CLIENT_VERSION
    )
}

/// `params` (a JSON object's text, as this client writes them) with `members` added to its
/// `_meta`: an existing `_meta` (a progress token) is always the first member.
pub fn with_meta(params: &str, members: &str) -> String {
    let mut out = String::with_capacity(params.len() + members.len() + 12);
    if let Some(rest) = params.strip_prefix("{\"_meta\":{") {
        out.push_str("{\"_meta\":{");
        out.push_str(members);
        out.push(',');
        out.push_str(rest);
    } else if let Some(rest) = params.strip_prefix('{') {
        out.push_str("{\"_meta\":{");
        out.push_str(members);
        out.push('}');
        if rest.trim_start() != "}" {
            out.push(',');
        }
        out.push_str(rest);
    } else {
        out.push_str(params);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_is_spliced_into_every_form_of_params() {
        let m = "\"k\":1";
        for (params, expected) in [
            ("{}", "{\"_meta\":{\"k\":1}}"),
            (
                "{\"cursor\":\"c\"}",
                "{\"_meta\":{\"k\":1},\"cursor\":\"c\"}",
            ),
            (
                "{\"_meta\":{\"progressToken\":3},\"name\":\"x\"}",
                "{\"_meta\":{\"k\":1,\"progressToken\":3},\"name\":\"x\"}",
            ),
        ] {
            let out = with_meta(params, m);
            assert_eq!(out, expected);
            serde_json::from_str::<Value>(&out).unwrap();
        }
        serde_json::from_str::<Value>(&format!("{{{}}}", modern_meta("{}", None))).unwrap();
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
