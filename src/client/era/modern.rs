//! The modern revision, 2026-07-28: no handshake and no session. The opening only asks
//! `server/discover` which revisions the server speaks; every request carries its protocol
//! version, client info and capabilities itself (the envelope), and over HTTP each request
//! has a stream of its own. A server asks nothing of its own: what a call needs comes back as
//! an `input_required` result.

use super::{Capabilities, Rules, TaskDialect};
use crate::core::revisions::{CLIENT_VERSION, MODERN};
use crate::transport::Route;
use serde_json::{json, Value};

/// The revision spoken.
pub(crate) const VERSION: &str = MODERN;

/// The revision's error for a protocol version the server does not serve; a server that
/// answers `initialize` with it knows 2026-07-28 (a 2025 server has no such code).
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The extension a client names to be answered with tasks.
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether `server/discover`'s answer names this revision; why the connection cannot go on
/// in it, else.
pub(crate) fn discovered(answer: &Value) -> Result<(), String> {
    let versions = answer.get("supportedVersions").and_then(Value::as_array);
    if versions.is_some_and(|v| v.iter().any(|v| v.as_str() == Some(VERSION))) {
        return Ok(());
    }
    // The server's words: each clipped, and only the first few.
    let named = versions
        .map(|v| {
            v.iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().take(32).collect::<String>())
                .take(8)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let named = if named.is_empty() {
        "no version"
    } else {
        &named
    };
    Err(format!(
        "the server does not speak protocol {VERSION}; it names {named}"
    ))
}

/// A 2026 task: the call's result is its handle (`resultType: "task"`), and a completed one
/// carries its result.
static TASKS: TaskDialect = TaskDialect {
    handle: whole_result,
    carries_result: true,
    poll_key: "pollIntervalMs",
};

fn whole_result(result: &mut Value) -> Option<Value> {
    (result.get("resultType").and_then(Value::as_str) == Some("task")).then(|| result.take())
}

pub(super) struct Modern;

impl Rules for Modern {
    /// What the host offers to answer, and the tasks extension when it follows tasks (a 2025
    /// call asks for a task per request instead).
    fn declared(&self, capabilities: &Capabilities) -> String {
        if !capabilities.tasks {
            return capabilities.offered.clone();
        }
        let mut value: Value =
            serde_json::from_str(&capabilities.offered).unwrap_or_else(|_| json!({}));
        value["extensions"] = json!({ TASKS_EXTENSION: {} });
        value.to_string()
    }

    /// The protocol version, the client's info and its capabilities, and the log level the
    /// host hears when it asks one: there is no session to remember them.
    fn envelope(&self, capabilities: &Capabilities) -> Option<String> {
        let log = match capabilities.log_level {
            Some(level) => format!(",\"io.modelcontextprotocol/logLevel\":\"{level}\""),
            None => String::new(),
        };
        Some(format!(
            "\"io.modelcontextprotocol/protocolVersion\":\"{VERSION}\",\"io.modelcontextprotocol/clientInfo\":{{\"name\":\"rulvar\",\"version\":\"{CLIENT_VERSION}\"}},\"io.modelcontextprotocol/clientCapabilities\":{}{log}",
            self.declared(capabilities)
        ))
    }

    /// The version, the method, the tool's name and its mirrored arguments: streamable HTTP
    /// carries them in headers, so that intermediaries route without reading the body.
    fn route<'a>(
        &self,
        method: &'a str,
        name: Option<&'a str>,
        params: Vec<(String, String)>,
    ) -> Option<Route<'a>> {
        Some(Route {
            version: VERSION,
            method,
            name,
            params,
        })
    }

    /// A 2026 server asks nothing of its own (its needs come as `input_required` results), so
    /// its requests are not found.
    fn answers_server_requests(&self) -> bool {
        false
    }

    /// `subscriptions/listen`: changes arrive only on it, and the server answers it only when
    /// it ends the subscription.
    fn list_changes(&self) -> Option<(&'static str, &'static str)> {
        Some((
            "subscriptions/listen",
            "{\"notifications\":{\"toolsListChanged\":true}}",
        ))
    }

    /// None: every request asks for it in the envelope.
    fn log_level(&self, _: &str) -> Option<(&'static str, Value)> {
        None
    }

    /// None: the server decides, the client having declared the tasks extension.
    fn task_request(&self, _: f64) -> Option<String> {
        None
    }

    fn tasks(&self) -> &'static TaskDialect {
        &TASKS
    }

    /// Yes: there is no stream resumption, so a request lost with its stream can only be sent
    /// again as a new one.
    fn resends_lost(&self) -> bool {
        true
    }

    /// Yes: over HTTP each request has its stream, and the server sees its end as the
    /// request's cancellation.
    fn closes_stream_to_cancel(&self) -> bool {
        true
    }

    /// Yes: a tool's `x-mcp-header` declarations name the arguments a request mirrors into
    /// headers.
    fn reads_header_declarations(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_is_json_members() {
        let capabilities = Capabilities {
            offered: "{\"roots\":{}}".into(),
            tasks: true,
            log_level: Some("info"),
        };
        let envelope = Modern.envelope(&capabilities).unwrap();
        let members: Value = serde_json::from_str(&format!("{{{envelope}}}")).unwrap();
        let declared = &members["io.modelcontextprotocol/clientCapabilities"];
        assert_eq!(declared["extensions"], json!({ TASKS_EXTENSION: {} }));
        assert_eq!(declared["roots"], json!({}));
        assert_eq!(members["io.modelcontextprotocol/logLevel"], "info");
    }

    #[test]
    fn discover_names_the_era() {
        let modern = json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": true}}});
        assert_eq!(discovered(&modern), Ok(()));
        assert!(super::super::offers_list_changes(&modern));
        assert_eq!(
            discovered(&json!({"supportedVersions": ["2099-01-01"]})),
            Err("the server does not speak protocol 2026-07-28; it names 2099-01-01".into())
        );
        assert!(discovered(&json!({})).is_err());
    }
}
