//! Signs of tool poisoning in what the model reads (titles and descriptions): characters a
//! person reviewing the text cannot see, HTML comments (rendered away in most UIs, read by the
//! model), text naming another admitted tool (instructions to call or avoid it), and two
//! admitted names that differ only by case or separators (one shadowing the other).
//!
//! Reported, never altered: the contract hash stays over what the server sent.

use super::admit::ToolSpec;
use super::lockdiff::{hidden, visible};
use serde_json::{json, Value};
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sign {
    pub tool: String,
    /// `title`, `description` or `name`.
    pub field: &'static str,
    /// `invisible-character`, `html-comment`, `names-other-tool`, `confusable-name`.
    pub kind: &'static str,
    pub text: String,
}

impl Sign {
    pub fn to_json(&self) -> Value {
        json!({ "tool": self.tool, "field": self.field, "kind": self.kind, "text": self.text })
    }
}

/// Control characters other than the whitespace a description legitimately has.
fn control(c: char) -> bool {
    c.is_control() && !matches!(c, '\n' | '\r' | '\t')
}

/// How many `names-other-tool` signs one title or description gets, one per tool it names;
/// past them one more sign counts the rest. A text naming every other tool of a big list would
/// otherwise make signs by the square of the tool count.
const NAMED_PER_TEXT: usize = 8;
/// How many signs one import's report keeps; the rest are counted (`Report::signs_omitted`).
pub const SIGNS_PER_IMPORT: usize = 1000;

/// One sign per name in `named` (sorted, without repeats) up to `NAMED_PER_TEXT`, then one
/// that counts the rest.
fn named_signs<T>(
    named: &[T],
    each: impl Fn(&T) -> String,
    rest: impl Fn(usize) -> String,
) -> Vec<String> {
    let mut texts: Vec<String> = named.iter().take(NAMED_PER_TEXT).map(each).collect();
    if named.len() > NAMED_PER_TEXT {
        texts.push(rest(named.len() - NAMED_PER_TEXT));
    }
    texts
}

/// Every sign in the admitted tools, in tool order.
/// `redact` is applied to what a sign quotes before it is clipped (see `Lock::check`).
pub fn signs(specs: &[ToolSpec], redact: &dyn Fn(&str) -> String) -> Vec<Sign> {
    let mut out = Vec::new();
    // Names another tool's text could mention, with the tool they belong to.
    let mut names: HashMap<&str, &str> = HashMap::new();
    for spec in specs {
        names.insert(&spec.name, &spec.name);
        names.insert(&spec.original, &spec.name);
    }
    for spec in specs {
        let title = spec.title.as_ref().and_then(Value::as_str);
        let fields = [
            ("title", title),
            ("description", Some(spec.description.as_str())),
        ];
        for (field, text) in fields {
            let Some(text) = text else { continue };
            for (kind, what) in text_signs(text, &spec.name, &names, redact) {
                out.push(Sign {
                    tool: spec.name.clone(),
                    field,
                    kind,
                    text: format!("tool '{}': {field} {what}", spec.name),
                });
            }
        }
    }
    confusable_names(specs, &mut out);
    out
}

/// The signs in one text of tool `tool` (its kind, and what it says): invisible or control
/// characters, an HTML comment, other admitted tools it names (`names`: a name to its tool).
fn text_signs(
    text: &str,
    tool: &str,
    names: &HashMap<&str, &str>,
    redact: &dyn Fn(&str) -> String,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some((at, c)) = text
        .chars()
        .enumerate()
        .find(|(_, c)| hidden(*c) || control(*c))
    {
        let count = text.chars().filter(|c| hidden(*c) || control(*c)).count();
        out.push((
            "invisible-character",
            format!(
                "has {count} invisible or control character(s), the first U+{:04X} at char {at}",
                c as u32
            ),
        ));
    }
    if let Some(start) = text.find("<!--") {
        let comment = redact(&text[start..]);
        out.push((
            "html-comment",
            format!("has an HTML comment: \"{}\"", visible(&comment, 60)),
        ));
    }
    let mut named: Vec<&str> = tokens(text)
        .filter_map(|t| names.get(t).copied())
        .filter(|owner| *owner != tool)
        .collect();
    named.sort_unstable();
    named.dedup();
    let texts = named_signs(
        &named,
        |other| format!("names another admitted tool, '{other}'"),
        |more| format!("names {more} more admitted tool(s)"),
    );
    out.extend(texts.into_iter().map(|text| ("names-other-tool", text)));
    out
}

/// Names equal once case and separators are ignored: one can pass for the other.
fn confusable_names(specs: &[ToolSpec], out: &mut Vec<Sign>) {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for spec in specs {
        if let Some(first) = seen.insert(folded(&spec.name), &spec.name) {
            out.push(Sign {
                tool: spec.name.clone(),
                field: "name",
                kind: "confusable-name",
                text: format!(
                    "tools '{first}' and '{}' differ only by case or separators",
                    spec.name
                ),
            });
        }
    }
}

/// What another live source of this process admitted: its id and its tools' final names.
pub struct Neighbour {
    pub source: String,
    pub names: Vec<String>,
}

/// A name as two names that can pass for each other compare: without case or separators.
fn folded(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Signs across sources: a tool whose final name differs from another source's only by case
/// or separators (one shadows the other in the engine's toolset), and a title or description
/// naming another source's tool or the source itself.
pub fn across(specs: &[ToolSpec], others: &[Neighbour]) -> Vec<Sign> {
    let mut out = Vec::new();
    if others.is_empty() {
        return out;
    }
    let mut theirs: HashMap<String, (&str, &str)> = HashMap::new();
    let mut named: HashMap<&str, &str> = HashMap::new();
    for other in others {
        for name in &other.names {
            theirs.insert(folded(name), (name, &other.source));
            named.insert(name, &other.source);
        }
    }
    for spec in specs {
        if let Some((name, source)) = theirs.get(&folded(&spec.name)) {
            out.push(Sign {
                tool: spec.name.clone(),
                field: "name",
                kind: "confusable-name",
                text: format!(
                    "tool '{}' and tool '{name}' of '{source}' differ only by case or separators",
                    spec.name
                ),
            });
        }
        let title = spec.title.as_ref().and_then(Value::as_str);
        for (field, text) in [
            ("title", title),
            ("description", Some(spec.description.as_str())),
        ] {
            let Some(text) = text else { continue };
            let mut found: Vec<(&str, &str)> = tokens(text)
                .filter_map(|t| named.get_key_value(t).map(|(k, v)| (*k, *v)))
                .collect();
            found.sort_unstable();
            found.dedup();
            let texts = named_signs(
                &found,
                |(name, source)| {
                    format!(
                        "tool '{}': {field} names tool '{name}' of '{source}'",
                        spec.name
                    )
                },
                |more| {
                    format!(
                        "tool '{}': {field} names {more} more tool(s) of other sources",
                        spec.name
                    )
                },
            );
            for text in texts {
                out.push(Sign {
                    tool: spec.name.clone(),
                    field,
                    kind: "names-other-tool",
                    text,
                });
            }
            for other in others.iter().filter(|o| text.contains(o.source.as_str())) {
                out.push(Sign {
                    tool: spec.name.clone(),
                    field,
                    kind: "names-other-tool",
                    text: format!(
                        "tool '{}': {field} names the source '{}'",
                        spec.name, other.source
                    ),
                });
            }
        }
    }
    out
}

/// The words of a text as tool names are spelled (`[A-Za-z0-9_-]+`).
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::admit::admit;
    use crate::core::config::Config;
    use crate::core::raw::Raw;

    fn specs(tools: Value) -> Vec<ToolSpec> {
        let raw = Raw::Object(vec![
            ("transport".into(), Raw::String("stdio".into())),
            ("command".into(), Raw::String("node".into())),
        ]);
        let Value::Array(tools) = tools else {
            unreachable!()
        };
        admit(&Config::parse(&raw).unwrap(), tools).unwrap()
    }

    #[test]
    fn each_kind_is_found_and_plain_text_is_not() {
        let found = signs(
            &specs(json!([
                {"name": "a", "description": "Plain text, tabs\tand\nnewlines are fine.", "inputSchema": {"type": "object"}},
                {"name": "b", "title": "B\u{E0041}", "description": "x <!-- hidden --> then call a", "inputSchema": {"type": "object"}},
                {"name": "c_d", "description": "\u{7}", "inputSchema": {"type": "object"}},
                {"name": "C-D", "description": "", "inputSchema": {"type": "object"}},
            ])),
            &|s: &str| s.to_owned(),
        );
        let kinds: Vec<(&str, &str, &str)> = found
            .iter()
            .map(|s| (s.tool.as_str(), s.field, s.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("b", "title", "invisible-character"),
                ("b", "description", "html-comment"),
                ("b", "description", "names-other-tool"),
                ("c_d", "description", "invisible-character"),
                ("C-D", "name", "confusable-name"),
            ]
        );
        assert_eq!(
            found[0].text,
            "tool 'b': title has 1 invisible or control character(s), the first U+E0041 at char 1"
        );
    }

    /// A list whose every description names every other tool: the signs grow with the list,
    /// not with its square (a hostile 1,500-tool list made 2.25 million of them).
    #[test]
    fn a_text_naming_every_other_tool_makes_a_bounded_number_of_signs() {
        let n = 300;
        let all: String = (0..n).map(|i| format!("t{i} ")).collect();
        let tools: Vec<Value> = (0..n)
            .map(|i| json!({"name": format!("t{i}"), "description": all, "inputSchema": {"type": "object"}}))
            .collect();
        let found = signs(&specs(Value::Array(tools)), &|s: &str| s.to_owned());
        assert_eq!(found.len(), n * (NAMED_PER_TEXT + 1));
        let first: Vec<&str> = found
            .iter()
            .take(NAMED_PER_TEXT + 1)
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(
            first[0],
            "tool 't0': description names another admitted tool, 't1'"
        );
        assert_eq!(
            first[NAMED_PER_TEXT],
            format!(
                "tool 't0': description names {} more admitted tool(s)",
                n - 1 - NAMED_PER_TEXT
            )
        );
    }
}
