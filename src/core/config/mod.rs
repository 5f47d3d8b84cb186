//! The validated config: every check and message of the TypeScript original, in its order
//! (bounds, timeouts, requireBounds, drift, http.headers, transport keys); the first failure
//! throws.
//!
//! Checks the TypeScript original lacked (unknown keys, malformed allow/deny/approval/risk,
//! the stdio extension keys) run after those six, so a config the original
//! refused is refused with the original's message.

pub(crate) mod asks;
mod cassette;
pub(crate) mod oauth;
mod read;
mod sandbox;
mod transport;

pub(crate) use read::{describe_type, header_record, HeaderValue};

use self::oauth::OAuthConfig;
use super::error::Result;
use super::raw::Raw;
use super::url::shown_url;
use read::*;
use std::collections::HashMap;
use transport::*;

pub const BOUND_KEYS: [&str; 3] = ["maxTools", "maxPages", "maxSchemaBytes"];
pub const TIMEOUT_KEYS: [&str; 4] = ["connectMs", "listMs", "callMs", "discoveryMs"];
pub const TOP_LEVEL_KEYS: [&str; 36] = [
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
    "sandbox",
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
    "asksOutsideCalls",
    // Record and replay (`core::cassette`): stdio and streamable HTTP.
    "cassette",
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
        /// The server's confinement (`sandbox`), if the host declared one.
        sandbox: Option<crate::core::sandbox::Sandbox>,
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

/// A timeout: the milliseconds the host gave (or the default), which refusals quote, and the
/// wait they stand for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wait {
    pub ms: f64,
    pub duration: std::time::Duration,
}

impl Wait {
    pub fn of(ms: f64) -> Self {
        Self {
            ms,
            duration: wait_of(ms),
        }
    }
}

/// The SDK's default request timeout, for each of `connectMs`, `listMs` and `callMs` the
/// config leaves out (`discoveryMs` has none: no budget for the whole sweep).
pub const DEFAULT_TIMEOUT_MS: f64 = 60_000.0;

/// `timeouts`, with every default resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    pub connect: Wait,
    pub list: Wait,
    pub call: Wait,
    pub discovery: Option<Wait>,
}

impl Default for Timeouts {
    fn default() -> Self {
        let default = Wait::of(DEFAULT_TIMEOUT_MS);
        Self {
            connect: default,
            list: default,
            call: default,
            discovery: None,
        }
    }
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
    pub asks: asks::Asks,
    /// `cassette`: record the exchange to a file, or replay it from one.
    pub cassette: Option<crate::core::cassette::Settings>,
}

/// `names`: `'refuse'` (the default, as the original) or `'map'` (`admit::mapped_name`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Names {
    Refuse,
    Map,
}

pub use crate::core::revisions::Protocol;

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

    /// Validates a host config. The first failed check refuses: the original's six steps in
    /// its order, then the keys it lacked, each group by its reader.
    pub fn parse(raw: &Raw) -> Result<Config> {
        let Raw::Object(_) = raw else {
            return Err(refuse(format!(
                "mcp: the config must be an object, got {}",
                raw.display()
            )));
        };
        // 1. Bounds. 2. Timeouts. 3. requireBounds.
        let bounds = parse_bounds(raw)?;
        let timeouts = parse_timeouts(raw.get("timeouts"))?;
        require_bounds(raw, &bounds, &timeouts)?;
        // 4. drift (and protocol).
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
        // 5. http.headers. 6. Transport keys.
        let headers = parse_headers(raw.get("http"))?;
        let kind = transport_kind(raw)?;
        // Beyond the original: refuse what it accepted silently, naming the key.
        unknown_keys(raw)?;
        let transport = parse_transport(raw, kind, headers)?;
        let allow = optional_string_list(raw, "allow")?;
        let deny = optional_string_list(raw, "deny")?.unwrap_or_default();
        let prefix = optional_string(raw, "prefix")?;
        let approval = parse_approval(raw.get("approval"))?;
        let risk = parse_risk(raw.get("risk"))?;
        require_bounds_is_boolean(raw)?;
        let (lock, lock_policy, strict) = parse_lock_keys(raw)?;
        let asks = asks::parse(raw)?;
        let cassette = cassette::parse(raw)?;
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
            cassette,
        })
    }
}

/// `maxTools`, `maxPages` and `maxSchemaBytes`, in `BOUND_KEYS`' order.
fn parse_bounds(raw: &Raw) -> Result<[Option<u64>; 3]> {
    let mut bounds = [None; 3];
    for (slot, key) in bounds.iter_mut().zip(BOUND_KEYS) {
        *slot = positive_integer(key, raw.get(key))?;
    }
    Ok(bounds)
}

/// `requireBounds` of another type, refused after the keys the original refused.
fn require_bounds_is_boolean(raw: &Raw) -> Result<()> {
    match raw.get("requireBounds") {
        Raw::Undefined | Raw::Bool(_) => Ok(()),
        other => Err(refuse(format!(
            "mcp: 'requireBounds' must be a boolean, got {}",
            other.display()
        ))),
    }
}

/// `requireBounds: true` demands every bound and the discovery deadline.
fn require_bounds(raw: &Raw, bounds: &[Option<u64>; 3], timeouts: &Timeouts) -> Result<()> {
    if !matches!(raw.get("requireBounds"), Raw::Bool(true)) {
        return Ok(());
    }
    let mut missing: Vec<&str> = BOUND_KEYS
        .iter()
        .zip(bounds)
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| *k)
        .collect();
    if timeouts.discovery.is_none() {
        missing.push("timeouts.discoveryMs");
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(refuse(format!(
        "mcp: requireBounds demands every discovery bound; missing {}",
        missing.join(", ")
    )))
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

fn parse_timeouts(value: &Raw) -> Result<Timeouts> {
    match value {
        Raw::Undefined => return Ok(Timeouts::default()),
        Raw::Object(_) => {}
        other => {
            return Err(refuse(format!(
                "mcp: 'timeouts' must be an object of millisecond values, got {}",
                other.display()
            )))
        }
    }
    let mut given = [None; 4];
    for (slot, key) in given.iter_mut().zip(TIMEOUT_KEYS) {
        *slot = match value.get(key) {
            Raw::Undefined => None,
            Raw::Number(n) if n.is_finite() && *n > 0.0 => Some(Wait::of(*n)),
            other => {
                return Err(refuse(format!(
                "mcp: 'timeouts.{key}' must be a positive finite number of milliseconds, got {}",
                other.display()
            )))
            }
        };
    }
    let default = Timeouts::default();
    let [connect, list, call, discovery] = given;
    Ok(Timeouts {
        connect: connect.unwrap_or(default.connect),
        list: list.unwrap_or(default.list),
        call: call.unwrap_or(default.call),
        discovery,
    })
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

#[cfg(test)]
mod tests;
