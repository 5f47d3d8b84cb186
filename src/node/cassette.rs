//! `cassetteSummary`: what a cassette holds, for the CLI's `cassette` and the testing entry's
//! `readCassette`, read and checked as a replay reads it.

use super::errors::{refusal, JsError};
use crate::core::cassette::{event_of, Event};
use crate::core::ConfigError;
use napi_derive::napi;
use serde_json::{json, Value};

/// The cassette at `path` as JSON text: `{ protocol, server, toolsetHash, interactions: [{
/// method, tool?, params, outcome: 'result' | 'error' | null, notifications, asks }] }`;
/// a `ConfigError` when it is no cassette a replay would take.
#[napi(js_name = "cassetteSummary", catch_unwind)]
pub fn cassette_summary(path: String) -> Result<String, JsError> {
    let cassette =
        crate::transport::cassette::read(&path).map_err(|e| refusal(ConfigError::new(e)))?;
    let interactions: Vec<Value> = cassette
        .interactions
        .iter()
        .map(|i| {
            let count = |f: fn(&Event) -> bool| i.answer.iter().filter(|e| f(&event_of(e))).count();
            let outcome = i
                .answer
                .iter()
                .find(|e| event_of(e) == Event::Answer)
                .map(|e| {
                    if e.get("error").is_some() {
                        "error"
                    } else {
                        "result"
                    }
                });
            json!({
                "method": i.method,
                "tool": (i.method == "tools/call").then(|| i.params.get("name").cloned()).flatten(),
                "params": i.params,
                "outcome": outcome,
                "notifications": count(|e| *e == Event::Notification),
                "asks": count(|e| matches!(e, Event::Ask(_))),
            })
        })
        .collect();
    Ok(json!({
        "protocol": cassette.protocol,
        "server": cassette.server,
        "toolsetHash": cassette.toolset_hash,
        "interactions": interactions,
    })
    .to_string())
}
