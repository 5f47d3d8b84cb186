//! Discovery: the protected resource's metadata (RFC 9728) and its authorization server's
//! (RFC 8414 / OpenID discovery, with the 2025-03-26 fallbacks).

use super::wire::{read_body, string_list, PROTOCOL_VERSION};
use super::{Flight, OAuth};
use crate::core::error::Failure;
use crate::core::oauth::{
    authorization_server_metadata_urls, legacy_authorization_server, legacy_endpoint,
    resource_allowed, resource_metadata_urls, ResourceChoice,
};
use serde_json::Value;

#[derive(Clone)]
pub(super) struct Discovery {
    /// The `resource_metadata` URL it started from, if a challenge named one.
    pub(super) from: Option<String>,
    pub(super) resource: Option<String>,
    pub(super) resource_scopes: Option<Vec<String>>,
    /// The authorization server's URL (the protected resource's first, or the legacy origin).
    pub(super) server: String,
    pub(super) metadata: Option<Value>,
}

impl Discovery {
    pub(super) fn meta_str(&self, key: &str) -> Option<String> {
        self.metadata
            .as_ref()
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
    pub(super) fn meta_list(&self, key: &str) -> Option<Vec<String>> {
        self.metadata.as_ref().and_then(|m| string_list(m.get(key)))
    }
    pub(super) fn endpoint(&self, key: &str, legacy: &str) -> Result<String, String> {
        match &self.metadata {
            Some(_) => self.meta_str(key).ok_or_else(|| {
                format!("mcp: oauth: the authorization server's metadata has no '{key}'")
            }),
            None => legacy_endpoint(&self.server, legacy)
                .ok_or_else(|| "mcp: oauth: the authorization server URL is not a URL".into()),
        }
    }
    /// Who a `private_key_jwt` assertion is addressed to, and what `iss` a redirect may name.
    pub(super) fn issuer(&self) -> String {
        self.meta_str("issuer")
            .unwrap_or_else(|| self.server.clone())
    }
}

/// What a metadata GET found.
enum Fetched {
    Found(Value),
    /// Not there (a 4xx, a redirect not followed, an unreachable host): look further.
    Missing,
    /// A 5xx: discovery stops.
    Broken(u16),
}

impl OAuth {
    async fn fetch_json(&self, url: &str) -> Fetched {
        let request = self
            .http
            .get(url)
            .header("accept", "application/json")
            .header("mcp-protocol-version", PROTOCOL_VERSION);
        let Ok(response) = request.send().await else {
            return Fetched::Missing;
        };
        let status = response.status();
        if status.is_server_error() {
            return Fetched::Broken(status.as_u16());
        }
        if !status.is_success() {
            return Fetched::Missing;
        }
        match read_body(response).await {
            Ok(body) => match serde_json::from_slice::<Value>(&body) {
                Ok(v @ Value::Object(_)) => Fetched::Found(v),
                _ => Fetched::Missing,
            },
            Err(_) => Fetched::Missing,
        }
    }

    /// Protected resource metadata, then the authorization server's, cached per source until a
    /// challenge names other resource metadata.
    pub(super) async fn discover(
        &self,
        flight: &mut Flight,
        from: Option<&str>,
    ) -> Result<Discovery, Failure> {
        if let Some(d) = &flight.discovery {
            if from.is_none() || d.from.as_deref() == from {
                return Ok(d.clone());
            }
        }
        let mut resource_metadata = None;
        for url in resource_metadata_urls(&self.server_url, from) {
            match self.fetch_json(&url).await {
                Fetched::Found(v) => {
                    resource_metadata = Some(v);
                    break;
                }
                Fetched::Missing => continue,
                Fetched::Broken(_) => break,
            }
        }
        let mut resource = None;
        let mut resource_scopes = None;
        let mut server = None;
        if let Some(prm) = &resource_metadata {
            let named = prm.get("resource").and_then(Value::as_str).unwrap_or("");
            if !resource_allowed(&self.server_url, named) {
                return Err(format!(
                    "mcp: oauth: the protected resource metadata of '{}' names the resource '{named}', which does not cover it; no authorization was attempted",
                    self.server_url
                ).into());
            }
            resource = Some(named.to_owned());
            resource_scopes = string_list(prm.get("scopes_supported"));
            server =
                string_list(prm.get("authorization_servers")).and_then(|s| s.into_iter().next());
        }
        let server = match server {
            Some(s) => s,
            None => legacy_authorization_server(&self.server_url)
                .ok_or_else(|| "mcp: oauth: the server URL is not a URL".to_owned())?,
        };
        let mut metadata = None;
        for url in authorization_server_metadata_urls(&server) {
            match self.fetch_json(&url).await {
                Fetched::Found(v) => {
                    metadata = Some(v);
                    break;
                }
                Fetched::Missing => continue,
                Fetched::Broken(status) => {
                    return Err(format!(
                        "mcp: oauth: the authorization server's metadata at '{url}' answered HTTP {status}"
                    ).into())
                }
            }
        }
        let resource = match &self.cfg.resource {
            ResourceChoice::Discovered => resource,
            ResourceChoice::Fixed(r) => Some(r.clone()),
            ResourceChoice::Omit => None,
        };
        let d = Discovery {
            from: from.map(str::to_owned),
            resource,
            resource_scopes,
            server,
            metadata,
        };
        flight.discovery = Some(d.clone());
        Ok(d)
    }
}
