//! DPoP (RFC 9449) as the flow uses it: the source's key, the latest nonce each server gave,
//! and a fresh proof for every request (a new `jti` each time, so a retry is never a replay).
//!
//! A nonce is the server's text and is sent back to it in a signed proof: only a valid one
//! (`1*NQCHAR`, bounded) is taken, only from the server it is for (by origin), and the
//! resource server's is never sent to the authorization server or the other way round.

use super::wire::{now_ms, random_b64};
use crate::core::oauth::jws::{dpop_proof, valid_nonce, ProofFor, SigningKey};
use crate::core::oauth::DpopKey;
use std::collections::HashMap;
use std::sync::Mutex;

/// Servers whose nonce is kept: a source talks to its MCP server, one authorization server
/// at a time, and the ones it moved away from.
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

fn origin(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .map(|u| u.origin().ascii_serialization())
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
        self.nonces.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A proof for `htm url`, bound to `access_token` when the request carries one, with the
    /// latest nonce `url`'s server gave.
    pub(crate) fn proof(
        &self,
        htm: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<Proof, String> {
        let nonce = origin(url).and_then(|o| self.nonces().get(&o).cloned());
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

    /// Takes the `DPoP-Nonce` of an answer from `url`'s server (RFC 9449 §8.2, §9: any answer
    /// may carry the next one); the nonce taken, if it was a valid one.
    pub(crate) fn take_nonce(&self, url: &str, header: Option<&str>) -> Option<String> {
        let nonce = valid_nonce(header?)?.to_owned();
        let origin = origin(url)?;
        let mut nonces = self.nonces();
        if nonces.len() >= MAX_SERVERS && !nonces.contains_key(&origin) {
            nonces.clear();
        }
        nonces.insert(origin, nonce.clone());
        Some(nonce)
    }
}
