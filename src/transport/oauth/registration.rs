//! Which client this source authorizes as: pre-registered, stored, a client metadata document
//! URL (SEP-991), or registered now (RFC 7591).

use super::discovery::Discovery;
use super::wire::json_answer;
use super::{Flight, OAuth};
use crate::core::error::Failure;
use crate::core::oauth::{issuers_match, registration_request, untrusted};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Clone, Serialize, Deserialize)]
pub(super) struct ClientInfo {
    pub(super) client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) token_endpoint_auth_method: Option<String>,
    /// The (validated) issuer of the authorization server it was registered with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) issuer: Option<String>,
}

impl OAuth {
    fn client_key(issuer: &str) -> String {
        format!("oauth:client:{issuer}")
    }

    fn credentials_key(&self) -> String {
        format!("oauth:credentials:{}", self.server_url)
    }

    /// The configured credentials (a client secret, a private key) go to one authorization
    /// server only: the `http.oauth.issuer` pin, else the first one they were used with,
    /// recorded in the store (`oauth:credentials:<server url>`). A resource that later names
    /// another cannot collect them.
    async fn bind_credentials(&self, flight: &mut Flight, d: &Discovery) -> Result<(), Failure> {
        let bound = match (&self.cfg.issuer, &flight.bound) {
            (Some(pin), _) => Some(pin.clone()),
            (None, Some(b)) => Some(b.clone()),
            (None, None) => self
                .host
                .load(self.credentials_key())
                .await?
                .and_then(|v| v.get("issuer").and_then(Value::as_str).map(str::to_owned)),
        };
        match bound {
            Some(b) if issuers_match(&b, &d.issuer) => {
                flight.bound = Some(b);
                Ok(())
            }
            Some(b) => Err(untrusted(format!(
                "mcp: oauth: '{}' now names the authorization server '{}', and the configured client credentials are bound to '{b}'; they were not sent (set 'http.oauth.issuer' to move them)",
                self.shown_url, d.issuer
            ))),
            None => {
                self.host
                    .save(self.credentials_key(), json!({ "issuer": d.issuer }))
                    .await?;
                flight.bound = Some(d.issuer.clone());
                Ok(())
            }
        }
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
            return self.configured_client(flight, d, id).await;
        }
        if let Some(c) = &flight.client {
            if c.issuer
                .as_deref()
                .is_some_and(|i| issuers_match(i, &d.issuer))
            {
                return Ok(c.clone());
            }
        }
        // Registrations are keyed by the validated issuer: a new authorization server gets a
        // registration of its own, never another's client.
        let key = Self::client_key(&d.issuer);
        if let Some(stored) = self.stored_client(&key, d).await? {
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
                issuer: Some(d.issuer.clone()),
            };
            flight.client = Some(c.clone());
            return Ok(c);
        }
        let c = self.register(d, scope).await?;
        self.host
            .save(key, serde_json::to_value(&c).unwrap_or(Value::Null))
            .await?;
        flight.client = Some(c.clone());
        Ok(c)
    }

    /// `http.oauth.clientId`, its credentials bound to one authorization server. An assertion
    /// (a workload's token) is a credential too: the grant's assertion goes to the same one
    /// authorization server as a secret would.
    async fn configured_client(
        &self,
        flight: &mut Flight,
        d: &Discovery,
        id: &str,
    ) -> Result<ClientInfo, Failure> {
        if self.cfg.client_secret.is_some()
            || self.cfg.private_key.is_some()
            || self.cfg.jwt_bearer.is_some()
        {
            self.bind_credentials(flight, d).await?;
        }
        Ok(ClientInfo {
            client_id: id.to_owned(),
            client_secret: self.cfg.client_secret.clone(),
            token_endpoint_auth_method: None,
            issuer: None,
        })
    }

    /// The registration the store keeps under `key`, if it is of this issuer.
    async fn stored_client(&self, key: &str, d: &Discovery) -> Result<Option<ClientInfo>, Failure> {
        let stored = self
            .host
            .load(key.to_owned())
            .await?
            .and_then(|v| serde_json::from_value::<ClientInfo>(v).ok())
            .filter(|c| {
                c.issuer
                    .as_deref()
                    .is_none_or(|i| issuers_match(i, &d.issuer))
            });
        if let Some(s) = stored.as_ref().and_then(|c| c.client_secret.as_ref()) {
            self.secrets.remember_current("client_secret", s);
        }
        Ok(stored)
    }

    /// A dynamic client registration (RFC 7591) at the authorization server of `d`.
    async fn register(&self, d: &Discovery, scope: Option<&str>) -> Result<ClientInfo, Failure> {
        if d.metadata.is_some() && d.meta_str("registration_endpoint").is_none() {
            return Err(format!(
                "mcp: oauth: the authorization server of '{}' offers no client registration; give 'http.oauth.clientId' (or 'http.oauth.clientMetadataUrl' where it supports client metadata documents)",
                self.shown_url
            )
            .into());
        }
        let endpoint = d.endpoint("registration_endpoint", "/register")?;
        let body = registration_request(
            self.cfg.client_name.as_deref(),
            self.cfg.redirect_uri.as_deref(),
            self.dpop.is_some(),
            scope,
        );
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
        Ok(ClientInfo {
            client_id: client_id.to_owned(),
            client_secret: self.secret_member(&value, "client_secret"),
            token_endpoint_auth_method: value
                .get("token_endpoint_auth_method")
                .and_then(Value::as_str)
                .map(str::to_owned),
            issuer: Some(d.issuer.clone()),
        })
    }
}
