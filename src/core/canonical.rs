//! The canonical form of a JSON Schema, bit-exact with the engine's, its quirks included.
//!
//! Annotations are dropped, local `$ref`s are inlined, and what cannot be inlined safely is
//! refused typed. Two hostile shapes are bounded here rather than trusted: deep nesting (the
//! stack) and a DAG of references whose inlined form is exponential (memory).

use super::error::{ConfigError, Result};
use super::jcs::{write_members, write_value};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Most nested subschema levels (ref inlining included) canonicalization walks into.
pub const MAX_DEPTH: usize = 256;
/// Most bytes (of JSON text) the canonical form may take once every `$ref` is inlined.
pub const MAX_CANONICAL_BYTES: usize = 16 * 1024 * 1024;

const ANNOTATIONS: [&str; 8] = [
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "$comment",
];
const INFRASTRUCTURE: [&str; 3] = ["$defs", "definitions", "$anchor"];
/// Subschema positions of the canonical form (also what `dialect` walks, plus draft-07's).
pub(crate) const SINGLE: [&str; 11] = [
    "additionalProperties",
    "contains",
    "items",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
pub(crate) const MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];
pub(crate) const ARRAYS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

const DYNAMIC: &str =
    "Dynamic references ($dynamicRef/$dynamicAnchor) are forbidden in rulvar schemas ";

/// The canonical form of `schema`.
pub fn canonicalize(schema: &Value) -> Result<Value> {
    let mut walker = Walker {
        root: schema,
        path: Vec::new(),
        anchors: None,
        bytes: 0,
    };
    walker.node(schema, 0)
}

/// Whether `canonicalize` certainly succeeds, known without building the canonical form:
/// no reference keyword anywhere, nesting within `MAX_DEPTH`, and a size estimate far enough
/// below `MAX_CANONICAL_BYTES` that no charge of the walk can pass it (without references the
/// canonical form is never larger than the schema). Every refusal of `canonicalize` needs a
/// reference, depth or size, so `true` is exact; `false` only means the full walk decides.
pub fn certainly_canonical(schema: &Value) -> bool {
    let mut size = 0usize;
    let mut stack = vec![(schema, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        if depth > MAX_DEPTH || size > MAX_CANONICAL_BYTES / 4 {
            return false;
        }
        size += match value {
            Value::Object(map) => {
                for (key, sub) in map {
                    if matches!(key.as_str(), "$ref" | "$dynamicRef" | "$dynamicAnchor") {
                        return false;
                    }
                    size += key.len() + 4;
                    stack.push((sub, depth + 1));
                }
                2
            }
            Value::Array(items) => {
                stack.extend(items.iter().map(|v| (v, depth + 1)));
                items.len() + 2
            }
            Value::String(s) => s.len() + 2,
            _ => 8,
        };
    }
    size <= MAX_CANONICAL_BYTES / 4
}

/// The JCS text of `canonicalize(schema)`, written straight from `schema` without building
/// the canonical form. Only for a schema `certainly_canonical` vouches for: with no reference
/// to inline, the canonical form is the schema without annotations, an array in a schema
/// position becoming an object keyed by index (the walk's rules, in the same positions).
pub fn write_canonical_jcs(out: &mut String, schema: &Value) {
    match schema {
        Value::Object(map) => {
            let members = map
                .iter()
                .filter(|(k, _)| {
                    !ANNOTATIONS.contains(&k.as_str()) && !INFRASTRUCTURE.contains(&k.as_str())
                })
                .collect();
            write_members(out, members, write_canonical_member);
        }
        Value::Array(items) => {
            let keyed = items
                .iter()
                .enumerate()
                .map(|(i, item)| (i.to_string(), item))
                .collect();
            write_members(out, keyed, |out, _, item| write_value(out, item));
        }
        other => write_value(out, other),
    }
}

fn write_canonical_member(out: &mut String, key: &str, value: &Value) {
    match value {
        _ if SINGLE.contains(&key) => write_canonical_jcs(out, value),
        Value::Object(entries) if MAPS.contains(&key) => {
            write_members(out, entries.iter().collect(), |out, _, sub| {
                write_canonical_jcs(out, sub)
            });
        }
        Value::Array(items) if ARRAYS.contains(&key) => {
            out.push('[');
            for (j, sub) in items.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                write_canonical_jcs(out, sub);
            }
            out.push(']');
        }
        _ => write_value(out, value),
    }
}

/// The JCS text of `canonicalize(schema)`: streamed when it certainly canonicalizes, built and
/// serialized otherwise (which also reports why it cannot be).
pub fn canonical_jcs(out: &mut String, schema: &Value) -> Result<()> {
    if certainly_canonical(schema) {
        write_canonical_jcs(out, schema);
    } else {
        write_value(out, &canonicalize(schema)?);
    }
    Ok(())
}

struct Walker<'a> {
    root: &'a Value,
    /// Subschemas being expanded right now, outermost first: a `$ref` back into one of them
    /// would inline forever.
    path: Vec<*const Value>,
    anchors: Option<HashMap<&'a str, &'a Value>>,
    /// Estimated JSON text size of everything produced so far.
    bytes: usize,
}

impl<'a> Walker<'a> {
    fn node(&mut self, node: &'a Value, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(ConfigError::new(format!(
                "Schema nests deeper than {MAX_DEPTH} levels; it is too deep to canonicalize"
            )));
        }
        match node {
            Value::Object(map) => {
                self.path.push(node as *const Value);
                let out = self.object(map, depth);
                self.path.pop();
                out
            }
            // Engine quirk: an array where a schema belongs is walked as an object keyed by
            // index, its elements kept as plain data.
            Value::Array(items) => {
                let mut out = Map::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    out.insert(i.to_string(), self.data(item)?);
                }
                Ok(Value::Object(out))
            }
            other => self.data(other),
        }
    }

    fn object(&mut self, map: &'a Map<String, Value>, depth: usize) -> Result<Value> {
        if map.contains_key("$dynamicRef") || map.contains_key("$dynamicAnchor") {
            return Err(ConfigError::new(DYNAMIC));
        }
        let Some(Value::String(reference)) = map.get("$ref") else {
            return self.members(map, depth, false);
        };
        let target = self.resolve(reference)?;
        if self.path.contains(&(target as *const Value)) {
            return Err(ConfigError::new(format!(
                "Recursive local $ref '{reference}' cannot be inlined; recursive schemas are not canonicalizable"
            )));
        }
        let inlined = self.node(target, depth + 1)?;
        let Value::Object(mut siblings) = self.members(map, depth, true)? else {
            unreachable!("members always builds an object")
        };
        if siblings.is_empty() {
            return Ok(inlined);
        }
        let mut all_of = match siblings.shift_remove("allOf") {
            Some(Value::Array(existing)) => existing,
            Some(other) => vec![other],
            None => Vec::new(),
        };
        all_of.push(inlined);
        siblings.insert("allOf".to_owned(), Value::Array(all_of));
        self.charge(9)?;
        Ok(Value::Object(siblings))
    }

    fn members(
        &mut self,
        map: &'a Map<String, Value>,
        depth: usize,
        skip_ref: bool,
    ) -> Result<Value> {
        let mut out = Map::with_capacity(map.len());
        for (key, value) in map {
            let k = key.as_str();
            if ANNOTATIONS.contains(&k) || INFRASTRUCTURE.contains(&k) || (skip_ref && k == "$ref")
            {
                continue;
            }
            let canonical = if SINGLE.contains(&k) {
                self.node(value, depth + 1)?
            } else if let (true, Value::Object(entries)) = (MAPS.contains(&k), value) {
                let mut mapped = Map::with_capacity(entries.len());
                for (name, sub) in entries {
                    self.charge(name.len() + 4)?;
                    mapped.insert(name.clone(), self.node(sub, depth + 1)?);
                }
                Value::Object(mapped)
            } else if let (true, Value::Array(items)) = (ARRAYS.contains(&k), value) {
                let mut mapped = Vec::with_capacity(items.len());
                for sub in items {
                    mapped.push(self.node(sub, depth + 1)?);
                }
                Value::Array(mapped)
            } else {
                self.data(value)?
            };
            self.charge(key.len() + 4)?;
            out.insert(key.clone(), canonical);
        }
        self.charge(2)?;
        Ok(Value::Object(out))
    }

    /// A value copied untouched (a keyword that is not a subschema position).
    fn data(&mut self, value: &Value) -> Result<Value> {
        self.charge(text_size(value))?;
        Ok(value.clone())
    }

    fn charge(&mut self, bytes: usize) -> Result<()> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > MAX_CANONICAL_BYTES {
            return Err(ConfigError::new(format!(
                "Schema expands past {MAX_CANONICAL_BYTES} bytes once its local $refs are inlined; it is too large to canonicalize"
            )));
        }
        Ok(())
    }

    fn resolve(&mut self, reference: &str) -> Result<&'a Value> {
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(ConfigError::new(format!(
                "Remote $ref '{reference}' is forbidden in rulvar schemas; only fragment-only local references resolve"
            )));
        };
        let target = if fragment.is_empty() {
            Some(self.root)
        } else if let Some(pointer) = fragment.strip_prefix('/') {
            resolve_pointer(self.root, pointer)
        } else {
            self.anchors().get(fragment).copied()
        };
        match target {
            Some(t @ (Value::Object(_) | Value::Bool(_))) => Ok(t),
            _ => Err(ConfigError::new(format!(
                "Local $ref '{reference}' does not resolve to a schema"
            ))),
        }
    }

    fn anchors(&mut self) -> &HashMap<&'a str, &'a Value> {
        let root = self.root;
        self.anchors.get_or_insert_with(|| collect_anchors(root))
    }
}

/// JSON Pointer resolution without percent-decoding (engine quirk); `~1` then `~0` decoded.
fn resolve_pointer<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut current = root;
    for raw in pointer.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        current = match current {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items) => items.get(array_index(&token)?)?,
            _ => return None,
        };
    }
    Some(current)
}

fn array_index(token: &str) -> Option<usize> {
    let canonical = token == "0" || (!token.starts_with('0') && !token.is_empty());
    if canonical && token.bytes().all(|b| b.is_ascii_digit()) {
        token.parse().ok()
    } else {
        None
    }
}

/// Every `$anchor` in the document, first occurrence wins. Iterative: the document may be deep.
fn collect_anchors(root: &Value) -> HashMap<&str, &Value> {
    let mut found = HashMap::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(Value::String(name)) = map.get("$anchor") {
                    found.entry(name.as_str()).or_insert(node);
                }
                stack.extend(map.values().rev());
            }
            Value::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    found
}

/// The approximate JSON text size of a value, computed without recursion.
fn text_size(value: &Value) -> usize {
    let mut size = 0usize;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        size += match v {
            Value::Null | Value::Bool(_) => 5,
            Value::Number(_) => 8,
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                stack.extend(items.iter());
                items.len() + 2
            }
            Value::Object(map) => {
                for (k, sub) in map {
                    size += k.len() + 4;
                    stack.push(sub);
                }
                2
            }
        };
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_fast_check_leaves_references_depth_and_size_to_the_full_walk() {
        let plain = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert!(certainly_canonical(&plain));
        let with_ref = json!({"type": "object", "properties": {"a": {"$ref": "#"}}});
        assert!(!certainly_canonical(&with_ref));
        let huge = json!({"type": "object", "default": "x".repeat(MAX_CANONICAL_BYTES / 4)});
        assert!(!certainly_canonical(&huge));
        let mut deep = json!({"type": "object"});
        for _ in 0..=MAX_DEPTH {
            deep = json!({ "not": deep });
        }
        assert!(!certainly_canonical(&deep));
    }

    #[test]
    fn drops_annotations_and_inlines_refs() {
        let schema = json!({
            "type": "object", "title": "T",
            "properties": {"p": {"$ref": "#/$defs/a", "maxLength": 3}},
            "$defs": {"a": {"type": "string", "description": "d"}}
        });
        assert_eq!(
            canonicalize(&schema).unwrap(),
            json!({"type": "object", "properties": {"p": {"maxLength": 3, "allOf": [{"type": "string"}]}}})
        );
    }

    #[test]
    fn refuses_recursion_remote_and_dynamic() {
        let err = |v: Value| canonicalize(&v).unwrap_err().message;
        assert!(err(json!({"properties": {"a": {"$ref": "#"}}}))
            .starts_with("Recursive local $ref '#'"));
        assert!(err(json!({"$ref": "x.json"})).starts_with("Remote $ref 'x.json'"));
        assert_eq!(err(json!({"$dynamicRef": "#m"})), DYNAMIC);
        assert_eq!(
            err(json!({"$ref": "#/$defs/none"})),
            "Local $ref '#/$defs/none' does not resolve to a schema"
        );
    }

    #[test]
    fn bounds_deep_nesting() {
        let mut schema = json!({"type": "string"});
        for _ in 0..(MAX_DEPTH + 10) {
            schema = json!({ "not": schema });
        }
        let e = canonicalize(&schema).unwrap_err();
        assert!(e.message.contains("too deep"), "{}", e.message);
        // serde_json's recursive drop of a deep Value is fine at this depth.
    }

    #[test]
    fn bounds_exponential_ref_dags() {
        let mut defs = Map::new();
        defs.insert("d0".into(), json!({"type": "string", "minLength": 1}));
        for i in 1..=40 {
            let prev = format!("#/$defs/d{}", i - 1);
            defs.insert(
                format!("d{i}"),
                json!({"type": "object", "properties": {"a": {"$ref": prev}, "b": {"$ref": prev}}}),
            );
        }
        let schema = json!({"$ref": "#/$defs/d40", "$defs": defs});
        let e = canonicalize(&schema).unwrap_err();
        assert!(e.message.contains("too large"), "{}", e.message);
    }

    #[test]
    fn array_where_a_schema_belongs_becomes_index_keyed_data() {
        let schema = json!({"items": [{"type": "integer", "title": "kept"}]});
        assert_eq!(
            canonicalize(&schema).unwrap(),
            json!({"items": {"0": {"type": "integer", "title": "kept"}}})
        );
    }
}
