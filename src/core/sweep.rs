//! The tools/list sweep: cursor pagination with every bound and guard, each a typed refusal.
//!
//! The wire is abstracted as one page fetch, so the guards are tested here without a server.

use super::config::Wait;
use super::error::{ConfigError, Failure};
use serde_json::Value;
use std::collections::HashSet;
use std::future::Future;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, Default)]
pub struct SweepBounds {
    pub max_tools: Option<u64>,
    pub max_pages: Option<u64>,
    pub list: Option<Wait>,
    pub discovery: Option<Wait>,
}

/// Why one page request failed.
#[derive(Debug, Clone, PartialEq)]
pub enum PageError {
    TimedOut,
    /// Anything else: a JSON-RPC error, a dead connection. Passed through unchanged.
    Failed(Failure),
}

#[derive(Debug, Clone, PartialEq)]
pub enum SweepError {
    /// A bound or guard: a typed refusal.
    Refused(ConfigError),
    /// The wire failed: a plain error (or an OAuth one).
    Failed(Failure),
}

fn refused(message: String) -> SweepError {
    SweepError::Refused(ConfigError::new(message))
}

/// Pages through tools/list: `fetch(cursor, timeout)` makes one call, and `on_page` receives
/// each page's wire tools in order as soon as the page passed its checks, so the caller can
/// work on them while the next page is on its way. An error means no page counts.
pub async fn sweep<F, Fut>(
    id: &str,
    bounds: SweepBounds,
    mut fetch: F,
    mut on_page: impl FnMut(Vec<Value>),
) -> Result<(), SweepError>
where
    F: FnMut(Option<String>, Option<Duration>) -> Fut,
    Fut: Future<Output = Result<Value, PageError>>,
{
    let budget = Budget::new(id, &bounds);
    let mut count: usize = 0;
    let mut visited: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    let mut page: u64 = 0;
    loop {
        let (timeout, cut_by_budget) = budget.page_timeout(page)?;
        page += 1;
        let queried_with = cursor.clone();
        let result = fetch(cursor.take(), timeout)
            .await
            .map_err(|e| budget.page_failed(e, cut_by_budget, page))?;
        let (page_tools, next) = read_page(id, page, result)?;
        count += page_tools.len();
        // The page as listed goes on before the sweep's own guards judge it: the original's
        // list call has refused a page whose output schemas cannot compile by then.
        on_page(page_tools);
        if let Some(cap) = bounds.max_tools {
            if count as u64 > cap {
                return Err(refused(format!(
                    "mcp: tools/list of '{id}' returned at least {count} wire tools, over the declared maxTools {cap}; raise the cap or trim the server"
                )));
            }
        }
        let Some(next) = next else {
            return Ok(());
        };
        check_cursor(id, &bounds, page, queried_with.as_deref(), &next, &visited)?;
        if let Some(q) = queried_with {
            visited.insert(q);
        }
        visited.insert(next.clone());
        cursor = Some(next);
    }
}

/// The sweep's deadlines: the discovery budget for all pages, listMs for each.
struct Budget<'a> {
    id: &'a str,
    bounds: &'a SweepBounds,
    deadline: Option<Instant>,
    list_timeout: Option<Duration>,
}

impl<'a> Budget<'a> {
    fn new(id: &'a str, bounds: &'a SweepBounds) -> Self {
        Self {
            id,
            bounds,
            deadline: bounds.discovery.map(|w| Instant::now() + w.duration),
            list_timeout: bounds.list.map(|w| w.duration),
        }
    }

    fn discovery_refusal(&self, pages: u64) -> String {
        format!(
            "mcp: tools/list of '{}' exceeded the discovery deadline (timeouts.discoveryMs {}) after {pages} page(s)",
            self.id,
            super::jcs::format_f64(self.bounds.discovery.map_or(0.0, |w| w.ms))
        )
    }

    /// The next page's timeout, the smaller of listMs and what is left of the discovery
    /// budget, and whether the budget is what cut it; `Err` once the budget is spent (after
    /// `pages` pages).
    fn page_timeout(&self, pages: u64) -> Result<(Option<Duration>, bool), SweepError> {
        let Some(deadline) = self.deadline else {
            return Ok((self.list_timeout, false));
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(refused(self.discovery_refusal(pages)));
        }
        Ok(match self.list_timeout {
            Some(list) if list <= remaining => (Some(list), false),
            _ => (Some(remaining), true),
        })
    }

    /// Why page `page`'s call failed, as the sweep refuses it.
    fn page_failed(&self, error: PageError, cut_by_budget: bool, page: u64) -> SweepError {
        match error {
            PageError::TimedOut if cut_by_budget => refused(format!(
                "{}: the current page call was cut at the remaining budget",
                self.discovery_refusal(page - 1)
            )),
            PageError::TimedOut => refused(format!(
                "mcp: tools/list of '{}' page {page} timed out after {}ms (timeouts.listMs)",
                self.id,
                super::jcs::format_f64(self.bounds.list.map_or(0.0, |w| w.ms))
            )),
            PageError::Failed(message) => SweepError::Failed(message),
        }
    }
}

/// A next cursor that makes no progress, cycles, or goes past maxPages refuses the sweep.
fn check_cursor(
    id: &str,
    bounds: &SweepBounds,
    page: u64,
    queried_with: Option<&str>,
    next: &str,
    visited: &HashSet<String>,
) -> Result<(), SweepError> {
    if queried_with == Some(next) {
        return Err(refused(format!(
            "mcp: tools/list of '{id}' returned the cursor it was queried with ('{next}') on page {page}: the pagination makes no progress"
        )));
    }
    if visited.contains(next) {
        return Err(refused(format!(
            "mcp: tools/list of '{id}' returned a cursor this sweep already visited ('{next}') on page {page}: the pagination cycles"
        )));
    }
    if let Some(cap) = bounds.max_pages {
        if page >= cap {
            return Err(refused(format!(
                "mcp: tools/list of '{id}' still reports another page after {page} page(s), over the declared maxPages {cap}; raise the cap or trim the server"
            )));
        }
    }
    Ok(())
}

/// Checks one page against the MCP `Tool` shape exactly as the SDK client's schema checks it
/// (what the original refuses, untyped, this refuses typed, naming the tool and the field);
/// nothing is coerced. A malformed page never half-imports.
fn read_page(
    id: &str,
    page: u64,
    result: Value,
) -> Result<(Vec<Value>, Option<String>), SweepError> {
    let malformed = |what: String| {
        refused(format!(
            "mcp: tools/list of '{id}' returned a malformed page {page}: {what}"
        ))
    };
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
    for (i, tool) in list.iter().enumerate() {
        let name = tool.get("name");
        let label = match name {
            Some(Value::String(n)) => format!("tool '{}'", clip(n)),
            _ => format!("tool #{i}"),
        };
        if !tool.is_object() {
            return Err(malformed(format!("{label} is not an object")));
        }
        if !matches!(name, Some(Value::String(_))) {
            return Err(malformed(format!("{label} has no string 'name'")));
        }
        if let Some(problem) = tool_shape_problem(tool) {
            return Err(malformed(format!("{label} has {problem}")));
        }
    }
    let next = match obj.get("nextCursor") {
        None => None,
        Some(Value::String(c)) if c.is_empty() => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => return Err(malformed("'nextCursor' is not a string".into())),
    };
    Ok((list, next))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::cell::RefCell;

    fn tool(name: &str) -> Value {
        json!({"name": name, "inputSchema": {"type": "object"}})
    }

    /// Runs a sweep over scripted pages; returns the outcome and the cursors queried.
    fn run(
        bounds: SweepBounds,
        pages: Vec<Value>,
    ) -> (Result<Vec<Value>, SweepError>, Vec<Option<String>>) {
        let calls = RefCell::new(Vec::new());
        let mut tools = Vec::new();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let out = rt.block_on(sweep(
            "mcp:test",
            bounds,
            |cursor, _| {
                let i = calls.borrow().len();
                calls.borrow_mut().push(cursor);
                let page = pages
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| pages.last().cloned().unwrap());
                async move { Ok(page) }
            },
            |page| tools.extend(page),
        ));
        (out.map(|()| tools), calls.into_inner())
    }

    fn message(r: Result<Vec<Value>, SweepError>) -> String {
        match r {
            Err(SweepError::Refused(e)) => e.message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn pages_until_no_cursor_or_empty_cursor() {
        let (out, calls) = run(
            SweepBounds::default(),
            vec![
                json!({"tools": [tool("a")], "nextCursor": "c1"}),
                json!({"tools": [tool("b")], "nextCursor": ""}),
            ],
        );
        assert_eq!(out.unwrap().len(), 2);
        assert_eq!(calls, vec![None, Some("c1".into())]);
    }

    #[test]
    fn echo_guard_trips_on_page_two() {
        let (out, calls) = run(
            SweepBounds::default(),
            vec![json!({"tools": [], "nextCursor": "same"})],
        );
        assert_eq!(calls.len(), 2);
        assert_eq!(
            message(out),
            "mcp: tools/list of 'mcp:test' returned the cursor it was queried with ('same') on page 2: the pagination makes no progress"
        );
    }

    #[test]
    fn revisit_guard_trips_after_three_calls() {
        let (out, calls) = run(
            SweepBounds::default(),
            vec![
                json!({"tools": [], "nextCursor": "A"}),
                json!({"tools": [], "nextCursor": "B"}),
                json!({"tools": [], "nextCursor": "A"}),
            ],
        );
        assert_eq!(calls.len(), 3);
        assert!(message(out).contains("already visited ('A') on page 3: the pagination cycles"));
    }

    #[test]
    fn max_pages_stops_at_exactly_the_cap() {
        let pages = (0..10)
            .map(|i| json!({"tools": [], "nextCursor": format!("c{i}")}))
            .collect();
        let bounds = SweepBounds {
            max_pages: Some(3),
            ..Default::default()
        };
        let (out, calls) = run(bounds, pages);
        assert_eq!(calls.len(), 3);
        assert_eq!(
            message(out),
            "mcp: tools/list of 'mcp:test' still reports another page after 3 page(s), over the declared maxPages 3; raise the cap or trim the server"
        );
    }

    #[test]
    fn max_tools_counts_wire_tools_before_filtering() {
        let bounds = SweepBounds {
            max_tools: Some(2),
            ..Default::default()
        };
        let (out, _) = run(
            bounds,
            vec![json!({"tools": [tool("a"), tool("b"), tool("c")]})],
        );
        assert_eq!(
            message(out),
            "mcp: tools/list of 'mcp:test' returned at least 3 wire tools, over the declared maxTools 2; raise the cap or trim the server"
        );
    }

    #[test]
    fn malformed_pages_name_the_tool() {
        let (out, _) = run(
            SweepBounds::default(),
            vec![
                json!({"tools": [tool("ok"), {"name": "bad", "inputSchema": {"type": "string"}}]}),
            ],
        );
        assert!(message(out).contains("tool 'bad' has an 'inputSchema'"));
        let (out, _) = run(SweepBounds::default(), vec![json!({"tools": "nope"})]);
        assert!(message(out).contains("'tools' is not an array"));
    }

    #[test]
    fn clip_bounds_long_names() {
        assert_eq!(clip(&"x".repeat(10_000)).chars().count(), 201);
    }
}
