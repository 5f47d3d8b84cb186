//! Which JSON Schema dialect a server's schema is written in, and which of its references a
//! validator will ever follow.
//!
//! Servers send schemas of every vintage. One that names its dialect in `$schema` is read in
//! it. One that does not is read as 2020-12 (what MCP specifies), unless it uses forms that
//! only draft-07 gives a meaning to (array-form `items`, `additionalItems`, `dependencies`,
//! `#name` ids, references into `definitions` with no `$defs` at all): generators and hand-written
//! schemas of the draft-07 era use them without saying so, and reading them as 2020-12 would
//! refuse the schema or change what it accepts.
//!
//! A reference that nothing reaches (an unused entry of `$defs`) is never looked at: the
//! schema is compiled without the entries no reference leads to.

use super::canonical::{ARRAYS, MAPS, SINGLE};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashSet;

pub use jsonschema::Draft;

/// Meta-schemas a `$ref` may name: the validator carries its own copies of these.
const META_SCHEMAS: [&str; 5] = [
    "http://json-schema.org/draft-04/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
];

/// The dialect to compile `schema` in when it has no `$schema` of its own; `None` when it has
/// one (the validator reads it from there).
pub fn implied_draft(schema: &Value) -> Option<Draft> {
    if schema.get("$schema").is_some() {
        return None;
    }
    Some(if uses_draft07_forms(schema) {
        Draft::Draft7
    } else {
        Draft::Draft202012
    })
}

/// Subschema positions: the canonical form's, and those only draft-07 has (`additionalItems`,
/// `dependencies` with schema values, array-form `items`).
fn single(key: &str) -> bool {
    SINGLE.contains(&key) || key == "additionalItems"
}
fn map_of_schemas(key: &str) -> bool {
    MAPS.contains(&key) || key == "dependencies"
}
fn array_of_schemas(key: &str) -> bool {
    ARRAYS.contains(&key) || key == "items"
}

/// Calls `visit` on `schema` and every subschema in a schema position.
fn walk<'a>(schema: &'a Value, visit: &mut impl FnMut(&'a Map<String, Value>)) {
    let Value::Object(map) = schema else { return };
    visit(map);
    walk_members(map, false, visit);
}

/// The subschemas of one schema object's keywords; `skip_defs` leaves its definitions out.
fn walk_members<'a>(
    map: &'a Map<String, Value>,
    skip_defs: bool,
    visit: &mut impl FnMut(&'a Map<String, Value>),
) {
    for (key, value) in map {
        let key = key.as_str();
        if skip_defs && (key == "$defs" || key == "definitions") {
            continue;
        }
        match value {
            Value::Object(members) if map_of_schemas(key) => {
                members.values().for_each(|v| walk(v, visit))
            }
            Value::Object(_) if single(key) => walk(value, visit),
            Value::Array(items) if array_of_schemas(key) => {
                items.iter().for_each(|v| walk(v, visit))
            }
            _ => {}
        }
    }
}

fn uses_draft07_forms(schema: &Value) -> bool {
    let has_defs = schema.get("$defs").is_some();
    let mut found = false;
    walk(schema, &mut |map| {
        found = found
            || matches!(map.get("items"), Some(Value::Array(_)))
            || map.contains_key("additionalItems")
            || matches!(map.get("dependencies"), Some(Value::Object(_)))
            || matches!(map.get("$id"), Some(Value::String(id)) if id.starts_with('#'))
            || (!has_defs
                && matches!(map.get("$ref"), Some(Value::String(r)) if r.starts_with("#/definitions/")));
    });
    found
}

/// Where a `$ref` leads, as far as pruning needs to know.
enum Target {
    /// An entry of the root's `$defs` or `definitions`: (container, entry name).
    Definition(&'static str, String),
    /// Somewhere else in the document (the root, `#/properties/...`): already kept.
    Elsewhere,
    /// An anchor, an id, a relative or remote URI: pruning cannot tell, so nothing is pruned.
    Unknown,
}

fn target(reference: &str) -> Target {
    let Some(pointer) = reference.strip_prefix('#') else {
        return Target::Unknown;
    };
    if pointer.is_empty() {
        return Target::Elsewhere;
    }
    let Some(path) = pointer.strip_prefix('/') else {
        return Target::Unknown;
    };
    // A pointer in a URI fragment is percent-encoded first (RFC 6901 §6): `%25` is `%`, `%22`
    // a quote; JSON Pointer's own `~1` and `~0` are undone per token after.
    let decoded = percent_decoded(path);
    let path = decoded.as_deref().unwrap_or(path);
    let mut tokens = path.split('/');
    let container = match tokens.next() {
        Some("$defs") => "$defs",
        Some("definitions") => "definitions",
        _ => return Target::Elsewhere,
    };
    match tokens.next() {
        Some(name) => Target::Definition(container, name.replace("~1", "/").replace("~0", "~")),
        None => Target::Elsewhere,
    }
}

/// The keywords that lead from one part of a schema to another.
const REFERENCES: [&str; 2] = ["$ref", "$dynamicRef"];

/// `schema` without the root `$defs`/`definitions` entries no reference reaches, so a broken
/// reference inside an unused definition is never resolved. Borrowed when nothing is pruned.
pub fn reachable_only(schema: &Value) -> Cow<'_, Value> {
    let Value::Object(root) = schema else {
        return Cow::Borrowed(schema);
    };
    let containers: Vec<&'static str> = ["$defs", "definitions"]
        .into_iter()
        .filter(|c| matches!(root.get(*c), Some(Value::Object(m)) if !m.is_empty()))
        .collect();
    if containers.is_empty() {
        return Cow::Borrowed(schema);
    }
    // References from the root (its definitions left out), then from every definition one
    // of them leads to, until nothing new is reached.
    // `$dynamicRef` leads somewhere as `$ref` does (to an anchor or a pointer of this
    // resource when nothing dynamic overrides it).
    let mut refs: Vec<&str> = Vec::new();
    for keyword in REFERENCES {
        if let Some(Value::String(r)) = root.get(keyword) {
            refs.push(r);
        }
    }
    walk_members(root, true, &mut |map| {
        for keyword in REFERENCES {
            if let Some(Value::String(r)) = map.get(keyword) {
                refs.push(r.as_str());
            }
        }
    });
    let mut kept: HashSet<(&'static str, String)> = HashSet::new();
    while let Some(r) = refs.pop() {
        match target(r) {
            Target::Definition(container, name) => {
                let def = root.get(container).and_then(|c| c.get(&name));
                if let Some(def) = def {
                    if kept.insert((container, name)) {
                        walk(def, &mut |map| {
                            for keyword in REFERENCES {
                                if let Some(Value::String(r)) = map.get(keyword) {
                                    refs.push(r.as_str());
                                }
                            }
                        });
                    }
                }
            }
            Target::Elsewhere => {}
            Target::Unknown => return Cow::Borrowed(schema),
        }
    }
    let mut pruned = root.clone();
    for container in containers {
        if let Some(Value::Object(defs)) = pruned.get_mut(container) {
            defs.retain(|name, _| kept.contains(&(container, name.clone())));
        }
    }
    Cow::Owned(Value::Object(pruned))
}

/// The first reference of `schema` (among those a validator follows) that cannot resolve: a
/// remote document other than a meta-schema, a pointer to nothing, an anchor nobody declares.
pub fn unresolvable_reference(schema: &Value) -> Option<String> {
    let schema = reachable_only(schema);
    let schema = schema.as_ref();
    let own_id = schema
        .get("$id")
        .and_then(Value::as_str)
        .map(|id| id.trim_end_matches('#'));
    let mut anchors: HashSet<&str> = HashSet::new();
    walk(schema, &mut |map| {
        if let Some(Value::String(a)) = map.get("$anchor") {
            anchors.insert(a);
        }
        if let Some(Value::String(id)) = map.get("$id") {
            if let Some(a) = id.strip_prefix('#') {
                anchors.insert(a);
            }
        }
    });
    let mut refs: Vec<&str> = Vec::new();
    walk(schema, &mut |map| {
        if let Some(Value::String(r)) = map.get("$ref") {
            refs.push(r);
        }
    });
    refs.into_iter()
        .find(|r| !resolves(schema, own_id, &anchors, r))
        .map(str::to_owned)
}

fn resolves(
    schema: &Value,
    own_id: Option<&str>,
    anchors: &HashSet<&str>,
    reference: &str,
) -> bool {
    let (document, fragment) = match reference.split_once('#') {
        Some((d, f)) => (d, f),
        None => (reference, ""),
    };
    if !document.is_empty() {
        let document = document.trim_end_matches('#');
        if META_SCHEMAS.contains(&document) {
            return true;
        }
        if own_id != Some(document) {
            return false;
        }
    }
    if fragment.is_empty() {
        return true;
    }
    match fragment.strip_prefix('/') {
        Some(pointer) => {
            schema.pointer(&format!("/{pointer}")).is_some()
                || percent_decoded(pointer)
                    .is_some_and(|p| schema.pointer(&format!("/{p}")).is_some())
        }
        None => anchors.contains(fragment),
    }
}

fn percent_decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn draft07_forms_imply_draft07_and_nothing_else_does() {
        let d7 = json!({"type": "object", "properties": {"p": {"items": [{"type": "string"}]}}});
        assert_eq!(implied_draft(&d7), Some(Draft::Draft7));
        let deps = json!({"type": "object", "dependencies": {"a": ["b"]}});
        assert_eq!(implied_draft(&deps), Some(Draft::Draft7));
        let modern =
            json!({"type": "object", "properties": {"p": {"prefixItems": [{}]}, "items": {}}});
        assert_eq!(implied_draft(&modern), Some(Draft::Draft202012));
        // A property that happens to be called `dependencies` is not the keyword.
        let named = json!({"type": "object", "properties": {"dependencies": {"type": "object"}}});
        assert_eq!(implied_draft(&named), Some(Draft::Draft202012));
        let declared = json!({"$schema": "http://json-schema.org/draft-04/schema#"});
        assert_eq!(implied_draft(&declared), None);
    }

    #[test]
    fn unreachable_definitions_are_pruned_reachable_ones_kept() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {
                "A": {"$ref": "#/$defs/B"},
                "B": {"type": "string"},
                "Unused": {"$ref": "https://example.invalid/never.json"}
            }
        });
        let pruned = reachable_only(&schema);
        let defs = pruned["$defs"].as_object().unwrap();
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["A", "B"]);
        assert_eq!(unresolvable_reference(&schema), None);
        // An anchor reference: pruning cannot tell where it leads, so nothing is pruned.
        let anchored =
            json!({"properties": {"a": {"$ref": "#x"}}, "$defs": {"X": {"$anchor": "x"}, "Y": {}}});
        assert!(matches!(reachable_only(&anchored), Cow::Borrowed(_)));
    }

    #[test]
    fn references_that_cannot_resolve_are_named() {
        let remote = json!({"properties": {"a": {"$ref": "https://example.invalid/x.json"}}});
        assert_eq!(
            unresolvable_reference(&remote).as_deref(),
            Some("https://example.invalid/x.json")
        );
        let missing = json!({"properties": {"a": {"$ref": "#/$defs/Nope"}}});
        assert_eq!(
            unresolvable_reference(&missing).as_deref(),
            Some("#/$defs/Nope")
        );
        let meta =
            json!({"properties": {"a": {"$ref": "http://json-schema.org/draft-07/schema#"}}});
        assert_eq!(unresolvable_reference(&meta), None);
        let own = json!({"$id": "https://example.com/s.json", "properties": {"a": {"$ref": "https://example.com/s.json#/$defs/A"}}, "$defs": {"A": {}}});
        assert_eq!(unresolvable_reference(&own), None);
        let anchor =
            json!({"properties": {"a": {"$ref": "#s"}}, "definitions": {"S": {"$id": "#s"}}});
        assert_eq!(unresolvable_reference(&anchor), None);
    }
}
