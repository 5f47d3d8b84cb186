//! JSON Schema validation (draft 2020-12 unless the schema's `$schema` says otherwise).
//!
//! Tools compile their validators once at admission and reuse them on every call; tools with
//! the same schema share one.

use super::error::{ConfigError, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub message: String,
    /// JSON Pointer of the offending instance location; empty at the root.
    pub path: String,
}

pub struct Compiled {
    validator: Arc<jsonschema::Validator>,
    /// The schema as serde_json writes it: exact (numbers, wire key order), for the JS side.
    json: Arc<str>,
}

/// Validators compiled in this process, by the exact JSON text of their schema (serde_json's:
/// wire key order, every number as sent, so equal texts are the same schema). Hosts import
/// the same server again and again (a source per session, several agents on one server):
/// identical schemas share one compiled validator (and one copy of their text) instead of
/// compiling and holding it again.
/// Entries are weak: a validator lives as long as a tool that uses it.
#[derive(Default)]
struct Interned {
    /// The key is also the text every holder shares; it goes with the entry at a sweep.
    by_text: HashMap<Arc<str>, Weak<jsonschema::Validator>>,
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
    pub fn new(schema: &Value) -> Result<Self> {
        Self::with_text(schema, serde_json::to_string(schema).unwrap_or_default())
    }

    /// `text` is `serde_json::to_string(schema)`, for a caller that has it already.
    pub fn with_text(schema: &Value, text: String) -> Result<Self> {
        let lock = || interned().lock().unwrap_or_else(|e| e.into_inner());
        let known = lock()
            .by_text
            .get_key_value(text.as_str())
            .map(|(json, v)| (json.clone(), v.upgrade()));
        if let Some((json, Some(validator))) = known {
            return Ok(Self { validator, json });
        }
        // Compiled outside the lock: admissions of different sources run in parallel.
        let validator = Arc::new(jsonschema::validator_for(schema).map_err(|e| {
            ConfigError::new(format!("the schema is not a valid JSON Schema: {e}"))
        })?);
        // A dead entry's key is the same text: keep one copy.
        let json: Arc<str> = match known {
            Some((json, None)) => json,
            _ => text.into(),
        };
        let mut cache = lock();
        if cache.by_text.len() >= cache.sweep_at {
            cache.by_text.retain(|_, v| v.strong_count() > 0);
            cache.sweep_at = (cache.by_text.len() * 2).max(1024);
        }
        cache
            .by_text
            .insert(json.clone(), Arc::downgrade(&validator));
        Ok(Self { validator, json })
    }

    /// The schema's JSON text, exact (serde_json keeps wire key order and every number).
    pub fn json(&self) -> &str {
        &self.json
    }

    /// Every issue of `instance` against the schema; empty when valid.
    pub fn issues(&self, instance: &Value) -> Vec<Issue> {
        if self.validator.is_valid(instance) {
            return Vec::new();
        }
        self.validator
            .iter_errors(instance)
            .map(|e| Issue {
                message: e.to_string(),
                path: e.instance_path().to_string(),
            })
            .collect()
    }
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

    #[test]
    fn identical_schemas_share_one_validator_while_it_is_in_use() {
        let schema =
            json!({"type": "object", "properties": {"shared_by_test": {"type": "string"}}});
        let a = Compiled::new(&schema).unwrap();
        let b = Compiled::new(&schema).unwrap();
        assert!(Arc::ptr_eq(&a.validator, &b.validator));
        assert!(Arc::ptr_eq(&a.json, &b.json));
        assert_eq!(a.json(), serde_json::to_string(&schema).unwrap());
        let other = Compiled::new(
            &json!({"type": "object", "properties": {"shared_by_test": {"type": "integer"}}}),
        )
        .unwrap();
        assert!(!Arc::ptr_eq(&a.validator, &other.validator));
        // The same validator judges the same way for every holder.
        assert!(b.issues(&json!({"shared_by_test": "x"})).is_empty());
        assert!(!other.issues(&json!({"shared_by_test": "x"})).is_empty());
        drop((a, b));
        let c = Compiled::new(&schema).unwrap();
        assert_eq!(Arc::strong_count(&c.validator), 1);
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
