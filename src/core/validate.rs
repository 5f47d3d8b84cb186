//! JSON Schema validation (draft 2020-12 unless the schema's `$schema` says otherwise).
//!
//! Tools compile their validators once at admission and reuse them on every call.

use super::error::{ConfigError, Result};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub message: String,
    /// JSON Pointer of the offending instance location; empty at the root.
    pub path: String,
}

pub struct Compiled {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled")
    }
}

impl Compiled {
    pub fn new(schema: &Value) -> Result<Self> {
        let validator = jsonschema::validator_for(schema)
            .map_err(|e| ConfigError::new(format!("the schema is not a valid JSON Schema: {e}")))?;
        Ok(Self { validator })
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
