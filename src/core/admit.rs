//! Admission: filter (deny wins over allow), schema bytes (of admitted tools only), final names,
//! canonicalization of the input schema, validators; the first refusal fails the whole import.

use super::canonical::{canonicalize, certainly_canonical};
use super::config::Config;
use super::error::{ConfigError, Result};
use super::jcs;
use super::sweep::clip;
use super::validate::Compiled;
use serde_json::Value;

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
}

/// Admits the wire tools of one sweep, in wire order.
pub fn admit(config: &Config, wire: Vec<Value>) -> Result<Vec<ToolSpec>> {
    let mut out = Vec::new();
    for tool in wire {
        let Value::Object(mut map) = tool else {
            continue;
        };
        let original = match map.get("name") {
            Some(Value::String(n)) => n.clone(),
            _ => continue,
        };
        if config.deny.contains(&original) {
            continue;
        }
        if let Some(allow) = &config.allow {
            if !allow.contains(&original) {
                continue;
            }
        }
        let parameters = map.remove("inputSchema").unwrap_or(Value::Null);
        let output_schema = match map.remove("outputSchema") {
            None | Some(Value::Null) => None,
            Some(schema) => Some(schema),
        };
        if let Some(cap) = config.max_schema_bytes {
            let bytes = wire_text(&parameters).len()
                + output_schema.as_ref().map_or(0, |o| wire_text(o).len());
            if bytes as u64 > cap {
                return Err(ConfigError::new(format!(
                    "mcp: tool '{}' declares {bytes} bytes of schema, over the declared maxSchemaBytes {cap}; deny the tool or raise the cap",
                    clip(&original)
                )));
            }
        }
        let name = match &config.prefix {
            Some(prefix) => format!("{prefix}_{original}"),
            None => original.clone(),
        };
        if !valid_name(&name) {
            return Err(ConfigError::new(format!(
                "mcp: imported tool name '{}' must match ^[a-zA-Z0-9_-]{{1,64}}$",
                clip(&name)
            )));
        }
        // Admission only needs to know the schema canonicalizes; building the canonical
        // form is the slow way to find out and is left for schemas that need it.
        if !certainly_canonical(&parameters) {
            canonicalize(&parameters).map_err(|e| {
                ConfigError::new(format!(
                    "mcp: tool '{}' has an input schema that cannot be canonicalized: {}",
                    clip(&original),
                    e.message
                ))
            })?;
        }
        let compile = |schema: &Value, text: String, which: &str| {
            Compiled::with_text(schema, text).map_err(|e| {
                ConfigError::new(format!(
                    "mcp: tool '{}' has an invalid {which} schema: {}",
                    clip(&original),
                    e.message
                ))
            })
        };
        // Serialized once: the validator cache's key and the text the JS side parses.
        let input = compile(&parameters, exact_text(&parameters), "input")?;
        let output = match &output_schema {
            Some(schema) => Some(compile(schema, exact_text(schema), "output")?),
            None => None,
        };
        let description = match map.get("description") {
            Some(Value::String(d)) => d.clone(),
            _ => String::new(),
        };
        out.push(ToolSpec {
            needs_approval: config.needs_approval(&original),
            risk: config.risk.get(&original).cloned(),
            name,
            original,
            description,
            input,
            output,
        });
    }
    Ok(out)
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

/// A schema's JSON text as `JSON.stringify` writes it: what `maxSchemaBytes` counts.
fn wire_text(value: &Value) -> String {
    let mut out = String::new();
    jcs::write_json(&mut out, value, jcs::KeyOrder::Wire);
    out
}

#[cfg(test)]
mod tests {
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
