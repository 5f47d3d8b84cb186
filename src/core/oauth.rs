//! OAuth for streamable-HTTP servers, the pure half: the `http.oauth` config key and its
//! refusals, and every decision of the MCP authorization flow that needs no I/O (the
//! `WWW-Authenticate` challenge, the discovery URLs in the specification's order, the resource
//! check, scope selection and step-up merging, the token endpoint's auth method, the
//! authorization response's `state`/`iss`/`error`). `transport::oauth` does the requests.
//!
//! Nothing here prints a secret: a client secret, a private key, a code, a `state` or a redirect
//! URL is named by its key or its role, never shown.

use super::config::{describe_type, literal, only_known_keys, refuse};
use super::error::{Failure, OAuthFailure, Result};
use super::raw::Raw;
use url::Url;

pub const OAUTH_KEYS: [&str; 13] = [
    "clientId",
    "clientSecret",
    "privateKey",
    "signingAlgorithm",
    "clientMetadataUrl",
    "clientName",
    "redirectUri",
    "scope",
    "resource",
    "grant",
    "issuer",
    "authorize",
    "store",
];

/// Authorization attempts in a row (without a request accepted in between) before a source
/// gives up: a server that keeps asking for a scope it never accepts must not loop for ever.
pub const MAX_AUTHORIZATIONS: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    AuthorizationCode,
    ClientCredentials,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceChoice {
    /// The protected resource metadata's `resource` (checked against the server URL), when
    /// there is such metadata; none otherwise (the SDK client's behaviour).
    Discovered,
    Fixed(String),
    /// `resource: false`: never sent, for authorization servers that reject it.
    Omit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigningAlgorithm {
    Es256,
    Rs256,
}

impl SigningAlgorithm {
    pub fn name(self) -> &'static str {
        match self {
            SigningAlgorithm::Es256 => "ES256",
            SigningAlgorithm::Rs256 => "RS256",
        }
    }
}

#[derive(Clone, PartialEq)]
pub struct OAuthConfig {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// A PKCS#8 PEM private key: the token endpoint is authenticated with `private_key_jwt`.
    pub private_key: Option<String>,
    pub signing_algorithm: SigningAlgorithm,
    pub client_metadata_url: Option<String>,
    pub client_name: Option<String>,
    pub redirect_uri: Option<String>,
    pub scope: Option<String>,
    pub resource: ResourceChoice,
    pub grant: Grant,
    /// The only authorization server this source uses (its issuer identifier, RFC 8414): the
    /// configured credentials are bound to it.
    pub issuer: Option<String>,
    /// The host gave an `authorize` callback.
    pub authorize: bool,
    /// The host gave a `store`.
    pub store: bool,
}

/// Never shows the secret members, whatever prints it.
impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field(
                "private_key",
                &self.private_key.as_ref().map(|_| "[redacted]"),
            )
            .field("grant", &self.grant)
            .field("redirect_uri", &self.redirect_uri)
            .field("scope", &self.scope)
            .field("resource", &self.resource)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// What no error text may show.
    pub fn secret_values(&self) -> impl Iterator<Item = &str> {
        self.client_secret
            .as_deref()
            .into_iter()
            .chain(self.private_key.as_deref())
    }
}

fn string_member(oauth: &Raw, key: &str, secret: bool) -> Result<Option<String>> {
    match oauth.get(key) {
        Raw::Undefined => Ok(None),
        Raw::String(s) if !s.is_empty() => Ok(Some(s.clone())),
        // A secret's value is never echoed, not even a wrong one.
        _ if secret => Err(refuse(format!(
            "mcp: 'http.oauth.{key}' must be a non-empty string"
        ))),
        other => Err(refuse(format!(
            "mcp: 'http.oauth.{key}' must be a non-empty string, got {}",
            describe_type(other)
        ))),
    }
}

fn http_url(key: &str, value: &str) -> Result<Url> {
    match Url::parse(value) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.fragment().is_none() => Ok(u),
        _ => Err(refuse(format!(
            "mcp: 'http.oauth.{key}' must be an http:// or https:// URL without a fragment, got '{value}'"
        ))),
    }
}

/// `http.oauth`, checked whole at construction; `None` when absent.
pub fn parse_oauth(raw: &Raw) -> Result<Option<OAuthConfig>> {
    let members = match raw {
        Raw::Undefined => return Ok(None),
        Raw::Object(members) => members,
        other => {
            return Err(refuse(format!(
                "mcp: 'http.oauth' must be an object, got {}",
                describe_type(other)
            )))
        }
    };
    only_known_keys("http.oauth", members, &OAUTH_KEYS)?;
    let grant = literal(
        raw.get("grant"),
        "http.oauth.grant",
        &[
            ("authorization_code", Grant::AuthorizationCode),
            ("client_credentials", Grant::ClientCredentials),
        ],
        Grant::AuthorizationCode,
    )?;
    let client_id = string_member(raw, "clientId", false)?;
    let client_secret = string_member(raw, "clientSecret", true)?;
    let private_key = string_member(raw, "privateKey", true)?;
    if let Some(key) = &private_key {
        if !key.contains("-----BEGIN PRIVATE KEY-----") {
            return Err(refuse(
                "mcp: 'http.oauth.privateKey' must be a PKCS#8 PEM private key ('-----BEGIN PRIVATE KEY-----')"
                    .into(),
            ));
        }
    }
    let signing_algorithm = match raw.get("signingAlgorithm") {
        Raw::Undefined => SigningAlgorithm::Es256,
        Raw::String(s) if s == "ES256" => SigningAlgorithm::Es256,
        Raw::String(s) if s == "RS256" => SigningAlgorithm::Rs256,
        other => {
            return Err(refuse(format!(
                "mcp: 'http.oauth.signingAlgorithm' must be 'ES256' or 'RS256', got '{}'",
                other.display()
            )))
        }
    };
    if !raw.get("signingAlgorithm").is_absent() && private_key.is_none() {
        return Err(refuse(
            "mcp: 'http.oauth.signingAlgorithm' needs 'http.oauth.privateKey'".into(),
        ));
    }
    if client_secret.is_some() && private_key.is_some() {
        return Err(refuse(
            "mcp: give 'http.oauth.clientSecret' or 'http.oauth.privateKey', not both".into(),
        ));
    }
    if (client_secret.is_some() || private_key.is_some()) && client_id.is_none() {
        return Err(refuse(
            "mcp: 'http.oauth.clientSecret' and 'http.oauth.privateKey' need 'http.oauth.clientId'"
                .into(),
        ));
    }
    let client_metadata_url = string_member(raw, "clientMetadataUrl", false)?;
    if let Some(u) = &client_metadata_url {
        // SEP-991: an https URL with a path is the client's id.
        let ok = Url::parse(u)
            .map(|p| p.scheme() == "https" && p.path() != "/" && p.fragment().is_none())
            .unwrap_or(false);
        if !ok {
            return Err(refuse(format!(
                "mcp: 'http.oauth.clientMetadataUrl' must be an https:// URL with a path, got '{u}'"
            )));
        }
    }
    let client_name = string_member(raw, "clientName", false)?;
    let redirect_uri = string_member(raw, "redirectUri", false)?;
    if let Some(u) = &redirect_uri {
        // Where the authorization code goes: a loopback listener (RFC 8252 §7.3) or an https
        // page; any other scheme or host would hand the code to whoever serves it.
        match Url::parse(u) {
            Ok(p) if p.fragment().is_none() && trusted_scheme(&p) => {}
            _ => {
                return Err(refuse(format!(
                    "mcp: 'http.oauth.redirectUri' must be an https:// URL or an http:// URL of a loopback host (127.0.0.1, [::1], localhost), without a fragment, got '{u}'"
                )))
            }
        }
    }
    let scope = match raw.get("scope") {
        Raw::Undefined => None,
        Raw::String(s) => normalize_scope(s),
        other => {
            return Err(refuse(format!(
                "mcp: 'http.oauth.scope' must be a string of space-separated scopes, got {}",
                describe_type(other)
            )))
        }
    };
    let resource = match raw.get("resource") {
        Raw::Undefined => ResourceChoice::Discovered,
        Raw::Bool(false) => ResourceChoice::Omit,
        Raw::String(s) => ResourceChoice::Fixed(http_url("resource", s)?.as_str().to_owned()),
        other => {
            return Err(refuse(format!(
                "mcp: 'http.oauth.resource' must be a URL string or false, got {}",
                describe_type(other)
            )))
        }
    };
    let issuer = string_member(raw, "issuer", false)?;
    if let Some(i) = &issuer {
        // RFC 8414 §2: an issuer identifier is an https URL without a query or fragment (http
        // only on loopback, for local servers and tests).
        let ok = Url::parse(i)
            .map(|u| trusted_scheme(&u) && u.query().is_none() && u.fragment().is_none())
            .unwrap_or(false);
        if !ok {
            return Err(refuse(format!(
                "mcp: 'http.oauth.issuer' must be an https:// URL without a query or fragment (http:// only for a loopback host), got '{i}'"
            )));
        }
    }
    let authorize = match raw.get("authorize") {
        Raw::Undefined => false,
        Raw::Function => true,
        other => {
            return Err(refuse(format!(
                "mcp: 'http.oauth.authorize' must be a (possibly async) function ({{ url, reason, signal }}) => redirectUrl, got {}",
                describe_type(other)
            )))
        }
    };
    let store = match raw.get("store") {
        Raw::Undefined => false,
        s @ Raw::Object(_)
            if matches!(s.get("load"), Raw::Function) && matches!(s.get("save"), Raw::Function) =>
        {
            true
        }
        _ => {
            return Err(refuse(
                "mcp: 'http.oauth.store' must be an object with load(key) and save(key, value) functions (possibly async)"
                    .into(),
            ))
        }
    };
    match grant {
        Grant::AuthorizationCode => {
            if redirect_uri.is_none() {
                return Err(refuse(
                    "mcp: the 'authorization_code' grant of 'http.oauth' requires 'http.oauth.redirectUri'"
                        .into(),
                ));
            }
        }
        Grant::ClientCredentials => {
            if client_id.is_none() || (client_secret.is_none() && private_key.is_none()) {
                return Err(refuse(
                    "mcp: the 'client_credentials' grant of 'http.oauth' requires 'http.oauth.clientId' and 'http.oauth.clientSecret' or 'http.oauth.privateKey'"
                        .into(),
                ));
            }
            if authorize {
                return Err(refuse(
                    "mcp: 'http.oauth.authorize' is not used by the 'client_credentials' grant"
                        .into(),
                ));
            }
        }
    }
    Ok(Some(OAuthConfig {
        client_id,
        client_secret,
        private_key,
        signing_algorithm,
        client_metadata_url,
        client_name,
        redirect_uri,
        scope,
        resource,
        grant,
        issuer,
        authorize,
        store,
    }))
}

/// Whether `url`'s host is a loopback one (127.0.0.0/8, `::1`, `localhost`): the only hosts
/// plain `http:` is accepted for once OAuth is on (RFC 8252 §8.3; local servers and tests).
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `https:`, or `http:` on a loopback host: what every OAuth URL (the server's, metadata,
/// endpoints, the redirect) must be, so nothing goes in clear over a network and no other
/// scheme (`file:`, `javascript:`, ...) is ever fetched or handed to the host.
pub fn trusted_scheme(url: &Url) -> bool {
    match url.scheme() {
        "https" => url.host().is_some(),
        "http" => is_loopback(url),
        _ => false,
    }
}

/// The MCP server URL of a source with `http.oauth`: tokens and codes are sent to it, so it
/// must be `https:` (or `http:` on loopback). `shown` is the URL as an error may show it.
pub fn check_server_url(url: &str, shown: &str) -> Result<()> {
    if Url::parse(url).is_ok_and(|u| trusted_scheme(&u)) {
        return Ok(());
    }
    Err(refuse(format!(
        "mcp: 'url' must be an https:// URL when 'http.oauth' is set (http:// only for a loopback host: 127.0.0.0/8, [::1], localhost), got '{shown}'"
    )))
}

/// A refusal at the trust boundary: what a server handed over (a URL, an issuer) is not used.
pub fn untrusted(message: String) -> Failure {
    Failure::oauth(OAuthFailure::Untrusted, message)
}

/// An authorization server URL a server handed over (`what` names where it came from), parsed
/// and held to `https:` (or loopback `http:`); never fetched otherwise.
pub fn trusted_url(what: &str, value: &str) -> std::result::Result<Url, Failure> {
    match Url::parse(value) {
        Ok(u) if trusted_scheme(&u) => Ok(u),
        _ => Err(untrusted(format!(
            "mcp: oauth: {what} is not an https:// URL (http:// only on a loopback host); it was not used"
        ))),
    }
}

/// Whether authorization server metadata claiming `claimed` may be used for the issuer
/// identifier `derived` it was looked up for: identical (RFC 8414 §3.3, OIDC Discovery §4.3),
/// the empty path and `/` being the same URL.
pub fn same_issuer(claimed: &str, derived: &str) -> bool {
    if claimed == derived {
        return true;
    }
    let root = |s: &str| {
        Url::parse(s)
            .ok()
            .filter(|u| u.path() == "/" && u.query().is_none() && u.fragment().is_none())
            .map(|u| u.origin().ascii_serialization())
    };
    matches!((root(claimed), root(derived)), (Some(a), Some(b)) if a == b)
}

/// The resource indicator (RFC 8707) of a server without protected resource metadata: its own
/// canonical URL (lower-case scheme and host, no trailing `/` on an empty path), without a
/// fragment, and without userinfo or query, which can carry the server's own credentials.
pub fn canonical_resource(server_url: &str) -> Option<String> {
    let mut url = Url::parse(server_url).ok()?;
    url.set_fragment(None);
    url.set_query(None);
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let s = url.to_string();
    Some(match (url.path(), url.query()) {
        ("/", None) => s.trim_end_matches('/').to_owned(),
        _ => s,
    })
}

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

/// What a 401 or 403's `WWW-Authenticate: Bearer ...` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

impl Challenge {
    /// One `WWW-Authenticate` field (or none).
    #[cfg(test)]
    pub fn parse(header: Option<&str>) -> Challenge {
        Challenge::parse_fields(header)
    }

    /// Reads the Bearer challenge's parameters (quoted or token values) from every challenge of
    /// every `WWW-Authenticate` field (RFC 9110 §11.6.1: `Basic realm="x", Bearer ...` in one
    /// field, or one field each); no Bearer challenge gives the empty challenge.
    pub fn parse_fields<'a>(fields: impl IntoIterator<Item = &'a str>) -> Challenge {
        let Some(params) = fields
            .into_iter()
            .flat_map(parse_challenges)
            .find(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, params)| params)
        else {
            return Challenge::default();
        };
        let get = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };
        Challenge {
            resource_metadata: get("resource_metadata")
                .filter(|u| Url::parse(u).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))),
            scope: get("scope").and_then(|s| normalize_scope(&s)),
            error: get("error"),
        }
    }

    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// The challenges of one `WWW-Authenticate` field (RFC 9110 §11.6.1), each its scheme and its
/// `name=value` / `name="quoted \"value\""` parameters. A token followed by `=` is a parameter
/// of the challenge before it (or, `=`s ending it, a token68, which is skipped); any other
/// token starts a new challenge.
fn parse_challenges(field: &str) -> Vec<(String, Vec<(String, String)>)> {
    let chars: Vec<char> = field.chars().collect();
    let mut i = 0;
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    while i < chars.len() {
        while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
            i += 1;
        }
        let start = i;
        while i < chars.len() && !(chars[i].is_whitespace() || chars[i] == ',' || chars[i] == '=') {
            i += 1;
        }
        let token: String = chars[start..i].iter().collect();
        if token.is_empty() {
            // A stray '=': step over it.
            i += 1;
            continue;
        }
        skip_ws(&mut i);
        if i >= chars.len() || chars[i] != '=' {
            out.push((token, Vec::new()));
            continue;
        }
        i += 1;
        let mut after = i;
        while after < chars.len() && chars[after].is_whitespace() {
            after += 1;
        }
        if i < chars.len() && chars[i] == '=' || after >= chars.len() || chars[after] == ',' {
            // token68 (`abc==`): no parameters.
            while i < chars.len() && chars[i] == '=' {
                i += 1;
            }
            continue;
        }
        i = after;
        let mut value = String::new();
        if chars[i] == '"' {
            i += 1;
            while i < chars.len() {
                match chars[i] {
                    '\\' => {
                        if let Some(n) = chars.get(i + 1) {
                            value.push(*n);
                        }
                        i += 2;
                    }
                    '"' => {
                        i += 1;
                        break;
                    }
                    c => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < chars.len() && !(chars[i] == ',' || chars[i].is_whitespace()) {
                value.push(chars[i]);
                i += 1;
            }
        }
        if let Some((_, params)) = out.last_mut() {
            params.push((token, value));
        }
    }
    out
}

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
        (Some(got), Some(expected)) if !issuers_match(got, expected) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::raw::test_values::{obj, s};

    fn err(raw: Raw) -> String {
        parse_oauth(&raw).unwrap_err().message
    }

    #[test]
    fn config_refusals_name_the_key_and_never_a_secret() {
        assert!(err(s("x")).starts_with("mcp: 'http.oauth' must be an object"));
        assert!(err(obj(&[("redirect", s("x"))]))
            .starts_with("mcp: unknown config key 'http.oauth.redirect'"));
        assert_eq!(
            err(obj(&[])),
            "mcp: the 'authorization_code' grant of 'http.oauth' requires 'http.oauth.redirectUri'"
        );
        let e = err(obj(&[
            ("grant", s("client_credentials")),
            ("clientSecret", Raw::Number(123456.0)),
        ]));
        assert!(!e.contains("123456"), "{e}");
        let e = err(obj(&[
            ("grant", s("client_credentials")),
            ("clientId", s("c")),
            ("privateKey", s("not-a-pem-secret-value")),
        ]));
        assert!(e.contains("PKCS#8") && !e.contains("not-a-pem"), "{e}");
        assert!(err(obj(&[
            ("redirectUri", s("http://localhost/cb")),
            ("store", obj(&[("load", Raw::Function)])),
        ]))
        .starts_with(
            "mcp: 'http.oauth.store' must be an object with load(key) and save(key, value)"
        ));
        assert!(err(obj(&[
            ("redirectUri", s("http://localhost/cb")),
            ("clientMetadataUrl", s("http://example.com/c.json")),
        ]))
        .contains("must be an https:// URL with a path"));
        let ok = parse_oauth(&obj(&[
            ("redirectUri", s("http://localhost/cb")),
            ("resource", Raw::Bool(false)),
            ("scope", s("a  b a")),
            ("authorize", Raw::Function),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(ok.resource, ResourceChoice::Omit);
        assert_eq!(ok.scope.as_deref(), Some("a b"));
        assert!(ok.authorize && !ok.store);
        let cc = parse_oauth(&obj(&[
            ("grant", s("client_credentials")),
            ("clientId", s("c")),
            ("clientSecret", s("very-secret")),
        ]))
        .unwrap()
        .unwrap();
        assert!(!format!("{cc:?}").contains("very-secret"));
        assert_eq!(cc.secret_values().collect::<Vec<_>>(), vec!["very-secret"]);
    }

    #[test]
    fn challenge_parsing() {
        let c = Challenge::parse(Some(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp", error_description="x, y""#,
        ));
        assert!(c.insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://h/.well-known/oauth-protected-resource/mcp")
        );
        let c = Challenge::parse(Some("bearer scope=read,error=invalid_token"));
        assert_eq!(c.scope.as_deref(), Some("read"));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            Challenge::parse(Some(r#"Basic realm="x""#)),
            Challenge::default()
        );
        assert_eq!(Challenge::parse(None), Challenge::default());
        // Every challenge of every field (RFC 9110 §11.6.1).
        let c = Challenge::parse(Some(
            r#"Basic realm="x, y", Bearer resource_metadata="https://h/rm", scope="s1 s2""#,
        ));
        assert_eq!(c.resource_metadata.as_deref(), Some("https://h/rm"));
        assert_eq!(c.scope.as_deref(), Some("s1 s2"));
        let c = Challenge::parse(Some(
            r#"Negotiate YWxhZGRpbjpvcGVuc2VzYW1l==, bearer error=insufficient_scope, scope=w"#,
        ));
        assert!(c.insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("w"));
        let c = Challenge::parse_fields([r#"Basic realm="x""#, r#"Bearer scope="a""#]);
        assert_eq!(c.scope.as_deref(), Some("a"));
        assert_eq!(
            Challenge::parse_fields([r#"Basic realm="Bearer scope=a""#]),
            Challenge::default()
        );
        // A resource_metadata that is not an http(s) URL is ignored, not followed.
        let c = Challenge::parse(Some(r#"Bearer resource_metadata="file:///etc/passwd""#));
        assert_eq!(c.resource_metadata, None);
    }

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
    fn trust_checks() {
        let u = |s: &str| Url::parse(s).unwrap();
        for ok in [
            "https://as.example/x",
            "http://127.0.0.1:1/",
            "http://127.9.8.7/",
            "http://[::1]:3/",
            "http://localhost:4/",
            "http://LOCALHOST/",
        ] {
            assert!(trusted_scheme(&u(ok)), "{ok}");
        }
        for bad in [
            "http://as.example/",
            "http://169.254.169.254/latest",
            "http://192.0.2.2/",
            "http://localhost.evil.example/",
            "http://[::2]/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "ms-msdt:/id PCWDiagnostic",
            "ftp://as.example/",
        ] {
            assert!(!trusted_scheme(&u(bad)), "{bad}");
        }
        assert!(same_issuer("https://a.example", "https://a.example/"));
        assert!(same_issuer("https://a.example/t1", "https://a.example/t1"));
        assert!(!same_issuer(
            "https://a.example/t1/",
            "https://a.example/t1"
        ));
        assert!(!same_issuer("https://evil.example", "https://a.example"));
        assert!(!same_issuer("", "https://a.example"));
        assert_eq!(
            canonical_resource("HTTPS://H.example/mcp#x").as_deref(),
            Some("https://h.example/mcp")
        );
        assert_eq!(
            canonical_resource("https://h.example").as_deref(),
            Some("https://h.example")
        );
        assert_eq!(
            canonical_resource("https://u:p@h.example/mcp?api_key=k").as_deref(),
            Some("https://h.example/mcp")
        );
        assert!(check_server_url("http://mcp.example/mcp", "x").is_err());
        assert!(check_server_url("http://127.0.0.1:1/mcp", "x").is_ok());
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
