//! The validated config: every check and message of the TypeScript original, in its order
//! (bounds, timeouts, requireBounds, drift, http.headers, transport keys); the first failure
//! throws.
//!
//! Checks the TypeScript original lacked (unknown keys, malformed allow/deny/approval/risk,
//! the stdio extension keys) run after those six, so a config the original
//! refused is refused with the original's message.

use super::error::{ConfigError, Result};
use super::oauth::{check_server_url, parse_oauth, OAuthConfig};
use super::raw::Raw;
use std::collections::HashMap;

pub const BOUND_KEYS: [&str; 3] = ["maxTools", "maxPages", "maxSchemaBytes"];
pub const TIMEOUT_KEYS: [&str; 4] = ["connectMs", "listMs", "callMs", "discoveryMs"];
pub const TOP_LEVEL_KEYS: [&str; 33] = [
    "transport",
    "command",
    "args",
    "url",
    "server",
    "allow",
    "deny",
    "prefix",
    "approval",
    "risk",
    // The tools whose calls a lost answer may send again (beside those with risk 'read').
    "idempotent",
    "maxTools",
    "maxPages",
    "maxSchemaBytes",
    "timeouts",
    "requireBounds",
    "http",
    "drift",
    "protocol",
    // What an imported name the engine's rule refuses does: refuse (the default) or map.
    "names",
    "env",
    "cwd",
    "stderr",
    // The toolset lock: the lock, what a difference from it does, and whether a
    // poisoning sign refuses.
    "lock",
    "lockPolicy",
    "strict",
    // What a server may ask back in the middle of a call (`core::asks`).
    "elicit",
    "sample",
    "roots",
    "maxInputRounds",
    "tasks",
    "serverLogs",
    // `id` is read-only output, but hosts spread a source's config back into mcp() at times.
    "id",
];
pub const RISK_LABELS: [&str; 5] = ["read", "write", "network", "execute", "destructive"];
/// The host environment variables a stdio child sees by default: no other host variable (and so
/// no secret in the host's environment) reaches a third-party server.
pub const ENV_ALLOW_LIST: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The longest wait any timeout stands for (about 30 years). Every accepted number of
/// milliseconds is a real deadline, however large: a bigger wait would overflow the clock.
pub const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(30 * 365 * 24 * 3600);

/// A timeout's milliseconds as a wait, saturating at `MAX_WAIT`.
pub fn wait_of(ms: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(ms / 1000.0).map_or(MAX_WAIT, |d| d.min(MAX_WAIT))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drift {
    Rekey,
    Refuse,
}

/// `lockPolicy`: what an import that differs from the lock does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockPolicy {
    /// Any difference refuses the import.
    Refuse,
    /// Tools the lock lacks are admitted; a changed or removed one refuses.
    AllowAdditions,
    /// The import proceeds; the differences are reported to the host.
    Report,
}

impl LockPolicy {
    pub fn name(self) -> &'static str {
        match self {
            LockPolicy::Refuse => "refuse",
            LockPolicy::AllowAdditions => "allow-additions",
            LockPolicy::Report => "report",
        }
    }
}

/// `lock`: where the lock comes from. Its text is read and checked by the node layer
/// (`core::lock` parses it), so the config only says which kind the host gave.
#[derive(Debug, Clone, PartialEq)]
pub enum LockSource {
    None,
    /// A path to the lock file (read once, at construction).
    Path(String),
    /// The parsed lock object itself.
    Object,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StderrMode {
    Inherit,
    Ignore,
    Pipe,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Headers {
    None,
    Static(Vec<(String, String)>),
    /// A host function (sync or async) called before every wire request.
    Hook,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
        stderr: StderrMode,
    },
    Http {
        url: String,
        /// What of `url` is a credential (its userinfo, credential-like query values): redacted
        /// wherever a server echoes it.
        credentials: Vec<String>,
        headers: Headers,
        /// `http.oauth`: the addon obtains, refreshes and sends the bearer token itself.
        oauth: Option<Box<OAuthConfig>>,
    },
    InProcess,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    None,
    All,
    PerTool(HashMap<String, bool>),
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timeouts {
    pub connect_ms: Option<f64>,
    pub list_ms: Option<f64>,
    pub call_ms: Option<f64>,
    pub discovery_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub transport: Transport,
    pub allow: Option<Vec<String>>,
    pub deny: Vec<String>,
    pub prefix: Option<String>,
    pub approval: Approval,
    pub risk: HashMap<String, String>,
    /// `idempotent`: tools (original names) a call of which is safe to send twice.
    pub idempotent: Vec<String>,
    pub max_tools: Option<u64>,
    pub max_pages: Option<u64>,
    pub max_schema_bytes: Option<u64>,
    pub timeouts: Timeouts,
    pub drift: Drift,
    pub protocol: Protocol,
    /// `names`: a tool name the engine's rule refuses refuses the import, or is mapped.
    pub names: Names,
    pub lock: LockSource,
    pub lock_policy: LockPolicy,
    /// `strict`: a poisoning sign in a description or title refuses the import.
    pub strict: bool,
    /// What the host offers to answer when a server asks back (nothing by default).
    pub asks: super::asks::Asks,
}

/// `names`: `'refuse'` (the default, as the original) or `'map'` (`admit::mapped_name`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Names {
    Refuse,
    Map,
}

/// `protocol`: which era the connection opens in. `Auto` opens with the 2025 handshake and
/// falls forward to 2026-07-28 when the server refuses it; a pin speaks only its revision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Protocol {
    Auto,
    Legacy,
    Modern,
}

impl Config {
    /// The source id: `mcp:stdio:<command>`, `mcp:http:<url>`, `mcp:inprocess`.
    pub fn id(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, .. } => format!("mcp:stdio:{command}"),
            // Never the credentials a URL may carry: the id is shown everywhere (the posture,
            // logs, error texts).
            Transport::Http { url, .. } => format!("mcp:http:{}", shown_url(url)),
            Transport::InProcess => "mcp:inprocess".into(),
        }
    }

    /// The values no error text may show: the stdio child's `env` and static header values
    /// (a header hook's values are added as it returns them).
    pub fn secret_values(&self) -> Vec<&str> {
        match &self.transport {
            Transport::Stdio { env, .. } => env.iter().map(|(_, v)| v.as_str()).collect(),
            Transport::Http {
                headers,
                oauth,
                credentials,
                ..
            } => {
                let mut out: Vec<&str> = match headers {
                    Headers::Static(headers) => headers.iter().map(|(_, v)| v.as_str()).collect(),
                    _ => Vec::new(),
                };
                out.extend(credentials.iter().map(String::as_str));
                if let Some(oauth) = oauth {
                    out.extend(oauth.secret_values());
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// Whether a call of the tool is safe to send twice: its risk is `read`, or the host
    /// listed it in `idempotent`.
    pub fn repeatable(&self, original_name: &str) -> bool {
        self.risk.get(original_name).is_some_and(|r| r == "read")
            || self.idempotent.iter().any(|t| t == original_name)
    }

    pub fn needs_approval(&self, original_name: &str) -> bool {
        match &self.approval {
            Approval::None => false,
            Approval::All => true,
            Approval::PerTool(map) => map.get(original_name).copied().unwrap_or(false),
        }
    }

    /// Validates a host config. The first failed check refuses.
    pub fn parse(raw: &Raw) -> Result<Config> {
        let Raw::Object(_) = raw else {
            return Err(refuse(format!(
                "mcp: the config must be an object, got {}",
                raw.display()
            )));
        };
        // 1. Bounds.
        let mut bounds = [None; 3];
        for (slot, key) in bounds.iter_mut().zip(BOUND_KEYS) {
            *slot = positive_integer(key, raw.get(key))?;
        }
        // 2. Timeouts.
        let timeouts = parse_timeouts(raw.get("timeouts"))?;
        // 3. requireBounds.
        if matches!(raw.get("requireBounds"), Raw::Bool(true)) {
            let mut missing: Vec<&str> = BOUND_KEYS
                .iter()
                .zip(bounds)
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| *k)
                .collect();
            if timeouts.discovery_ms.is_none() {
                missing.push("timeouts.discoveryMs");
            }
            if !missing.is_empty() {
                return Err(refuse(format!(
                    "mcp: requireBounds demands every discovery bound; missing {}",
                    missing.join(", ")
                )));
            }
        }
        // 4. drift.
        let drift = literal(
            raw.get("drift"),
            "drift",
            &[("rekey", Drift::Rekey), ("refuse", Drift::Refuse)],
            Drift::Rekey,
        )?;
        let protocol = literal(
            raw.get("protocol"),
            "protocol",
            &[
                ("auto", Protocol::Auto),
                ("2025-11-25", Protocol::Legacy),
                ("2026-07-28", Protocol::Modern),
            ],
            Protocol::Auto,
        )?;
        // 5. http.headers.
        let headers = parse_headers(raw.get("http"))?;
        // 6. Transport keys.
        let transport_name = raw.get("transport");
        let kind = match transport_name.as_str() {
            Some("stdio") => {
                require(raw, "stdio", "command")?;
                forbid(raw, "stdio", &["url", "server", "http"])?;
                TransportKind::Stdio
            }
            Some("streamable-http") => {
                require(raw, "streamable-http", "url")?;
                forbid(
                    raw,
                    "streamable-http",
                    &["command", "args", "server", "env", "cwd", "stderr"],
                )?;
                TransportKind::Http
            }
            Some("inprocess") => {
                require(raw, "inprocess", "server")?;
                forbid(
                    raw,
                    "inprocess",
                    &["command", "args", "url", "http", "env", "cwd", "stderr"],
                )?;
                TransportKind::InProcess
            }
            _ => {
                return Err(refuse(format!(
                    "mcp: unknown transport '{}'",
                    transport_name.display()
                )))
            }
        };
        // Beyond the original: refuse what it accepted silently, naming the key.
        unknown_keys(raw)?;
        let transport = match kind {
            TransportKind::Stdio => Transport::Stdio {
                command: non_empty_string(raw, "command")?,
                args: optional_string_list(raw, "args")?.unwrap_or_default(),
                env: parse_env(raw.get("env"))?,
                cwd: optional_string(raw, "cwd")?,
                stderr: parse_stderr(raw.get("stderr"))?,
            },
            TransportKind::Http => {
                let url = parse_url(raw)?;
                let oauth = parse_oauth(raw.get("http").get("oauth"))?.map(Box::new);
                if oauth.is_some() {
                    check_server_url(&url, &shown_url(&url))?;
                    if let Headers::Static(h) = &headers {
                        if h.iter()
                            .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
                        {
                            return Err(refuse(
                                "mcp: 'http.headers' has a static 'Authorization' header, which 'http.oauth' replaces; give one of them".into(),
                            ));
                        }
                    }
                }
                Transport::Http {
                    credentials: url_credentials(&url),
                    url,
                    headers,
                    oauth,
                }
            }
            TransportKind::InProcess => {
                check_server(raw.get("server"))?;
                Transport::InProcess
            }
        };
        let allow = optional_string_list(raw, "allow")?;
        let deny = optional_string_list(raw, "deny")?.unwrap_or_default();
        let prefix = optional_string(raw, "prefix")?;
        let approval = parse_approval(raw.get("approval"))?;
        let risk = parse_risk(raw.get("risk"))?;
        match raw.get("requireBounds") {
            Raw::Undefined | Raw::Bool(_) => {}
            other => {
                return Err(refuse(format!(
                    "mcp: 'requireBounds' must be a boolean, got {}",
                    other.display()
                )))
            }
        }
        let (lock, lock_policy, strict) = parse_lock_keys(raw)?;
        let asks = super::asks::parse(raw)?;
        let idempotent = optional_string_list(raw, "idempotent")?.unwrap_or_default();
        let names = literal(
            raw.get("names"),
            "names",
            &[("refuse", Names::Refuse), ("map", Names::Map)],
            Names::Refuse,
        )?;
        Ok(Config {
            transport,
            allow,
            deny,
            prefix,
            approval,
            risk,
            idempotent,
            max_tools: bounds[0],
            max_pages: bounds[1],
            max_schema_bytes: bounds[2],
            timeouts,
            drift,
            protocol,
            names,
            lock,
            lock_policy,
            strict,
            asks,
        })
    }
}

/// `lock`, `lockPolicy` and `strict`, after every other check.
fn parse_lock_keys(raw: &Raw) -> Result<(LockSource, LockPolicy, bool)> {
    let lock = match raw.get("lock") {
        Raw::Undefined => LockSource::None,
        Raw::String(path) if !path.is_empty() => LockSource::Path(path.clone()),
        Raw::Object(_) => LockSource::Object,
        other => {
            return Err(refuse(format!(
                "mcp: 'lock' must be the path of a lock file or the parsed lock object (written by 'rulvar-mcp lock'), got {}",
                describe_type(other)
            )))
        }
    };
    let policy = literal(
        raw.get("lockPolicy"),
        "lockPolicy",
        &[
            ("refuse", LockPolicy::Refuse),
            ("allow-additions", LockPolicy::AllowAdditions),
            ("report", LockPolicy::Report),
        ],
        LockPolicy::Refuse,
    )?;
    if lock == LockSource::None && !raw.get("lockPolicy").is_absent() {
        return Err(refuse(
            "mcp: 'lockPolicy' needs a 'lock' to check the import against".into(),
        ));
    }
    let strict = match raw.get("strict") {
        Raw::Undefined => false,
        Raw::Bool(b) => *b,
        other => {
            return Err(refuse(format!(
                "mcp: 'strict' must be a boolean, got {}",
                other.display()
            )))
        }
    };
    Ok((lock, policy, strict))
}

enum TransportKind {
    Stdio,
    Http,
    InProcess,
}

pub(crate) fn refuse(message: String) -> ConfigError {
    ConfigError::new(message)
}

fn positive_integer(key: &str, value: &Raw) -> Result<Option<u64>> {
    match value {
        Raw::Undefined => Ok(None),
        Raw::Number(n) if n.is_finite() && *n > 0.0 && n.fract() == 0.0 => Ok(Some(*n as u64)),
        other => Err(refuse(format!(
            "mcp: '{key}' must be a positive integer, got {}",
            other.display()
        ))),
    }
}

fn parse_timeouts(value: &Raw) -> Result<Timeouts> {
    let mut out = Timeouts::default();
    match value {
        Raw::Undefined => return Ok(out),
        Raw::Object(_) => {}
        other => {
            return Err(refuse(format!(
                "mcp: 'timeouts' must be an object of millisecond values, got {}",
                other.display()
            )))
        }
    }
    let slots = [
        &mut out.connect_ms,
        &mut out.list_ms,
        &mut out.call_ms,
        &mut out.discovery_ms,
    ];
    for (slot, key) in slots.into_iter().zip(TIMEOUT_KEYS) {
        *slot = match value.get(key) {
            Raw::Undefined => None,
            Raw::Number(n) if n.is_finite() && *n > 0.0 => Some(*n),
            other => {
                return Err(refuse(format!(
                "mcp: 'timeouts.{key}' must be a positive finite number of milliseconds, got {}",
                other.display()
            )))
            }
        };
    }
    Ok(out)
}

fn parse_headers(http: &Raw) -> Result<Headers> {
    let headers = match http {
        Raw::Undefined => return Ok(Headers::None),
        Raw::Object(_) => http.get("headers"),
        other => {
            return Err(refuse(format!(
                "mcp: 'http' must be an object with an optional 'headers' member, got {}",
                other.display()
            )))
        }
    };
    match headers {
        Raw::Undefined => Ok(Headers::None),
        Raw::Function => Ok(Headers::Hook),
        Raw::Object(members) => {
            let members = members.iter().map(|(name, value)| {
                let value = match value {
                    Raw::Undefined | Raw::Null => HeaderValue::Absent,
                    Raw::String(s) => HeaderValue::Text(s),
                    _ => HeaderValue::Other,
                };
                (name.as_str(), value)
            });
            // Values are secrets: the message names the header, never its value.
            header_record(members).map(Headers::Static).map_err(|name| {
                refuse(format!(
                    "mcp: 'http.headers' value of '{name}' must be a string"
                ))
            })
        }
        _ => Err(refuse(
            "mcp: 'http.headers' must be a record of header values or a (possibly async) function returning one"
                .into(),
        )),
    }
}

/// Refuses a member of the config object `parent` (a dotted path) that is not one of `known`:
/// a typo would otherwise leave a setting silently unset.
pub(crate) fn only_known_keys(
    parent: &str,
    members: &[(String, Raw)],
    known: &[&str],
) -> Result<()> {
    for (key, value) in members {
        if !value.is_absent() && !known.contains(&key.as_str()) {
            return Err(refuse(format!(
                "mcp: unknown config key '{parent}.{key}'; the keys are {}",
                known
                    .iter()
                    .map(|k| format!("{parent}.{k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

/// One member of a header record as the host gave it.
pub(crate) enum HeaderValue<'a> {
    /// `undefined` or `null`: no such header.
    Absent,
    Text(&'a str),
    /// Anything else, which no header can carry.
    Other,
}

/// The one rule for a record of header values, the config's static one and every record the
/// header hook returns alike: string values are headers, absent or null ones are left out,
/// anything else refuses the record. `Err` names the offending header (never its value).
pub(crate) fn header_record<'a>(
    members: impl IntoIterator<Item = (&'a str, HeaderValue<'a>)>,
) -> std::result::Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (name, value) in members {
        match value {
            HeaderValue::Absent => {}
            HeaderValue::Text(v) => out.push((name.to_owned(), v.to_owned())),
            HeaderValue::Other => return Err(name.to_owned()),
        }
    }
    Ok(out)
}

fn require(raw: &Raw, transport: &str, key: &str) -> Result<()> {
    let missing = match raw.get(key) {
        Raw::Undefined | Raw::Null => true,
        Raw::String(s) => s.is_empty(),
        _ => false,
    };
    if missing {
        return Err(refuse(format!(
            "mcp: the {transport} transport requires '{key}'"
        )));
    }
    Ok(())
}

fn forbid(raw: &Raw, transport: &str, keys: &[&str]) -> Result<()> {
    for key in keys {
        if !raw.get(key).is_absent() {
            return Err(refuse(format!(
                "mcp: '{key}' is not a config key of the '{transport}' transport (exactly the keys matching the chosen transport)"
            )));
        }
    }
    Ok(())
}

fn unknown_keys(raw: &Raw) -> Result<()> {
    let Raw::Object(members) = raw else {
        return Ok(());
    };
    for (key, value) in members {
        if value.is_absent() {
            continue;
        }
        if !TOP_LEVEL_KEYS.contains(&key.as_str()) {
            return Err(refuse(format!(
                "mcp: unknown config key '{key}'; the keys are {}",
                // `id` is accepted but is no key to set.
                TOP_LEVEL_KEYS
                    .iter()
                    .filter(|k| **k != "id")
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    for (parent, known) in [
        ("timeouts", &TIMEOUT_KEYS[..]),
        ("http", &["headers", "oauth"][..]),
    ] {
        if let Raw::Object(members) = raw.get(parent) {
            only_known_keys(parent, members, known)?;
        }
    }
    Ok(())
}

fn non_empty_string(raw: &Raw, key: &str) -> Result<String> {
    match raw.get(key) {
        Raw::String(s) if !s.is_empty() => Ok(s.clone()),
        other => Err(refuse(format!(
            "mcp: '{key}' must be a non-empty string, got {}",
            other.display()
        ))),
    }
}

fn optional_string(raw: &Raw, key: &str) -> Result<Option<String>> {
    match raw.get(key) {
        Raw::Undefined => Ok(None),
        Raw::String(s) => Ok(Some(s.clone())),
        other => Err(refuse(format!(
            "mcp: '{key}' must be a string, got {}",
            other.display()
        ))),
    }
}

fn optional_string_list(raw: &Raw, key: &str) -> Result<Option<Vec<String>>> {
    match raw.get(key) {
        Raw::Undefined => Ok(None),
        Raw::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Raw::String(s) => Ok(s.clone()),
                other => Err(refuse(format!(
                    "mcp: '{key}' must be an array of strings; element {i} is {}",
                    describe_type(other)
                ))),
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        other => Err(refuse(format!(
            "mcp: '{key}' must be an array of strings, got {}",
            describe_type(other)
        ))),
    }
}

pub(crate) fn describe_type(value: &Raw) -> String {
    match value {
        Raw::String(s) => format!("the string '{s}'"),
        Raw::Array(_) => "an array".into(),
        Raw::Object(_) => "an object".into(),
        Raw::Function => "a function".into(),
        other => other.display(),
    }
}

fn parse_url(raw: &Raw) -> Result<String> {
    let url = non_empty_string(raw, "url")?;
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(refuse(format!(
            "mcp: 'url' must be an http:// or https:// URL, got '{}'",
            shown_url(&url)
        )));
    }
    Ok(url)
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
fn url_credentials(url: &str) -> Vec<String> {
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

fn check_server(server: &Raw) -> Result<()> {
    if let Raw::Object(_) = server {
        if matches!(server.get("connect"), Raw::Function) {
            return Ok(());
        }
    }
    Err(refuse(
        "mcp: 'server' must be an object with a connect(transport) method (an @modelcontextprotocol/sdk Server or McpServer)".into(),
    ))
}

fn parse_approval(value: &Raw) -> Result<Approval> {
    match value {
        Raw::Undefined | Raw::Bool(false) => Ok(Approval::None),
        Raw::Bool(true) => Ok(Approval::All),
        Raw::Object(members) => {
            let mut map = HashMap::with_capacity(members.len());
            for (tool, flag) in members {
                match flag {
                    Raw::Undefined => {}
                    Raw::Bool(b) => {
                        map.insert(tool.clone(), *b);
                    }
                    other => {
                        return Err(refuse(format!(
                            "mcp: 'approval.{tool}' must be a boolean, got {}",
                            other.display()
                        )))
                    }
                }
            }
            Ok(Approval::PerTool(map))
        }
        other => Err(refuse(format!(
            "mcp: 'approval' must be true or a record of tool names to booleans, got {}",
            other.display()
        ))),
    }
}

fn parse_risk(value: &Raw) -> Result<HashMap<String, String>> {
    let members = match value {
        Raw::Undefined => return Ok(HashMap::new()),
        Raw::Object(members) => members,
        other => {
            return Err(refuse(format!(
                "mcp: 'risk' must be a record of tool names to risk labels, got {}",
                other.display()
            )))
        }
    };
    let mut map = HashMap::with_capacity(members.len());
    for (tool, label) in members {
        match label {
            Raw::Undefined => {}
            Raw::String(l) if RISK_LABELS.contains(&l.as_str()) => {
                map.insert(tool.clone(), l.clone());
            }
            other => {
                return Err(refuse(format!(
                    "mcp: 'risk.{tool}' must be one of {}, got '{}'",
                    RISK_LABELS.join(", "),
                    other.display()
                )))
            }
        }
    }
    Ok(map)
}

fn parse_env(value: &Raw) -> Result<Vec<(String, String)>> {
    let members = match value {
        Raw::Undefined => return Ok(Vec::new()),
        Raw::Object(members) => members,
        other => {
            return Err(refuse(format!(
                "mcp: 'env' must be a record of environment variable values, got {}",
                describe_type(other)
            )))
        }
    };
    let mut out = Vec::with_capacity(members.len());
    for (name, value) in members {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(refuse(format!(
                "mcp: 'env' has an invalid variable name '{name}'"
            )));
        }
        match value {
            Raw::Undefined => {}
            // Values are secrets: never echo them.
            Raw::String(s) if !s.contains('\0') => out.push((name.clone(), s.clone())),
            _ => {
                return Err(refuse(format!(
                    "mcp: 'env.{name}' must be a string without NUL characters"
                )))
            }
        }
    }
    Ok(out)
}

fn parse_stderr(value: &Raw) -> Result<StderrMode> {
    literal(
        value,
        "stderr",
        &[
            ("inherit", StderrMode::Inherit),
            ("ignore", StderrMode::Ignore),
            ("pipe", StderrMode::Pipe),
        ],
        StderrMode::Inherit,
    )
}

/// A key whose value is one of a few string literals, `default` when absent; anything else is
/// refused as `mcp: '<key>' must be 'a', 'b' or 'c', got '<value>'`.
pub(crate) fn literal<T: Copy>(
    value: &Raw,
    key: &str,
    choices: &[(&str, T)],
    default: T,
) -> Result<T> {
    if let Raw::Undefined = value {
        return Ok(default);
    }
    if let Raw::String(s) = value {
        if let Some((_, v)) = choices.iter().find(|(name, _)| name == s) {
            return Ok(*v);
        }
    }
    let names: Vec<String> = choices.iter().map(|(n, _)| format!("'{n}'")).collect();
    let listed = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    Err(refuse(format!(
        "mcp: '{key}' must be {listed}, got '{}'",
        value.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::raw::test_values::{obj, s};

    fn stdio(extra: &[(&str, Raw)]) -> Raw {
        let mut m = vec![("transport", s("stdio")), ("command", s("node"))];
        m.extend(extra.iter().cloned());
        obj(&m)
    }
    fn err(raw: Raw) -> String {
        Config::parse(&raw).unwrap_err().message
    }

    #[test]
    fn credentials_in_the_url_are_never_shown() {
        assert_eq!(
            shown_url("https://u:p%40ss@h.example/mcp?api_key=k1&v=2&X-Amz-Signature=s&flag"),
            "https://h.example/mcp?api_key=[redacted]&v=2&X-Amz-Signature=[redacted]&flag"
        );
        assert_eq!(
            shown_url("https://h.example/mcp?v=2"),
            "https://h.example/mcp?v=2"
        );
        assert_eq!(shown_url("http://u:p@[bad/x?token=t"), "http://[bad/x");
        let mut found = url_credentials("https://us3r:p%40ss@h.example/mcp?api_key=k1&v=2");
        found.sort();
        assert_eq!(found, vec!["k1", "p%40ss", "p@ss", "us3r"]);
        let c = Config::parse(&obj(&[
            ("transport", s("streamable-http")),
            ("url", s("https://alice:pw-123@h.example/mcp?token=t0k3n")),
        ]))
        .unwrap();
        assert_eq!(c.id(), "mcp:http:https://h.example/mcp?token=[redacted]");
        assert!(c.secret_values().contains(&"pw-123") && c.secret_values().contains(&"t0k3n"));
    }

    #[test]
    fn bounds_refuse_non_positive_integers() {
        for (v, shown) in [
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (0.0, "0"),
            (-1.0, "-1"),
            (1.5, "1.5"),
        ] {
            for key in BOUND_KEYS {
                assert_eq!(
                    err(stdio(&[(key, Raw::Number(v))])),
                    format!("mcp: '{key}' must be a positive integer, got {shown}")
                );
            }
        }
    }

    #[test]
    fn checks_run_in_contract_order() {
        // A bad bound wins over a bad timeout, which wins over a bad transport.
        let raw = obj(&[
            ("transport", s("carrier-pigeon")),
            ("maxPages", Raw::Number(0.0)),
            ("timeouts", obj(&[("listMs", Raw::Number(-5.0))])),
        ]);
        assert_eq!(
            err(raw),
            "mcp: 'maxPages' must be a positive integer, got 0"
        );
        let raw = obj(&[
            ("transport", s("carrier-pigeon")),
            ("timeouts", obj(&[("listMs", Raw::Number(-5.0))])),
        ]);
        assert_eq!(
            err(raw),
            "mcp: 'timeouts.listMs' must be a positive finite number of milliseconds, got -5"
        );
        assert_eq!(
            err(obj(&[("transport", s("carrier-pigeon"))])),
            "mcp: unknown transport 'carrier-pigeon'"
        );
    }

    #[test]
    fn require_bounds_lists_missing_in_order() {
        let raw = stdio(&[
            ("requireBounds", Raw::Bool(true)),
            ("maxTools", Raw::Number(5.0)),
            ("maxPages", Raw::Number(5.0)),
        ]);
        assert_eq!(
            err(raw),
            "mcp: requireBounds demands every discovery bound; missing maxSchemaBytes, timeouts.discoveryMs"
        );
    }

    #[test]
    fn transports_require_and_forbid_keys() {
        assert_eq!(
            err(obj(&[("transport", s("stdio"))])),
            "mcp: the stdio transport requires 'command'"
        );
        assert_eq!(
            err(stdio(&[("url", s("http://x"))])),
            "mcp: 'url' is not a config key of the 'stdio' transport (exactly the keys matching the chosen transport)"
        );
        let http = obj(&[
            ("transport", s("streamable-http")),
            ("url", s("http://127.0.0.1:1/mcp")),
            ("env", obj(&[])),
        ]);
        assert!(err(http).starts_with("mcp: 'env' is not a config key of the 'streamable-http'"));
    }

    #[test]
    fn extension_checks_name_the_key() {
        assert!(err(stdio(&[("maxtools", Raw::Number(1.0))]))
            .starts_with("mcp: unknown config key 'maxtools'"));
        assert!(err(stdio(&[("risk", obj(&[("a", s("dangerous"))]))]))
            .starts_with("mcp: 'risk.a' must be one of read, write"));
        assert!(err(stdio(&[("allow", Raw::Array(vec![Raw::Number(1.0)]))]))
            .starts_with("mcp: 'allow' must be an array of strings"));
        let secret = err(stdio(&[("env", obj(&[("TOKEN", Raw::Number(42.0))]))]));
        assert!(!secret.contains("42"));
    }

    #[test]
    fn parses_a_full_stdio_config() {
        let c = Config::parse(&stdio(&[
            ("args", Raw::Array(vec![s("server.js")])),
            ("prefix", s("gh")),
            ("approval", obj(&[("push", Raw::Bool(true))])),
            ("risk", obj(&[("push", s("write"))])),
            ("drift", s("refuse")),
            ("maxTools", Raw::Number(10.0)),
            ("timeouts", obj(&[("callMs", Raw::Number(1.5))])),
            ("id", Raw::Undefined),
        ]))
        .unwrap();
        assert_eq!(c.id(), "mcp:stdio:node");
        assert!(c.needs_approval("push") && !c.needs_approval("pull"));
        assert_eq!(c.drift, Drift::Refuse);
        assert_eq!(c.max_tools, Some(10));
        assert_eq!(c.timeouts.call_ms, Some(1.5));
        assert_eq!(wait_of(1.5), std::time::Duration::from_micros(1500));
        // Accepted values beyond what a clock can hold are the longest wait, not a panic.
        assert_eq!(wait_of(1e300), MAX_WAIT);
        assert_eq!(wait_of(f64::MAX), MAX_WAIT);
    }
}
