//! DPoP (RFC 9449) as the flow uses it: the source's key, the latest nonce each server gave,
//! and a fresh proof for every request (a new `jti` each time, so a retry is never a replay).
//!
//! A nonce is the server's text and is sent back to it in a signed proof: only a valid one
//! (`1*NQCHAR`, bounded) is taken, and it is kept for the URL it came from (the proof's `htu`:
//! the token endpoint, the MCP server), so the resource server's is never sent to the
//! authorization server or the other way round, even when the two share an origin.

use super::wire::{now_ms, random_b64};
use crate::core::config::oauth::DpopKey;
use crate::core::oauth::jws::{dpop_htu, dpop_proof, valid_nonce, ProofFor, SigningKey};
use crate::sync::lock;
use std::collections::HashMap;
use std::sync::Mutex;

/// URLs whose nonce is kept: a source talks to its MCP server, one token endpoint at a time,
/// and the ones it moved away from.
const MAX_SERVERS: usize = 8;

pub(crate) struct Dpop {
    key: SigningKey,
    /// The key's RFC 7638 thumbprint, stored with each token bound to it: a stored token is
    /// used only by a source holding its key.
    pub(super) jkt: String,
    nonces: Mutex<HashMap<String, String>>,
}

/// A proof, and the nonce it carries (a `use_dpop_nonce` answer is retried only for a new one).
pub(crate) struct Proof {
    pub(crate) proof: String,
    pub(crate) nonce: Option<String>,
}

impl Dpop {
    pub(super) fn new(cfg: &DpopKey) -> Result<Dpop, String> {
        let key = match cfg {
            DpopKey::Ephemeral => SigningKey::ephemeral(),
            DpopKey::Configured { pem, alg } => SigningKey::from_pem(pem, *alg),
        }
        .map_err(|why| format!("mcp: oauth: the DPoP key could not be made: {why}"))?;
        Ok(Dpop {
            jkt: key.thumbprint(),
            key,
            nonces: Mutex::new(HashMap::new()),
        })
    }

    pub(super) fn alg(&self) -> &'static str {
        self.key.alg()
    }

    fn nonces(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        lock(&self.nonces)
    }

    /// A proof for `htm url`, bound to `access_token` when the request carries one, with the
    /// latest nonce `url`'s server gave.
    pub(crate) fn proof(
        &self,
        htm: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<Proof, String> {
        let nonce = dpop_htu(url).and_then(|u| self.nonces().get(&u).cloned());
        let jti = random_b64(16)?;
        let proof = dpop_proof(
            &self.key,
            &ProofFor {
                htm,
                url,
                access_token,
                nonce: nonce.as_deref(),
                iat: now_ms() / 1000,
                jti: &jti,
            },
        )
        .map_err(|why| format!("mcp: oauth: the DPoP proof could not be made: {why}"))?;
        Ok(Proof { proof, nonce })
    }

    /// Takes the `DPoP-Nonce` of an answer from `url` (RFC 9449 §8.2, §9: any answer may carry
    /// the next one); the nonce taken, if it was a valid one.
    pub(crate) fn take_nonce(&self, url: &str, header: Option<&str>) -> Option<String> {
        let nonce = valid_nonce(header?)?.to_owned();
        let target = dpop_htu(url)?;
        let mut nonces = self.nonces();
        if nonces.len() >= MAX_SERVERS && !nonces.contains_key(&target) {
            nonces.clear();
        }
        nonces.insert(target, nonce.clone());
        Some(nonce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use serde_json::Value;

    fn nonce_of(proof: &Proof) -> Option<String> {
        let claims = proof.proof.split('.').nth(1).unwrap();
        let claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
        claims
            .get("nonce")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    #[test]
    fn a_nonce_goes_back_only_to_the_url_that_gave_it() {
        let d = Dpop::new(&DpopKey::Ephemeral).unwrap();
        let (token, mcp) = ("http://127.0.0.1:1/token", "http://127.0.0.1:1/mcp");
        assert_eq!(d.take_nonce(token, Some("as-1")).as_deref(), Some("as-1"));
        let p = d.proof("POST", token, None).unwrap();
        assert_eq!(
            (p.nonce.as_deref(), nonce_of(&p).as_deref()),
            (Some("as-1"), Some("as-1"))
        );
        // Same origin, another URL: not the token endpoint's nonce.
        let p = d.proof("POST", mcp, Some("t")).unwrap();
        assert_eq!((p.nonce.clone(), nonce_of(&p)), (None, None));
        // Query and fragment are no part of where a nonce is for (nor of the proof).
        d.take_nonce("http://127.0.0.1:1/mcp?x=1", Some("rs-1"));
        assert_eq!(
            d.proof("GET", mcp, Some("t")).unwrap().nonce.as_deref(),
            Some("rs-1")
        );
        // A value that is no nonce is not taken, and the last one stays.
        assert_eq!(d.take_nonce(mcp, Some("bad nonce")), None);
        assert_eq!(d.take_nonce(mcp, None), None);
        assert_eq!(
            d.proof("GET", mcp, Some("t")).unwrap().nonce.as_deref(),
            Some("rs-1")
        );
        // Two proofs never share a jti.
        let a = d.proof("GET", mcp, Some("t")).unwrap().proof;
        let b = d.proof("GET", mcp, Some("t")).unwrap().proof;
        assert_ne!(a, b);
    }

    #[test]
    fn the_nonces_kept_are_bounded() {
        let d = Dpop::new(&DpopKey::Ephemeral).unwrap();
        for i in 0..100 {
            d.take_nonce(&format!("https://h{i}.example/token"), Some("n"));
            assert!(d.nonces().len() <= MAX_SERVERS);
        }
    }
}
