//! `http.oauth`'s host callbacks as the OAuth flow sees them (`transport::oauth::OAuthHost`):
//! `authorize({ url, reason, signal })`, the `store`, and the `assertion` / `subjectToken`
//! functions. lib/source.js wraps each so it always returns a Promise of text; every redirect
//! URL and credential the host hands back is a secret.

use super::hooks::JsHook;
use crate::core::secrets::Secrets;
use crate::transport::oauth::OAuthHost;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::Arc;

pub struct NodeOAuthHost {
    /// `(JSON { url, reason }) => Promise<redirect URL>`.
    pub authorize: Option<JsHook>,
    /// `(key) => Promise<JSON text of the value, "null" when none>`.
    pub load: Option<JsHook>,
    /// `(JSON { key, value }) => Promise<unknown>`.
    pub save: Option<JsHook>,
    /// `(name) => Promise<the value of http.oauth.assertion or ...subjectToken>`.
    pub credential: Option<JsHook>,
    pub secrets: Arc<Secrets>,
}

fn failed<'a>(what: &'static str, secrets: &'a Secrets) -> impl Fn(napi::Error) -> String + 'a {
    move |e: napi::Error| secrets.redact(&format!("mcp: oauth: the {what} failed: {}", e.reason))
}

impl OAuthHost for NodeOAuthHost {
    fn can_authorize(&self) -> bool {
        self.authorize.is_some()
    }

    fn authorize(
        &self,
        url: String,
        reason: &'static str,
    ) -> BoxFuture<'static, Result<String, String>> {
        let hook = self.authorize.clone();
        let secrets = self.secrets.clone();
        Box::pin(async move {
            let Some(hook) = hook else {
                return Err("mcp: oauth: 'http.oauth.authorize' is not set".into());
            };
            let arg = json!({ "url": url, "reason": reason }).to_string();
            let redirect = hook
                .settled(arg)
                .await
                .map_err(failed("http.oauth.authorize callback", &secrets))?;
            secrets.remember(&redirect);
            Ok(redirect)
        })
    }

    fn load(&self, key: String) -> BoxFuture<'static, Result<Option<Value>, String>> {
        let hook = self.load.clone();
        let secrets = self.secrets.clone();
        Box::pin(async move {
            let Some(hook) = hook else {
                return Ok(None);
            };
            let text = hook
                .settled(key)
                .await
                .map_err(failed("http.oauth.store's load", &secrets))?;
            Ok(match serde_json::from_str::<Value>(&text) {
                Ok(Value::Null) | Err(_) => None,
                Ok(v) => Some(v),
            })
        })
    }

    fn save(&self, key: String, value: Value) -> BoxFuture<'static, Result<(), String>> {
        let hook = self.save.clone();
        let secrets = self.secrets.clone();
        Box::pin(async move {
            let Some(hook) = hook else {
                return Ok(());
            };
            let arg = json!({ "key": key, "value": value }).to_string();
            hook.settled(arg)
                .await
                .map_err(failed("http.oauth.store's save", &secrets))?;
            Ok(())
        })
    }

    fn credential(&self, name: &'static str) -> BoxFuture<'static, Result<String, String>> {
        let hook = self.credential.clone();
        let secrets = self.secrets.clone();
        Box::pin(async move {
            let Some(hook) = hook else {
                return Err(format!("mcp: oauth: no function for '{name}'"));
            };
            let value = hook
                .settled(name.to_owned())
                .await
                .map_err(failed("http.oauth credential function", &secrets))?;
            secrets.remember_current(name, &value);
            Ok(value)
        })
    }
}
