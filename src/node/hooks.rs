//! The host's JS callbacks as thread-safe functions, none of them fatal or keeping Node alive.
//!
//! Every one is weak (it never keeps Node's event loop alive) and not callee-handled, and each
//! is awaited with `call_async_catch`, so a hook that throws becomes an ordinary error.

use crate::core::config::{header_record, HeaderValue};
use crate::core::secrets::Secrets;
use crate::source::{AskHook, HookFailure};
use crate::transport::http::HeaderSource;
use crate::transport::inprocess::Bridge;
use futures::future::BoxFuture;
use napi::bindgen_prelude::{Promise, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use serde_json::Value;
use std::sync::Arc;

pub type Hook<T, R> = ThreadsafeFunction<T, R, T, Status, false, true>;
/// Wakes the JS side to take a batch of finished calls.
pub type WakeHook = Hook<(), Unknown<'static>>;

/// `http.headers` as a function: the JS side wraps it so it always returns a Promise of the
/// record's JSON text. Every value it returns is remembered as a secret.
pub struct HeaderHook {
    pub hook: Arc<Hook<(), Promise<String>>>,
    pub secrets: Arc<Secrets>,
}

impl HeaderSource for HeaderHook {
    fn headers(&self) -> BoxFuture<'static, Result<Vec<(String, String)>, String>> {
        let hook = self.hook.clone();
        let secrets = self.secrets.clone();
        Box::pin(async move {
            let text = settled(&hook, ())
                .await
                .map_err(|e| format!("mcp: the http.headers hook failed: {}", why_failed(e)))?;
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

/// Calls a host callback and awaits the Promise it returns: the two waits fail alike (it threw,
/// it rejected, or its promise can never settle).
pub(super) async fn settled<T>(hook: &Hook<T, Promise<String>>, arg: T) -> napi::Result<String>
where
    T: 'static + Send + napi::bindgen_prelude::JsValuesTupleIntoVec,
{
    hook.call_async_catch(arg).await?.await
}

/// Why awaiting a host callback failed: what it threw or rejected with, or that its promise
/// can never settle (napi cancels the wait when V8 collects such a promise).
pub(super) fn why_failed(e: napi::Error) -> String {
    if e.reason.contains("canceled") {
        "its promise was collected without ever settling".to_owned()
    } else {
        e.reason
    }
}

/// `elicit`, `sample` and `roots` as the JS side wraps them (lib/asks.js): one callback that
/// takes the ask as JSON text and always resolves, with `{"answer": ...}` or
/// `{"failed": "threw" | "aborted"}`; what a hook threw stays on the JS side (the calling
/// tool's log), never in a message here.
pub struct JsAskHook(pub Arc<Hook<String, Promise<String>>>);

impl AskHook for JsAskHook {
    fn ask(&self, request: String) -> BoxFuture<'static, Result<String, HookFailure>> {
        let hook = self.0.clone();
        Box::pin(async move {
            let text = settled(&hook, request)
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

/// The in-process server's side of the bridge (lib/inprocess.js).
pub struct JsBridge {
    pub to_server: Hook<String, Unknown<'static>>,
    pub detach: Arc<Hook<(), Promise<String>>>,
}

impl Bridge for JsBridge {
    fn to_server(&self, text: String) -> Result<(), String> {
        match self
            .to_server
            .call(text, ThreadsafeFunctionCallMode::NonBlocking)
        {
            Status::Ok => Ok(()),
            status => Err(format!("mcp: the in-process server is gone ({status})")),
        }
    }

    fn detach(&self) -> BoxFuture<'static, ()> {
        let hook = self.detach.clone();
        Box::pin(async move {
            let _ = settled(&hook, ()).await;
        })
    }
}
