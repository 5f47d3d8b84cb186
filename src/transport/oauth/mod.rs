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
//!
//! One file per job: `discovery` (protected resource and authorization server metadata),
//! `registration` (which client this source is), `grant` (the authorization code, client
//! credentials and JWT bearer grants, and the token request), `assertion` (the
//! `private_key_jwt` client assertion), `exchange` (the JWT bearer grant's assertion: given, or
//! an ID-JAG from a token exchange), `dpop` (the DPoP key, nonces and proofs), `wire` (reading
//! the authorization server's answers); this file holds the token flight: the current token,
//! refresh, and what a 401 leads to.

mod assertion;
mod discovery;
mod dpop;
mod exchange;
mod grant;
mod registration;
mod wire;

use self::discovery::Discovery;
use self::registration::ClientInfo;
use self::wire::now_ms;
use crate::core::config::oauth::OAuthConfig;
use crate::core::error::{Failure, OAuthFailure};
use crate::core::oauth::{issuers_match, Challenge, MAX_AUTHORIZATIONS};
use crate::core::secrets::Secrets;
use crate::core::url::shown_url;
use crate::sync::lock;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
    /// A value of the config the host gives as a function (`assertion`, `subjectToken`),
    /// called now: a non-empty string.
    fn credential(&self, name: &'static str) -> BoxFuture<'static, Result<String, String>>;
}

/// RFC 9449: the header of a request's proof, and the server's nonce for the next ones.
pub const DPOP: &str = "dpop";
const DPOP_NONCE: &str = "dpop-nonce";

/// A token is refreshed this long before it expires.
const EXPIRY_MARGIN_MS: u64 = 30_000;
/// Each discovery, registration or token request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// The validated issuer of the authorization server that issued them: the only one their
    /// refresh token is ever sent to (a token without one is never refreshed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issuer: Option<String>,
    /// `"DPoP"` for a DPoP-bound token (RFC 9449); absent for a Bearer one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_type: Option<String>,
    /// The thumbprint of the key a DPoP-bound token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    jkt: Option<String>,
}

impl Tokens {
    fn dpop_bound(&self) -> bool {
        self.token_type.is_some()
    }

    fn expiring(&self) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_ms().saturating_add(EXPIRY_MARGIN_MS))
    }
}

#[derive(Default)]
struct Flight {
    discovery: Option<Discovery>,
    client: Option<ClientInfo>,
    /// The scope of the last authorization, which a step-up adds to.
    scope: Option<String>,
    /// The issuer the configured credentials are bound to, once known.
    bound: Option<String>,
}

pub struct OAuth {
    cfg: OAuthConfig,
    server_url: String,
    /// `server_url` as messages show it: without the credentials it may carry.
    shown_url: String,
    host: Arc<dyn OAuthHost>,
    secrets: Arc<Secrets>,
    /// Follows no redirect: nothing of ours is sent where an answer points.
    http: reqwest::Client,
    current: Mutex<Option<Tokens>>,
    loaded: AtomicBool,
    /// Authorizations since a request last went through.
    attempts: AtomicU32,
    flight: tokio::sync::Mutex<Flight>,
    /// `http.oauth.dpop`: the key and the servers' nonces.
    dpop: Option<dpop::Dpop>,
}

/// The credentials of one request to the MCP server.
pub struct Presented {
    /// The `Authorization` value: `Bearer <token>`, or `DPoP <token>` for a DPoP-bound one.
    pub authorization: String,
    /// The access token (a 401 is answered for the token it refused).
    pub token: String,
    /// The `DPoP` header's proof, for a DPoP-bound token.
    pub proof: Option<String>,
    /// The nonce the proof carries.
    pub nonce: Option<String>,
}

impl OAuth {
    pub fn new(
        cfg: OAuthConfig,
        server_url: &str,
        host: Arc<dyn OAuthHost>,
        secrets: Arc<Secrets>,
    ) -> Result<Arc<OAuth>, Failure> {
        let http = super::web::client(
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(REQUEST_TIMEOUT),
        )?;
        let dpop = cfg.dpop.as_ref().map(dpop::Dpop::new).transpose()?;
        Ok(Arc::new(OAuth {
            cfg,
            server_url: server_url.to_owned(),
            shown_url: shown_url(server_url),
            host,
            secrets,
            http,
            current: Mutex::new(None),
            loaded: AtomicBool::new(false),
            attempts: AtomicU32::new(0),
            flight: tokio::sync::Mutex::new(Flight::default()),
            dpop,
        }))
    }

    fn tokens_key(&self) -> String {
        format!("oauth:tokens:{}", self.server_url)
    }

    /// The validated issuer of the token in use, if any.
    pub fn issuer(&self) -> Option<String> {
        lock(&self.current).as_ref().and_then(|t| t.issuer.clone())
    }

    fn access(&self) -> Option<String> {
        lock(&self.current).as_ref().map(|t| t.access_token.clone())
    }

    /// The tokens in force: redacted until new ones supersede them, whatever a header hook's
    /// churn adds meanwhile (`Secrets::remember_current`).
    fn remember_tokens(&self, tokens: &Tokens) {
        self.secrets
            .remember_current("access_token", &tokens.access_token);
        if let Some(r) = &tokens.refresh_token {
            self.secrets.remember_current("refresh_token", r);
        }
    }

    /// An optional string member of an authorization server's answer that is a secret
    /// (a token, a client secret): remembered for redaction the moment it exists, as the
    /// value its member's job now holds.
    fn secret_member(&self, answer: &Value, key: &str) -> Option<String> {
        let secret = answer.get(key).and_then(Value::as_str)?;
        self.secrets.remember_current(key, secret);
        Some(secret.to_owned())
    }

    fn adopt(&self, tokens: Tokens) {
        self.remember_tokens(&tokens);
        *lock(&self.current) = Some(tokens);
    }

    async fn load_tokens(&self) -> Result<Option<Tokens>, Failure> {
        let value = self.host.load(self.tokens_key()).await?;
        // A DPoP-bound token is of use only with its key: one another process bound to a key of
        // its own (or stored while DPoP was on, now off) is left where it is.
        let tokens = value
            .and_then(|v| serde_json::from_value::<Tokens>(v).ok())
            .filter(|t| {
                !t.dpop_bound()
                    || self
                        .dpop
                        .as_ref()
                        .is_some_and(|d| t.jkt.as_deref() == Some(d.jkt.as_str()))
            });
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
    /// Whether the source uses DPoP (its challenges and nonces are read then).
    pub fn dpop_on(&self) -> bool {
        self.dpop.is_some()
    }

    /// Takes the resource server's `DPoP-Nonce` from an answer to a request to `url`; the
    /// nonce taken, if it was a valid one.
    fn resource_nonce(&self, url: &str, header: Option<&str>) -> Option<String> {
        self.dpop.as_ref()?.take_nonce(url, header)
    }

    /// The credentials of a `method` request to `url`: the token in force as `Bearer`, or a
    /// DPoP-bound one as `DPoP` with a fresh proof; `None` before any authorization.
    pub async fn present(&self, method: &str, url: &str) -> Result<Option<Presented>, Failure> {
        let Some(token) = self.bearer().await? else {
            return Ok(None);
        };
        let bound = lock(&self.current)
            .as_ref()
            .is_some_and(|t| t.access_token == token && t.dpop_bound());
        let (Some(dpop), true) = (&self.dpop, bound) else {
            return Ok(Some(Presented {
                authorization: format!("Bearer {token}"),
                token,
                proof: None,
                nonce: None,
            }));
        };
        let proof = dpop.proof(method, url, Some(&token))?;
        self.secrets.remember_current("dpop_proof", &proof.proof);
        Ok(Some(Presented {
            authorization: format!("DPoP {token}"),
            token,
            proof: Some(proof.proof),
            nonce: proof.nonce,
        }))
    }

    /// The access token for the next request, refreshed first when it is about to expire;
    /// `None` before any authorization (the request then meets the server's 401).
    async fn bearer(&self) -> Result<Option<String>, Failure> {
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
                let _ = self.refresh(&mut flight, &t, None).await;
            }
        }
        Ok(self.access())
    }

    /// A request carrying `sent` went through: the authorization streak is over.
    fn accepted(&self) {
        self.attempts.store(0, Ordering::Release);
    }

    /// After a 401, or a 403 `insufficient_scope`, to a request that carried `sent`: gets a
    /// token the request can be sent again with (taken from another caller that already got
    /// one, from the store, by a refresh, or by a new authorization), or says why not.
    async fn recover(
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
        if !step_up && sent.is_some() {
            // The resource refused a token it took before: it may have moved to another
            // authorization server (its metadata changed, its URL did not), so discovery is
            // done afresh rather than trusted from the cache.
            flight.discovery = None;
        }
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
                // Discovery follows the challenge: a resource that moved to another
                // authorization server is noticed before its refresh token goes anywhere.
                let from = challenge.resource_metadata.as_deref();
                if self.refresh(&mut flight, &t, from).await.is_ok() {
                    return Ok(());
                }
            }
        }
        let attempt = self.attempts.fetch_add(1, Ordering::AcqRel) + 1;
        if attempt > MAX_AUTHORIZATIONS {
            return Err(if step_up {
                Failure::oauth(OAuthFailure::StepUpExhausted, format!(
                    "mcp: oauth: step-up exhausted: '{}' still refuses the token as insufficient_scope after {MAX_AUTHORIZATIONS} authorizations",
                    self.shown_url
                ))
            } else {
                Failure::oauth(OAuthFailure::AuthorizationExhausted, format!(
                    "mcp: oauth: '{}' still refuses the token after {MAX_AUTHORIZATIONS} authorizations",
                    self.shown_url
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

    /// The answer to a request to the MCP server (at `url`, shown as `shown`) that carried
    /// `presented`, sent again `again` times before: the answer to hand on, or `None` when the
    /// request is to be sent again (the server did not process it): after a `use_dpop_nonce`
    /// 401 with a new nonce, or once a 401 (or a 403 `insufficient_scope`) was recovered from.
    /// Any answer may carry the resource server's next DPoP nonce (RFC 9449 §9).
    pub async fn answered(
        &self,
        url: &str,
        shown: &str,
        response: reqwest::Response,
        presented: Option<Presented>,
        again: u32,
    ) -> Result<Option<reqwest::Response>, Failure> {
        let headers = response.headers();
        let fresh_nonce =
            self.resource_nonce(url, headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok()));
        let (sent, sent_nonce) = match presented {
            Some(p) => (Some(p.token), p.nonce),
            None => (None, None),
        };
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            // Every field, every challenge: `Basic ..., Bearer ...` keeps the Bearer one.
            let challenge = Challenge::parse_fields(
                headers
                    .get_all(reqwest::header::WWW_AUTHENTICATE)
                    .iter()
                    .filter_map(|v| v.to_str().ok()),
                self.dpop_on(),
            );
            if challenge.use_dpop_nonce && sent.is_some() {
                // The proof was fine but for its nonce: sent again with the new one, which is
                // no new authorization. Without a new one there is nothing to send.
                if fresh_nonce.is_none() || fresh_nonce == sent_nonce {
                    return Err(format!(
                        "mcp: oauth: '{shown}' asks for a DPoP nonce (use_dpop_nonce) and its answer gave no new usable one in 'DPoP-Nonce'"
                    )
                    .into());
                }
                if again <= MAX_AUTHORIZATIONS {
                    return Ok(None);
                }
            }
            let refused =
                status == reqwest::StatusCode::UNAUTHORIZED || challenge.insufficient_scope();
            if refused && again <= MAX_AUTHORIZATIONS {
                // The refusal's body is not read: the connection goes back before what may be
                // a long authorization.
                drop(response);
                self.recover(status.as_u16(), challenge, sent).await?;
                return Ok(None);
            }
        } else if status.is_success() && sent.is_some() {
            self.accepted();
        }
        Ok(Some(response))
    }

    async fn refresh(
        &self,
        flight: &mut Flight,
        held: &Tokens,
        from: Option<&str>,
    ) -> Result<(), Failure> {
        let Some(refresh_token) = held.refresh_token.clone() else {
            return Err("mcp: oauth: no refresh token".into());
        };
        // Another process may have refreshed already, rotating the refresh token held here.
        if self.take_stored(&held.access_token).await? {
            return Ok(());
        }
        let d = self.discover(flight, from).await?;
        // A refresh token goes back to the authorization server that issued it and to no
        // other: after a move (or without a recorded issuer) a new authorization is needed.
        if !held
            .issuer
            .as_deref()
            .is_some_and(|i| issuers_match(i, &d.issuer))
        {
            return Err("mcp: oauth: the refresh token was issued by another authorization server; it was not sent".into());
        }
        let client = self.client(flight, &d, None).await?;
        let params = vec![
            ("grant_type".to_owned(), "refresh_token".to_owned()),
            ("refresh_token".to_owned(), refresh_token.clone()),
        ];
        let mut tokens = match self.token_request(&d, &client, params).await {
            Ok(t) => t,
            Err(e) => {
                // invalid_grant: most likely another process (or source) rotated it between
                // the store read above and this request; its token is in the store by now.
                let rotated = e.oauth == Some(OAuthFailure::Refused(Some("invalid_grant".into())));
                if rotated && self.take_stored(&held.access_token).await? {
                    return Ok(());
                }
                return Err(e);
            }
        };
        if tokens.refresh_token.is_none() {
            tokens.refresh_token = Some(refresh_token);
        }
        if tokens.scope.is_none() {
            tokens.scope = held.scope.clone();
        }
        self.save_tokens(tokens).await
    }

    /// Takes the stored token when another process saved one other than `held` that is not
    /// about to expire.
    async fn take_stored(&self, held: &str) -> Result<bool, Failure> {
        if let Some(stored) = self.load_tokens().await? {
            if stored.access_token != held && !stored.expiring() {
                *lock(&self.current) = Some(stored);
                return Ok(true);
            }
        }
        Ok(false)
    }
}
