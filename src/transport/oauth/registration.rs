//! Which client this source authorizes as: pre-registered, stored, a client metadata document
//! URL (SEP-991), or registered now (RFC 7591).

use super::discovery::Discovery;
use super::wire::json_answer;
use super::{Flight, OAuth};
use crate::core::error::Failure;
use crate::core::oauth::issuers_match;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Clone, Serialize, Deserialize)]
pub(super) struct ClientInfo {
    pub(super) client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) token_endpoint_auth_method: Option<String>,
    /// The authorization server it was registered with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) issuer: Option<String>,
}

impl OAuth {
    fn client_key(server: &str) -> String {
        format!("oauth:client:{server}")
    }
    /// The client this source authorizes as: pre-registered, stored, its metadata document's
    /// URL, or registered now (RFC 7591), in that order.
    pub(super) async fn client(
        &self,
        flight: &mut Flight,
        d: &Discovery,
        scope: Option<&str>,
    ) -> Result<ClientInfo, Failure> {
        if let Some(id) = &self.cfg.client_id {
            return Ok(ClientInfo {
                client_id: id.clone(),
                client_secret: self.cfg.client_secret.clone(),
                token_endpoint_auth_method: None,
                issuer: None,
            });
        }
        if let Some(c) = &flight.client {
            if c.issuer
                .as_deref()
                .is_some_and(|i| issuers_match(i, &d.server))
            {
                return Ok(c.clone());
            }
        }
        let key = Self::client_key(&d.server);
        if let Some(stored) = self
            .host
            .load(key.clone())
            .await?
            .and_then(|v| serde_json::from_value::<ClientInfo>(v).ok())
        {
            if let Some(s) = &stored.client_secret {
                self.secrets.remember(s);
            }
            flight.client = Some(stored.clone());
            return Ok(stored);
        }
        let cimd = d
            .metadata
            .as_ref()
            .and_then(|m| m.get("client_id_metadata_document_supported"))
            == Some(&Value::Bool(true));
        if let (true, Some(url)) = (cimd, &self.cfg.client_metadata_url) {
            let c = ClientInfo {
                client_id: url.clone(),
                client_secret: None,
                token_endpoint_auth_method: None,
                issuer: Some(d.server.clone()),
            };
            flight.client = Some(c.clone());
            return Ok(c);
        }
        let endpoint = match &d.metadata {
            Some(_) => d.meta_str("registration_endpoint").ok_or_else(|| {
                format!(
                    "mcp: oauth: the authorization server of '{}' offers no client registration; give 'http.oauth.clientId' (or 'http.oauth.clientMetadataUrl' where it supports client metadata documents)",
                    self.server_url
                )
            })?,
            None => d.endpoint("registration_endpoint", "/register")?,
        };
        let mut body = json!({
            "client_name": self.cfg.client_name.as_deref().unwrap_or("rulvar-mcp"),
            "redirect_uris": [self.cfg.redirect_uri.as_deref().unwrap_or_default()],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        });
        if let Some(s) = scope {
            body["scope"] = Value::String(s.to_owned());
        }
        let response = self
            .http
            .post(&endpoint)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| {
                format!(
                    "mcp: oauth: the client registration request failed: {}",
                    e.without_url()
                )
            })?;
        let value = json_answer(response, "client registration").await?;
        let Some(client_id) = value.get("client_id").and_then(Value::as_str) else {
            return Err("mcp: oauth: the client registration answer has no 'client_id'".into());
        };
        let client_secret = self.secret_member(&value, "client_secret");
        let c = ClientInfo {
            client_id: client_id.to_owned(),
            client_secret,
            token_endpoint_auth_method: value
                .get("token_endpoint_auth_method")
                .and_then(Value::as_str)
                .map(str::to_owned),
            issuer: Some(d.server.clone()),
        };
        self.host
            .save(key, serde_json::to_value(&c).unwrap_or(Value::Null))
            .await?;
        flight.client = Some(c.clone());
        Ok(c)
    }
}
