//! The JS side's request tracer (lib/telemetry.js): the opening's and the sweeps' requests
//! start and end its spans through one hook, which takes a JSON text and resolves with one.

use super::hooks::JsHook;
use crate::client::trace::{meta_members, Ended, Tracer};
use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};

pub(super) struct JsTracer {
    pub(super) hook: JsHook,
    /// Whether a span of ours would be seen at all: lib/telemetry.js says so before each sweep
    /// (`NativeSource.traceLive`). With `@opentelemetry/api` installed and no SDK, provider
    /// or propagator registered, nothing would, and each request would still wait for a
    /// round trip to the JS thread, on the import's path, page after page.
    live: AtomicBool,
}

impl JsTracer {
    pub(super) fn new(hook: JsHook) -> Self {
        Self {
            hook,
            live: AtomicBool::new(true),
        }
    }

    pub(super) fn set_live(&self, live: bool) {
        self.live.store(live, Ordering::Relaxed);
    }
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

    fn live(&self) -> bool {
        self.live.load(Ordering::Relaxed)
    }
}
