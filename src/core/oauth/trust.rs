//! The trust boundary's checks: which schemes and hosts an OAuth URL may have, when an
//! authorization server's metadata is that issuer's, and the server URL of a source with
//! `http.oauth`. Everything a server hands over is held to these before it is used.

use crate::core::error::{Failure, OAuthFailure};
use crate::core::url::is_loopback;
use url::Url;

/// A refusal at the trust boundary: what a server handed over (a URL, an issuer) is not used.
pub fn untrusted(message: String) -> Failure {
    Failure::oauth(OAuthFailure::Untrusted, message)
}

/// An authorization server URL a server handed over (`what` names where it came from), parsed
/// and held to `https:`, or to `http:` on a loopback host when the MCP server (`server_url`) is
/// itself on one: a remote server must not steer requests to the user's own machine (SSRF
/// against local services). Never fetched otherwise.
pub fn trusted_url(what: &str, value: &str, server_url: &str) -> std::result::Result<Url, Failure> {
    let server_local = Url::parse(server_url).is_ok_and(|u| is_loopback(&u));
    match Url::parse(value) {
        Ok(u) if u.scheme() == "https" && u.host().is_some() => Ok(u),
        Ok(u) if u.scheme() == "http" && is_loopback(&u) && server_local => Ok(u),
        _ => Err(untrusted(format!(
            "mcp: oauth: {what} is not an https:// URL (http:// only on a loopback host, for a server on one); it was not used"
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::url::{check_server_url, trusted_scheme};

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
        // Loopback http only for a server on loopback: a remote one cannot point at local ports.
        assert!(trusted_url("t", "http://127.0.0.1:8080/", "http://localhost:1/mcp").is_ok());
        assert!(trusted_url("t", "http://127.0.0.1:8080/", "https://mcp.example/mcp").is_err());
        assert!(trusted_url("t", "https://as.example/", "https://mcp.example/mcp").is_ok());
        let e = trusted_url("t", "javascript:alert(1)", "http://localhost:1/").unwrap_err();
        assert_eq!(e.oauth, Some(OAuthFailure::Untrusted));
        assert!(check_server_url("http://127.0.0.1:1/mcp", "x").is_ok());
    }
}
