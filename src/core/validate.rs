//! JSON Schema validation, in the dialect the schema is written in (`dialect`).
//!
//! Tools compile their validators once, when first needed, and reuse them on every call; tools
//! with the same schema share one. A tool's input is held to what its schema forbids, formats not
//! asserted; a structured result is validated as the MCP SDK's client validates it, formats
//! (`date-time`, `email`, `uri`, `uuid`, `ipv4`, ...) asserted.

use super::dialect::{implied_draft, reachable_only};
use super::error::{ConfigError, Result};
use super::lite::{Lite, LiteJson};
use crate::sync::lock;
use jsonschema::json::Json;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub message: String,
    /// JSON Pointer of the offending instance location; empty at the root.
    pub path: String,
}

/// What a validator is for: tool input (formats are annotations) or structured output
/// (formats asserted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Use {
    Input,
    Output,
}

/// A schema's validators, shared by every tool with the same schema text.
pub struct Compiled {
    shared: Arc<Shared>,
}

/// One schema's validators, each compiled when first needed: for `Value`s (when a value is
/// refused, for its issues; or asked why there is none), and for `Lite` trees (a call's input,
/// a structured result validated in the text it came in). An import compiles none: a toolset of
/// thousands of tools, most never called, pays its compiles at the calls (about 40 µs for a
/// typical tool), not all of them before its first.
struct Shared {
    /// The schema as serde_json writes it: exact (numbers, wire key order), for the JS side,
    /// and what a validator is compiled from.
    json: Arc<str>,
    used_for: Use,
    /// Why there is no validator, when the schema cannot be compiled: values then pass
    /// unchecked, as the original sends every input.
    validator: OnceLock<std::result::Result<jsonschema::Validator, Arc<str>>>,
    lite: OnceLock<Option<jsonschema::Validator<LiteJson>>>,
}

impl Shared {
    fn validator(
        &self,
        schema: Option<&Value>,
    ) -> std::result::Result<&jsonschema::Validator, &str> {
        let compiled = self.validator.get_or_init(|| {
            let parsed;
            let schema = match schema {
                Some(schema) => schema,
                None => {
                    // The text was written from a `Value` (a server's frames nest at most 128
                    // levels, serde's default), so it reads back.
                    parsed = serde_json::from_str::<Value>(&self.json)
                        .map_err(|e| Arc::<str>::from(e.to_string()))?;
                    &parsed
                }
            };
            compile(schema, self.used_for).map_err(Arc::from)
        });
        match compiled {
            Ok(validator) => Ok(validator),
            Err(reason) => Err(reason),
        }
    }
}

/// Validators known in this process, by the exact JSON text of their schema (serde_json's:
/// wire key order, every number as sent, so equal texts are the same schema). Hosts import
/// the same server again and again (a source per session, several agents on one server):
/// identical schemas share one compiled validator (and one copy of their text) instead of
/// compiling and holding it again.
/// Entries are weak: a validator lives as long as a tool that uses it.
#[derive(Default)]
struct Interned {
    /// One map per `Use` (indexed by it). The key is also the text every holder shares; it
    /// goes with the entry at a sweep.
    by_text: [HashMap<Arc<str>, Weak<Shared>>; 2],
    /// Dead entries are swept when the map reaches this size.
    sweep_at: usize,
}

fn interned() -> &'static Mutex<Interned> {
    static INTERNED: OnceLock<Mutex<Interned>> = OnceLock::new();
    INTERNED.get_or_init(Default::default)
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled")
    }
}

impl Compiled {
    /// A validator for `schema` used as input, or the reason it cannot be had.
    pub fn new(schema: &Value) -> Result<Self> {
        let compiled = Self::with_text(
            schema,
            serde_json::to_string(schema).unwrap_or_default(),
            Use::Input,
        );
        match compiled.unvalidated() {
            None => Ok(compiled),
            Some(reason) => Err(ConfigError::new(format!(
                "the schema is not a valid JSON Schema: {reason}"
            ))),
        }
    }

    /// `text` is `serde_json::to_string(schema)`, for a caller that has it already, compiled
    /// now. A schema that cannot be compiled gives a `Compiled` without validator (see
    /// `unvalidated`).
    pub fn with_text(schema: &Value, text: String, used_for: Use) -> Self {
        let compiled = Self::deferred(text, used_for);
        let _ = compiled.shared.validator(Some(schema));
        compiled
    }

    /// As `with_text`, compiled when first needed (from `text`, which must be serde_json's
    /// text of a schema nesting at most 128 levels).
    pub fn deferred(text: String, used_for: Use) -> Self {
        let mut cache = lock(interned());
        let cache = &mut *cache;
        let map = &mut cache.by_text[used_for as usize];
        let json = match map.get_key_value(text.as_str()) {
            Some((json, entry)) => match entry.upgrade() {
                Some(shared) => return Self { shared },
                // A dead entry's key is the same text: keep one copy.
                None => json.clone(),
            },
            None => Arc::from(text),
        };
        if map.len() >= cache.sweep_at {
            map.retain(|_, v| v.strong_count() > 0);
            cache.sweep_at = (map.len() * 2).max(1024);
        }
        let shared = Arc::new(Shared {
            json: json.clone(),
            used_for,
            validator: OnceLock::new(),
            lite: OnceLock::new(),
        });
        map.insert(json, Arc::downgrade(&shared));
        Self { shared }
    }

    /// Why values are not checked against this schema, when they are not (compiling it, the
    /// first time this is asked).
    pub fn unvalidated(&self) -> Option<&str> {
        self.shared.validator(None).err()
    }

    /// The schema's JSON text, exact (serde_json keeps wire key order and every number).
    pub fn json(&self) -> &str {
        &self.shared.json
    }

    /// Whether `instance` is valid, judged as `issues` would judge its `Value`; `None` when
    /// there is no validator for `Lite` trees (the caller takes the `Value` path).
    pub(crate) fn lite_valid(&self, instance: Lite<'_>) -> Option<bool> {
        let shared = &self.shared;
        let lite = shared.lite.get_or_init(|| {
            let schema: Value = serde_json::from_str(&shared.json).ok()?;
            compile::<LiteJson>(&schema, shared.used_for).ok()
        });
        match lite {
            Some(validator) => Some(validator.is_valid(instance)),
            // A schema that cannot compile checks nothing, in either representation.
            None => shared.validator(None).is_err().then_some(true),
        }
    }

    /// Every issue of `instance` against the schema; empty when valid.
    pub fn issues(&self, instance: &Value) -> Vec<Issue> {
        let Ok(validator) = self.shared.validator(None) else {
            return Vec::new();
        };
        if validator.is_valid(instance) {
            return Vec::new();
        }
        validator
            .iter_errors(instance)
            .map(|e| Issue {
                message: e.to_string(),
                path: e.instance_path().to_string(),
            })
            .collect()
    }
}

impl Compiled {
    /// Where `instance` breaks the schema and which keyword it breaks, as `at /a: type`,
    /// without the instance's values (for an answer whose words are a person's).
    pub fn issue_locations(&self, instance: &Value) -> Vec<String> {
        let Ok(validator) = self.shared.validator(None) else {
            return Vec::new();
        };
        validator
            .iter_errors(instance)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() { "/" } else { path.as_str() };
                format!("at {at}: {}", e.kind().keyword())
            })
            .collect()
    }
}

/// Compiles in the schema's dialect, without the definitions no reference reaches, for
/// instances in representation `F`.
fn compile<F: Json>(
    schema: &Value,
    used_for: Use,
) -> std::result::Result<jsonschema::Validator<F>, String> {
    let mut options = jsonschema::options_for::<F>()
        .should_validate_formats(used_for == Use::Output)
        .with_registry(&referencing::SPECIFICATIONS);
    if let Some(draft) = implied_draft(schema) {
        options = options.with_draft(draft);
    }
    options
        .build(&reachable_only(schema))
        .map_err(|e| e.to_string())
}

/// Issues joined for an error message: `at /a: ...; at /b: ...`.
pub fn describe(issues: &[Issue]) -> String {
    issues
        .iter()
        .map(|i| {
            if i.path.is_empty() {
                i.message.clone()
            } else {
                format!("at {}: {}", i.path, i.message)
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::super::lite;
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_type_and_required_issues() {
        let c = Compiled::new(&json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n", "m"]
        }))
        .unwrap();
        assert!(c.issues(&json!({"n": 1, "m": 2})).is_empty());
        let issues = c.issues(&json!({"n": "x"}));
        assert_eq!(issues.len(), 2);
        assert!(describe(&issues).contains("at /n"));
        assert!(describe(&issues).contains("\"m\" is a required property"));
    }

    /// A `Lite` tree is judged as its `Value` is, in every dialect and for both uses (formats
    /// asserted for output only), and a schema that cannot compile checks nothing either way.
    #[test]
    fn lite_trees_are_judged_as_values_are() {
        let schemas = [
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}, "s": {"type": "string", "format": "date", "maxLength": 3}}, "required": ["n"], "additionalProperties": false}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"p": {"type": "number", "exclusiveMaximum": 5}}, "properties": {"x": {"$ref": "#/definitions/p"}}, "dependencies": {"x": ["y"]}}),
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"i": {"type": "integer"}}}),
            json!({"items": {"enum": [1, "a", {"k": [true]}]}, "uniqueItems": true}),
            json!({"type": 12}),
        ];
        let instances = [
            r#"{"n":2}"#,
            r#"{"n":0}"#,
            r#"{"n":1.0,"s":"bad"}"#,
            r#"{"n":2,"s":"2026-12-01"}"#,
            r#"{"n":2,"extra":1}"#,
            r#"{"x":4}"#,
            r#"{"x":5,"y":0}"#,
            r#"{"i":1.0}"#,
            r#"{"i":1}"#,
            r#"[1,"a",{"k":[true]}]"#,
            r#"[1,1]"#,
            r#"[2]"#,
            r#"[]"#,
            r#"null"#,
            r#""s""#,
        ];
        for schema in &schemas {
            for used_for in [Use::Input, Use::Output] {
                let c = Compiled::with_text(schema, schema.to_string(), used_for);
                for text in instances {
                    let tree = lite::parse(text, 128).unwrap();
                    let value: Value = serde_json::from_str(text).unwrap();
                    assert_eq!(
                        c.lite_valid(tree.root()),
                        Some(c.issues(&value).is_empty()),
                        "{schema} {used_for:?} {text}"
                    );
                }
            }
        }
    }

    #[test]
    fn identical_schemas_share_one_validator_while_it_is_in_use() {
        let schema =
            json!({"type": "object", "properties": {"shared_by_test": {"type": "string"}}});
        let a = Compiled::new(&schema).unwrap();
        let b = Compiled::new(&schema).unwrap();
        assert!(Arc::ptr_eq(&a.shared, &b.shared));
        assert!(Arc::ptr_eq(&a.shared.json, &b.shared.json));
        assert_eq!(a.json(), serde_json::to_string(&schema).unwrap());
        let other = Compiled::new(
            &json!({"type": "object", "properties": {"shared_by_test": {"type": "integer"}}}),
        )
        .unwrap();
        assert!(!Arc::ptr_eq(&a.shared, &other.shared));
        // The same validator judges the same way for every holder.
        assert!(b.issues(&json!({"shared_by_test": "x"})).is_empty());
        assert!(!other.issues(&json!({"shared_by_test": "x"})).is_empty());
        drop((a, b));
        let c = Compiled::new(&schema).unwrap();
        assert_eq!(Arc::strong_count(&c.shared), 1);
    }

    #[test]
    fn honours_draft_and_refuses_bad_schemas() {
        assert!(Compiled::new(&json!({"type": 12})).is_err());
        let d7 = Compiled::new(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "items": [{"type": "string"}]
        }))
        .unwrap();
        assert!(!d7.issues(&json!([1])).is_empty());
    }
}

#[cfg(test)]
mod dialect_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn meta_schema_references_resolve_from_the_copies_inside() {
        let s = json!({"type": "object", "properties": {"schema": {"$ref": "http://json-schema.org/draft-07/schema#"}}});
        let c = Compiled::with_text(&s, s.to_string(), Use::Output);
        assert_eq!(c.unvalidated(), None);
        assert!(c.issues(&json!({"schema": {"type": "string"}})).is_empty());
        assert!(!c.issues(&json!({"schema": {"type": 12}})).is_empty());
    }

    #[test]
    fn a_schema_that_cannot_compile_has_a_reason_and_checks_nothing() {
        let s = json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "("}}});
        let c = Compiled::with_text(&s, s.to_string(), Use::Input);
        assert!(c.unvalidated().is_some_and(|r| r.contains("regex")));
        assert!(c.issues(&json!({"p": 12})).is_empty());
        assert!(Compiled::new(&s).is_err());
    }

    #[test]
    fn formats_are_asserted_for_output_only() {
        let s = json!({"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}});
        let bad = json!({"at": "yesterday"});
        let input = Compiled::with_text(&s, s.to_string(), Use::Input);
        let output = Compiled::with_text(&s, s.to_string(), Use::Output);
        assert!(input.issues(&bad).is_empty());
        assert!(!output.issues(&bad).is_empty());
    }
}
