//! The rules for a URL a host or a server hands over: which schemes and hosts are trusted
//! (`https:`, plain `http:` only on this machine), and how a URL is shown (never its
//! credentials). Config, OAuth and what a server asks back all hold URLs to these.

use super::error::{ConfigError, Result};
use url::Url;

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
    Err(ConfigError::new(format!(
        "mcp: 'url' must be an https:// URL when 'http.oauth' is set (http:// only for a loopback host: 127.0.0.0/8, [::1], localhost), got '{shown}'"
    )))
}

/// Whether a query parameter's name says its value is a credential (`api_key`, `token`,
/// `access_token`, `sig`, `password`, ...).
fn credential_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "key",
        "token",
        "secret",
        "pass",
        "pwd",
        "auth",
        "sig",
        "credential",
        "session",
        "jwt",
        "code",
        "bearer",
    ]
    .iter()
    .any(|part| name.contains(part))
}

/// A query string split into its parameters (`&`-separated, raw), each with its decoded name.
fn query_params(query: &str) -> impl Iterator<Item = (&str, String, Option<&str>)> {
    query.split('&').map(|part| {
        let (name, value) = match part.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (part, None),
        };
        let decoded = url::form_urlencoded::parse(name.as_bytes())
            .next()
            .map(|(n, _)| n.into_owned())
            .unwrap_or_default();
        (name, decoded, value)
    })
}

/// `url` as the source id, the posture and error texts show it: without its userinfo, and the
/// value of each credential-like query parameter replaced by `[redacted]`.
pub fn shown_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        // Not a URL: at least nothing before an '@' or after a '?'.
        let cut = url.split(['?', '#']).next().unwrap_or("");
        return match cut.split_once("://") {
            Some((scheme, rest)) => {
                format!(
                    "{scheme}://{}",
                    rest.rsplit_once('@').map_or(rest, |(_, r)| r)
                )
            }
            None => cut.to_owned(),
        };
    };
    let query_has_credential = parsed
        .query()
        .is_some_and(|q| query_params(q).any(|(_, n, _)| credential_name(&n)));
    if parsed.username().is_empty() && parsed.password().is_none() && !query_has_credential {
        return url.to_owned();
    }
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    if let Some(query) = parsed.query().map(str::to_owned) {
        let shown: Vec<String> = query_params(&query)
            .map(|(raw, name, value)| match value {
                Some(_) if credential_name(&name) => format!("{raw}=[redacted]"),
                Some(v) => format!("{raw}={v}"),
                None => raw.to_owned(),
            })
            .collect();
        parsed.set_query(Some(&shown.join("&")));
    }
    parsed.to_string()
}

/// The credentials in `url`: its userinfo's user and password (raw and decoded), and the
/// values of credential-like query parameters.
pub(crate) fn url_credentials(url: &str) -> Vec<String> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut add = |raw: &str| {
        if raw.is_empty() {
            return;
        }
        let decoded = url::form_urlencoded::parse(format!("x={raw}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned());
        out.push(raw.to_owned());
        if let Some(d) = decoded.filter(|d| d != raw) {
            out.push(d);
        }
    };
    add(parsed.username());
    if let Some(p) = parsed.password() {
        add(p);
    }
    if let Some(query) = parsed.query() {
        for (_, name, value) in query_params(query) {
            if let Some(v) = value.filter(|_| credential_name(&name)) {
                add(v);
            }
        }
    }
    out
}
