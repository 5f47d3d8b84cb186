//! The `private_key_jwt` client assertion (RFC 7523), signed with `ring`.

use super::wire::{now_ms, random_b64};
use super::OAuth;
use crate::core::oauth::SigningAlgorithm;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use serde_json::json;

impl OAuth {
    /// A `private_key_jwt` client assertion (RFC 7523): iss and sub the client, aud the
    /// authorization server's issuer, five minutes.
    pub(super) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
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
