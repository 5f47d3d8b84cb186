//! Discovery: the protected resource's metadata (RFC 9728) and its authorization server's
//! (RFC 8414 / OpenID discovery, with the 2025-03-26 fallbacks).

use super::wire::{read_body, PROTOCOL_VERSION};
use super::{Flight, OAuth};
use crate::core::config::oauth::ResourceChoice;
use crate::core::error::Failure;
use crate::core::oauth::{
    authorization_server_metadata_urls, canonical_resource, legacy_authorization_server,
    legacy_endpoint, metadata_speaks_for, resource_allowed, resource_metadata_urls, same_issuer,
    same_origin, string_list, trusted_url, untrusted,
};
use serde_json::Value;

#[derive(Clone)]
pub(super) struct Discovery {
    /// The `resource_metadata` URL it started from, if a challenge named one.
    pub(super) from: Option<String>,
    pub(super) resource: Option<String>,
    pub(super) resource_scopes: Option<Vec<String>>,
    /// The authorization server's issuer identifier as the protected resource named it (or
    /// the legacy origin): what its metadata was looked up for.
    pub(super) server: String,
    /// The validated issuer: the metadata's `issuer`, identical to `server` (RFC 8414 §3.3),
    /// or `server` when there is no metadata. The only issuer the redirect's `iss` is compared
    /// with, a client assertion is addressed to, and registrations, tokens and configured
    /// credentials are bound to.
    pub(super) issuer: String,
    pub(super) metadata: Option<Value>,
    /// The MCP server's URL, which decides whether loopback `http:` endpoints are accepted.
    pub(super) server_url: String,
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
    /// An endpoint of the authorization server: from its metadata (held to `https:`, or `http:`
    /// on loopback: a secret, a code or the user's browser goes there), or the 2025-03-26
    /// fallback at the server's own origin.
    pub(super) fn endpoint(&self, key: &str, legacy: &str) -> Result<String, Failure> {
        let url = match &self.metadata {
            Some(_) => self.meta_str(key).ok_or_else(|| {
                format!("mcp: oauth: the authorization server's metadata has no '{key}'")
            })?,
            None => legacy_endpoint(&self.server, legacy).ok_or_else(|| {
                "mcp: oauth: the authorization server URL is not a URL".to_owned()
            })?,
        };
        trusted_url(
            &format!("the authorization server's '{key}'"),
            &url,
            &self.server_url,
        )?;
        Ok(url)
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
            Some(body) => match serde_json::from_slice::<Value>(&body) {
                Ok(v @ Value::Object(_)) => Fetched::Found(v),
                _ => Fetched::Missing,
            },
            None => Fetched::Missing,
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
        if let Some(named) = from {
            // A 401 may point anywhere (a cloud metadata service, an internal host): only
            // metadata on the server's own origin is fetched (RFC 9728 §3.3 binds it there).
            if !same_origin(named, &self.server_url) {
                return Err(untrusted(format!(
                    "mcp: oauth: the challenge of '{}' names resource metadata on another origin; it was not fetched",
                    self.shown_url
                )));
            }
        }
        let (resource, resource_scopes, server) = self.protected_resource(from).await?;
        // Without protected resource metadata (the 2025-03-26 rules) the authorization server
        // is the MCP server's own origin.
        let legacy = server.is_none();
        let server = match server {
            Some(s) => s,
            None => legacy_authorization_server(&self.server_url)
                .ok_or_else(|| "mcp: oauth: the server URL is not a URL".to_owned())?,
        };
        trusted_url(
            "the authorization server the protected resource names",
            &server,
            &self.server_url,
        )?;
        let (issuer, metadata) = self.authorization_server(&server, legacy).await?;
        if let Some(pin) = &self.cfg.issuer {
            if !same_issuer(&issuer, pin) {
                return Err(untrusted(format!(
                    "mcp: oauth: '{}' names an authorization server other than 'http.oauth.issuer' ('{pin}'); nothing but a metadata request was sent to it",
                    self.shown_url
                )));
            }
        }
        let resource = match &self.cfg.resource {
            // Without resource metadata the server's own canonical URL (RFC 8707: the MCP
            // specification has clients send it whether or not the server supports it).
            ResourceChoice::Discovered => resource.or_else(|| canonical_resource(&self.server_url)),
            ResourceChoice::Fixed(r) => Some(r.clone()),
            ResourceChoice::Omit => None,
        };
        let d = Discovery {
            from: from.map(str::to_owned),
            resource,
            resource_scopes,
            server,
            issuer,
            metadata,
            server_url: self.server_url.clone(),
        };
        flight.discovery = Some(d.clone());
        Ok(d)
    }

    /// The protected resource's metadata (RFC 9728), if it has any: the resource it names
    /// (which must cover the server), its scopes, and its first authorization server.
    async fn protected_resource(&self, from: Option<&str>) -> Result<Protected, Failure> {
        let mut found = None;
        for url in resource_metadata_urls(&self.server_url, from) {
            match self.fetch_json(&url).await {
                Fetched::Found(v) => {
                    found = Some(v);
                    break;
                }
                Fetched::Missing => continue,
                Fetched::Broken(_) => break,
            }
        }
        let Some(prm) = found else {
            return Ok((None, None, None));
        };
        let named = prm.get("resource").and_then(Value::as_str).unwrap_or("");
        if !resource_allowed(&self.server_url, named) {
            return Err(format!(
                "mcp: oauth: the protected resource metadata of '{}' names the resource '{named}', which does not cover it; no authorization was attempted",
                self.shown_url
            ).into());
        }
        let server =
            string_list(prm.get("authorization_servers")).and_then(|s| s.into_iter().next());
        Ok((
            Some(named.to_owned()),
            string_list(prm.get("scopes_supported")),
            server,
        ))
    }

    /// The metadata of authorization server `server` (RFC 8414, OpenID discovery), if it has
    /// any, with the issuer it validated; `server` itself without.
    async fn authorization_server(
        &self,
        server: &str,
        legacy: bool,
    ) -> Result<(String, Option<Value>), Failure> {
        for url in authorization_server_metadata_urls(server) {
            match self.fetch_json(&url).await {
                Fetched::Found(v) => {
                    let claimed = v.get("issuer").and_then(Value::as_str).unwrap_or("");
                    if !metadata_speaks_for(claimed, server, legacy, &self.server_url) {
                        return Err(untrusted(format!(
                            "mcp: oauth: the authorization server metadata at '{url}' names another issuer than '{server}', which it was looked up for (RFC 8414 §3.3); it was not used"
                        )));
                    }
                    return Ok((claimed.to_owned(), Some(v)));
                }
                Fetched::Missing => continue,
                Fetched::Broken(status) => {
                    return Err(format!(
                        "mcp: oauth: the authorization server's metadata at '{url}' answered HTTP {status}"
                    ).into())
                }
            }
        }
        Ok((server.to_owned(), None))
    }
}

/// What protected resource metadata names: the resource, its scopes, its first authorization
/// server.
type Protected = (Option<String>, Option<Vec<String>>, Option<String>);
