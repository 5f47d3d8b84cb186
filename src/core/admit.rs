//! Admission: filter (deny wins over allow), schema bytes (of admitted tools only), final names,
//! canonicalization of the input schema, validators.
//!
//! Pages are admitted as they arrive, but the first refusal reported is the one the original
//! reports, in its order: anything wrong with a page as listed (its shape, or an output schema
//! whose references cannot resolve, which the SDK client's list call refuses while it caches
//! output validators, denied tools included) before the sweep goes on; then `maxSchemaBytes`
//! over every admitted tool in order; then, tool by tool, the final name and canonicalization.
//! So each kind of refusal is collected separately and the earliest kind wins at the end.

use super::canonical::{canonicalize, certainly_canonical};
use super::config::{Config, LockSource, Names};
use super::dialect::unresolvable_reference;
use super::error::ConfigError;
use super::headers::{declarations, ParamHeader};
use super::jcs;
use super::sweep::clip;
use super::validate::{Compiled, Use};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicBool, Ordering};

/// What identifies an import's tools for `drift: 'refuse'` (`Drift::imported`): each admitted
/// tool's final and original name, title, description, schemas, annotations and task support,
/// in the order listed. Any change a host could see or run differently changes it.
pub fn fingerprint(specs: &[ToolSpec]) -> [u8; 32] {
    let mut hash = Sha256::new();
    let json = |v: &Option<Value>| v.as_ref().map(Value::to_string).unwrap_or_default();
    for spec in specs {
        for part in [
            spec.name.as_str(),
            spec.original.as_str(),
            &json(&spec.title),
            spec.description.as_str(),
            spec.input.json(),
            spec.output.as_ref().map_or("", |o| o.json()),
            &json(&spec.annotations),
            &json(&spec.task_support),
        ] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part.as_bytes());
        }
    }
    hash.finalize().into()
}
use std::sync::Arc;

/// One admitted tool: everything `execute` and the ToolDef need, validators compiled once.
#[derive(Debug)]
pub struct ToolSpec {
    pub name: String,
    pub original: String,
    pub description: String,
    pub needs_approval: bool,
    pub risk: Option<String>,
    /// Also holds the input schema's exact JSON text, which the JS side parses into the
    /// ToolDef's `parameters` (shared between identical schemas, like the validator).
    pub input: Compiled,
    pub output: Option<Compiled>,
    /// The arguments a modern HTTP request mirrors into headers (`x-mcp-header`).
    pub headers: Vec<ParamHeader>,
    /// What the ToolDef leaves out but a toolset lock pins (core/lock.rs): moved out of the
    /// wire object, never copied.
    pub title: Option<Value>,
    pub annotations: Option<Value>,
    /// When a lock is checked and the tool's contract is not the pinned one: the contract as
    /// a lock holds it (`lock::LockedTool`), trees kept from the wire for the diff.
    pub contract: Option<Box<Value>>,
    /// The contract is exactly the one the lock pins (so `contract` is not kept).
    pub pinned: bool,
    /// The tool runs as a task when asked to (`execution.taskSupport` `optional` or
    /// `required`): a 2025 call asks for one only of such a tool.
    pub tasks: bool,
    /// `execution.taskSupport` as the server sent it, when it sent one: pinned by a lock, so a
    /// locked tool cannot switch to running as a task unnoticed.
    pub task_support: Option<Value>,
}

/// The admission of one sweep, fed page by page.
pub struct Admission {
    config: Arc<Config>,
    tools: Vec<ToolSpec>,
    /// A page's own refusal (an unresolvable output schema), with the page's number.
    page_refusal: Option<(u64, ConfigError)>,
    bytes_refusal: Option<ConfigError>,
    tool_refusal: Option<ConfigError>,
    /// Set once the sweep has failed: only page refusals can still matter.
    sweep_failed: Arc<AtomicBool>,
    /// The connection's era reads `x-mcp-header` (it declares the headers a request mirrors),
    /// and a tool whose declarations break its rules is left out.
    reads_headers: bool,
    /// Whether a tool's contract (final name, contract tree) is the one a lock pins
    /// (`Lock::pins`): asked here, while the sweep still runs, rather than after it.
    pinned: Option<Pinned>,
    /// The tools left out of a modern import (invalid `x-mcp-header` declarations), with why.
    left_out: Vec<(String, String)>,
    /// With `names: 'map'`: every final name so far, and the tool it came from, so a mapped
    /// name never lands on another tool's.
    finals: Option<std::collections::HashMap<String, String>>,
}

/// See `Admission::pinned`.
pub type Pinned = Arc<dyn Fn(&str, &Value) -> bool + Send + Sync>;

impl Admission {
    /// `sweep_failed` is set by the sweep when it fails, so the pages still to come get only
    /// the checks that can decide which refusal is reported. `reads_headers`: the era reads
    /// `x-mcp-header` declarations.
    pub fn new(config: Arc<Config>, sweep_failed: Arc<AtomicBool>, reads_headers: bool) -> Self {
        Self {
            tools: Vec::new(),
            page_refusal: None,
            bytes_refusal: None,
            tool_refusal: None,
            sweep_failed,
            reads_headers,
            left_out: Vec::new(),
            pinned: None,
            finals: (config.names == Names::Map).then(Default::default),
            config,
        }
    }

    /// Checks each admitted tool against a lock as it is admitted (see `ToolSpec::contract`).
    pub fn pinned_by(mut self, pinned: Option<Pinned>) -> Self {
        self.pinned = pinned;
        self
    }

    /// The tools admitted so far, in order: `finish` hands back these, or a refusal.
    pub fn admitted(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// Admits page `page` (1-based) of wire tools.
    pub fn page(&mut self, page: u64, wire: Vec<Value>) {
        if self.page_refusal.is_none() {
            if let Some(refusal) = wire.iter().find_map(unresolvable_output) {
                self.page_refusal = Some((page, refusal));
            }
        }
        if self.page_refusal.is_some() || self.sweep_failed.load(Ordering::Relaxed) {
            return;
        }
        for tool in wire {
            self.tool(tool);
        }
    }

    /// One wire tool through the passes, in the original's order: the filter, `x-mcp-header`,
    /// schema bytes, the final name, canonicalization; a tool a pass stops goes no further.
    fn tool(&mut self, tool: Value) {
        let Value::Object(mut map) = tool else { return };
        let Some(original) = self.allowed(&map) else {
            return;
        };
        let parameters = map.remove("inputSchema").unwrap_or(Value::Null);
        let Some(headers) = self.headers(&original, &parameters) else {
            return;
        };
        let output_schema = map.remove("outputSchema");
        self.schema_bytes(&original, &parameters, output_schema.as_ref());
        // Past a refusal, later tools can only bring an earlier kind (schema bytes, above).
        if self.bytes_refusal.is_some() || self.tool_refusal.is_some() {
            return;
        }
        let Some(name) = self.final_name(&original) else {
            return;
        };
        if !self.canonical(&original, &parameters) {
            return;
        }
        let spec = self.spec(
            map,
            (original, name),
            &parameters,
            output_schema.as_ref(),
            headers,
        );
        self.contract(spec, parameters, output_schema);
    }

    /// The tool's name, when it has one the config lets in (deny wins over allow).
    fn allowed(&self, map: &serde_json::Map<String, Value>) -> Option<String> {
        let Some(Value::String(original)) = map.get("name") else {
            return None;
        };
        let config = &self.config;
        let allowed = !config.deny.contains(original)
            && config.allow.as_ref().is_none_or(|a| a.contains(original));
        allowed.then(|| original.clone())
    }

    /// The arguments a request mirrors into headers, where the era reads `x-mcp-header`;
    /// `None` when the tool's declarations break their rules: the tool is left out, as the
    /// specification requires, and said why.
    fn headers(&mut self, original: &str, parameters: &Value) -> Option<Vec<ParamHeader>> {
        if !self.reads_headers {
            return Some(Vec::new());
        }
        declarations(parameters)
            .map_err(|why| self.left_out.push((original.to_owned(), why)))
            .ok()
    }

    /// Counts the tool's schemas against `maxSchemaBytes`; the first tool past it is refused.
    fn schema_bytes(&mut self, original: &str, parameters: &Value, output: Option<&Value>) {
        let (Some(cap), None) = (self.config.max_schema_bytes, &self.bytes_refusal) else {
            return;
        };
        let bytes = wire_text(parameters).len() + output.map_or(0, |o| wire_text(o).len());
        if bytes as u64 > cap {
            self.bytes_refusal = Some(ConfigError::new(format!(
                "mcp: tool '{}' declares {bytes} bytes of schema, over the declared maxSchemaBytes {cap}; deny the tool or raise the cap",
                clip(original)
            )));
        }
    }

    /// The name the tool is imported under (`prefix`, then `names`), or `None` with the
    /// refusal recorded.
    fn final_name(&mut self, original: &str) -> Option<String> {
        let name = match &self.config.prefix {
            Some(prefix) => format!("{prefix}_{original}"),
            None => original.to_owned(),
        };
        let valid = valid_name(&name);
        let refusal = match &mut self.finals {
            None if valid => return Some(name),
            None => format!("mcp: {}", name_refusal(&clip(&name))),
            Some(finals) => {
                let name = if valid { name } else { mapped_name(&name) };
                let Some(other) = finals.get(&name) else {
                    finals.insert(name.clone(), original.to_owned());
                    return Some(name);
                };
                format!(
                    "mcp: tools '{}' and '{}' both import as '{name}' (names: 'map'); deny one of them",
                    clip(other),
                    clip(original)
                )
            }
        };
        self.tool_refusal = Some(ConfigError::new(refusal));
        None
    }

    /// Whether the input schema canonicalizes (the refusal recorded, when not). Admission only
    /// needs to know it does; building the canonical form is the slow way to find out and is
    /// left for schemas that need it.
    fn canonical(&mut self, original: &str, parameters: &Value) -> bool {
        if certainly_canonical(parameters) {
            return true;
        }
        let Err(e) = canonicalize(parameters) else {
            return true;
        };
        self.tool_refusal = Some(ConfigError::new(format!(
            "mcp: tool '{}' has an input schema that cannot be canonicalized: {}",
            clip(original),
            e.message
        )));
        false
    }

    /// The admitted tool, its schemas serialized once: the validator cache's key and the text
    /// the JS side parses.
    fn spec(
        &self,
        mut map: serde_json::Map<String, Value>,
        (original, name): (String, String),
        parameters: &Value,
        output_schema: Option<&Value>,
        headers: Vec<ParamHeader>,
    ) -> ToolSpec {
        let task_support = map
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .cloned();
        let description = match map.get("description") {
            Some(Value::String(d)) => d.clone(),
            _ => String::new(),
        };
        ToolSpec {
            title: map.remove("title"),
            annotations: map.remove("annotations"),
            contract: None,
            pinned: false,
            needs_approval: self.config.needs_approval(&original),
            risk: self.config.risk.get(&original).cloned(),
            tasks: task_support
                .as_ref()
                .is_some_and(|t| t == "optional" || t == "required"),
            input: Compiled::deferred(exact_text(parameters), Use::Input),
            output: output_schema.map(|s| Compiled::deferred(exact_text(s), Use::Output)),
            headers,
            name,
            original,
            description,
            task_support,
        }
    }

    /// `spec` admitted, with its contract as a lock holds it (`lock::LockedTool`) when a lock
    /// is in use: the wire's trees moved in, kept only when the lock does not pin it.
    fn contract(&mut self, mut spec: ToolSpec, parameters: Value, output: Option<Value>) {
        if self.config.lock != LockSource::None {
            let mut c = serde_json::Map::with_capacity(6);
            c.insert("name".into(), Value::String(spec.original.clone()));
            if let Some(t) = &spec.title {
                c.insert("title".into(), t.clone());
            }
            c.insert(
                "description".into(),
                Value::String(spec.description.clone()),
            );
            c.insert("inputSchema".into(), parameters);
            if let Some(o) = output {
                c.insert("outputSchema".into(), o);
            }
            if let Some(a) = &spec.annotations {
                c.insert("annotations".into(), a.clone());
            }
            if let Some(t) = &spec.task_support {
                c.insert("execution".into(), serde_json::json!({ "taskSupport": t }));
            }
            let contract = Value::Object(c);
            spec.pinned = self
                .pinned
                .as_ref()
                .is_some_and(|pins| pins(&spec.name, &contract));
            spec.contract = (!spec.pinned).then(|| Box::new(contract));
        }
        self.tools.push(spec);
    }

    /// The admitted tools, or the refusal the original would report first. `sweep` is how the
    /// sweep ended and how many pages it had handed over by then: a page's own refusal on one
    /// of those pages came first.
    /// The tools left out so far, each with why (taken: asked once, before `finish`).
    pub fn take_left_out(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.left_out)
    }

    pub fn finish<E>(
        self,
        sweep: Result<(), (E, u64)>,
    ) -> Result<Vec<ToolSpec>, AdmissionError<E>> {
        let page_refusal = |listed: u64| {
            self.page_refusal
                .as_ref()
                .filter(|(page, _)| *page <= listed)
                .map(|(_, r)| r.clone())
        };
        if let Err((error, listed)) = sweep {
            return Err(match page_refusal(listed) {
                Some(r) => AdmissionError::Refused(r),
                None => AdmissionError::Sweep(error),
            });
        }
        match page_refusal(u64::MAX)
            .or(self.bytes_refusal)
            .or(self.tool_refusal)
        {
            Some(r) => Err(AdmissionError::Refused(r)),
            None => Ok(self.tools),
        }
    }
}

/// What ended an import: the sweep's own failure, or a refusal of admission.
#[derive(Debug)]
pub enum AdmissionError<E> {
    Sweep(E),
    Refused(ConfigError),
}

/// An output schema whose references cannot resolve: the SDK client cannot compile its
/// validator, and its list call fails.
fn unresolvable_output(tool: &Value) -> Option<ConfigError> {
    let schema = tool.get("outputSchema")?;
    let reference = unresolvable_reference(schema)?;
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    Some(ConfigError::new(format!(
        "mcp: tool '{}' has an output schema whose reference '{}' cannot be resolved",
        clip(name),
        clip(&reference)
    )))
}

/// Admits the wire tools of one page, for the tests below.
#[cfg(test)]
pub fn admit(config: &Config, wire: Vec<Value>) -> Result<Vec<ToolSpec>, ConfigError> {
    let mut admission = Admission::new(Arc::new(config.clone()), Arc::default(), false);
    admission.page(1, wire);
    admission.finish::<()>(Ok(())).map_err(|e| match e {
        AdmissionError::Refused(r) => r,
        AdmissionError::Sweep(()) => ConfigError::new("the sweep failed"),
    })
}

/// The final-name rule as messages quote it (`valid_name` applies it).
/// The refusal of a final name outside the rule (the JS side's `resolveToolset` says it too,
/// of a tool from any origin).
pub(crate) fn name_refusal(name: &str) -> String {
    format!("imported tool name '{name}' must match {TOOL_NAME_PATTERN}")
}

pub(crate) const TOOL_NAME_PATTERN: &str = "^[a-zA-Z0-9_-]{1,64}$";

/// An engine-legal name for `name` (`names: 'map'`), the same every time: each character
/// outside `[A-Za-z0-9_-]` becomes `_`, and a name past 64 characters keeps its first 55 and
/// ends in `_` and 8 hex digits of the SHA-256 of the whole name, so two long names that share
/// a beginning stay apart.
pub fn mapped_name(name: &str) -> String {
    let legal: String = name
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .collect();
    let legal = if legal.is_empty() {
        "_".to_owned()
    } else {
        legal
    };
    if legal.len() <= 64 {
        return legal;
    }
    let digest = super::hash::sha256_hex(name);
    format!("{}_{}", &legal[..55], &digest[..8])
}

pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A schema's JSON text exactly as sent (serde_json keeps key order and every number).
fn exact_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The bytes of schema an admitted tool declares, as `maxSchemaBytes` counted them (input and
/// output, `JSON.stringify`'s text): what the CLI shows.
pub(crate) fn declared_schema_bytes(spec: &ToolSpec) -> usize {
    let bytes = |json: &str| {
        serde_json::from_str::<Value>(json).map_or(json.len(), |v| wire_text(&v).len())
    };
    bytes(spec.input.json()) + spec.output.as_ref().map_or(0, |o| bytes(o.json()))
}

/// A schema's JSON text as `JSON.stringify` writes it: what `maxSchemaBytes` counts.
fn wire_text(value: &Value) -> String {
    let mut out = String::new();
    jcs::write_json(&mut out, value, jcs::KeyOrder::Wire);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn mapped_names_are_legal_deterministic_and_apart() {
        assert_eq!(mapped_name("fs.read_file"), "fs_read_file");
        assert_eq!(mapped_name("a b/c"), "a_b_c");
        let long_a = format!("{}{}", "x".repeat(60), ".alpha.beta");
        let long_b = format!("{}{}", "x".repeat(60), ".alpha.gamma");
        let (a, b) = (mapped_name(&long_a), mapped_name(&long_b));
        assert!(valid_name(&a) && valid_name(&b), "{a} {b}");
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert_eq!(a, mapped_name(&long_a));
        assert!(valid_name(&mapped_name("")));
    }

    use super::*;
    use crate::core::raw::Raw;
    use serde_json::json;

    fn config(extra: Vec<(&str, Raw)>) -> Config {
        let mut m = vec![
            ("transport".to_string(), Raw::String("stdio".into())),
            ("command".to_string(), Raw::String("node".into())),
        ];
        m.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
        Config::parse(&Raw::Object(m)).unwrap()
    }

    fn wire(name: &str, schema: Value) -> Value {
        json!({"name": name, "description": "d", "inputSchema": schema})
    }

    #[test]
    fn deny_wins_over_allow_and_prefix_applies() {
        let c = config(vec![
            (
                "allow",
                Raw::Array(vec![Raw::String("a".into()), Raw::String("b".into())]),
            ),
            ("deny", Raw::Array(vec![Raw::String("b".into())])),
            ("prefix", Raw::String("gh".into())),
        ]);
        let specs = admit(
            &c,
            vec![
                wire("a", json!({"type": "object"})),
                wire("b", json!({"type": "object"})),
                wire("c", json!({"type": "object"})),
            ],
        )
        .unwrap();
        assert_eq!(
            specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            vec!["gh_a"]
        );
        assert_eq!(specs[0].original, "a");
    }

    #[test]
    fn schema_bytes_count_like_json_stringify() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "number", "maximum": 1.0, "minimum": 1e21}}});
        // JSON.stringify writes 1.0 as 1 and 1e21 as 1e+21.
        assert_eq!(
            wire_text(&schema),
            r#"{"type":"object","properties":{"n":{"type":"number","maximum":1,"minimum":1e+21}}}"#
        );
        let c = config(vec![("maxSchemaBytes", Raw::Number(10.0))]);
        let e = admit(&c, vec![wire("fat", schema)]).unwrap_err();
        assert!(
            e.message.starts_with(
                "mcp: tool 'fat' declares 82 bytes of schema, over the declared maxSchemaBytes 10"
            ),
            "{}",
            e.message
        );
    }

    #[test]
    fn refuses_bad_final_names_and_uncanonical_schemas() {
        let c = config(vec![]);
        let e = admit(&c, vec![wire("has space", json!({"type": "object"}))]).unwrap_err();
        assert_eq!(
            e.message,
            "mcp: imported tool name 'has space' must match ^[a-zA-Z0-9_-]{1,64}$"
        );
        let e = admit(
            &c,
            vec![wire(
                "rec",
                json!({"type": "object", "properties": {"a": {"$ref": "#"}}}),
            )],
        )
        .unwrap_err();
        assert!(e.message.contains("Recursive local $ref '#'"));
    }
}
