//! The `private_key_jwt` client assertion (RFC 7523), signed with `ring` (`core::oauth::jws`).

use super::wire::{now_ms, random_b64};
use super::OAuth;
use crate::core::oauth::jws::SigningKey;
use serde_json::json;

impl OAuth {
    /// A `private_key_jwt` client assertion (RFC 7523): iss and sub the client, aud the
    /// authorization server's issuer, five minutes.
    pub(super) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        let pem = self.cfg.private_key.as_deref().unwrap_or_default();
        let key = SigningKey::from_pem(pem, self.cfg.signing_algorithm)
            .map_err(|kind| format!("mcp: oauth: 'http.oauth.privateKey' is not {kind}"))?;
        let now = now_ms() / 1000;
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": random_b64(16)?,
        });
        key.jwt(json!({ "alg": key.alg(), "typ": "JWT" }), &claims)
            .map_err(|_| "mcp: oauth: signing the client assertion failed".to_owned())
    }
}
