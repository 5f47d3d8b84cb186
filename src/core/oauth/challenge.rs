//! What a 401 or 403 says in `WWW-Authenticate` (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1).

use super::normalize_scope;
use url::Url;

/// What a 401 or 403's `WWW-Authenticate: Bearer ...` (or, with DPoP on, `DPoP ...`) says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
    /// A `DPoP` challenge's `error="use_dpop_nonce"` (RFC 9449 §9): send the request again with
    /// the nonce of the answer's `DPoP-Nonce`.
    pub use_dpop_nonce: bool,
}

impl Challenge {
    /// One `WWW-Authenticate` field (or none), Bearer only.
    #[cfg(test)]
    pub fn parse(header: Option<&str>) -> Challenge {
        Challenge::parse_fields(header, false)
    }

    /// Reads the Bearer challenge's parameters (quoted or token values) from every challenge of
    /// every `WWW-Authenticate` field (RFC 9110 §11.6.1: `Basic realm="x", Bearer ...` in one
    /// field, or one field each); no Bearer challenge gives the empty challenge. With `dpop`
    /// (the source uses DPoP) a `DPoP` challenge is read as well, after the Bearer one: a
    /// server that takes only DPoP-bound tokens challenges with that scheme alone (RFC 9449
    /// §7.1). Without it a `DPoP` challenge is not read, as before there was DPoP.
    pub fn parse_fields<'a>(fields: impl IntoIterator<Item = &'a str>, dpop: bool) -> Challenge {
        let challenges: Vec<(String, Vec<(String, String)>)> =
            fields.into_iter().flat_map(parse_challenges).collect();
        let of = |scheme: &str| {
            challenges
                .iter()
                .find(|(s, _)| s.eq_ignore_ascii_case(scheme))
                .map(|(_, params)| params)
        };
        let bearer = of("bearer");
        let dpop_params = if dpop { of("dpop") } else { None };
        if bearer.is_none() && dpop_params.is_none() {
            return Challenge::default();
        }
        let param = |params: Option<&Vec<(String, String)>>, name: &str| {
            params?
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };
        let get = |name: &str| param(bearer, name).or_else(|| param(dpop_params, name));
        Challenge {
            resource_metadata: get("resource_metadata")
                .filter(|u| Url::parse(u).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))),
            scope: get("scope").and_then(|s| normalize_scope(&s)),
            error: get("error"),
            use_dpop_nonce: param(dpop_params, "error").as_deref() == Some("use_dpop_nonce"),
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
#[cfg(test)]
mod tests {
    use super::*;

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
        let c = Challenge::parse_fields([r#"Basic realm="x""#, r#"Bearer scope="a""#], false);
        assert_eq!(c.scope.as_deref(), Some("a"));
        assert_eq!(
            Challenge::parse_fields([r#"Basic realm="Bearer scope=a""#], false),
            Challenge::default()
        );
        // A resource_metadata that is not an http(s) URL is ignored, not followed.
        let c = Challenge::parse(Some(r#"Bearer resource_metadata="file:///etc/passwd""#));
        assert_eq!(c.resource_metadata, None);
    }

    #[test]
    fn a_dpop_challenge_is_read_only_with_dpop_on() {
        let field = r#"DPoP error="use_dpop_nonce", resource_metadata="http://h/rm", algs="ES256""#;
        // Without DPoP: as before, no challenge.
        assert_eq!(
            Challenge::parse_fields([field], false),
            Challenge::default()
        );
        let c = Challenge::parse_fields([field], true);
        assert!(c.use_dpop_nonce);
        assert_eq!(c.resource_metadata.as_deref(), Some("http://h/rm"));
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        // The Bearer challenge's parameters come first; a Bearer `use_dpop_nonce` is no
        // nonce request (RFC 9449 §9 puts it on the DPoP scheme).
        let c = Challenge::parse_fields(
            [r#"Bearer scope="a", error="use_dpop_nonce", DPoP scope="b", algs="ES256""#],
            true,
        );
        assert_eq!(c.scope.as_deref(), Some("a"));
        assert!(!c.use_dpop_nonce);
        let c = Challenge::parse_fields([r#"dpop resource_metadata="https://h/x""#], true);
        assert!(!c.use_dpop_nonce);
        assert_eq!(c.resource_metadata.as_deref(), Some("https://h/x"));
    }

    #[test]
    fn malformed_challenges_never_panic() {
        for field in [
            "",
            "=",
            "==",
            ",",
            "Bearer",
            "Bearer =",
            "Bearer a=",
            "Bearer a=\"",
            "Bearer a=\"\\",
            "Bearer a=b=c",
            "Bearer ,,, a = \"x\" ,",
            "Bearer\u{3000}scope=\u{e9}",
            "a=b, c=d",
            "Bearer resource_metadata=\"http://h/\\\"x\"",
            "Basic ==, =Bearer",
            "\"Bearer\" scope=x",
        ] {
            let _ = Challenge::parse(Some(field));
            let _ = Challenge::parse_fields([field, field], true);
        }
        let c = Challenge::parse(Some("Bearer a=b=c, scope=s"));
        assert_eq!(c.scope.as_deref(), Some("s"));
    }
}
