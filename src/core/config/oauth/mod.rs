//! `http.oauth`, checked whole at construction: every key, its refusal (naming the key, never a
//! secret), and the decisions that need no server (a grant's required keys, the redirect and
//! issuer URLs held to the trust rules). `extension` reads the DPoP and JWT bearer keys.

mod extension;

pub use extension::*;

use super::read::{describe_type, literal, only_known_keys, refuse};
use crate::core::error::Result;
use crate::core::oauth::jws::SigningAlgorithm;
use crate::core::oauth::normalize_scope;
use crate::core::raw::Raw;
use crate::core::url::trusted_scheme;
use url::Url;

pub const OAUTH_KEYS: [&str; 16] = [
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
    "dpop",
    "assertion",
    "tokenExchange",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    AuthorizationCode,
    ClientCredentials,
    /// RFC 7523: an assertion (a workload's JWT, or an ID-JAG) for an access token.
    JwtBearer,
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
    /// DPoP (RFC 9449): tokens bound to this key, a proof on every request.
    pub dpop: Option<DpopKey>,
    /// The `jwt_bearer` grant's assertion.
    pub jwt_bearer: Option<JwtBearer>,
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
            .field("dpop", &self.dpop.is_some())
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// What no error text may show.
    pub fn secret_values(&self) -> impl Iterator<Item = &str> {
        let dpop_key = match &self.dpop {
            Some(DpopKey::Configured { pem, .. }) => Some(pem.as_str()),
            _ => None,
        };
        self.client_secret
            .as_deref()
            .into_iter()
            .chain(self.private_key.as_deref())
            .chain(dpop_key)
            .chain(self.jwt_bearer.iter().flat_map(JwtBearer::secret_values))
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

/// `http.oauth`, checked whole at construction; `None` when absent. Each group of keys has its
/// reader, in the order the refusals are made.
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
            ("jwt_bearer", Grant::JwtBearer),
        ],
        Grant::AuthorizationCode,
    )?;
    let client = client(raw)?;
    let client_metadata_url = client_metadata_url(raw)?;
    let client_name = string_member(raw, "clientName", false)?;
    let redirect_uri = redirect_uri(raw)?;
    let (scope, resource) = (scope(raw)?, resource(raw)?);
    let issuer = issuer(raw)?;
    let (authorize, store) = host_callbacks(raw)?;
    grant_needs(grant, &client, redirect_uri.is_some(), authorize)?;
    let dpop = parse_dpop(raw.get("dpop"))?;
    let jwt_bearer = parse_jwt_bearer(raw, grant == Grant::JwtBearer)?;
    Ok(Some(OAuthConfig {
        client_id: client.id,
        client_secret: client.secret,
        private_key: client.private_key,
        signing_algorithm: client.signing_algorithm,
        client_metadata_url,
        client_name,
        redirect_uri,
        scope,
        resource,
        grant,
        issuer,
        authorize,
        store,
        dpop,
        jwt_bearer,
    }))
}

/// The client as the authorization server knows it, and how it authenticates.
struct Client {
    id: Option<String>,
    secret: Option<String>,
    private_key: Option<String>,
    signing_algorithm: SigningAlgorithm,
}

/// `clientId`, `clientSecret`, `privateKey` and `signingAlgorithm`, and what they need of each
/// other.
fn client(raw: &Raw) -> Result<Client> {
    let id = string_member(raw, "clientId", false)?;
    let secret = string_member(raw, "clientSecret", true)?;
    let private_key = string_member(raw, "privateKey", true)?;
    if let Some(key) = &private_key {
        if !key.contains("-----BEGIN PRIVATE KEY-----") {
            return Err(refuse(
                "mcp: 'http.oauth.privateKey' must be a PKCS#8 PEM private key ('-----BEGIN PRIVATE KEY-----')"
                    .into(),
            ));
        }
    }
    let signing_algorithm = literal(
        raw.get("signingAlgorithm"),
        "http.oauth.signingAlgorithm",
        &[
            ("ES256", SigningAlgorithm::Es256),
            ("RS256", SigningAlgorithm::Rs256),
        ],
        SigningAlgorithm::Es256,
    )?;
    let needs = |ok: bool, message: &str| match ok {
        true => Ok(()),
        false => Err(refuse(message.into())),
    };
    needs(
        raw.get("signingAlgorithm").is_absent() || private_key.is_some(),
        "mcp: 'http.oauth.signingAlgorithm' needs 'http.oauth.privateKey'",
    )?;
    needs(
        secret.is_none() || private_key.is_none(),
        "mcp: give 'http.oauth.clientSecret' or 'http.oauth.privateKey', not both",
    )?;
    needs(
        (secret.is_none() && private_key.is_none()) || id.is_some(),
        "mcp: 'http.oauth.clientSecret' and 'http.oauth.privateKey' need 'http.oauth.clientId'",
    )?;
    Ok(Client {
        id,
        secret,
        private_key,
        signing_algorithm,
    })
}

/// `clientMetadataUrl`: an https URL with a path is the client's id.
fn client_metadata_url(raw: &Raw) -> Result<Option<String>> {
    let url = string_member(raw, "clientMetadataUrl", false)?;
    if let Some(u) = &url {
        let ok = Url::parse(u)
            .map(|p| p.scheme() == "https" && p.path() != "/" && p.fragment().is_none())
            .unwrap_or(false);
        if !ok {
            return Err(refuse(format!(
                "mcp: 'http.oauth.clientMetadataUrl' must be an https:// URL with a path, got '{u}'"
            )));
        }
    }
    Ok(url)
}

/// `redirectUri`: where the authorization code goes, a loopback listener (RFC 8252 §7.3) or an
/// https page; any other scheme or host would hand the code to whoever serves it.
fn redirect_uri(raw: &Raw) -> Result<Option<String>> {
    let uri = string_member(raw, "redirectUri", false)?;
    if let Some(u) = &uri {
        match Url::parse(u) {
            Ok(p) if p.fragment().is_none() && trusted_scheme(&p) => {}
            _ => {
                return Err(refuse(format!(
                    "mcp: 'http.oauth.redirectUri' must be an https:// URL or an http:// URL of a loopback host (127.0.0.1, [::1], localhost), without a fragment, got '{u}'"
                )))
            }
        }
    }
    Ok(uri)
}

fn scope(raw: &Raw) -> Result<Option<String>> {
    match raw.get("scope") {
        Raw::Undefined => Ok(None),
        Raw::String(s) => Ok(normalize_scope(s)),
        other => Err(refuse(format!(
            "mcp: 'http.oauth.scope' must be a string of space-separated scopes, got {}",
            describe_type(other)
        ))),
    }
}

fn resource(raw: &Raw) -> Result<ResourceChoice> {
    match raw.get("resource") {
        Raw::Undefined => Ok(ResourceChoice::Discovered),
        Raw::Bool(false) => Ok(ResourceChoice::Omit),
        Raw::String(s) => Ok(ResourceChoice::Fixed(
            http_url("resource", s)?.as_str().to_owned(),
        )),
        other => Err(refuse(format!(
            "mcp: 'http.oauth.resource' must be a URL string or false, got {}",
            describe_type(other)
        ))),
    }
}

/// `issuer`: an identifier is an https URL without a query or fragment (RFC 8414 §2; http
/// only on loopback, for local servers and tests).
fn issuer(raw: &Raw) -> Result<Option<String>> {
    let issuer = string_member(raw, "issuer", false)?;
    if let Some(i) = &issuer {
        let ok = Url::parse(i)
            .map(|u| trusted_scheme(&u) && u.query().is_none() && u.fragment().is_none())
            .unwrap_or(false);
        if !ok {
            return Err(refuse(format!(
                "mcp: 'http.oauth.issuer' must be an https:// URL without a query or fragment (http:// only for a loopback host), got '{i}'"
            )));
        }
    }
    Ok(issuer)
}

/// Whether the host gave the `authorize` callback and the `store`.
fn host_callbacks(raw: &Raw) -> Result<(bool, bool)> {
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
    Ok((authorize, store))
}

/// What each grant needs of the other keys, and what it does not use.
fn grant_needs(grant: Grant, client: &Client, redirect: bool, authorize: bool) -> Result<()> {
    let authenticates = client.secret.is_some() || client.private_key.is_some();
    let refusal = match grant {
        Grant::AuthorizationCode if !redirect => {
            "mcp: the 'authorization_code' grant of 'http.oauth' requires 'http.oauth.redirectUri'"
        }
        // The client as the authorization server knows it (RFC 7523 §3.1: the assertion is no
        // client authentication; an ID-JAG names the client it was issued to).
        Grant::JwtBearer if client.id.is_none() => {
            "mcp: the 'jwt_bearer' grant of 'http.oauth' requires 'http.oauth.clientId'"
        }
        Grant::JwtBearer if authorize => {
            "mcp: 'http.oauth.authorize' is not used by the 'jwt_bearer' grant"
        }
        Grant::ClientCredentials if client.id.is_none() || !authenticates => {
            "mcp: the 'client_credentials' grant of 'http.oauth' requires 'http.oauth.clientId' and 'http.oauth.clientSecret' or 'http.oauth.privateKey'"
        }
        Grant::ClientCredentials if authorize => {
            "mcp: 'http.oauth.authorize' is not used by the 'client_credentials' grant"
        }
        _ => return Ok(()),
    };
    Err(refuse(refusal.into()))
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
}
