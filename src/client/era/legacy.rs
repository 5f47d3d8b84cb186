//! The legacy revisions, 2025-11-25 and before: a connection opens with the `initialize`
//! handshake, which agrees a version and declares the client's capabilities once, and the
//! session it opens carries both from then on. A server asks the client back with requests of
//! its own, and announces what changes on its own.

use super::{Capabilities, Era, Rules, TaskDialect};
use crate::core::revisions::{CLIENT_VERSION, PROTOCOL_VERSION, SUPPORTED_VERSIONS};
use crate::transport::Route;
use serde_json::{json, Value};

/// The revision `initialize` asks for.
pub(crate) const VERSION: &str = PROTOCOL_VERSION;

/// The opening's request: `initialize`'s params, with the capabilities declared once.
pub(crate) fn initialize(capabilities: &Capabilities) -> Value {
    let declared = Legacy.declared(capabilities);
    let declared: Value = serde_json::from_str(&declared).unwrap_or_else(|_| json!({}));
    json!({
        "protocolVersion": VERSION,
        "capabilities": declared,
        "clientInfo": { "name": "rulvar", "version": CLIENT_VERSION }
    })
}

/// The era `initialize`'s answer agreed, or why the connection cannot go on in it.
pub(crate) fn agreed(answer: &Value) -> Result<Era, String> {
    let version = answer
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match SUPPORTED_VERSIONS.iter().find(|v| **v == version) {
        Some(accepted) => Ok(Era::Legacy(accepted)),
        None => Err(format!(
            "the server answered initialize with unsupported protocol version '{version}'"
        )),
    }
}

/// A 2025 task: `tasks/result` delivers what it ends with.
static TASKS: TaskDialect = TaskDialect {
    handle: task_member,
    carries_result: false,
    poll_key: "pollInterval",
};

/// The handle of a 2025 task: `{ task }`, in a result without `resultType`.
fn task_member(result: &mut Value) -> Option<Value> {
    let handle =
        result.get("resultType").is_none() && result.get("task").is_some_and(Value::is_object);
    handle.then(|| result.get_mut("task").map(Value::take))?
}

pub(super) struct Legacy;

impl Rules for Legacy {
    /// What the host offers to answer, as it offers it.
    fn declared(&self, capabilities: &Capabilities) -> String {
        capabilities.offered.clone()
    }

    /// None: the version and the capabilities travel once, in `initialize`.
    fn envelope(&self, _: &Capabilities) -> Option<String> {
        None
    }

    /// Nothing: the session carries the version (a transport learns it from `initialized`).
    fn route<'a>(
        &self,
        _: &'a str,
        _: Option<&'a str>,
        _: Vec<(String, String)>,
    ) -> Option<Route<'a>> {
        None
    }

    /// A 2025 server asks back (an elicitation, a model's completion, the roots) with requests
    /// of its own in the middle of a call.
    fn answers_server_requests(&self) -> bool {
        true
    }

    /// None: a 2025 server sends `notifications/tools/list_changed` on its own (over HTTP on
    /// the session's stream, which `initialized` opens).
    fn list_changes(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// `logging/setLevel`, asked once after the opening; a server that refuses keeps its own.
    fn log_level(&self, level: &str) -> Option<(&'static str, Value)> {
        Some(("logging/setLevel", json!({ "level": level })))
    }

    /// A 2025 server runs a call as a task only when asked, per request (and only for a tool
    /// that says it can): `task` with the call's time to live.
    fn task_request(&self, ttl_ms: f64) -> Option<String> {
        Some(format!(",\"task\":{{\"ttl\":{}}}", ttl_ms.min(9e15) as u64))
    }

    fn tasks(&self) -> &'static TaskDialect {
        &TASKS
    }

    /// No: a broken stream of a 2025 request is resumed after its last event (the transport
    /// does it, `Last-Event-ID`); an answer lost past that is the failure it is.
    fn resends_lost(&self) -> bool {
        false
    }

    /// No: `notifications/cancelled`, on every transport.
    fn closes_stream_to_cancel(&self) -> bool {
        false
    }

    /// No: `x-mcp-header` means nothing to a 2025 server, and no request mirrors arguments.
    fn reads_header_declarations(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_agrees_only_a_version_it_accepts() {
        assert_eq!(
            agreed(&json!({"protocolVersion": "2025-06-18"})),
            Ok(Era::Legacy("2025-06-18"))
        );
        assert!(agreed(&json!({"protocolVersion": "2026-07-28"})).is_err());
        assert!(agreed(&json!({})).is_err());
    }
}
