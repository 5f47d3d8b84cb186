//! The decisions of the authorization flow that need no I/O: where metadata is looked for,
//! whether a resource covers the server, the scope to ask for, the token endpoint's auth
//! method, the error codes shown, and the redirect's `state` / `iss` / `error`.

use super::merge_scopes;
use crate::core::error::{Failure, OAuthFailure};
use url::Url;

/// Where protected resource metadata (RFC 9728) is looked for, in order: the challenge's
/// `resource_metadata` alone when it named one; otherwise the path-aware well-known URL, then
/// the root one (only when the server URL has a path).
pub fn resource_metadata_urls(server_url: &str, from_challenge: Option<&str>) -> Vec<String> {
    if let Some(u) = from_challenge {
        return vec![u.to_owned()];
    }
    let Ok(url) = Url::parse(server_url) else {
        return Vec::new();
    };
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
    let mut out = Vec::new();
    if !path.is_empty() {
        out.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}{query}"
        ));
    }
    out.push(format!("{origin}/.well-known/oauth-protected-resource"));
    out
}

/// Where authorization server metadata is looked for, in order (RFC 8414, then OpenID Connect
/// Discovery in both of its placements for an issuer with a path).
pub fn authorization_server_metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(url) = Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    if path.is_empty() {
        return vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ];
    }
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ]
}

/// The authorization server of a server without protected resource metadata (the 2025-03-26
/// specification): the server's origin, at its root.
pub fn legacy_authorization_server(server_url: &str) -> Option<String> {
    let url = Url::parse(server_url).ok()?;
    Some(format!("{}/", url.origin().ascii_serialization()))
}

/// An endpoint of a server without metadata (the 2025-03-26 fallback): `/authorize`,
/// `/token`, `/register` at the authorization server's root.
pub fn legacy_endpoint(authorization_server: &str, path: &str) -> Option<String> {
    Url::parse(authorization_server)
        .ok()?
        .join(path)
        .ok()
        .map(|u| u.to_string())
}

/// Whether the protected resource metadata's `resource` covers the server URL: same origin,
/// and the server's path at or below the resource's (the SDK client's check).
pub fn resource_allowed(server_url: &str, resource: &str) -> bool {
    let (Ok(requested), Ok(configured)) = (Url::parse(server_url), Url::parse(resource)) else {
        return false;
    };
    if requested.origin() != configured.origin() {
        return false;
    }
    let slash = |p: &str| {
        if p.ends_with('/') {
            p.to_owned()
        } else {
            format!("{p}/")
        }
    };
    let (r, c) = (requested.path(), configured.path());
    r.len() >= c.len() && slash(r).starts_with(&slash(c))
}

/// The scope of an authorization (the specification's selection strategy): the challenge's,
/// else the protected resource's `scopes_supported`, else the host's `scope`; a step-up (an
/// `insufficient_scope` refusal) adds what was asked before. `offline_access` is added when
/// the authorization server lists it (SEP-2207) and some scope is asked for anyway.
pub fn select_scope(
    challenge: Option<&str>,
    resource_scopes: Option<&[String]>,
    configured: Option<&str>,
    step_up_from: Option<&str>,
    server_scopes: Option<&[String]>,
) -> Option<String> {
    let joined = resource_scopes
        .filter(|s| !s.is_empty())
        .map(|s| s.join(" "));
    let base = challenge.or(joined.as_deref()).or(configured);
    let mut parts: Vec<&str> = Vec::new();
    if let Some(before) = step_up_from {
        parts.push(before);
    }
    if let Some(base) = base {
        parts.push(base);
    }
    let scope = merge_scopes(&parts)?;
    if server_scopes.is_some_and(|s| s.iter().any(|x| x == "offline_access")) {
        return merge_scopes(&[&scope, "offline_access"]);
    }
    Some(scope)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    Basic,
    Post,
    None,
    PrivateKeyJwt,
}

/// The token endpoint's client authentication: `private_key_jwt` with a private key; else the
/// method the registration answered with when the server supports it; else (RFC 8414's default
/// being `client_secret_basic`) basic, post, none in that order among those advertised.
pub fn select_auth_method(
    has_secret: bool,
    has_private_key: bool,
    registered: Option<&str>,
    supported: Option<&[String]>,
) -> AuthMethod {
    if has_private_key {
        return AuthMethod::PrivateKeyJwt;
    }
    let supported = supported.unwrap_or(&[]);
    let known = |m: &str| match m {
        "client_secret_basic" if has_secret => Some(AuthMethod::Basic),
        "client_secret_post" if has_secret => Some(AuthMethod::Post),
        "none" => Some(AuthMethod::None),
        _ => None,
    };
    if let Some(m) = registered.and_then(known) {
        if supported.is_empty() || supported.iter().any(|s| s == registered.unwrap_or("")) {
            return m;
        }
    }
    if supported.is_empty() {
        return if has_secret {
            AuthMethod::Basic
        } else {
            AuthMethod::None
        };
    }
    let has = |m: &str| supported.iter().any(|s| s == m);
    if has_secret && has("client_secret_basic") {
        AuthMethod::Basic
    } else if has_secret && has("client_secret_post") {
        AuthMethod::Post
    } else if has("none") {
        AuthMethod::None
    } else if has_secret {
        AuthMethod::Post
    } else {
        AuthMethod::None
    }
}

/// The error codes an authorization server may answer with, as registered (RFC 6749 §4.1.2.1
/// and §5.2, RFC 6750 §3.1, RFC 7591 §3.2.2, RFC 8628 §3.5, RFC 8693, RFC 8707, RFC 9449, RFC
/// 9470, OpenID Connect Core §3.1.2.6): the only ones shown.
const ERROR_CODES: [&str; 33] = [
    "invalid_request",
    "unauthorized_client",
    "access_denied",
    "unsupported_response_type",
    "invalid_scope",
    "server_error",
    "temporarily_unavailable",
    "invalid_client",
    "invalid_grant",
    "unsupported_grant_type",
    "invalid_token",
    "insufficient_scope",
    "invalid_redirect_uri",
    "invalid_client_metadata",
    "invalid_software_statement",
    "unapproved_software_statement",
    "authorization_pending",
    "slow_down",
    "expired_token",
    "invalid_target",
    "invalid_dpop_proof",
    "use_dpop_nonce",
    "insufficient_user_authentication",
    "interaction_required",
    "login_required",
    "account_selection_required",
    "consent_required",
    "invalid_request_uri",
    "invalid_request_object",
    "request_not_supported",
    "request_uri_not_supported",
    "registration_not_supported",
    "invalid_authorization_details",
];

/// An OAuth error code as shown in an error text, `OAuthError.error` and `toWire()`: a
/// registered code as it is, anything else `unknown` (an unregistered code is free text of the
/// server's choosing: it could carry anything into the host's logs). Never the description.
pub fn error_code(code: &str) -> String {
    match ERROR_CODES.iter().find(|c| **c == code) {
        Some(c) => (*c).to_owned(),
        None => "unknown".into(),
    }
}

/// A token type the token endpoint named, as a refusal shows it: its token characters only,
/// at most 32 of them.
pub fn token_type_shown(token_type: &str) -> String {
    let clean: String = token_type
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .take(32)
        .collect();
    if clean.is_empty() {
        "unknown".into()
    } else {
        clean
    }
}

/// Why the redirect the host handed back cannot be used. No variant carries any part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectError {
    NotAUrl,
    /// The authorization server refused: its `error` code.
    Refused(String),
    StateMismatch,
    IssuerMismatch,
    IssuerMissing,
    NoCode,
}

impl RedirectError {
    pub fn describe(&self) -> String {
        match self {
            RedirectError::NotAUrl => "mcp: oauth: the authorize callback did not resolve with a redirect URL".into(),
            RedirectError::Refused(code) => format!(
                "mcp: oauth: the authorization server refused the authorization ({})",
                error_code(code)
            ),
            RedirectError::StateMismatch => "mcp: oauth: the redirect's 'state' does not match the authorization request; it was not used".into(),
            RedirectError::IssuerMismatch => "mcp: oauth: the redirect's 'iss' is not the authorization server's issuer (RFC 9207); it was not used".into(),
            RedirectError::IssuerMissing => "mcp: oauth: the authorization server promises 'iss' in its redirects (RFC 9207) and this one has none; it was not used".into(),
            RedirectError::NoCode => "mcp: oauth: the redirect carries no authorization code".into(),
        }
    }
}

/// A refusal in the redirect is the authorization server's (typed, with its code); the rest
/// are plain failures.
impl From<RedirectError> for Failure {
    fn from(e: RedirectError) -> Self {
        match &e {
            RedirectError::Refused(code) => {
                Failure::oauth(OAuthFailure::Refused(Some(error_code(code))), e.describe())
            }
            _ => e.describe().into(),
        }
    }
}

/// The code of the redirect the authorization server sent the user to, once its `state` is the
/// request's and its `iss` (RFC 9207) the issuer's (required when the metadata promises it).
pub fn read_redirect(
    redirect: &str,
    state: &str,
    issuer: Option<&str>,
    iss_required: bool,
) -> std::result::Result<String, RedirectError> {
    let url = Url::parse(redirect.trim()).map_err(|_| RedirectError::NotAUrl)?;
    let mut code = None;
    let mut got_state = None;
    let mut iss = None;
    let mut error = None;
    for (k, v) in url.query_pairs() {
        match k.as_ref() {
            "code" => code = Some(v.into_owned()),
            "state" => got_state = Some(v.into_owned()),
            "iss" => iss = Some(v.into_owned()),
            "error" => error = Some(v.into_owned()),
            _ => {}
        }
    }
    if got_state.as_deref() != Some(state) {
        return Err(RedirectError::StateMismatch);
    }
    match (&iss, issuer) {
        // RFC 9207 §2.4: simple string comparison with the issuer whose metadata was
        // validated, no normalization (a trailing-slash variant is another issuer).
        (Some(got), Some(expected)) if got != expected => {
            return Err(RedirectError::IssuerMismatch)
        }
        (None, Some(_)) if iss_required => return Err(RedirectError::IssuerMissing),
        _ => {}
    }
    if let Some(e) = error {
        return Err(RedirectError::Refused(e));
    }
    code.filter(|c| !c.is_empty()).ok_or(RedirectError::NoCode)
}

/// Two issuer identifiers compared as the SDK compares them: parsed, with one trailing `/`
/// tolerated.
pub fn issuers_match(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        Url::parse(s)
            .map(|u| u.to_string())
            .unwrap_or_else(|_| s.to_owned())
    };
    let (x, y) = (norm(a), norm(b));
    x == y || x.trim_end_matches('/') == y.trim_end_matches('/')
}
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

pub const ID_JAG_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_order() {
        // The challenge's URL alone.
        assert_eq!(
            resource_metadata_urls("http://h:1/mcp", Some("http://h:1/custom.json")),
            vec!["http://h:1/custom.json"]
        );
        // Path-aware first, then the root (the trap of metadata-default is the root one, which
        // is never asked when the challenge names the path-aware one).
        assert_eq!(
            resource_metadata_urls("http://h:1/mcp/", None),
            vec![
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_urls("http://h:1/", None),
            vec!["http://h:1/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            authorization_server_metadata_urls("http://a:2"),
            vec![
                "http://a:2/.well-known/oauth-authorization-server",
                "http://a:2/.well-known/openid-configuration"
            ]
        );
        // An issuer with a path is never looked up at the root (metadata-var2/var3's trap).
        assert_eq!(
            authorization_server_metadata_urls("http://a:2/tenant1"),
            vec![
                "http://a:2/.well-known/oauth-authorization-server/tenant1",
                "http://a:2/.well-known/openid-configuration/tenant1",
                "http://a:2/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            legacy_authorization_server("http://h:1/mcp").as_deref(),
            Some("http://h:1/")
        );
        assert_eq!(
            legacy_endpoint("http://h:1/", "/token").as_deref(),
            Some("http://h:1/token")
        );
    }

    #[test]
    fn resource_check() {
        assert!(resource_allowed("http://h:1/mcp", "http://h:1/mcp"));
        assert!(resource_allowed("http://h:1/mcp", "http://h:1/"));
        assert!(resource_allowed("http://h:1/mcp/x", "http://h:1/mcp"));
        assert!(!resource_allowed(
            "http://h:1/mcp",
            "https://evil.example.com/mcp"
        ));
        assert!(!resource_allowed("http://h:1/mcp", "http://h:1/mcp/deeper"));
        assert!(!resource_allowed("http://h:1/mcp123", "http://h:1/mcp"));
    }

    #[test]
    fn scope_selection_and_step_up() {
        let prm = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(
            select_scope(Some("x"), Some(&prm), Some("c"), None, None).as_deref(),
            Some("x")
        );
        assert_eq!(
            select_scope(None, Some(&prm), Some("c"), None, None).as_deref(),
            Some("a b")
        );
        assert_eq!(
            select_scope(None, None, Some("c"), None, None).as_deref(),
            Some("c")
        );
        assert_eq!(select_scope(None, None, None, None, None), None);
        // Step-up keeps what was granted and adds what is asked.
        assert_eq!(
            select_scope(
                Some("mcp:basic mcp:write"),
                None,
                None,
                Some("mcp:basic"),
                None
            )
            .as_deref(),
            Some("mcp:basic mcp:write")
        );
        assert_eq!(
            select_scope(Some("w"), None, None, Some("r x"), None).as_deref(),
            Some("r x w")
        );
        let server = vec!["mcp:basic".to_owned(), "offline_access".to_owned()];
        assert_eq!(
            select_scope(
                None,
                Some(&["mcp:basic".to_owned()]),
                None,
                None,
                Some(&server)
            )
            .as_deref(),
            Some("mcp:basic offline_access")
        );
        // Never offline_access alone, nor when the server does not list it.
        assert_eq!(select_scope(None, None, None, None, Some(&server)), None);
        let plain = vec!["mcp:basic".to_owned(), "mcp:read".to_owned()];
        assert_eq!(
            select_scope(None, Some(&plain), None, None, Some(&plain)).as_deref(),
            Some("mcp:basic mcp:read")
        );
    }

    #[test]
    fn auth_method_selection() {
        let only = |m: &str| vec![m.to_owned()];
        assert_eq!(
            select_auth_method(true, false, None, Some(&only("client_secret_post"))),
            AuthMethod::Post
        );
        assert_eq!(
            select_auth_method(true, false, None, Some(&only("client_secret_basic"))),
            AuthMethod::Basic
        );
        assert_eq!(
            select_auth_method(false, false, None, Some(&only("none"))),
            AuthMethod::None
        );
        assert_eq!(
            select_auth_method(true, false, None, None),
            AuthMethod::Basic
        );
        assert_eq!(
            select_auth_method(true, false, Some("client_secret_post"), Some(&[])),
            AuthMethod::Post
        );
        assert_eq!(
            select_auth_method(false, true, None, None),
            AuthMethod::PrivateKeyJwt
        );
    }

    #[test]
    fn redirect_checks() {
        let r = "http://localhost:3000/cb?code=c0de&state=st4te&iss=http%3A%2F%2Fa%3A2";
        assert_eq!(
            read_redirect(r, "st4te", Some("http://a:2"), false).unwrap(),
            "c0de"
        );
        assert_eq!(
            read_redirect(r, "other", None, false),
            Err(RedirectError::StateMismatch)
        );
        assert_eq!(
            read_redirect(r, "st4te", Some("http://b:2"), false),
            Err(RedirectError::IssuerMismatch)
        );
        let no_iss = "http://localhost:3000/cb?code=c0de&state=st4te";
        assert_eq!(
            read_redirect(no_iss, "st4te", Some("http://a:2"), true),
            Err(RedirectError::IssuerMissing)
        );
        let refused = "http://localhost:3000/cb?error=access_denied&error_description=secret%20text&state=st4te";
        let e = read_redirect(refused, "st4te", None, false).unwrap_err();
        assert_eq!(e, RedirectError::Refused("access_denied".into()));
        assert!(!e.describe().contains("secret text"));
        let typed = Failure::from(e);
        assert_eq!(
            typed.oauth,
            Some(OAuthFailure::Refused(Some("access_denied".into())))
        );
        assert_eq!(Failure::from(RedirectError::StateMismatch).oauth, None);
        assert_eq!(error_code("bad\"code<script>"), "unknown");
        assert_eq!(error_code("invalid_grant"), "invalid_grant");
        assert_eq!(error_code("sk-live-0123456789"), "unknown");
    }
}
