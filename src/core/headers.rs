//! `x-mcp-header` (MCP 2026-07-28, SEP-2243): a tool's input schema may name arguments that a
//! streamable-HTTP request mirrors into `Mcp-Param-<name>` headers, so that intermediaries
//! route on them. A tool whose declarations break the rules is left out of a modern import, as
//! the specification requires; on a legacy connection the keyword is plain data.

use serde_json::Value;

/// The primitive kinds a mirrored argument may have (`number` is not one of them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    String,
    Integer,
    Boolean,
}

/// One declaration: the header's name part and where its argument sits (a chain of
/// `properties` keys from the schema's root).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamHeader {
    pub name: String,
    pub path: Vec<String>,
    pub kind: Kind,
}

const KEYWORD: &str = "x-mcp-header";
/// Keywords whose values are data, not schemas: an `x-mcp-header` member inside them declares
/// nothing.
const DATA: [&str; 5] = ["default", "const", "enum", "examples", "x-mcp-header"];

/// The declarations of `schema`, or why they are invalid.
pub fn declarations(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    walk(schema, Some(Vec::new()), &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for header in &found {
        let folded = header.name.to_ascii_lowercase();
        if seen.contains(&folded) {
            return Err(format!(
                "x-mcp-header '{}' is declared twice (names are compared without case)",
                header.name
            ));
        }
        seen.push(folded);
    }
    Ok(found)
}

/// `path` is the chain of `properties` keys that reached `node`, `None` once anything else
/// (an array keyword, a composition, a definition) was passed through.
fn walk(node: &Value, path: Option<Vec<String>>, out: &mut Vec<ParamHeader>) -> Result<(), String> {
    match node {
        Value::Object(map) => {
            if let Some(declared) = map.get(KEYWORD) {
                let Some(at) = path.as_ref().filter(|p| !p.is_empty()) else {
                    return Err(
                        "x-mcp-header is declared on a schema not reachable from the root through properties alone"
                            .to_owned(),
                    );
                };
                out.push(declaration(declared, map.get("type"), at)?);
            }
            for (key, value) in map {
                if DATA.contains(&key.as_str()) {
                    continue;
                }
                match (key.as_str(), value) {
                    ("properties", Value::Object(props)) => {
                        for (name, sub) in props {
                            let chain = path.clone().map(|mut p| {
                                p.push(name.clone());
                                p
                            });
                            walk(sub, chain, out)?;
                        }
                    }
                    _ => walk(value, None, out)?,
                }
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(|v| walk(v, None, out)),
        _ => Ok(()),
    }
}

fn declaration(
    declared: &Value,
    kind: Option<&Value>,
    path: &[String],
) -> Result<ParamHeader, String> {
    let at = path.join(".");
    let Some(name) = declared.as_str() else {
        return Err(format!("x-mcp-header of '{at}' is not a string"));
    };
    if name.is_empty() {
        return Err(format!("x-mcp-header of '{at}' is empty"));
    }
    if !name.bytes().all(tchar) {
        return Err(format!(
            "x-mcp-header of '{at}' is not an HTTP field name (letters, digits and !#$%&'*+-.^_`|~ only)"
        ));
    }
    let kind = match kind.and_then(Value::as_str) {
        Some("string") => Kind::String,
        Some("integer") => Kind::Integer,
        Some("boolean") => Kind::Boolean,
        _ => {
            return Err(format!(
                "x-mcp-header '{name}' is declared on '{at}', which is not a string, integer or boolean"
            ))
        }
    };
    Ok(ParamHeader {
        name: name.to_owned(),
        path: path.to_vec(),
        kind,
    })
}

/// RFC 9110 §5.6.2 `tchar`.
fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The headers one call's `arguments` mirror: `(header name, value)`, an argument that is
/// absent or `null` (or not of its declared kind) sending none. Values that are not plain
/// printable ASCII, or that start or end with white space, are marked for the transport's
/// `=?base64?…?=` form by `needs_encoding`.
pub fn values(headers: &[ParamHeader], arguments: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for header in headers {
        let mut value = arguments;
        for key in &header.path {
            match value.get(key) {
                Some(v) => value = v,
                None => {
                    value = &Value::Null;
                    break;
                }
            }
        }
        let text = match (header.kind, value) {
            (Kind::String, Value::String(s)) => s.clone(),
            (Kind::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
            (Kind::Boolean, Value::Bool(b)) => b.to_string(),
            _ => continue,
        };
        out.push((
            format!("mcp-param-{}", header.name.to_ascii_lowercase()),
            text,
        ));
    }
    out
}

/// Whether a header value must travel base64-encoded: anything outside printable ASCII, or
/// white space at either end (which HTTP would strip).
pub fn needs_encoding(value: &str) -> bool {
    !value.bytes().all(|b| (0x20..0x7f).contains(&b)) || value.trim() != value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(props: Value) -> Value {
        json!({ "type": "object", "properties": props })
    }

    #[test]
    fn reads_valid_declarations_and_refuses_the_rest() {
        let ok = tool(json!({
            "region": { "type": "string", "x-mcp-header": "Region" },
            "nested": { "type": "object", "properties": { "n": { "type": "integer", "x-mcp-header": "N" } } },
            "plain": { "type": "number" },
            "data": { "type": "object", "default": { "x-mcp-header": "not-a-declaration" } }
        }));
        let found = declarations(&ok).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].path, vec!["nested", "n"]);
        for bad in [
            tool(json!({ "a": { "type": "string", "x-mcp-header": "" } })),
            tool(json!({ "a": { "type": "object", "x-mcp-header": "A" } })),
            tool(json!({ "a": { "type": "number", "x-mcp-header": "A" } })),
            tool(json!({ "a": { "type": "string", "x-mcp-header": "A B" } })),
            tool(json!({ "a": { "type": "string", "x-mcp-header": "A:B" } })),
            tool(json!({ "a": { "type": "string", "x-mcp-header": "Ä" } })),
            tool(json!({ "a": { "type": "string", "x-mcp-header": "a\nb" } })),
            tool(
                json!({ "a": { "type": "string", "x-mcp-header": "X" }, "b": { "type": "string", "x-mcp-header": "x" } }),
            ),
            tool(
                json!({ "a": { "type": "array", "items": { "type": "string", "x-mcp-header": "A" } } }),
            ),
            tool(json!({ "a": { "oneOf": [{ "type": "string", "x-mcp-header": "A" }] } })),
        ] {
            assert!(declarations(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mirrors_present_values_only() {
        let schema = tool(json!({
            "s": { "type": "string", "x-mcp-header": "S" },
            "i": { "type": "integer", "x-mcp-header": "I" },
            "b": { "type": "boolean", "x-mcp-header": "B" },
            "n": { "type": "string", "x-mcp-header": "Nul" }
        }));
        let found = declarations(&schema).unwrap();
        let out = values(
            &found,
            &json!({ "s": " padded ", "i": 42, "b": false, "n": null }),
        );
        assert_eq!(
            out,
            vec![
                ("mcp-param-s".to_owned(), " padded ".to_owned()),
                ("mcp-param-i".to_owned(), "42".to_owned()),
                ("mcp-param-b".to_owned(), "false".to_owned()),
            ]
        );
        assert!(needs_encoding(" padded "));
        assert!(needs_encoding("Hello, 世界"));
        assert!(needs_encoding("a\tb"));
        assert!(!needs_encoding("us west 1"));
        assert!(!needs_encoding(""));
    }
}
