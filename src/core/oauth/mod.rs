//! OAuth for streamable-HTTP servers, the pure half: every decision of the MCP authorization
//! flow that needs no I/O (the
//! `WWW-Authenticate` challenge, the discovery URLs in the specification's order, the resource
//! check, scope selection and step-up merging, the token endpoint's auth method, the
//! authorization response's `state`/`iss`/`error`). `transport::oauth` does the requests.
//!
//! Nothing here prints a secret: a client secret, a private key, a code, a `state` or a redirect
//! URL is named by its key or its role, never shown.
//!
//! `trust` holds the checks at the trust boundary (issuer identity, the URLs a server hands
//! over; the scheme rules are `core::url`'s), `challenge` reads `WWW-Authenticate`,
//! `authorization` the code flow's request and a client's registration, `flow` the rest of
//! the decisions, `jws` signed JWTs (the client assertion, DPoP proofs). The
//! `http.oauth` key itself is read by `core::config::oauth`.

mod authorization;
mod challenge;
mod flow;
pub mod jws;
mod trust;

pub use authorization::*;
pub use challenge::Challenge;
pub use flow::*;
pub use trust::*;

/// Authorization attempts in a row (without a request accepted in between) before a source
/// gives up: a server that keeps asking for a scope it never accepts must not loop for ever.
pub const MAX_AUTHORIZATIONS: u32 = 3;

/// Space-separated scopes, deduplicated in order; `None` when empty.
pub fn normalize_scope(scope: &str) -> Option<String> {
    merge_scopes(&[scope])
}

/// The union of scope strings, first appearance first; `None` when empty (step-up merges the
/// scopes requested before with those the server now asks for).
pub fn merge_scopes(scopes: &[&str]) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in scopes {
        for part in s.split_whitespace() {
            if !out.contains(&part) {
                out.push(part);
            }
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}
