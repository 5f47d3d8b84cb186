//! One page of tools/list read and checked against the MCP `Tool` shape, exactly as the SDK
//! client's schema checks it (what the original refuses, untyped, this refuses typed, naming the
//! tool and the field); nothing is coerced. A malformed page never half-imports.
//!
//! A page comes parsed, or as its JSON text (`PageReply::Text`): then its head (how many tools,
//! which cursor next) is read first, so the sweep can ask for the next page before this one's
//! tools are parsed.

use super::{refused, PageReply, SweepError};
use crate::core::lite::RawObject;
use serde_json::value::RawValue;
use serde_json::Value;

/// Reads page `page` whole: its wire tools and its next cursor, or why it is malformed.
pub(super) fn read_page(
    id: &str,
    page: u64,
    result: PageReply,
) -> Result<(Vec<Value>, Option<String>), SweepError> {
    let result = match result {
        PageReply::Parsed(result) => result,
        // The text was read once already (by the router, its nesting bounded): it parses. Were
        // it not to, the page would be refused as no object.
        PageReply::Text(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
    };
    let malformed = |what: String| malformed(id, page, what);
    let Value::Object(mut obj) = result else {
        return Err(malformed("the result is not an object".into()));
    };
    if obj.get("_meta").is_some_and(|m| !m.is_object()) {
        return Err(malformed("'_meta' is not an object".into()));
    }
    // The page's tools are moved out, not copied: a big page is hundreds of kilobytes of them.
    let Some(Value::Array(list)) = obj.remove("tools") else {
        return Err(malformed("'tools' is not an array".into()));
    };
    check_tools(id, page, &list)?;
    let next = match obj.get("nextCursor") {
        None => None,
        Some(Value::String(c)) if c.is_empty() => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => return Err(malformed("'nextCursor' is not a string".into())),
    };
    Ok((list, next))
}

/// A page as text read as far as its envelope: each tool's text and the next cursor. Only a
/// page whose envelope is as it should be (`_meta` an object if present, `tools` an array,
/// `nextCursor` absent or a string) has a head; any other is read whole, which names what
/// is wrong in the order it always has.
pub(super) struct Head<'a> {
    tools: Vec<&'a RawValue>,
    pub(super) next: Option<String>,
}

impl<'a> Head<'a> {
    pub(super) fn read(text: &'a str) -> Option<Self> {
        let object: RawObject<'a> = serde_json::from_str(text).ok()?;
        if object
            .member("_meta")
            .is_some_and(|m| !m.trim_start().starts_with('{'))
        {
            return None;
        }
        // `null` or anything but an array does not read as one.
        let tools = serde_json::from_str(object.member("tools")?).ok()?;
        let next = match object.member("nextCursor") {
            None => None,
            Some(cursor) => Some(serde_json::from_str::<String>(cursor).ok()?),
        };
        Some(Head {
            tools,
            next: next.filter(|c| !c.is_empty()),
        })
    }

    /// How many wire tools the page lists.
    pub(super) fn count(&self) -> usize {
        self.tools.len()
    }

    /// The page's tools parsed and checked, as `read_page` would give them.
    pub(super) fn tools(&self, id: &str, page: u64) -> Result<Vec<Value>, SweepError> {
        let list: Vec<Value> = self
            .tools
            .iter()
            // Read once already, within the nesting bound: each parses (`null`, were it not to,
            // is refused as no object).
            .map(|tool| serde_json::from_str(tool.get()).unwrap_or(Value::Null))
            .collect();
        check_tools(id, page, &list)?;
        Ok(list)
    }
}

fn malformed(id: &str, page: u64, what: String) -> SweepError {
    refused(format!(
        "mcp: tools/list of '{id}' returned a malformed page {page}: {what}"
    ))
}

/// Each tool of page `page` in order: the first that is malformed refuses the page.
fn check_tools(id: &str, page: u64, list: &[Value]) -> Result<(), SweepError> {
    for (i, tool) in list.iter().enumerate() {
        let name = tool.get("name");
        let label = match name {
            Some(Value::String(n)) => format!("tool '{}'", clip(n)),
            _ => format!("tool #{i}"),
        };
        if !tool.is_object() {
            return Err(malformed(id, page, format!("{label} is not an object")));
        }
        if !matches!(name, Some(Value::String(_))) {
            return Err(malformed(id, page, format!("{label} has no string 'name'")));
        }
        if let Some(problem) = tool_shape_problem(tool) {
            return Err(malformed(id, page, format!("{label} has {problem}")));
        }
    }
    Ok(())
}

/// What is wrong with one tool's optional fields, if anything (present means of the right type:
/// `null` is not absent).
fn tool_shape_problem(tool: &Value) -> Option<String> {
    let field = |key: &str| tool.get(key);
    let not = |key: &str, what: &str| Some(format!("a '{key}' that is not {what}"));
    for key in ["title", "description"] {
        if field(key).is_some_and(|v| !v.is_string()) {
            return not(key, "a string");
        }
    }
    // An absent input schema reads as one that is not an object schema.
    if let Some(problem) = schema_shape_problem(field("inputSchema").unwrap_or(&Value::Null)) {
        return Some(format!("an 'inputSchema' {problem}"));
    }
    if let Some(schema) = field("outputSchema") {
        if let Some(problem) = schema_shape_problem(schema) {
            return Some(format!("an 'outputSchema' {problem}"));
        }
    }
    if let Some(annotations) = field("annotations") {
        let Value::Object(a) = annotations else {
            return not("annotations", "an object");
        };
        if a.get("title").is_some_and(|v| !v.is_string()) {
            return not("annotations.title", "a string");
        }
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            if a.get(hint).is_some_and(|v| !v.is_boolean()) {
                return not(&format!("annotations.{hint}"), "a boolean");
            }
        }
    }
    if let Some(execution) = field("execution") {
        let Value::Object(e) = execution else {
            return not("execution", "an object");
        };
        if e.get("taskSupport")
            .is_some_and(|v| !matches!(v.as_str(), Some("required" | "optional" | "forbidden")))
        {
            return not(
                "execution.taskSupport",
                "one of required, optional, forbidden",
            );
        }
    }
    if let Some(icons) = field("icons") {
        let Value::Array(icons) = icons else {
            return not("icons", "an array");
        };
        for icon in icons {
            let ok = icon.get("src").is_some_and(Value::is_string)
                && icon.get("mimeType").is_none_or(Value::is_string)
                && icon
                    .get("sizes")
                    .is_none_or(|s| s.as_array().is_some_and(|s| s.iter().all(Value::is_string)))
                && icon
                    .get("theme")
                    .is_none_or(|t| matches!(t.as_str(), Some("light" | "dark")));
            if !ok {
                return not(
                    "icons",
                    "an array of icons ({ src, mimeType?, sizes?, theme? })",
                );
            }
        }
    }
    if field("_meta").is_some_and(|m| !m.is_object()) {
        return not("_meta", "an object");
    }
    None
}

/// What is wrong with an input or output schema as a page carries it: an object with
/// `type: 'object'`, `properties` (if any) an object of objects, `required` (if any) an array
/// of strings. Anything else in it is the schema's own business.
fn schema_shape_problem(schema: &Value) -> Option<&'static str> {
    let Value::Object(map) = schema else {
        return Some("that is not an object schema with type 'object'");
    };
    if map.get("type") != Some(&Value::String("object".into())) {
        return Some("that is not an object schema with type 'object'");
    }
    if let Some(properties) = map.get("properties") {
        let Value::Object(properties) = properties else {
            return Some("whose 'properties' is not an object");
        };
        if properties
            .values()
            .any(|p| !(p.is_object() || p.is_array()))
        {
            return Some("whose 'properties' has a member that is not an object");
        }
    }
    if let Some(required) = map.get("required") {
        if !required
            .as_array()
            .is_some_and(|r| r.iter().all(Value::is_string))
        {
            return Some("whose 'required' is not an array of strings");
        }
    }
    None
}

/// Tool names from a hostile server can be huge; messages carry at most 200 characters.
pub fn clip(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}
