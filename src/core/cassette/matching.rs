//! How a live request finds its recorded interaction: by method and canonical params (JCS),
//! without the client's own envelope (`_meta`: progress tokens, trace context, the modern
//! era's client info) and without the argument paths a host chose to ignore.

use crate::core::jcs;
use serde_json::Value;

/// Argument paths (JSON pointers into a tool call's `arguments`) left out of matching, per tool
/// as the server names it; `*` stands for every tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Ignore(pub(crate) Vec<(String, Vec<String>)>);

impl Ignore {
    fn paths<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(name, _)| name == tool || name == "*")
            .flat_map(|(_, paths)| paths.iter().map(String::as_str))
    }
}

/// Whether `method` opens a connection: matched by its method alone, since what the client
/// declares there (its capabilities, its version) is the client's, not the server's answer.
pub(crate) fn opening(method: &str) -> bool {
    method == "initialize" || method == "server/discover"
}

/// `params` as they are matched: without `_meta` (at the top and in `arguments`' envelope),
/// a tool call's arguments without the ignored paths.
pub(crate) fn normalized(method: &str, params: &Value, ignore: &Ignore) -> Value {
    let mut out = params.clone();
    if let Some(m) = out.as_object_mut() {
        m.remove("_meta");
    }
    if method == "tools/call" {
        let tool = params.get("name").and_then(Value::as_str).unwrap_or("");
        let paths: Vec<String> = ignore.paths(tool).map(str::to_owned).collect();
        if let Some(arguments) = out.get_mut("arguments") {
            for path in &paths {
                remove(arguments, path);
            }
        }
    }
    out
}

/// The key a request is queued under.
pub(crate) fn key(method: &str, normalized: &Value) -> String {
    if opening(method) {
        return method.to_owned();
    }
    format!("{method}\n{}", jcs::serialize(normalized))
}

/// Removes what `pointer` names, if it is there (an array item becomes `null`, so the
/// positions of the others hold).
fn remove(value: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    match value.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.remove(&last);
        }
        Some(Value::Array(items)) => {
            if let Some(item) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                *item = Value::Null;
            }
        }
        _ => {}
    }
}

/// The JSON pointers at which `live` and `recorded` differ, in `live`'s order, then what only
/// `recorded` has; at most `limit` of them.
pub(crate) fn differences(live: &Value, recorded: &Value, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    differ(live, recorded, &mut String::new(), &mut out, limit);
    out
}

fn differ(a: &Value, b: &Value, at: &mut String, out: &mut Vec<String>, limit: usize) {
    if out.len() >= limit {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                descend(at, k, |at| match y.get(k) {
                    Some(w) => differ(v, w, at, out, limit),
                    None => out.push(at.clone()),
                });
            }
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                descend(at, k, |at| out.push(at.clone()));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                descend(at, &i.to_string(), |at| match (x.get(i), y.get(i)) {
                    (Some(v), Some(w)) => differ(v, w, at, out, limit),
                    _ => out.push(at.clone()),
                });
            }
        }
        _ if a != b => out.push(at.clone()),
        _ => {}
    }
    out.truncate(limit);
}

fn descend(at: &mut String, token: &str, f: impl FnOnce(&mut String)) {
    let len = at.len();
    at.push('/');
    at.push_str(&token.replace('~', "~0").replace('/', "~1"));
    f(at);
    at.truncate(len);
}
