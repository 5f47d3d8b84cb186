//! Signed JWTs (RFC 7515 compact form) with `ring`, the provider rustls already uses: the key
//! of a `private_key_jwt` client assertion and of DPoP proofs (RFC 9449), its public JWK and
//! RFC 7638 thumbprint, and the DPoP proof itself. No I/O: randomness and the clock are the
//! caller's, so a proof is reproducible in a test.
//!
//! A key never shows itself: there is no `Debug`, and no error text carries any part of it.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use serde_json::{json, Value};

pub struct SigningKey {
    inner: Inner,
    rng: SystemRandom,
}

enum Inner {
    Ec(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

/// The DER body of a PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`).
fn pem_to_der(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN PRIVATE KEY-----"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    STANDARD.decode(body).ok().filter(|d| !d.is_empty())
}

impl SigningKey {
    /// A PKCS#8 PEM private key of `alg`'s kind (P-256 for ES256, RSA for RS256); `Err` says
    /// only which kind was expected.
    pub fn from_pem(pem: &str, alg: SigningAlgorithm) -> Result<SigningKey, &'static str> {
        let kind = match alg {
            SigningAlgorithm::Es256 => "a PKCS#8 P-256 private key",
            SigningAlgorithm::Rs256 => "a PKCS#8 RSA private key",
        };
        let der = pem_to_der(pem).ok_or(kind)?;
        let rng = SystemRandom::new();
        let inner = match alg {
            SigningAlgorithm::Es256 => Inner::Ec(
                EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
                    .map_err(|_| kind)?,
            ),
            SigningAlgorithm::Rs256 => Inner::Rsa(RsaKeyPair::from_pkcs8(&der).map_err(|_| kind)?),
        };
        Ok(SigningKey { inner, rng })
    }

    /// A new P-256 key that lives only in this process (DPoP's default: nothing to configure,
    /// nothing stored).
    pub fn ephemeral() -> Result<SigningKey, &'static str> {
        const FAILED: &str = "the system's random source failed";
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| FAILED)?;
        let key = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8.as_ref(),
            &rng,
        )
        .map_err(|_| FAILED)?;
        Ok(SigningKey {
            inner: Inner::Ec(key),
            rng,
        })
    }

    pub fn alg(&self) -> &'static str {
        match self.inner {
            Inner::Ec(_) => "ES256",
            Inner::Rsa(_) => "RS256",
        }
    }

    /// The public key as a JWK with only its required members (RFC 7638 §3.2).
    pub fn public_jwk(&self) -> Value {
        match &self.inner {
            Inner::Ec(k) => {
                // The uncompressed point: 0x04 || x || y, 32 bytes each.
                let point = k.public_key().as_ref();
                let (x, y) = point[1..].split_at(32);
                json!({
                    "crv": "P-256",
                    "kty": "EC",
                    "x": URL_SAFE_NO_PAD.encode(x),
                    "y": URL_SAFE_NO_PAD.encode(y),
                })
            }
            Inner::Rsa(k) => {
                let c = ring::rsa::PublicKeyComponents::<Vec<u8>>::from(k.public());
                json!({
                    "e": URL_SAFE_NO_PAD.encode(&c.e),
                    "kty": "RSA",
                    "n": URL_SAFE_NO_PAD.encode(&c.n),
                })
            }
        }
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key (what a DPoP-bound token's `cnf.jkt`
    /// names).
    pub fn thumbprint(&self) -> String {
        jwk_thumbprint(&self.public_jwk()).unwrap_or_default()
    }

    /// `header.claims.signature`, each part base64url; `header` gets this key's `alg`.
    pub fn jwt(&self, mut header: Value, claims: &Value) -> Result<String, &'static str> {
        header["alg"] = Value::String(self.alg().to_owned());
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        const FAILED: &str = "signing failed";
        let signature = match &self.inner {
            Inner::Ec(k) => k
                .sign(&self.rng, input.as_bytes())
                .map_err(|_| FAILED)?
                .as_ref()
                .to_vec(),
            Inner::Rsa(k) => {
                let mut out = vec![0u8; k.public().modulus_len()];
                k.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &self.rng,
                    input.as_bytes(),
                    &mut out,
                )
                .map_err(|_| FAILED)?;
                out
            }
        };
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

/// The RFC 7638 SHA-256 thumbprint of a public JWK: its required members (by `kty`) in
/// lexicographic order, without whitespace, hashed. `None` for a key type it does not know.
pub fn jwk_thumbprint(jwk: &Value) -> Option<String> {
    let required: &[&str] = match jwk.get("kty").and_then(Value::as_str)? {
        "EC" => &["crv", "kty", "x", "y"],
        "RSA" => &["e", "kty", "n"],
        "OKP" => &["crv", "kty", "x"],
        _ => return None,
    };
    let mut members = std::collections::BTreeMap::new();
    for name in required {
        members.insert(*name, jwk.get(*name)?.as_str()?);
    }
    let canonical = serde_json::to_string(&members).ok()?;
    let digest = ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes());
    Some(URL_SAFE_NO_PAD.encode(digest.as_ref()))
}

/// What one DPoP proof (RFC 9449 §4.2) is for.
pub struct ProofFor<'a> {
    /// The request's method.
    pub htm: &'a str,
    /// The request's URL; the proof names it without query and fragment (`dpop_htu`).
    pub url: &'a str,
    /// The access token the request carries: bound as `ath` (resource requests only).
    pub access_token: Option<&'a str>,
    /// The server's latest nonce, if it gave one.
    pub nonce: Option<&'a str>,
    /// Unix seconds.
    pub iat: u64,
    /// Unique per proof.
    pub jti: &'a str,
}

/// A DPoP proof JWT: `typ` `dpop+jwt`, the public key as `jwk`, the claims `jti`, `htm`,
/// `htu`, `iat`, and `ath` and `nonce` when there are such.
pub fn dpop_proof(key: &SigningKey, p: &ProofFor<'_>) -> Result<String, &'static str> {
    let htu = dpop_htu(p.url).ok_or("the request URL is not a URL")?;
    let header = json!({ "typ": "dpop+jwt", "alg": key.alg(), "jwk": key.public_jwk() });
    let mut claims = json!({ "jti": p.jti, "htm": p.htm, "htu": htu, "iat": p.iat });
    if let Some(token) = p.access_token {
        claims["ath"] = Value::String(access_token_hash(token));
    }
    if let Some(nonce) = p.nonce {
        claims["nonce"] = Value::String(nonce.to_owned());
    }
    key.jwt(header, &claims)
}

/// `ath`: base64url of the SHA-256 of the access token's ASCII (RFC 9449 §4.2).
pub fn access_token_hash(token: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// The `htu` of a request to `url`: its target URI without query and fragment (RFC 9449
/// §4.2), and without userinfo, which is no part of a target URI (RFC 9110 §4.2.4) and could
/// carry a credential of the URL's into a proof sent to another party.
pub fn dpop_htu(url: &str) -> Option<String> {
    let mut u = url::Url::parse(url).ok()?;
    if !matches!(u.scheme(), "http" | "https") {
        return None;
    }
    u.set_query(None);
    u.set_fragment(None);
    u.set_username("").ok()?;
    u.set_password(None).ok()?;
    Some(u.to_string())
}

/// The longest server nonce taken: RFC 9449 sets none, and a nonce is sent back in every
/// proof, so an unbounded one would grow every request.
const MAX_NONCE: usize = 512;

/// A server's `DPoP-Nonce` value, when it is one (RFC 9449 §8.1: `1*NQCHAR`, visible ASCII but
/// `"` and `\`) and not longer than 512 characters; anything else is not sent back.
pub fn valid_nonce(value: &str) -> Option<&str> {
    let ok = !value.is_empty()
        && value.len() <= MAX_NONCE
        && value
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E));
    ok.then_some(value)
}

impl SigningAlgorithm {
    pub fn name(self) -> &'static str {
        match self {
            SigningAlgorithm::Es256 => "ES256",
            SigningAlgorithm::Rs256 => "RS256",
        }
    }
}

#[cfg(test)]
mod tests;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigningAlgorithm {
    Es256,
    Rs256,
}
