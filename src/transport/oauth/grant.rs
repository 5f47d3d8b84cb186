//! The grants: the authorization code flow (PKCE S256, `state`, `iss`) with the host's
//! `authorize` callback, client credentials, the JWT bearer grant (RFC 7523), and the token
//! request they and refresh end in (with a DPoP proof when the source uses DPoP).

use super::discovery::Discovery;
use super::registration::ClientInfo;
use super::wire::{form_encode, json_answer, now_ms, random_b64};
use super::{lock, Flight, OAuth, Tokens};
use crate::core::config::oauth::Grant;
use crate::core::error::{Failure, OAuthFailure};
use crate::core::oauth::{
    code_challenge, code_flow_refusal, expected_iss, read_redirect, select_auth_method,
    select_scope, token_type_shown, AuthMethod, AuthorizationRequest, Challenge, JWT_BEARER_GRANT,
};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value;

impl OAuth {
    /// A new token: by the grant with no user in it, or by the code flow through the host's
    /// `authorize` callback; `step_up` keeps the scope asked for before.
    pub(super) async fn authorize(
        &self,
        flight: &mut Flight,
        challenge: &Challenge,
        step_up: bool,
        reason: &'static str,
    ) -> Result<(), Failure> {
        let d = self
            .discover(flight, challenge.resource_metadata.as_deref())
            .await?;
        let before = step_up
            .then(|| {
                flight
                    .scope
                    .clone()
                    .or_else(|| lock(&self.current).as_ref().and_then(|t| t.scope.clone()))
            })
            .flatten();
        if matches!(self.cfg.grant, Grant::JwtBearer | Grant::ClientCredentials) {
            return self.machine_grant(flight, &d, challenge, before).await;
        }
        if !self.host.can_authorize() {
            return Err(Failure::oauth(OAuthFailure::AuthorizationRequired, format!(
                "mcp: oauth: '{}' requires authorization and 'http.oauth.authorize' is not set (no stored token could be used)",
                self.shown_url
            )));
        }
        let scope = select_scope(
            challenge.scope.as_deref(),
            d.resource_scopes.as_deref(),
            self.cfg.scope.as_deref(),
            before.as_deref(),
            d.meta_list("scopes_supported").as_deref(),
        );
        let (code, verifier, client) = self.code(flight, &d, scope.as_deref(), reason).await?;
        let params = vec![
            ("grant_type".to_owned(), "authorization_code".to_owned()),
            ("code".to_owned(), code),
            ("code_verifier".to_owned(), verifier),
            (
                "redirect_uri".to_owned(),
                self.cfg.redirect_uri.clone().unwrap_or_default(),
            ),
        ];
        self.granted(flight, &d, &client, params, scope).await
    }

    /// The grants with no user in them: one token request, its scope chosen as the login's
    /// would be.
    async fn machine_grant(
        &self,
        flight: &mut Flight,
        d: &Discovery,
        challenge: &Challenge,
        before: Option<String>,
    ) -> Result<(), Failure> {
        let scope = select_scope(
            challenge.scope.as_deref(),
            d.resource_scopes.as_deref(),
            self.cfg.scope.as_deref(),
            before.as_deref(),
            None,
        );
        let client = self.client(flight, d, None).await?;
        let mut params = match self.cfg.grant {
            Grant::JwtBearer => vec![
                ("grant_type".to_owned(), JWT_BEARER_GRANT.to_owned()),
                (
                    "assertion".to_owned(),
                    self.jwt_assertion(d, scope.as_deref()).await?,
                ),
            ],
            _ => vec![("grant_type".to_owned(), "client_credentials".to_owned())],
        };
        if let Some(s) = &scope {
            params.push(("scope".to_owned(), s.clone()));
        }
        self.granted(flight, d, &client, params, scope).await
    }

    /// A grant's token request, its tokens kept with the scope asked for when the answer names
    /// none.
    async fn granted(
        &self,
        flight: &mut Flight,
        d: &Discovery,
        client: &ClientInfo,
        params: Vec<(String, String)>,
        scope: Option<String>,
    ) -> Result<(), Failure> {
        let mut tokens = self.token_request(d, client, params).await?;
        tokens.scope = tokens.scope.or(scope.clone());
        flight.scope = scope;
        self.save_tokens(tokens).await
    }

    /// The code flow up to its code: the authorization request handed to the host, its
    /// redirect read. Returns the code, the PKCE verifier and the client it was made for.
    async fn code(
        &self,
        flight: &mut Flight,
        d: &Discovery,
        scope: Option<&str>,
        reason: &'static str,
    ) -> Result<(String, String, ClientInfo), Failure> {
        // Checked before anything else happens: only an https (or loopback http) URL is ever
        // handed to the host, which may open() it (a `file:`, `javascript:` or `ms-msdt:` URL
        // would run on the user's machine).
        let endpoint = d.endpoint("authorization_endpoint", "/authorize")?;
        let client = self.client(flight, d, scope).await?;
        if let Some(refusal) = code_flow_refusal(d.metadata.as_ref()) {
            return Err(refusal.to_owned().into());
        }
        let verifier = random_b64(32)?;
        let state = random_b64(24)?;
        self.secrets.remember(&verifier);
        self.secrets.remember(&state);
        let url = AuthorizationRequest {
            endpoint: &endpoint,
            client_id: &client.client_id,
            code_challenge: &code_challenge(&verifier),
            redirect_uri: self.cfg.redirect_uri.as_deref().unwrap_or_default(),
            state: &state,
            scope,
            resource: d.resource.as_deref(),
        }
        .url()
        .map_err(str::to_owned)?;
        let redirect = self.host.authorize(url, reason).await?;
        self.secrets.remember(&redirect);
        let (expected_iss, iss_required) = expected_iss(d.metadata.as_ref(), &d.issuer);
        let code = read_redirect(&redirect, &state, expected_iss, iss_required)?;
        self.secrets.remember(&code);
        Ok((code, verifier, client))
    }

    /// A POST to the token endpoint, authenticated as the server advertises; with DPoP, with a
    /// proof, sent once more with the authorization server's nonce when it answers
    /// `use_dpop_nonce` (RFC 9449 §8) with a new one.
    pub(super) async fn token_request(
        &self,
        d: &Discovery,
        client: &ClientInfo,
        mut params: Vec<(String, String)>,
    ) -> Result<Tokens, Failure> {
        let endpoint = d.endpoint("token_endpoint", "/token")?;
        if let Some(r) = &d.resource {
            params.push(("resource".to_owned(), r.clone()));
        }
        if let Some(dpop) = &self.dpop {
            // An authorization server that lists the algorithms it takes and not this key's
            // would refuse every proof: said here, before anything is sent.
            if let Some(algs) = d.meta_list("dpop_signing_alg_values_supported") {
                if !algs.iter().any(|a| a == dpop.alg()) {
                    return Err(format!(
                        "mcp: oauth: the authorization server does not take {} DPoP proofs ('dpop_signing_alg_values_supported'); no token was requested",
                        dpop.alg()
                    )
                    .into());
                }
            }
        }
        let mut nonce_retried = false;
        loop {
            let (sent_nonce, response) = self.token_post(d, client, &endpoint, &params).await?;
            let fresh = self
                .dpop
                .as_ref()
                .and_then(|dpop| dpop.take_nonce(&endpoint, header(&response, "dpop-nonce")));
            match json_answer(response, "token request").await {
                Ok(value) => return self.tokens_of(d, &value),
                Err(e)
                    if !nonce_retried
                        && fresh.is_some()
                        && fresh != sent_nonce
                        && e.oauth
                            == Some(OAuthFailure::Refused(Some("use_dpop_nonce".into()))) =>
                {
                    nonce_retried = true;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One POST to the token endpoint: the nonce its DPoP proof carried, and the answer.
    async fn token_post(
        &self,
        d: &Discovery,
        client: &ClientInfo,
        endpoint: &str,
        params: &[(String, String)],
    ) -> Result<(Option<String>, reqwest::Response), Failure> {
        let mut params = params.to_vec();
        let method = select_auth_method(
            client.client_secret.is_some(),
            self.cfg.private_key.is_some(),
            client.token_endpoint_auth_method.as_deref(),
            d.meta_list("token_endpoint_auth_methods_supported")
                .as_deref(),
        );
        let mut request = self
            .http
            .post(endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json");
        match method {
            AuthMethod::Basic => {
                let secret = client.client_secret.as_deref().unwrap_or_default();
                let pair = format!("{}:{}", form_encode(&client.client_id), form_encode(secret));
                let value = format!("Basic {}", STANDARD.encode(pair));
                self.secrets.remember(&value);
                request = request.header("authorization", value);
            }
            AuthMethod::Post => {
                params.push(("client_id".to_owned(), client.client_id.clone()));
                if let Some(s) = &client.client_secret {
                    params.push(("client_secret".to_owned(), s.clone()));
                }
            }
            AuthMethod::None => params.push(("client_id".to_owned(), client.client_id.clone())),
            AuthMethod::PrivateKeyJwt => {
                // A new one per POST: its `jti` is single-use.
                let assertion = self.assertion(&client.client_id, &d.issuer)?;
                self.secrets.remember(&assertion);
                params.push((
                    "client_assertion_type".to_owned(),
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
                ));
                params.push(("client_assertion".to_owned(), assertion));
            }
        }
        let mut sent_nonce = None;
        if let Some(dpop) = &self.dpop {
            let proof = dpop.proof("POST", endpoint, None)?;
            self.secrets.remember_current("dpop_proof", &proof.proof);
            request = request.header("dpop", proof.proof);
            sent_nonce = proof.nonce;
        }
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params.iter())
            .finish();
        let response =
            request.body(body).send().await.map_err(|e| {
                format!("mcp: oauth: the token request failed: {}", e.without_url())
            })?;
        Ok((sent_nonce, response))
    }

    /// The tokens of a token endpoint's answer. Its `token_type` is the server's word: `Bearer`,
    /// or `DPoP` only when this source sent a proof (then the token is bound to its key).
    fn tokens_of(&self, d: &Discovery, value: &Value) -> Result<Tokens, Failure> {
        let Some(access_token) = self.secret_member(value, "access_token") else {
            return Err("mcp: oauth: the token endpoint's answer has no 'access_token'".into());
        };
        let token_type = value
            .get("token_type")
            .and_then(Value::as_str)
            .unwrap_or("Bearer");
        let dpop_bound = match &self.dpop {
            _ if token_type.eq_ignore_ascii_case("bearer") => None,
            Some(dpop) if token_type.eq_ignore_ascii_case("dpop") => Some(dpop.jkt.clone()),
            Some(_) => {
                return Err(format!(
                    "mcp: oauth: the token endpoint issued a '{}' token; only Bearer and DPoP tokens are supported",
                    token_type_shown(token_type)
                )
                .into())
            }
            None => {
                return Err(format!(
                    "mcp: oauth: the token endpoint issued a '{}' token; only Bearer tokens are supported",
                    token_type_shown(token_type)
                )
                .into())
            }
        };
        let refresh_token = self.secret_member(value, "refresh_token");
        let expires_at = value
            .get("expires_in")
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| now_ms().saturating_add((s * 1000.0) as u64));
        Ok(Tokens {
            access_token,
            refresh_token,
            expires_at,
            scope: value
                .get("scope")
                .and_then(Value::as_str)
                .map(str::to_owned),
            issuer: Some(d.issuer.clone()),
            token_type: dpop_bound.as_ref().map(|_| "DPoP".to_owned()),
            jkt: dpop_bound,
        })
    }
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}
