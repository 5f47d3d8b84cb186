//! The pure half of authorizing a client: what an authorization server's metadata must offer
//! for the code flow, the authorization request a user's browser is sent to, what the
//! redirect's `iss` must be, the body of a dynamic client registration, and where a
//! discovery's answers may lead. `transport::oauth` makes the requests.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};

/// A metadata member that is a list of strings (what is not a string is left out).
pub fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    v.and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

/// Whether the authorization server's metadata allows the code flow: the `code` response type
/// where it lists response types, and PKCE with S256, which must be verified (MCP
/// 2025-11-25): metadata that does not list S256 (or lists no methods) is refused. Without any
/// metadata (the 2025-03-26 fallback endpoints) there is nothing to verify, and that
/// revision's servers are taken to support it.
pub fn code_flow_refusal(metadata: Option<&Value>) -> Option<&'static str> {
    let metadata = metadata?;
    let list = |key: &str| string_list(metadata.get(key));
    if list("response_types_supported").is_some_and(|types| !types.iter().any(|t| t == "code")) {
        return Some(
            "mcp: oauth: the authorization server does not support the 'code' response type",
        );
    }
    if !list("code_challenge_methods_supported").is_some_and(|m| m.iter().any(|m| m == "S256")) {
        return Some(
            "mcp: oauth: the authorization server does not advertise PKCE with S256 ('code_challenge_methods_supported'); no authorization was attempted",
        );
    }
    None
}

/// PKCE's S256 challenge of `verifier` (RFC 7636 §4.2).
pub fn code_challenge(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// An authorization request of the code flow (RFC 6749 §4.1.1, PKCE, RFC 8707's `resource`).
pub struct AuthorizationRequest<'a> {
    /// The authorization endpoint, already held to the trust rules.
    pub endpoint: &'a str,
    pub client_id: &'a str,
    pub code_challenge: &'a str,
    pub redirect_uri: &'a str,
    pub state: &'a str,
    pub scope: Option<&'a str>,
    pub resource: Option<&'a str>,
}

impl AuthorizationRequest<'_> {
    /// The URL the host's `authorize` callback is handed. Asking for `offline_access` asks
    /// for consent too (OpenID Connect Core §11: a refresh token needs it).
    pub fn url(&self) -> Result<String, &'static str> {
        let mut url = url::Url::parse(self.endpoint).map_err(|_| {
            "mcp: oauth: the authorization server's 'authorization_endpoint' is not a URL"
        })?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code");
            q.append_pair("client_id", self.client_id);
            q.append_pair("code_challenge", self.code_challenge);
            q.append_pair("code_challenge_method", "S256");
            q.append_pair("redirect_uri", self.redirect_uri);
            q.append_pair("state", self.state);
            if let Some(s) = self.scope {
                q.append_pair("scope", s);
                if s.split(' ').any(|x| x == "offline_access") {
                    q.append_pair("prompt", "consent");
                }
            }
            if let Some(r) = self.resource {
                q.append_pair("resource", r);
            }
        }
        Ok(url.to_string())
    }
}

/// The `iss` a redirect must carry: the validated issuer where there is metadata (`None`
/// without), and whether it must be there at all (RFC 9207: the metadata says it sends one).
pub fn expected_iss<'a>(metadata: Option<&Value>, issuer: &'a str) -> (Option<&'a str>, bool) {
    let required = metadata.and_then(|m| m.get("authorization_response_iss_parameter_supported"))
        == Some(&Value::Bool(true));
    (metadata.map(|_| issuer), required)
}

/// A dynamic client registration (RFC 7591) of this client: a public client (RFC 8252 §8.4:
/// it authenticates with PKCE, not a secret it could not keep) of the code flow, of OpenID
/// dynamic registration's kind (MCP 2026-07-28: a native app on a loopback redirect, a web
/// client on an https one); bound to DPoP when it uses DPoP (RFC 9449 §5.2: the server may
/// then refuse it a token without a proof).
pub fn registration_request(
    client_name: Option<&str>,
    redirect_uri: Option<&str>,
    dpop: bool,
    scope: Option<&str>,
) -> Value {
    let mut body = json!({
        "client_name": client_name.unwrap_or("rulvar-mcp"),
        "redirect_uris": [redirect_uri.unwrap_or_default()],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": application_type(redirect_uri),
    });
    if dpop {
        body["dpop_bound_access_tokens"] = Value::Bool(true);
    }
    if let Some(s) = scope {
        body["scope"] = Value::String(s.to_owned());
    }
    body
}

fn application_type(redirect_uri: Option<&str>) -> &'static str {
    let https = redirect_uri
        .and_then(|u| url::Url::parse(u).ok())
        .is_some_and(|u| u.scheme() == "https");
    match https {
        true => "web",
        false => "native",
    }
}

/// Whether authorization server metadata that claims issuer `claimed` may be used for the
/// server it was looked up for. A document that claims another issuer is not that issuer's:
/// using it would post the code, the verifier or a client assertion where it points (the
/// mix-up attack, RFC 8414 §3.3). The 2025-03-26 root document (`legacy`), served by the MCP
/// server itself, may name an issuer with a path, on that origin only (so it can never claim
/// another's).
pub fn metadata_speaks_for(
    claimed: &str,
    looked_up_for: &str,
    legacy: bool,
    server_url: &str,
) -> bool {
    super::trust::same_issuer(claimed, looked_up_for) || legacy && same_origin(claimed, server_url)
}

/// Whether two URLs share an origin (neither is one when it is not a URL).
pub fn same_origin(a: &str, b: &str) -> bool {
    let origin = |u: &str| url::Url::parse(u).ok().map(|u| u.origin());
    origin(a).is_some() && origin(a) == origin(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(scope: Option<&'a str>, resource: Option<&'a str>) -> AuthorizationRequest<'a> {
        AuthorizationRequest {
            endpoint: "https://as.example/authorize?tenant=1",
            client_id: "c 1",
            code_challenge: "ch",
            redirect_uri: "http://127.0.0.1:9/cb",
            state: "st",
            scope,
            resource,
        }
    }

    #[test]
    fn the_authorization_request_carries_pkce_state_scope_and_resource() {
        let url = request(Some("a offline_access"), Some("https://mcp.example/"))
            .url()
            .unwrap();
        assert_eq!(
            url,
            "https://as.example/authorize?tenant=1&response_type=code&client_id=c+1&code_challenge=ch&code_challenge_method=S256&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&state=st&scope=a+offline_access&prompt=consent&resource=https%3A%2F%2Fmcp.example%2F"
        );
        let plain = request(Some("a"), None).url().unwrap();
        assert!(plain.ends_with("&state=st&scope=a"), "{plain}");
        let bare = request(None, None).url().unwrap();
        assert!(bare.ends_with("&state=st"), "{bare}");
        let not_a_url = AuthorizationRequest {
            endpoint: "not a url",
            ..request(None, None)
        };
        assert!(not_a_url.url().is_err());
    }

    #[test]
    fn the_code_challenge_is_s256_of_the_verifier() {
        // RFC 7636 Appendix B.
        assert_eq!(
            code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn the_code_flow_needs_code_and_s256_where_there_is_metadata() {
        assert_eq!(code_flow_refusal(None), None);
        let meta = |v: Value| code_flow_refusal(Some(&v));
        assert_eq!(
            meta(json!({"code_challenge_methods_supported": ["S256"]})),
            None
        );
        assert!(meta(json!({})).unwrap().contains("PKCE with S256"));
        assert!(meta(json!({"code_challenge_methods_supported": ["plain"]}))
            .unwrap()
            .contains("PKCE with S256"));
        assert!(meta(json!({
            "response_types_supported": ["token"],
            "code_challenge_methods_supported": ["S256"]
        }))
        .unwrap()
        .contains("'code' response type"));
    }

    #[test]
    fn the_redirect_iss_is_the_issuer_where_there_is_metadata() {
        assert_eq!(expected_iss(None, "https://as"), (None, false));
        let meta = json!({"authorization_response_iss_parameter_supported": true});
        assert_eq!(
            expected_iss(Some(&meta), "https://as"),
            (Some("https://as"), true)
        );
        assert_eq!(
            expected_iss(Some(&json!({})), "https://as"),
            (Some("https://as"), false)
        );
    }

    #[test]
    fn a_registration_is_a_public_client_of_its_redirects_kind() {
        let native = registration_request(None, Some("http://127.0.0.1/cb"), false, None);
        assert_eq!(
            native,
            json!({
                "client_name": "rulvar-mcp",
                "redirect_uris": ["http://127.0.0.1/cb"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "application_type": "native",
            })
        );
        let web = registration_request(Some("n"), Some("https://app/cb"), true, Some("a b"));
        assert_eq!(web["application_type"], "web");
        assert_eq!(web["client_name"], "n");
        assert_eq!(web["dpop_bound_access_tokens"], true);
        assert_eq!(web["scope"], "a b");
    }

    #[test]
    fn metadata_speaks_for_the_issuer_it_was_looked_up_for() {
        let server = "https://mcp.example/mcp";
        assert!(metadata_speaks_for(
            "https://as.example",
            "https://as.example",
            false,
            server
        ));
        assert!(!metadata_speaks_for(
            "https://evil.example",
            "https://as.example",
            false,
            server
        ));
        // The legacy root document: another issuer on the server's own origin only.
        assert!(metadata_speaks_for(
            "https://mcp.example/t",
            "https://mcp.example",
            true,
            server
        ));
        assert!(!metadata_speaks_for(
            "https://mcp.example/t",
            "https://mcp.example",
            false,
            server
        ));
        assert!(!metadata_speaks_for(
            "https://as.example/t",
            "https://mcp.example",
            true,
            server
        ));
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert!(same_origin("https://a.example/x", "https://a.example/y?q"));
        assert!(!same_origin(
            "https://a.example/",
            "https://a.example:8443/"
        ));
        assert!(!same_origin("http://a.example/", "https://a.example/"));
        assert!(!same_origin("not a url", "not a url"));
    }
}
