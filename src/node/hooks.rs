//! The host's JS callbacks as the native side uses them, each a `JsHook` (one hook of one
//! source, called through its environment's port, `jsthread`): none of them fatal or
//! keeping Node alive, and a hook that throws or rejects an ordinary error.

use crate::core::admit::ToolSpec;
use crate::core::config::{header_record, HeaderValue};
use crate::core::secrets::Secrets;
use crate::source::{AskHook, HookFailure, Listed};
use crate::transport::http::HeaderSource;
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;

pub(super) use super::jsthread::{never_settles, JsHook};

/// `http.headers` as a function: the JS side wraps it so it always returns a Promise of the
/// record's JSON text. Every value it returns is remembered as a secret.
pub struct HeaderHook {
    pub hook: JsHook,
    pub secrets: Arc<Secrets>,
}

impl HeaderSource for HeaderHook {
    fn headers(&self) -> BoxFuture<'static, Result<Vec<(String, String)>, String>> {
        let hook = self.hook.clone();
        let secrets = self.secrets.clone();
        Box::pin(async move {
            let text = hook
                .settled(String::new())
                .await
                .map_err(|e| format!("mcp: the http.headers hook failed: {}", e.reason))?;
            let record: Value = serde_json::from_str(&text)
                .map_err(|_| "mcp: the http.headers hook did not return a record".to_owned())?;
            let Value::Object(map) = record else {
                return Err(
                    "mcp: the http.headers hook did not return a record of header values".into(),
                );
            };
            let members = map.iter().map(|(name, value)| {
                let value = match value {
                    Value::String(v) => HeaderValue::Text(v),
                    Value::Null => HeaderValue::Absent,
                    _ => HeaderValue::Other,
                };
                (name.as_str(), value)
            });
            let out = header_record(members).map_err(|name| {
                format!("mcp: the http.headers hook returned a non-string value for '{name}'")
            })?;
            for (_, value) in &out {
                secrets.remember(value);
            }
            Ok(out)
        })
    }
}

/// `elicit`, `sample` and `roots` as the JS side wraps them (lib/asks.js): one callback that
/// takes the ask as JSON text and always resolves, with `{"answer": ...}` or
/// `{"failed": "threw" | "aborted"}`; what a hook threw stays on the JS side (the calling
/// tool's log), never in a message here.
pub struct JsAskHook(pub JsHook);

impl AskHook for JsAskHook {
    fn ask(&self, request: String) -> BoxFuture<'static, Result<String, HookFailure>> {
        let hook = self.0.clone();
        Box::pin(async move {
            let text = hook
                .settled(request)
                .await
                .map_err(|_| HookFailure::Threw)?;
            let mut outcome: serde_json::Map<String, Value> =
                serde_json::from_str(&text).map_err(|_| HookFailure::Threw)?;
            match outcome.remove("answer") {
                Some(answer) => Ok(answer.to_string()),
                None if outcome.get("failed") == Some(&Value::from("aborted")) => {
                    Err(HookFailure::Aborted)
                }
                None => Err(HookFailure::Threw),
            }
        })
    }
}

/// A big import's ToolDefs as each page is admitted (lib/source.js parses them while the
/// server lists the next page): JSON text `[sweep, start, [tool, ...]]`.
pub struct JsListed(pub JsHook);

impl Listed for JsListed {
    fn listed(&self, sweep: u64, start: usize, tools: &[ToolSpec]) {
        // A page the JS side never gets is one it asks the snapshot for at the end.
        let _ = self
            .0
            .fire(super::tooldefs::listed_json(sweep, start, tools));
    }
}
