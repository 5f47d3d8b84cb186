//! What the host's tracing (OpenTelemetry, in lib/telemetry.js) is told of the requests a
//! connection makes, and what it hands them to carry.
//!
//! Two seams. The requests of an opening and a sweep (`initialize`, `server/discover`,
//! `tools/list`) go through `Rpc::request`, which asks a `Tracer` for the trace context to
//! put in `params._meta` before sending and tells it how each one ended. A `tools/call` is
//! traced by the JS side itself around `snapshot.call`, which takes the context as text and
//! hands back the call's id; its failure arrives with an `error.type` of its own
//! (`call_error_type`). Only low-cardinality words cross: never arguments, results, headers
//! or a server's message.

use super::error::RpcError;
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The `_meta` members a request may carry for tracing: W3C Trace Context and Baggage, as the
/// OpenTelemetry MCP conventions put them there. Anything else a propagator wrote is dropped,
/// so a host's carrier can never overwrite a progress token or the modern envelope.
const KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];
/// W3C caps `tracestate` at 512 characters and `baggage` at 8192 bytes; a longer value is not
/// one of theirs.
const MAX_VALUE: usize = 8192;

/// How one traced request ended, as the `Tracer` is told.
pub(crate) struct Ended {
    /// `error.type`: `None` when it succeeded.
    pub error: Option<Cow<'static, str>>,
    /// The protocol revision the connection speaks, when known.
    pub protocol: Option<String>,
    /// The transport's session id (a stateful HTTP connection's `Mcp-Session-Id`).
    pub session: Option<String>,
}

/// The host side of request tracing.
pub(crate) trait Tracer: Send + Sync {
    /// Request `id` of `method` is about to be sent: the members for its `_meta`, if any.
    fn begin(&self, method: &str, id: u64) -> BoxFuture<'static, Map<String, Value>>;
    /// Request `id` ended (answered, failed, timed out).
    fn end(&self, id: u64, ended: Ended);
    /// Whether anything would see a request's span now; a request is sent untraced, without
    /// waiting for `begin`, when nothing would.
    fn live(&self) -> bool {
        true
    }
}

/// `error.type` for a request that failed: the JSON-RPC error code, or what stopped it.
pub(crate) fn rpc_error_type(e: &RpcError) -> Cow<'static, str> {
    match e {
        RpcError::Remote { code, .. } => code_type(*code),
        RpcError::TimedOut => Cow::Borrowed("timeout"),
        RpcError::Cancelled => Cow::Borrowed("cancelled"),
        RpcError::Transport(f) if f.oauth.is_some() => Cow::Borrowed("oauth"),
        RpcError::Transport(_) => Cow::Borrowed("transport_error"),
        RpcError::Closed(_) => Cow::Borrowed("connection_closed"),
    }
}

/// A server's JSON-RPC error code as an `error.type`: the codes JSON-RPC and MCP define, and
/// JSON-RPC's server-error range, as themselves; any other number a server made up as
/// `_OTHER` (the conventions' word), so a server cannot give a metric unbounded cardinality.
fn code_type(code: i64) -> Cow<'static, str> {
    match code {
        -32768..=-32000 => Cow::Owned(code.to_string()),
        _ => Cow::Borrowed("_OTHER"),
    }
}

/// A server-chosen text (a session id) as an attribute value: bounded, and every control or
/// hidden character made visible.
pub(crate) fn attribute_text(text: &str) -> String {
    crate::core::shown::for_a_person(text, false, 128)
}

/// `error.type` of a tools/call whose reply came but cannot be what `execute` resolves with:
/// `tool_error` for an `isError` result (the conventions' word), `invalid_result` for one that
/// is incomplete, malformed or off its output schema.
pub(crate) fn result_error_type(is_error: bool) -> Cow<'static, str> {
    Cow::Borrowed(if is_error {
        "tool_error"
    } else {
        "invalid_result"
    })
}

/// The trace members of a carrier (a JSON object of strings, as a propagator fills one): those
/// `KEYS` names, with string values of a sane length; anything else is left out.
pub(crate) fn meta_members(carrier: &str) -> Map<String, Value> {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(carrier) else {
        return Map::new();
    };
    map.into_iter()
        .filter(|(k, v)| {
            KEYS.contains(&k.as_str()) && v.as_str().is_some_and(|s| s.len() <= MAX_VALUE)
        })
        .collect()
}

/// `members` as JSON object members' text (no braces), for a request written as text.
pub(crate) fn members_text(members: &Map<String, Value>) -> Option<String> {
    if members.is_empty() {
        return None;
    }
    let text = Value::Object(members.clone()).to_string();
    Some(text[1..text.len() - 1].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_trace_members_of_strings_are_kept() {
        let carrier = json!({
            "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "tracestate": "rojo=00f067aa0ba902b7",
            "progressToken": "7",
            "io.modelcontextprotocol/protocolVersion": "x",
            "baggage": 3,
        });
        let kept = meta_members(&carrier.to_string());
        assert_eq!(
            Value::Object(kept.clone()),
            json!({"traceparent": carrier["traceparent"], "tracestate": "rojo=00f067aa0ba902b7"})
        );
        let text = members_text(&kept).unwrap();
        serde_json::from_str::<Value>(&format!("{{{text}}}")).unwrap();
        assert!(meta_members("not json").is_empty());
        assert!(meta_members("[1]").is_empty());
        let long = json!({ "baggage": "x".repeat(MAX_VALUE + 1) }).to_string();
        assert!(meta_members(&long).is_empty());
        assert_eq!(members_text(&Map::new()), None);
    }

    #[test]
    fn error_types_are_codes_or_words() {
        let remote = RpcError::Remote {
            code: -32601,
            message: "secret text".into(),
            data: None,
        };
        assert_eq!(rpc_error_type(&remote), "-32601");
        assert_eq!(rpc_error_type(&RpcError::TimedOut), "timeout");
        assert_eq!(
            rpc_error_type(&RpcError::Closed("gone".into())),
            "connection_closed"
        );
        assert_eq!(
            rpc_error_type(&RpcError::Transport("HTTP 500".into())),
            "transport_error"
        );
        assert_eq!(result_error_type(true), "tool_error");
    }
}
