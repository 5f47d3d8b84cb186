//! The JWT bearer grant's assertion (RFC 7523): the one the host gives (a workload identity
//! JWT), or an ID-JAG from a token exchange (RFC 8693) at the enterprise IdP for the
//! authorization server discovery validated (enterprise-managed authorization).
//!
//! The user's identity assertion goes only to the configured IdP endpoint; the ID-JAG asked for
//! names the validated issuer as its audience and the discovered resource, so it is of no use
//! to another authorization server. Both, and the assertion, are secrets.

use super::discovery::Discovery;
use super::wire::json_answer;
use super::OAuth;
use crate::core::config::oauth::{JwtBearer, Supplied, TokenExchange};
use crate::core::error::Failure;
use crate::core::oauth::{ID_JAG_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT};
use serde_json::Value;

impl OAuth {
    /// The assertion of one JWT bearer token request, asked for afresh each time (a host's
    /// workload token rotates; an ID-JAG lives minutes).
    pub(super) async fn jwt_assertion(
        &self,
        d: &Discovery,
        scope: Option<&str>,
    ) -> Result<String, Failure> {
        match &self.cfg.jwt_bearer {
            Some(JwtBearer::Assertion(a)) => self.supplied(a).await,
            Some(JwtBearer::Exchange(x)) => self.id_jag(x, d, scope).await,
            None => Err("mcp: oauth: the 'jwt_bearer' grant has no assertion".into()),
        }
    }

    async fn supplied(&self, value: &Supplied) -> Result<String, Failure> {
        match value {
            Supplied::Value(v) => Ok(v.clone()),
            Supplied::Hook(name) => {
                let v = self.host.credential(name).await?;
                self.secrets.remember_current(name, &v);
                Ok(v)
            }
        }
    }

    async fn id_jag(
        &self,
        x: &TokenExchange,
        d: &Discovery,
        scope: Option<&str>,
    ) -> Result<String, Failure> {
        let Some(resource) = &d.resource else {
            return Err(
                "mcp: oauth: the token exchange for an ID-JAG needs the MCP server's resource identifier, and 'http.oauth.resource' is false".into(),
            );
        };
        let subject = self.supplied(&x.subject_token).await?;
        let mut params = vec![
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("requested_token_type", ID_JAG_TOKEN_TYPE),
            ("audience", d.issuer.as_str()),
            ("resource", resource.as_str()),
            ("subject_token", subject.as_str()),
            ("subject_token_type", x.subject_token_type),
            ("client_id", x.client_id.as_str()),
        ];
        if let Some(s) = scope {
            params.push(("scope", s));
        }
        if let Some(secret) = &x.client_secret {
            params.push(("client_secret", secret.as_str()));
        }
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params.iter())
            .finish();
        let response = self
            .http
            .post(&x.token_endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| {
                format!(
                    "mcp: oauth: the token exchange at 'http.oauth.tokenExchange.tokenEndpoint' failed: {}",
                    e.without_url()
                )
            })?;
        let value = json_answer(response, "token exchange").await?;
        if value.get("issued_token_type").and_then(Value::as_str) != Some(ID_JAG_TOKEN_TYPE) {
            return Err(
                "mcp: oauth: the token exchange answered with no ID-JAG ('issued_token_type' is not urn:ietf:params:oauth:token-type:id-jag)".into(),
            );
        }
        let Some(jag) = value
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        else {
            return Err("mcp: oauth: the token exchange's answer has no 'access_token'".into());
        };
        self.secrets.remember_current("id_jag", jag);
        Ok(jag.to_owned())
    }
}
