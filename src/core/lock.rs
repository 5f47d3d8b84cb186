//! The toolset lock: what a source imported, pinned in a file a team commits, and
//! every later import checked against it.
//!
//! A lock holds, per admitted tool, its final and original name, its contract hash (the
//! engine's `toolContractHash`) and the full contract as the server sent it (title,
//! description, input and output schema, annotations): the contract hash leaves out schema
//! annotations such as a property's `description`, where a rug pull can hide as well as in the
//! tool's own. It is keyed by the source's identity (what the host configured, never the
//! `serverInfo` the server reports about itself) and records the config that shaped the import.
//! The text is sorted and indented, one tool per block, so a change shows in a code review.

use super::admit::ToolSpec;
use super::config::{Approval, Config, LockPolicy, Transport};
use super::error::{ConfigError, Result};
use super::hash::{tool_contract_hash, toolset_hash, ContractRef};
use super::jcs;
pub use super::lockdiff::LockedTool;
use super::lockdiff::{diff_tools, diff_value, Change, ChangeKind};
use super::signs::{signs, Sign, SIGNS_PER_IMPORT};
use super::url::shown_url;
use crate::sync::lock;
use pinned::{Pinned, ToolsText};
use serde_json::{json, Map, Value};
use std::sync::{Mutex, OnceLock};

/// The lock format's version: a reader refuses any other.
pub const LOCK_VERSION: u64 = 1;

/// A parsed lock.
#[derive(Debug)]
pub struct Lock {
    pub source: Value,
    pub config: Value,
    /// Names the lock in a refusal.
    origin: String,
    /// The protocol revision the lock's contracts were listed in (absent from a lock of old).
    era: Option<String>,
    /// The lock's text, with where its `tools` member is, until the entries are read. A lock
    /// of thousands of tools is megabytes: the host's `mcp()` call only scans it, and its
    /// entries are read on a thread of the source's (`prepare`), ready by the time the first
    /// sweep ends; each contract stays text (`pinned`).
    raw: Mutex<Option<ToolsText>>,
    pinned: OnceLock<Result<Pinned>>,
}

/// What one import's check found: the differences from the lock and the poisoning signs.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub changes: Vec<Change>,
    pub signs: Vec<Sign>,
    /// Signs past `SIGNS_PER_IMPORT`, counted and not kept.
    pub signs_omitted: usize,
}

/// How many lines a refusal lists; the rest are counted (`lockReport()` has them all).
const REFUSAL_LINES: usize = 20;

impl Report {
    /// A report of `changes` and `signs`, the signs bounded per import.
    pub fn new(changes: Vec<Change>, signs: Vec<Sign>) -> Self {
        let mut report = Report {
            changes,
            signs: Vec::new(),
            signs_omitted: 0,
        };
        report.add_signs(signs);
        report
    }

    /// Adds `signs`, keeping at most `SIGNS_PER_IMPORT` in all and counting the rest.
    pub fn add_signs(&mut self, mut signs: Vec<Sign>) {
        let room = SIGNS_PER_IMPORT.saturating_sub(self.signs.len());
        if signs.len() > room {
            self.signs_omitted += signs.len() - room;
            signs.truncate(room);
        }
        self.signs.append(&mut signs);
    }

    /// Every sign found, kept or not.
    pub fn sign_count(&self) -> usize {
        self.signs.len() + self.signs_omitted
    }
}

/// `lines` after `message`, each on a line of its own, at most `REFUSAL_LINES` of them and a
/// count of the rest: a refusal's text stays small whatever the server sent.
fn listed<'a>(
    mut message: String,
    lines: impl ExactSizeIterator<Item = &'a str>,
    total: usize,
) -> String {
    let shown = lines.len().min(REFUSAL_LINES);
    for line in lines.take(REFUSAL_LINES) {
        message.push_str("\n  ");
        message.push_str(line);
    }
    if total > shown {
        message.push_str(&format!(
            "\n  ... and {} more; lockReport() lists them",
            total - shown
        ));
    }
    message
}

/// The identity a lock is keyed by: what the host configured to reach the server. Env values
/// and URL credentials are secrets and stay out; env keys are in (a different key is a
/// different server setup). With OAuth, the authorization server's issuer: the pinned one, or
/// `issuer`, the one the login found.
pub fn identity(config: &Config, issuer: Option<&str>) -> Value {
    match &config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            sandbox,
            ..
        } => {
            let mut keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
            keys.sort_unstable();
            keys.dedup();
            let mut id =
                json!({ "transport": "stdio", "command": command, "args": args, "envKeys": keys });
            // The confinement is part of who the server is: a looser one is another source.
            if let Some(sandbox) = sandbox {
                id["sandbox"] = sandbox.identity();
            }
            id
        }
        Transport::Http { url, oauth, .. } => {
            let mut id = json!({ "transport": "streamable-http", "url": shown_url(url) });
            if let Some(oauth) = oauth {
                // The pinned authorization server, when there is one: the same URL behind
                // another issuer is another trust root.
                id["oauth"] = Value::Bool(true);
                if let Some(issuer) = oauth.issuer.as_deref().or(issuer) {
                    id["oauthIssuer"] = Value::String(issuer.to_owned());
                }
            }
            id
        }
        Transport::InProcess => json!({ "transport": "inprocess" }),
    }
}

/// The config that shaped the import: what decides which tools are admitted, under which
/// names, with which risk and approval. Absent keys are `null`, so every lock has each key.
pub fn shaping(config: &Config) -> Value {
    let mut risk: Vec<(&String, &String)> = config.risk.iter().collect();
    risk.sort();
    let risk: Map<String, Value> = risk
        .into_iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let approval = match &config.approval {
        Approval::None => Value::Bool(false),
        Approval::All => Value::Bool(true),
        Approval::PerTool(map) => {
            let mut entries: Vec<(&String, &bool)> = map.iter().collect();
            entries.sort();
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), Value::Bool(*v)))
                    .collect(),
            )
        }
    };
    json!({
        "allow": config.allow,
        "deny": config.deny,
        "prefix": config.prefix,
        "risk": risk,
        "approval": approval,
    })
}

/// The contracts of admitted tools as a lock pins them, sorted by final name.
pub fn locked_tools<'a>(specs: impl Iterator<Item = &'a ToolSpec>) -> Vec<LockedTool> {
    let mut tools: Vec<LockedTool> = specs
        .map(|spec| {
            if let Some(contract) = &spec.contract {
                return LockedTool {
                    name: spec.name.clone(),
                    original: spec.original.clone(),
                    contract: (**contract).clone(),
                };
            }
            let mut contract = Map::new();
            contract.insert("name".into(), Value::String(spec.original.clone()));
            if let Some(title) = &spec.title {
                contract.insert("title".into(), title.clone());
            }
            contract.insert(
                "description".into(),
                Value::String(spec.description.clone()),
            );
            contract.insert("inputSchema".into(), parsed(spec.input.json()));
            if let Some(output) = &spec.output {
                contract.insert("outputSchema".into(), parsed(output.json()));
            }
            if let Some(annotations) = &spec.annotations {
                contract.insert("annotations".into(), annotations.clone());
            }
            if let Some(t) = &spec.task_support {
                contract.insert("execution".into(), json!({ "taskSupport": t }));
            }
            LockedTool {
                name: spec.name.clone(),
                original: spec.original.clone(),
                contract: Value::Object(contract),
            }
        })
        .collect();
    tools.sort_by(|a, b| jcs::cmp_utf16(&a.name, &b.name));
    tools
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The engine's contract of a pinned tool: `{ name: final, description, parameters }`.
fn engine_contract(tool: &LockedTool) -> Value {
    json!({
        "name": tool.name,
        "description": tool.contract.get("description").cloned().unwrap_or(Value::String(String::new())),
        "parameters": tool.contract.get("inputSchema").cloned().unwrap_or(Value::Null),
    })
}

/// The engine's `toolsetHash` of the ToolDefs `specs` admitted.
pub fn specs_toolset_hash(specs: &[ToolSpec]) -> Result<String> {
    let contracts: Vec<Value> = locked_tools(specs.iter())
        .iter()
        .map(engine_contract)
        .collect();
    let refs: Vec<ContractRef<'_>> = contracts.iter().map(ContractRef::of).collect();
    toolset_hash(&refs)
}

/// The lock file's text for what `specs` admitted under `config`.
/// `era`: the protocol revision the contracts were listed in (a 2026-07-28 import can be told
/// apart from a 2025 one).
pub fn write(
    config: &Config,
    specs: &[ToolSpec],
    era: &str,
    issuer: Option<&str>,
) -> Result<String> {
    let tools = locked_tools(specs.iter());
    let contracts: Vec<Value> = tools.iter().map(engine_contract).collect();
    let refs: Vec<ContractRef<'_>> = contracts.iter().map(ContractRef::of).collect();
    let mut entries = Vec::with_capacity(tools.len());
    for (tool, contract) in tools.iter().zip(&refs) {
        entries.push(json!({
            "name": tool.name,
            "original": tool.original,
            "contractHash": tool_contract_hash(*contract)?,
            "contract": tool.contract,
        }));
    }
    let lock = json!({
        "lockVersion": LOCK_VERSION,
        "era": era,
        "source": identity(config, issuer),
        "config": shaping(config),
        "toolsetHash": toolset_hash(&refs)?,
        "tools": entries,
    });
    let mut out = String::with_capacity(4096 + specs.len() * 512);
    pretty(&mut out, &lock, 0);
    out.push('\n');
    Ok(out)
}

/// Indented JSON with sorted members (UTF-16 order, as JCS) and JavaScript's escaping and
/// numbers, so the text is the same whichever side wrote it and whatever order the server used.
fn pretty(out: &mut String, value: &Value, depth: usize) {
    let indent = |out: &mut String, d: usize| {
        out.push('\n');
        for _ in 0..d {
            out.push_str("  ");
        }
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                pretty(out, item, depth + 1);
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| jcs::cmp_utf16(a.0, b.0));
            out.push('{');
            for (i, (key, member)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                jcs::write_string(out, key);
                out.push_str(": ");
                pretty(out, member, depth + 1);
            }
            indent(out, depth);
            out.push('}');
        }
        other => jcs::write_value(out, other),
    }
}

fn refusal(origin: &str, what: String) -> ConfigError {
    ConfigError::new(format!(
        "mcp: {origin} is not a toolset lock written by 'rulvar-mcp lock': {what}"
    ))
}

/// A JSON value in a refusal, clipped (a lock can be anything a hand edit made of it).
fn shown(value: Option<&Value>) -> String {
    match value {
        None => "nothing".into(),
        Some(v) => super::lockdiff::clipped_json(v),
    }
}

impl Lock {
    /// The pinned tools, read once (whoever asks first reads them; others wait for it). A
    /// malformed entry refuses every import.
    pub fn pinned(&self) -> &Result<Pinned> {
        self.pinned.get_or_init(|| {
            let raw = lock(&self.raw).take();
            pinned::parse_tools(raw, &self.origin)
        })
    }

    /// Reads the pinned tools now (a source does it on a thread of its own as it is made).
    pub fn prepare(&self) {
        let _ = self.pinned();
    }

    /// Whether `contract` is the one pinned for final name `name`. Tree equality ignores key
    /// order; a number spelled otherwise (`1.0` for `1`) answers no, and the diff (which
    /// compares JCS texts) then finds no change.
    pub fn pins(&self, name: &str, contract: &Value) -> bool {
        self.pinned()
            .as_ref()
            .is_ok_and(|pinned| pinned.pins(name, contract))
    }

    /// Refuses a lock written for another source: its tools say nothing about this one.
    /// An issuer the lock recorded from a login is taken as it is here (it is known only once
    /// a login happened; `check_issuer` holds the import to it).
    pub fn check_identity(&self, config: &Config) -> Result<()> {
        self.identity_is(config, self.recorded_issuer())
    }

    /// The issuer the lock recorded, if any.
    fn recorded_issuer(&self) -> Option<&str> {
        self.source.get("oauthIssuer").and_then(Value::as_str)
    }

    /// At an import: the authorization server the login used must be the one the lock records
    /// (the same URL behind another issuer is another trust root).
    pub fn check_issuer(&self, config: &Config, issuer: Option<&str>) -> Result<()> {
        match (self.recorded_issuer(), issuer) {
            (Some(recorded), Some(used)) if recorded != used => {
                self.identity_is(config, Some(used))
            }
            _ => Ok(()),
        }
    }

    fn identity_is(&self, config: &Config, issuer: Option<&str>) -> Result<()> {
        let mut differences = Vec::new();
        diff_value(
            "source",
            &self.source,
            &identity(config, issuer),
            &mut differences,
        );
        if differences.is_empty() {
            return Ok(());
        }
        Err(ConfigError::new(format!(
            "mcp: the lock is for another source than '{}' ({}); write a lock for this source with 'rulvar-mcp lock'",
            config.id(),
            differences.join("; ")
        )))
    }

    /// Checks one import (every sweep: the first and each after a listChanged) against the
    /// lock. `Err` is the refusal the policy (or `strict`) makes; the report is returned either
    /// way, so the host can see what was refused.
    /// `redact` is applied to every text the lines may quote before it is clipped, so no part
    /// of a secret a server echoed shows.
    pub fn check(
        &self,
        config: &Config,
        specs: &[ToolSpec],
        redact: &Redact<'_>,
    ) -> (Report, std::result::Result<(), ConfigError>) {
        // Only a tool whose contract is not the pinned one (admission asked `pins`) goes to
        // the field-level diff.
        let pinned = match self.pinned() {
            Ok(pinned) => pinned,
            Err(e) => return (Report::default(), Err(e.clone())),
        };
        let mut same = vec![false; pinned.len()];
        let differing: Vec<&ToolSpec> = specs
            .iter()
            .filter(|spec| match pinned.find(&spec.name) {
                Some(i) if spec.pinned => {
                    same[i] = true;
                    false
                }
                _ => true,
            })
            .collect();
        let mut current = locked_tools(differing.into_iter());
        let locked: Result<Vec<LockedTool>> = (0..pinned.len())
            .filter(|i| !same[*i])
            .map(|i| pinned.locked(i, &self.origin))
            .collect();
        let mut locked = match locked {
            Ok(locked) => locked,
            Err(e) => return (Report::default(), Err(e)),
        };
        for tool in locked.iter_mut().chain(current.iter_mut()) {
            redact_strings(&mut tool.contract, redact);
        }
        let mut changes = Vec::new();
        let mut config_lines = Vec::new();
        diff_value("config", &self.config, &shaping(config), &mut config_lines);
        changes.extend(config_lines.into_iter().map(|text| Change {
            kind: ChangeKind::Config,
            tool: None,
            text,
        }));
        changes.extend(diff_tools(&locked, &current));
        let report = Report::new(changes, signs(specs, redact));
        let verdict = verdict(config, &report);
        (report, verdict)
    }
}

/// The check of one import when a lock or `strict` is in use (`None` when neither is): the
/// report, and the refusal it makes, if any.
/// `era`: the protocol revision the import was listed in, held to the one the lock records.
pub fn check_import(
    lock: Option<&Lock>,
    config: &Config,
    specs: &[ToolSpec],
    redact: &Redact<'_>,
    era: Option<&str>,
) -> Option<(Report, std::result::Result<(), ConfigError>)> {
    if lock.is_some() || config.strict {
        if let Some(twice) = listed_twice(specs) {
            let refusal = ConfigError::new(format!(
                "mcp: the tools of '{}' list '{}' more than once, which a lock (or 'strict') refuses: which of them is pinned would be a guess",
                config.id(),
                super::lockdiff::visible(twice, 128)
            ));
            return Some((Report::default(), Err(refusal)));
        }
    }
    match lock {
        Some(lock) => {
            let (mut report, verdict) = lock.check(config, specs, redact);
            let recorded = lock.era.as_deref();
            let Some((was, now)) = recorded.zip(era).filter(|(was, now)| was != now) else {
                return Some((report, verdict));
            };
            report.changes.insert(
                0,
                Change {
                    kind: ChangeKind::Config,
                    tool: None,
                    text: format!(
                        "era changed: '{}' -> '{now}'",
                        super::lockdiff::visible(was, 64)
                    ),
                },
            );
            let verdict = verdict.and_then(|()| self::verdict(config, &report));
            Some((report, verdict))
        }
        None if config.strict => {
            let report = Report::new(Vec::new(), signs(specs, redact));
            let verdict = verdict(config, &report);
            Some((report, verdict))
        }
        None => None,
    }
}

/// A final name two admitted tools share, if any.
fn listed_twice(specs: &[ToolSpec]) -> Option<&str> {
    let mut seen = std::collections::HashSet::with_capacity(specs.len());
    specs
        .iter()
        .map(|s| s.name.as_str())
        .find(|name| !seen.insert(*name))
}

/// What no line may show (the source's secrets), applied to a text.
pub type Redact<'a> = dyn Fn(&str) -> String + Sync + 'a;

fn redact_strings(value: &mut Value, redact: &Redact<'_>) {
    match value {
        Value::String(s) => *s = redact(s),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(v, redact)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_strings(v, redact)),
        _ => {}
    }
}

/// The refusal `config`'s policy and `strict` make of `report`, if any.
pub fn verdict(config: &Config, report: &Report) -> std::result::Result<(), ConfigError> {
    let id = config.id();
    let refused: Vec<&Change> = match config.lock_policy {
        LockPolicy::Report => Vec::new(),
        LockPolicy::Refuse => report.changes.iter().collect(),
        LockPolicy::AllowAdditions => report
            .changes
            .iter()
            .filter(|c| c.kind != ChangeKind::Added)
            .collect(),
    };
    if !refused.is_empty() {
        let what = match config.lock_policy {
            LockPolicy::AllowAdditions => "lockPolicy 'allow-additions' admits new tools only",
            _ => "lockPolicy 'refuse'",
        };
        let message = format!(
            "mcp: the tools of '{id}' differ from the lock ({what}); {} change(s):",
            refused.len()
        );
        let total = refused.len();
        let lines = refused.iter().map(|c| c.text.as_str());
        return Err(ConfigError::new(listed(message, lines, total)));
    }
    if config.strict && report.sign_count() > 0 {
        let message = format!(
            "mcp: the tools of '{id}' show {} poisoning sign(s), which 'strict' refuses:",
            report.sign_count()
        );
        let lines = report.signs.iter().map(|s| s.text.as_str());
        return Err(ConfigError::new(listed(
            message,
            lines,
            report.sign_count(),
        )));
    }
    Ok(())
}

impl Report {
    /// The report as the JS side reads it (`lockReport()`).
    pub fn to_json(&self, policy: Option<LockPolicy>) -> String {
        let changes: Vec<Value> = self.changes.iter().map(Change::to_json).collect();
        let signs: Vec<Value> = self.signs.iter().map(Sign::to_json).collect();
        let mut report = json!({
            "policy": policy.map(LockPolicy::name),
            "changes": changes,
            "signs": signs,
        });
        if self.signs_omitted > 0 {
            report["signsOmitted"] = Value::from(self.signs_omitted);
        }
        serde_json::to_string(&report).unwrap_or_else(|_| "null".into())
    }
}

mod pinned;
mod read;
pub use read::parse;
#[cfg(test)]
mod tests;
