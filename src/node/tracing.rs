//! The JS side's request tracer (lib/telemetry.js): the opening's and the sweeps' requests
//! start and end its spans through one hook, which takes a JSON text and resolves with one.

use super::hooks::JsHook;
use crate::client::trace::{meta_members, Ended, Tracer};
use futures::future::BoxFuture;
use serde_json::{json, Map, Value};

pub(super) struct JsTracer {
    pub(super) hook: JsHook,
}

impl Tracer for JsTracer {
    /// `{"begin": method, "id": id}`; the hook resolves with `{"meta": carrier}`. A hook that
    /// fails or answers something else leaves the request untraced on the wire.
    fn begin(&self, method: &str, id: u64) -> BoxFuture<'static, Map<String, Value>> {
        let hook = self.hook.clone();
        let text = json!({ "begin": method, "id": id }).to_string();
        Box::pin(async move {
            let Ok(answer) = hook.settled(text).await else {
                return Map::new();
            };
            let carrier = serde_json::from_str::<Value>(&answer)
                .ok()
                .and_then(|v| v.get("meta").map(Value::to_string));
            carrier.map(|c| meta_members(&c)).unwrap_or_default()
        })
    }

    /// `{"end": id, "error": type | null, "protocol": version | null, "session": id | null}`,
    /// not awaited.
    fn end(&self, id: u64, ended: Ended) {
        let text = json!({
            "end": id,
            "error": ended.error,
            "protocol": ended.protocol,
            "session": ended.session,
        })
        .to_string();
        self.hook.fire(text);
    }
}
