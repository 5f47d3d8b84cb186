//! The JSON-RPC text of every message the client sends, written in one pass around params the
//! sender already holds as text. `_meta` is the client's alone: the era's envelope (a modern
//! connection's protocol version, client info, capabilities), the sender's own members (a
//! trace context) and the progress token go there, in that order, so no sender can write one
//! over another.

use crate::core::jcs::write_string;
use std::fmt::Write;

/// What a request's `_meta` holds, each part as JSON object members' text (no braces).
#[derive(Clone, Copy, Default)]
pub(super) struct Meta<'a> {
    /// The members every request carries in the era spoken (`era::Rules::envelope`).
    pub envelope: Option<&'a str>,
    /// The sender's own members (`client::trace`).
    pub own: Option<&'a str>,
    /// `"progressToken"`: the request's id, when its sender listens for progress.
    pub progress: bool,
}

impl Meta<'_> {
    fn is_empty(&self) -> bool {
        self.envelope.is_none() && self.own.is_none() && !self.progress
    }
}

/// A request: `params` is a JSON object's text without `_meta`.
pub(super) fn request(id: u64, method: &str, meta: Meta<'_>, params: &str) -> String {
    let mut out = String::with_capacity(params.len() + method.len() + 64);
    let _ = write!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":");
    write_string(&mut out, method);
    out.push_str(",\"params\":");
    write_params(&mut out, id, meta, params);
    out.push('}');
    out
}

/// A notification.
pub(super) fn notification(method: &str, params: &str) -> String {
    let mut out = String::with_capacity(params.len() + method.len() + 40);
    out.push_str("{\"jsonrpc\":\"2.0\",\"method\":");
    write_string(&mut out, method);
    out.push_str(",\"params\":");
    out.push_str(params);
    out.push('}');
    out
}

fn write_params(out: &mut String, id: u64, meta: Meta<'_>, params: &str) {
    let Some(members) = params.strip_prefix('{').filter(|_| !meta.is_empty()) else {
        out.push_str(params);
        return;
    };
    out.push_str("{\"_meta\":{");
    let mut first = true;
    for part in [meta.envelope, meta.own].into_iter().flatten() {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        out.push_str(part);
    }
    if meta.progress {
        if !first {
            out.push(',');
        }
        let _ = write!(out, "\"progressToken\":{id}");
    }
    out.push('}');
    if members.trim_start() != "}" {
        out.push(',');
    }
    out.push_str(members);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn meta_is_written_first_in_every_form_of_params() {
        let parse = |t: String| serde_json::from_str::<Value>(&t).unwrap();
        let all = Meta {
            envelope: Some("\"m\":1"),
            own: Some("\"traceparent\":\"t\""),
            progress: true,
        };
        for (meta, params, expected) in [
            (Meta::default(), "{}", "{}"),
            (Meta::default(), "{\"cursor\":\"c\"}", "{\"cursor\":\"c\"}"),
            (
                all,
                "{}",
                "{\"_meta\":{\"m\":1,\"traceparent\":\"t\",\"progressToken\":7}}",
            ),
            (
                all,
                "{\"name\":\"x\"}",
                "{\"_meta\":{\"m\":1,\"traceparent\":\"t\",\"progressToken\":7},\"name\":\"x\"}",
            ),
            (
                Meta {
                    progress: true,
                    ..Meta::default()
                },
                "{\"name\":\"x\"}",
                "{\"_meta\":{\"progressToken\":7},\"name\":\"x\"}",
            ),
            (
                Meta {
                    own: Some("\"baggage\":\"b\""),
                    ..Meta::default()
                },
                "{ }",
                "{\"_meta\":{\"baggage\":\"b\"}}",
            ),
        ] {
            let text = request(7, "tools/call", meta, params);
            let v = parse(text.clone());
            assert_eq!(v["params"], parse(expected.to_owned()), "{text}");
            assert!(
                text.contains(&format!("\"params\":{expected}")) || params == "{ }",
                "{text}"
            );
            assert_eq!(v["id"], json!(7));
        }
        let n = parse(notification("notifications/cancelled", "{\"requestId\":1}"));
        assert_eq!(
            n,
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        );
    }
}
