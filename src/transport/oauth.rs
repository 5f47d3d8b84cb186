//! OAuth 2.1 for a streamable-HTTP server, as the MCP specification's authorization section
//! describes it: on a 401 (or a 403 `insufficient_scope`), protected resource metadata
//! (RFC 9728), authorization server metadata (RFC 8414 / OpenID discovery, with the 2025-03-26
//! fallbacks), registration (pre-registered, client metadata document, RFC 7591), PKCE S256 with
//! `state` and `iss` checked, the `resource` parameter (RFC 8707), the token endpoint's auth
//! method, refresh, step-up; then the bearer on every request.
//!
//! One flight per source: a refresh or an authorization holds `flight`, so concurrent calls that
//! met the same 401 wait for it and then use its token (a caller whose token was already
//! replaced does not refresh again: a rotated refresh token is never used twice). Before a
//! refresh the store is read: a token another process saved is taken instead.
//!
//! Every token, code, verifier, `state`, client secret, assertion and redirect URL is
//! remembered in `Secrets` the moment it exists, and no message here is built from one.

use crate::core::error::{Failure, OAuthFailure};
use crate::core::oauth::{
    authorization_server_metadata_urls, error_code, issuers_match, legacy_authorization_server,
    legacy_endpoint, read_redirect, resource_allowed, resource_metadata_urls, select_auth_method,
    select_scope, AuthMethod, Challenge, Grant, OAuthConfig, ResourceChoice, SigningAlgorithm,
    MAX_AUTHORIZATIONS,
};
use crate::core::secrets::Secrets;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What only the host can do: show the user the authorization URL and hand back the redirect,
/// and keep tokens and registrations across processes.
pub trait OAuthHost: Send + Sync {
    /// Whether there is an `authorize` callback at all.
    fn can_authorize(&self) -> bool;
    /// Resolves with the redirect URL the user's browser was sent to.
    fn authorize(
        &self,
        url: String,
        reason: &'static str,
    ) -> BoxFuture<'static, Result<String, String>>;
    /// The stored value, `None` when there is none (or no store).
    fn load(&self, key: String) -> BoxFuture<'static, Result<Option<Value>, String>>;
    fn save(&self, key: String, value: Value) -> BoxFuture<'static, Result<(), String>>;
}

/// A token is refreshed this long before it expires.
const EXPIRY_MARGIN_MS: u64 = 30_000;
/// The largest metadata document, registration or token answer read.
const MAX_BODY: usize = 256 * 1024;
/// Each discovery, registration or token request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const PROTOCOL_VERSION: &str = "2025-11-25";

#[derive(Clone, Serialize, Deserialize)]
struct Tokens {
    access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    /// Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
}

impl Tokens {
    fn expiring(&self) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_ms().saturating_add(EXPIRY_MARGIN_MS))
    }
}

#[derive(Clone, Serialize, Deserialize)]
struct ClientInfo {
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_endpoint_auth_method: Option<String>,
    /// The authorization server it was registered with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issuer: Option<String>,
}

#[derive(Clone)]
struct Discovery {
    /// The `resource_metadata` URL it started from, if a challenge named one.
    from: Option<String>,
    resource: Option<String>,
    resource_scopes: Option<Vec<String>>,
    /// The authorization server's URL (the protected resource's first, or the legacy origin).
    server: String,
    metadata: Option<Value>,
}

impl Discovery {
    fn meta_str(&self, key: &str) -> Option<String> {
        self.metadata
            .as_ref()
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
    fn meta_list(&self, key: &str) -> Option<Vec<String>> {
        self.metadata.as_ref().and_then(|m| string_list(m.get(key)))
    }
    fn endpoint(&self, key: &str, legacy: &str) -> Result<String, String> {
        match &self.metadata {
            Some(_) => self.meta_str(key).ok_or_else(|| {
                format!("mcp: oauth: the authorization server's metadata has no '{key}'")
            }),
            None => legacy_endpoint(&self.server, legacy)
                .ok_or_else(|| "mcp: oauth: the authorization server URL is not a URL".into()),
        }
    }
    /// Who a `private_key_jwt` assertion is addressed to, and what `iss` a redirect may name.
    fn issuer(&self) -> String {
        self.meta_str("issuer")
            .unwrap_or_else(|| self.server.clone())
    }
}

#[derive(Default)]
struct Flight {
    discovery: Option<Discovery>,
    client: Option<ClientInfo>,
    /// The scope of the last authorization, which a step-up adds to.
    scope: Option<String>,
}

pub struct OAuth {
    cfg: OAuthConfig,
    server_url: String,
    host: Arc<dyn OAuthHost>,
    secrets: Arc<Secrets>,
    /// Follows no redirect: nothing of ours is sent where an answer points.
    http: reqwest::Client,
    current: Mutex<Option<Tokens>>,
    loaded: AtomicBool,
    /// Authorizations since a request last went through.
    attempts: AtomicU32,
    flight: tokio::sync::Mutex<Flight>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    v.and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

fn random_b64(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut buf)
        .map_err(|_| "mcp: oauth: the system's random source failed".to_owned())?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
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
    pub fn new(
        cfg: OAuthConfig,
        server_url: &str,
        host: Arc<dyn OAuthHost>,
        secrets: Arc<Secrets>,
    ) -> Result<Arc<OAuth>, Failure> {
        super::http::ensure_crypto_provider();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| format!("mcp: could not build the HTTP client: {e}"))?;
        Ok(Arc::new(OAuth {
            cfg,
            server_url: server_url.to_owned(),
            host,
            secrets,
            http,
            current: Mutex::new(None),
            loaded: AtomicBool::new(false),
            attempts: AtomicU32::new(0),
            flight: tokio::sync::Mutex::new(Flight::default()),
        }))
    }

    fn tokens_key(&self) -> String {
        format!("oauth:tokens:{}", self.server_url)
    }

    fn client_key(server: &str) -> String {
        format!("oauth:client:{server}")
    }

    fn access(&self) -> Option<String> {
        lock(&self.current).as_ref().map(|t| t.access_token.clone())
    }

    fn remember_tokens(&self, tokens: &Tokens) {
        self.secrets.remember(&tokens.access_token);
        if let Some(r) = &tokens.refresh_token {
            self.secrets.remember(r);
        }
    }

    /// An optional string member of an authorization server's answer that is a secret:
    /// remembered for redaction the moment it exists.
    fn secret_member(&self, answer: &Value, key: &str) -> Option<String> {
        let secret = answer.get(key).and_then(Value::as_str)?;
        self.secrets.remember(secret);
        Some(secret.to_owned())
    }

    fn adopt(&self, tokens: Tokens) {
        self.remember_tokens(&tokens);
        *lock(&self.current) = Some(tokens);
    }

    async fn load_tokens(&self) -> Result<Option<Tokens>, Failure> {
        let value = self.host.load(self.tokens_key()).await?;
        let tokens = value.and_then(|v| serde_json::from_value::<Tokens>(v).ok());
        if let Some(t) = &tokens {
            self.remember_tokens(t);
        }
        Ok(tokens)
    }

    async fn save_tokens(&self, tokens: Tokens) -> Result<(), Failure> {
        let value = serde_json::to_value(&tokens).unwrap_or(Value::Null);
        self.adopt(tokens);
        Ok(self.host.save(self.tokens_key(), value).await?)
    }

    /// The access token for the next request, refreshed first when it is about to expire;
    /// `None` before any authorization (the request then meets the server's 401).
    pub async fn bearer(&self) -> Result<Option<String>, Failure> {
        if self.loaded.load(Ordering::Acquire) {
            match lock(&self.current).as_ref() {
                None => return Ok(None),
                Some(t) if !t.expiring() || t.refresh_token.is_none() => {
                    return Ok(Some(t.access_token.clone()))
                }
                Some(_) => {}
            }
        }
        let mut flight = self.flight.lock().await;
        if !self.loaded.load(Ordering::Acquire) {
            if let Some(t) = self.load_tokens().await? {
                *lock(&self.current) = Some(t);
            }
            self.loaded.store(true, Ordering::Release);
        }
        let current = lock(&self.current).clone();
        if let Some(t) = current {
            if t.expiring() && t.refresh_token.is_some() {
                // A failed refresh keeps the old token: the server's 401 then leads to recover().
                let _ = self.refresh(&mut flight, &t).await;
            }
        }
        Ok(self.access())
    }

    /// A request carrying `sent` went through: the authorization streak is over.
    pub fn accepted(&self) {
        self.attempts.store(0, Ordering::Release);
    }

    /// After a 401, or a 403 `insufficient_scope`, to a request that carried `sent`: gets a
    /// token the request can be sent again with (taken from another caller that already got
    /// one, from the store, by a refresh, or by a new authorization), or says why not.
    pub async fn recover(
        &self,
        status: u16,
        challenge: Challenge,
        sent: Option<String>,
    ) -> Result<(), Failure> {
        let mut flight = self.flight.lock().await;
        self.loaded.store(true, Ordering::Release);
        if self.access() != sent {
            return Ok(());
        }
        let step_up = status == 403 && challenge.insufficient_scope();
        if !step_up {
            // Another process may have authorized, or refreshed (and so rotated the refresh
            // token this one holds): its token is taken as it is.
            if let Some(stored) = self.load_tokens().await? {
                if Some(&stored.access_token) != sent.as_ref() && !stored.expiring() {
                    *lock(&self.current) = Some(stored);
                    return Ok(());
                }
            }
            let current = lock(&self.current).clone();
            if let Some(t) = current.filter(|t| t.refresh_token.is_some()) {
                if self.refresh(&mut flight, &t).await.is_ok() {
                    return Ok(());
                }
            }
        }
        let attempt = self.attempts.fetch_add(1, Ordering::AcqRel) + 1;
        if attempt > MAX_AUTHORIZATIONS {
            return Err(if step_up {
                Failure::oauth(OAuthFailure::StepUpExhausted, format!(
                    "mcp: oauth: step-up exhausted: '{}' still refuses the token as insufficient_scope after {MAX_AUTHORIZATIONS} authorizations",
                    self.server_url
                ))
            } else {
                Failure::oauth(OAuthFailure::AuthorizationExhausted, format!(
                    "mcp: oauth: '{}' still refuses the token after {MAX_AUTHORIZATIONS} authorizations",
                    self.server_url
                ))
            });
        }
        let reason = if step_up {
            "insufficient_scope"
        } else if sent.is_some() {
            "token_rejected"
        } else {
            "authorization_required"
        };
        self.authorize(&mut flight, &challenge, step_up, reason)
            .await
    }

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
    async fn discover(
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

    /// The client this source authorizes as: pre-registered, stored, its metadata document's
    /// URL, or registered now (RFC 7591), in that order.
    async fn client(
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

    async fn refresh(&self, flight: &mut Flight, held: &Tokens) -> Result<(), Failure> {
        let Some(refresh_token) = held.refresh_token.clone() else {
            return Err("mcp: oauth: no refresh token".into());
        };
        // Another process may have refreshed already, rotating the refresh token held here.
        if let Some(stored) = self.load_tokens().await? {
            if stored.access_token != held.access_token && !stored.expiring() {
                *lock(&self.current) = Some(stored);
                return Ok(());
            }
        }
        let d = self.discover(flight, None).await?;
        let client = self.client(flight, &d, None).await?;
        let params = vec![
            ("grant_type".to_owned(), "refresh_token".to_owned()),
            ("refresh_token".to_owned(), refresh_token.clone()),
        ];
        let mut tokens = self.token_request(&d, &client, params).await?;
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token);
        }
        if tokens.scope.is_none() {
            tokens.scope = held.scope.clone();
        }
        self.save_tokens(tokens).await
    }

    async fn authorize(
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
        if self.cfg.grant == Grant::ClientCredentials {
            let scope = select_scope(
                challenge.scope.as_deref(),
                d.resource_scopes.as_deref(),
                self.cfg.scope.as_deref(),
                before.as_deref(),
                None,
            );
            let client = self.client(flight, &d, None).await?;
            let mut params = vec![("grant_type".to_owned(), "client_credentials".to_owned())];
            if let Some(s) = &scope {
                params.push(("scope".to_owned(), s.clone()));
            }
            let mut tokens = self.token_request(&d, &client, params).await?;
            tokens.scope = tokens.scope.or(scope.clone());
            flight.scope = scope;
            return self.save_tokens(tokens).await;
        }
        if !self.host.can_authorize() {
            return Err(Failure::oauth(OAuthFailure::AuthorizationRequired, format!(
                "mcp: oauth: '{}' requires authorization and 'http.oauth.authorize' is not set (no stored token could be used)",
                self.server_url
            )));
        }
        let scope = select_scope(
            challenge.scope.as_deref(),
            d.resource_scopes.as_deref(),
            self.cfg.scope.as_deref(),
            before.as_deref(),
            d.meta_list("scopes_supported").as_deref(),
        );
        let client = self.client(flight, &d, scope.as_deref()).await?;
        if let Some(types) = d.meta_list("response_types_supported") {
            if !types.iter().any(|t| t == "code") {
                return Err("mcp: oauth: the authorization server does not support the 'code' response type".into());
            }
        }
        if let Some(methods) = d.meta_list("code_challenge_methods_supported") {
            if !methods.iter().any(|m| m == "S256") {
                return Err(
                    "mcp: oauth: the authorization server does not support PKCE with S256".into(),
                );
            }
        }
        let verifier = random_b64(32)?;
        let state = random_b64(24)?;
        self.secrets.remember(&verifier);
        self.secrets.remember(&state);
        let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
        let code_challenge = URL_SAFE_NO_PAD.encode(digest.as_ref());
        let endpoint = d.endpoint("authorization_endpoint", "/authorize")?;
        let mut url = url::Url::parse(&endpoint).map_err(|_| {
            "mcp: oauth: the authorization server's 'authorization_endpoint' is not a URL"
                .to_owned()
        })?;
        let redirect_uri = self.cfg.redirect_uri.clone().unwrap_or_default();
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code");
            q.append_pair("client_id", &client.client_id);
            q.append_pair("code_challenge", &code_challenge);
            q.append_pair("code_challenge_method", "S256");
            q.append_pair("redirect_uri", &redirect_uri);
            q.append_pair("state", &state);
            if let Some(s) = &scope {
                q.append_pair("scope", s);
                if s.split(' ').any(|x| x == "offline_access") {
                    q.append_pair("prompt", "consent");
                }
            }
            if let Some(r) = &d.resource {
                q.append_pair("resource", r);
            }
        }
        let redirect = self.host.authorize(url.to_string(), reason).await?;
        self.secrets.remember(&redirect);
        let iss_required = d
            .metadata
            .as_ref()
            .and_then(|m| m.get("authorization_response_iss_parameter_supported"))
            == Some(&Value::Bool(true));
        let expected_iss = d.metadata.as_ref().map(|_| d.issuer());
        let code = read_redirect(&redirect, &state, expected_iss.as_deref(), iss_required)?;
        self.secrets.remember(&code);
        let params = vec![
            ("grant_type".to_owned(), "authorization_code".to_owned()),
            ("code".to_owned(), code),
            ("code_verifier".to_owned(), verifier),
            ("redirect_uri".to_owned(), redirect_uri),
        ];
        let mut tokens = self.token_request(&d, &client, params).await?;
        tokens.scope = tokens.scope.or(scope.clone());
        flight.scope = scope;
        self.save_tokens(tokens).await
    }

    /// A POST to the token endpoint, authenticated as the server advertises.
    async fn token_request(
        &self,
        d: &Discovery,
        client: &ClientInfo,
        mut params: Vec<(String, String)>,
    ) -> Result<Tokens, Failure> {
        let endpoint = d.endpoint("token_endpoint", "/token")?;
        if let Some(r) = &d.resource {
            params.push(("resource".to_owned(), r.clone()));
        }
        let method = select_auth_method(
            client.client_secret.is_some(),
            self.cfg.private_key.is_some(),
            client.token_endpoint_auth_method.as_deref(),
            d.meta_list("token_endpoint_auth_methods_supported")
                .as_deref(),
        );
        let mut request = self
            .http
            .post(&endpoint)
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
                let assertion = self.assertion(&client.client_id, &d.issuer())?;
                self.secrets.remember(&assertion);
                params.push((
                    "client_assertion_type".to_owned(),
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
                ));
                params.push(("client_assertion".to_owned(), assertion));
            }
        }
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params.iter())
            .finish();
        let response =
            request.body(body).send().await.map_err(|e| {
                format!("mcp: oauth: the token request failed: {}", e.without_url())
            })?;
        let value = json_answer(response, "token request").await?;
        let Some(access_token) = self.secret_member(&value, "access_token") else {
            return Err("mcp: oauth: the token endpoint's answer has no 'access_token'".into());
        };
        let token_type = value
            .get("token_type")
            .and_then(Value::as_str)
            .unwrap_or("Bearer");
        if !token_type.eq_ignore_ascii_case("bearer") {
            return Err(format!(
                "mcp: oauth: the token endpoint issued a '{}' token; only Bearer tokens are supported",
                error_code(token_type)
            ).into());
        }
        let refresh_token = self.secret_member(&value, "refresh_token");
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
        })
    }

    /// A `private_key_jwt` client assertion (RFC 7523): iss and sub the client, aud the
    /// authorization server's issuer, five minutes.
    fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        let pem = self.cfg.private_key.as_deref().unwrap_or_default();
        let der = pem_to_der(pem)?;
        let alg = self.cfg.signing_algorithm;
        let now = now_ms() / 1000;
        let header = json!({ "alg": alg.name(), "typ": "JWT" });
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": random_b64(16)?,
        });
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = ring::rand::SystemRandom::new();
        let bad_key = || {
            format!(
                "mcp: oauth: 'http.oauth.privateKey' is not a PKCS#8 {} private key",
                match alg {
                    SigningAlgorithm::Es256 => "P-256",
                    SigningAlgorithm::Rs256 => "RSA",
                }
            )
        };
        let signature = match alg {
            SigningAlgorithm::Es256 => {
                let key = ring::signature::EcdsaKeyPair::from_pkcs8(
                    &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                    &der,
                    &rng,
                )
                .map_err(|_| bad_key())?;
                key.sign(&rng, input.as_bytes())
                    .map_err(|_| "mcp: oauth: signing the client assertion failed".to_owned())?
                    .as_ref()
                    .to_vec()
            }
            SigningAlgorithm::Rs256 => {
                let key = ring::signature::RsaKeyPair::from_pkcs8(&der).map_err(|_| bad_key())?;
                let mut out = vec![0u8; key.public().modulus_len()];
                key.sign(
                    &ring::signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut out,
                )
                .map_err(|_| "mcp: oauth: signing the client assertion failed".to_owned())?;
                out
            }
        };
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

fn pem_to_der(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN PRIVATE KEY-----"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    STANDARD
        .decode(body)
        .map_err(|_| "mcp: oauth: 'http.oauth.privateKey' is not valid PEM".to_owned())
}

/// The JSON answer of a request to the authorization server, or the server's refusal (`what`
/// names the request).
async fn json_answer(response: reqwest::Response, what: &str) -> Result<Value, Failure> {
    let status = response.status();
    let body = read_body(response).await.unwrap_or_default();
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if !status.is_success() {
        return Err(refusal(what, status.as_u16(), &value));
    }
    Ok(value)
}

/// The authorization server refused: its error code (never its description), or the status.
fn refusal(what: &str, status: u16, body: &Value) -> Failure {
    let code = body.get("error").and_then(Value::as_str).map(error_code);
    let message = match &code {
        Some(code) => format!(
            "mcp: oauth: the authorization server refused the {what} ({code}, HTTP {status})"
        ),
        None => format!("mcp: oauth: the authorization server refused the {what} (HTTP {status})"),
    };
    Failure::oauth(OAuthFailure::Refused(code), message)
}

async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| e.without_url().to_string())?
    {
        if body.len() + chunk.len() > MAX_BODY {
            return Err("too large".into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
