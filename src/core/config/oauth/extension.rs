//! The `http.oauth` keys of the authorization extensions, each absent by default (and then
//! nothing of it happens): `dpop` (sender-constrained tokens, RFC 9449), and for the
//! `jwt_bearer` grant (RFC 7523) either `assertion` (a workload identity JWT presented as it
//! is) or `tokenExchange` (enterprise-managed authorization: the user's identity assertion
//! exchanged at the enterprise IdP for an ID-JAG, RFC 8693, which is then the assertion).

use super::super::read::{describe_type, literal, only_known_keys, refuse};
use crate::core::error::Result;
use crate::core::oauth::jws::{SigningAlgorithm, SigningKey};
use crate::core::raw::Raw;
use crate::core::url::trusted_scheme;
use url::Url;

const DPOP_KEYS: [&str; 2] = ["privateKey", "signingAlgorithm"];
const EXCHANGE_KEYS: [&str; 5] = [
    "tokenEndpoint",
    "clientId",
    "clientSecret",
    "subjectToken",
    "subjectTokenType",
];

/// The key DPoP proofs are signed with.
#[derive(Clone, PartialEq)]
pub enum DpopKey {
    /// `dpop: true`: a P-256 key made for the source, never stored (its tokens are bound to
    /// this process; a stored one from another is not used).
    Ephemeral,
    /// `dpop: { privateKey }`: PKCS#8 PEM, checked to load at construction.
    Configured { pem: String, alg: SigningAlgorithm },
}

/// A value the host gives as text or as a function the flow calls each time it needs it (a
/// workload's token that rotates, an ID token that is renewed).
#[derive(Clone, PartialEq)]
pub enum Supplied {
    Value(String),
    /// Called through the host's `credential` hook under this name.
    Hook(&'static str),
}

/// The token exchange (RFC 8693) at the enterprise IdP that gives the ID-JAG.
#[derive(Clone, PartialEq)]
pub struct TokenExchange {
    /// The IdP's token endpoint (configured, never discovered).
    pub token_endpoint: String,
    /// This client at the IdP.
    pub client_id: String,
    pub client_secret: Option<String>,
    /// The identity assertion of the user (an OpenID Connect ID token or a SAML assertion).
    pub subject_token: Supplied,
    /// Its RFC 8693 token type URN.
    pub subject_token_type: &'static str,
}

/// Where the `jwt_bearer` grant's assertion comes from.
#[derive(Clone, PartialEq)]
pub enum JwtBearer {
    Assertion(Supplied),
    Exchange(TokenExchange),
}

impl JwtBearer {
    /// What no error text may show.
    pub fn secret_values(&self) -> Vec<&str> {
        match self {
            JwtBearer::Assertion(Supplied::Value(v)) => vec![v.as_str()],
            JwtBearer::Assertion(Supplied::Hook(_)) => Vec::new(),
            JwtBearer::Exchange(x) => {
                let mut out: Vec<&str> = x.client_secret.iter().map(String::as_str).collect();
                if let Supplied::Value(v) = &x.subject_token {
                    out.push(v);
                }
                out
            }
        }
    }
}

/// `http.oauth.dpop`: absent or `false` for none, `true` for a key of the source's own, or
/// `{ privateKey, signingAlgorithm? }`.
pub fn parse_dpop(raw: &Raw) -> Result<Option<DpopKey>> {
    match raw {
        Raw::Undefined | Raw::Bool(false) => Ok(None),
        Raw::Bool(true) => Ok(Some(DpopKey::Ephemeral)),
        Raw::Object(members) => {
            only_known_keys("http.oauth.dpop", members, &DPOP_KEYS)?;
            let alg = literal(
                raw.get("signingAlgorithm"),
                "http.oauth.dpop.signingAlgorithm",
                &[
                    ("ES256", SigningAlgorithm::Es256),
                    ("RS256", SigningAlgorithm::Rs256),
                ],
                SigningAlgorithm::Es256,
            )?;
            let Raw::String(pem) = raw.get("privateKey") else {
                // A key's value is never echoed, not even a wrong one.
                return Err(refuse(
                    "mcp: 'http.oauth.dpop.privateKey' must be a PKCS#8 PEM private key string ('-----BEGIN PRIVATE KEY-----')".into(),
                ));
            };
            if let Err(kind) = SigningKey::from_pem(pem, alg) {
                return Err(refuse(format!(
                    "mcp: 'http.oauth.dpop.privateKey' is not {kind} (the key for '{}')",
                    alg.name()
                )));
            }
            Ok(Some(DpopKey::Configured {
                pem: pem.clone(),
                alg,
            }))
        }
        other => Err(refuse(format!(
            "mcp: 'http.oauth.dpop' must be true, false or {{ privateKey, signingAlgorithm? }}, got {}",
            describe_type(other)
        ))),
    }
}

/// A secret the host gives as a non-empty string or a function returning one; never echoed.
fn supplied(raw: &Raw, key: &str, hook: &'static str) -> Result<Option<Supplied>> {
    match raw {
        Raw::Undefined => Ok(None),
        Raw::String(s) if !s.is_empty() => Ok(Some(Supplied::Value(s.clone()))),
        Raw::Function => Ok(Some(Supplied::Hook(hook))),
        _ => Err(refuse(format!(
            "mcp: '{key}' must be a non-empty string or a (possibly async) function returning one"
        ))),
    }
}

fn exchange_string(raw: &Raw, key: &str, secret: bool) -> Result<Option<String>> {
    match raw.get(key) {
        Raw::Undefined => Ok(None),
        Raw::String(s) if !s.is_empty() => Ok(Some(s.clone())),
        _ if secret => Err(refuse(format!(
            "mcp: 'http.oauth.tokenExchange.{key}' must be a non-empty string"
        ))),
        other => Err(refuse(format!(
            "mcp: 'http.oauth.tokenExchange.{key}' must be a non-empty string, got {}",
            describe_type(other)
        ))),
    }
}

fn parse_exchange(raw: &Raw) -> Result<TokenExchange> {
    let Raw::Object(members) = raw else {
        return Err(refuse(format!(
            "mcp: 'http.oauth.tokenExchange' must be an object {{ tokenEndpoint, clientId, clientSecret?, subjectToken, subjectTokenType? }}, got {}",
            describe_type(raw)
        )));
    };
    only_known_keys("http.oauth.tokenExchange", members, &EXCHANGE_KEYS)?;
    let required = |key: &str| {
        refuse(format!(
            "mcp: 'http.oauth.tokenExchange' requires 'http.oauth.tokenExchange.{key}'"
        ))
    };
    let token_endpoint =
        exchange_string(raw, "tokenEndpoint", false)?.ok_or_else(|| required("tokenEndpoint"))?;
    // The user's identity assertion goes there: https, or http on a loopback host only.
    let ok =
        Url::parse(&token_endpoint).is_ok_and(|u| trusted_scheme(&u) && u.fragment().is_none());
    if !ok {
        return Err(refuse(format!(
            "mcp: 'http.oauth.tokenExchange.tokenEndpoint' must be an https:// URL without a fragment (http:// only for a loopback host), got '{token_endpoint}'"
        )));
    }
    let client_id = exchange_string(raw, "clientId", false)?.ok_or_else(|| required("clientId"))?;
    let client_secret = exchange_string(raw, "clientSecret", true)?;
    let subject_token = supplied(
        raw.get("subjectToken"),
        "http.oauth.tokenExchange.subjectToken",
        "subjectToken",
    )?
    .ok_or_else(|| required("subjectToken"))?;
    let subject_token_type = literal(
        raw.get("subjectTokenType"),
        "http.oauth.tokenExchange.subjectTokenType",
        &[
            ("id_token", "urn:ietf:params:oauth:token-type:id_token"),
            ("saml2", "urn:ietf:params:oauth:token-type:saml2"),
        ],
        "urn:ietf:params:oauth:token-type:id_token",
    )?;
    Ok(TokenExchange {
        token_endpoint,
        client_id,
        client_secret,
        subject_token,
        subject_token_type,
    })
}

/// `http.oauth.assertion` / `http.oauth.tokenExchange`: exactly one for the `jwt_bearer` grant,
/// neither for another.
pub fn parse_jwt_bearer(raw: &Raw, jwt_bearer_grant: bool) -> Result<Option<JwtBearer>> {
    let assertion = supplied(raw.get("assertion"), "http.oauth.assertion", "assertion")?;
    let exchange = match raw.get("tokenExchange") {
        Raw::Undefined => None,
        x => Some(parse_exchange(x)?),
    };
    match (jwt_bearer_grant, assertion, exchange) {
        (false, None, None) => Ok(None),
        (false, _, _) => Err(refuse(
            "mcp: 'http.oauth.assertion' and 'http.oauth.tokenExchange' are for the 'jwt_bearer' grant (set 'http.oauth.grant' to 'jwt_bearer')".into(),
        )),
        (true, Some(_), Some(_)) => Err(refuse(
            "mcp: give 'http.oauth.assertion' or 'http.oauth.tokenExchange', not both".into(),
        )),
        (true, Some(a), None) => Ok(Some(JwtBearer::Assertion(a))),
        (true, None, Some(x)) => Ok(Some(JwtBearer::Exchange(x))),
        (true, None, None) => Err(refuse(
            "mcp: the 'jwt_bearer' grant of 'http.oauth' requires 'http.oauth.assertion' or 'http.oauth.tokenExchange'".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_oauth, Grant};
    use super::*;
    use crate::core::raw::test_values::{obj, s};
    use base64::Engine;

    fn err(raw: Raw) -> String {
        parse_oauth(&raw).unwrap_err().message
    }

    fn login(extra: &[(&str, Raw)]) -> Raw {
        let mut members = vec![("redirectUri", s("http://localhost/cb"))];
        members.extend(extra.iter().cloned());
        obj(&members)
    }

    fn p256_pem() -> String {
        let rng = ring::rand::SystemRandom::new();
        let der = ring::signature::EcdsaKeyPair::generate_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &rng,
        )
        .unwrap();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(der.as_ref())
        )
    }

    #[test]
    fn dpop_absent_false_true_or_a_key() {
        let none = parse_oauth(&login(&[])).unwrap().unwrap();
        assert!(none.dpop.is_none() && none.jwt_bearer.is_none());
        let off = parse_oauth(&login(&[("dpop", Raw::Bool(false))]))
            .unwrap()
            .unwrap();
        assert!(off.dpop.is_none());
        let on = parse_oauth(&login(&[("dpop", Raw::Bool(true))]))
            .unwrap()
            .unwrap();
        assert!(on.dpop == Some(DpopKey::Ephemeral));
        let pem = p256_pem();
        let keyed = parse_oauth(&login(&[("dpop", obj(&[("privateKey", s(&pem))]))]))
            .unwrap()
            .unwrap();
        assert!(matches!(
            keyed.dpop,
            Some(DpopKey::Configured {
                alg: SigningAlgorithm::Es256,
                ..
            })
        ));
        // The key is a secret: redacted, and never in Debug.
        assert!(keyed.secret_values().any(|v| v == pem));
        assert!(!format!("{keyed:?}").contains("PRIVATE"));
    }

    #[test]
    fn dpop_refusals_are_typed_and_never_echo_the_key() {
        assert_eq!(
            err(login(&[("dpop", s("yes"))])),
            "mcp: 'http.oauth.dpop' must be true, false or { privateKey, signingAlgorithm? }, got the string 'yes'"
        );
        assert!(err(login(&[("dpop", obj(&[("key", s("x"))]))]))
            .starts_with("mcp: unknown config key 'http.oauth.dpop.key'"));
        let secret =
            "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END PRIVATE KEY-----";
        let e = err(login(&[("dpop", obj(&[("privateKey", s(secret))]))]));
        assert_eq!(
            e,
            "mcp: 'http.oauth.dpop.privateKey' is not a PKCS#8 P-256 private key (the key for 'ES256')"
        );
        let e = err(login(&[(
            "dpop",
            obj(&[
                ("privateKey", s(&p256_pem())),
                ("signingAlgorithm", s("RS256")),
            ]),
        )]));
        assert!(
            e.contains("is not a PKCS#8 RSA private key") && !e.contains("BEGIN"),
            "{e}"
        );
        assert_eq!(
            err(login(&[("dpop", obj(&[("privateKey", Raw::Number(7.0))]))])),
            "mcp: 'http.oauth.dpop.privateKey' must be a PKCS#8 PEM private key string ('-----BEGIN PRIVATE KEY-----')"
        );
        assert_eq!(
            err(login(&[(
                "dpop",
                obj(&[
                    ("privateKey", s(&p256_pem())),
                    ("signingAlgorithm", s("HS256"))
                ])
            )])),
            "mcp: 'http.oauth.dpop.signingAlgorithm' must be 'ES256' or 'RS256', got 'HS256'"
        );
    }

    fn jwt_bearer(extra: &[(&str, Raw)]) -> Raw {
        let mut members = vec![("grant", s("jwt_bearer")), ("clientId", s("c"))];
        members.extend(extra.iter().cloned());
        obj(&members)
    }

    #[test]
    fn the_jwt_bearer_grant_takes_an_assertion_or_a_token_exchange() {
        let a = parse_oauth(&jwt_bearer(&[("assertion", s("eyJ.workload.jwt"))]))
            .unwrap()
            .unwrap();
        assert_eq!(a.grant, Grant::JwtBearer);
        assert!(
            a.jwt_bearer
                == Some(JwtBearer::Assertion(Supplied::Value(
                    "eyJ.workload.jwt".into()
                )))
        );
        assert!(a.secret_values().any(|v| v == "eyJ.workload.jwt"));
        let f = parse_oauth(&jwt_bearer(&[("assertion", Raw::Function)]))
            .unwrap()
            .unwrap();
        assert!(f.jwt_bearer == Some(JwtBearer::Assertion(Supplied::Hook("assertion"))));
        let x = parse_oauth(&jwt_bearer(&[
            ("clientSecret", s("as-secret")),
            (
                "tokenExchange",
                obj(&[
                    ("tokenEndpoint", s("https://idp.example/token")),
                    ("clientId", s("idp-client")),
                    ("clientSecret", s("idp-secret")),
                    ("subjectToken", s("id-token-value")),
                    ("subjectTokenType", s("saml2")),
                ]),
            ),
        ]))
        .unwrap()
        .unwrap();
        let Some(JwtBearer::Exchange(te)) = &x.jwt_bearer else {
            panic!("an exchange")
        };
        assert_eq!(
            te.subject_token_type,
            "urn:ietf:params:oauth:token-type:saml2"
        );
        assert_eq!(te.client_id, "idp-client");
        let secrets: Vec<&str> = x.secret_values().collect();
        for v in ["as-secret", "idp-secret", "id-token-value"] {
            assert!(secrets.contains(&v), "{v}");
        }
    }

    #[test]
    fn jwt_bearer_refusals() {
        assert_eq!(
            err(jwt_bearer(&[])),
            "mcp: the 'jwt_bearer' grant of 'http.oauth' requires 'http.oauth.assertion' or 'http.oauth.tokenExchange'"
        );
        assert_eq!(
            err(obj(&[("grant", s("jwt_bearer")), ("assertion", s("a"))])),
            "mcp: the 'jwt_bearer' grant of 'http.oauth' requires 'http.oauth.clientId'"
        );
        assert_eq!(
            err(jwt_bearer(&[
                ("assertion", s("a")),
                ("authorize", Raw::Function)
            ])),
            "mcp: 'http.oauth.authorize' is not used by the 'jwt_bearer' grant"
        );
        // A wrong assertion's value is never echoed.
        let e = err(jwt_bearer(&[("assertion", Raw::Number(31337.0))]));
        assert_eq!(
            e,
            "mcp: 'http.oauth.assertion' must be a non-empty string or a (possibly async) function returning one"
        );
        assert!(err(login(&[("assertion", s("a"))])).contains("are for the 'jwt_bearer' grant"));
        let exchange =
            |members: &[(&str, Raw)]| err(jwt_bearer(&[("tokenExchange", obj(members))]));
        assert_eq!(
            exchange(&[("clientId", s("i")), ("subjectToken", s("t"))]),
            "mcp: 'http.oauth.tokenExchange' requires 'http.oauth.tokenExchange.tokenEndpoint'"
        );
        assert!(exchange(&[
            ("tokenEndpoint", s("http://idp.example/token")),
            ("clientId", s("i")),
            ("subjectToken", s("t")),
        ])
        .starts_with("mcp: 'http.oauth.tokenExchange.tokenEndpoint' must be an https:// URL"));
        assert_eq!(
            exchange(&[
                ("tokenEndpoint", s("https://idp.example/token")),
                ("clientId", s("i")),
                ("subjectToken", Raw::Null),
            ]),
            "mcp: 'http.oauth.tokenExchange.subjectToken' must be a non-empty string or a (possibly async) function returning one"
        );
        assert!(exchange(&[("audience", s("x"))])
            .starts_with("mcp: unknown config key 'http.oauth.tokenExchange.audience'"));
        assert!(err(jwt_bearer(&[("tokenExchange", s("x"))]))
            .starts_with("mcp: 'http.oauth.tokenExchange' must be an object"));
        assert_eq!(
            err(jwt_bearer(&[
                ("assertion", s("a")),
                (
                    "tokenExchange",
                    obj(&[
                        ("tokenEndpoint", s("https://idp.example/token")),
                        ("clientId", s("i")),
                        ("subjectToken", s("t")),
                    ])
                ),
            ])),
            "mcp: give 'http.oauth.assertion' or 'http.oauth.tokenExchange', not both"
        );
    }
}
