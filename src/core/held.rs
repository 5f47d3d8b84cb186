//! What an import holds in native memory, estimated: the napi edge tells V8 about it for as
//! long as the JS object that keeps it is alive (`NativeSnapshot`). V8 sees only its own heap;
//! memory a collectable object keeps outside it weighs nothing in its decisions, so closed
//! sources' imports waiting for a full collection piled up unseen (2,450 of them, 35 MB of the
//! addon's allocator, in a loop of open/tools()/close() of a 10-tool server).
//!
//! An estimate from what the import's structs own, never more than it holds: schema texts and
//! their validators are shared by every import of the same schema (`validate::Compiled`), so
//! they are left out, as a second import of the same server adds nothing of them.

use super::admit::ToolSpec;
use serde_json::Value;
use std::mem::size_of;

/// What an import keeps alive besides its tools: its source's and its connection's client
/// state. Measured with the `alloc-count` build, an in-process source closed and kept by its
/// ToolDefs: about 5,000 bytes with no tool, 90 more per tool of a server imported again.
const KEPT_ALIVE: usize = 4096;

/// The bytes the import of `tools`, with `left_out` (names and reasons), holds of its own.
pub fn import_bytes(tools: &[ToolSpec], left_out: &[(String, String)]) -> usize {
    let tools: usize = tools.iter().map(tool_bytes).sum();
    let left_out: usize = left_out
        .iter()
        .map(|(name, reason)| size_of::<(String, String)>() + name.len() + reason.len())
        .sum();
    KEPT_ALIVE + tools + left_out
}

/// One admitted tool's own bytes: the struct, its texts, its header declarations and the
/// trees it keeps (title, annotations, task support, a lock's contract).
fn tool_bytes(tool: &ToolSpec) -> usize {
    let texts = tool.name.len()
        + tool.original.len()
        + tool.description.len()
        + tool.risk.as_ref().map_or(0, String::len);
    let headers: usize = tool
        .headers
        .iter()
        .map(|h| {
            size_of_val(h)
                + h.name.len()
                + h.path
                    .iter()
                    .map(|p| size_of::<String>() + p.len())
                    .sum::<usize>()
        })
        .sum();
    let trees = [&tool.title, &tool.annotations, &tool.task_support]
        .into_iter()
        .flatten()
        .chain(tool.contract.as_deref())
        .map(tree_bytes)
        .sum::<usize>();
    size_of::<ToolSpec>() + texts + headers + trees
}

/// A tree's bytes: a `Value` per node, its strings and keys, its containers' slots.
fn tree_bytes(value: &Value) -> usize {
    size_of::<Value>()
        + match value {
            Value::String(s) => s.len(),
            Value::Array(items) => items.iter().map(tree_bytes).sum(),
            Value::Object(members) => members
                .iter()
                .map(|(k, v)| size_of::<String>() + k.len() + tree_bytes(v))
                .sum(),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::admit::admit;
    use crate::core::config::Config;
    use crate::core::raw::Raw;
    use serde_json::json;

    fn tools(wire: Vec<Value>) -> Vec<ToolSpec> {
        let raw = Raw::Object(vec![
            ("transport".into(), Raw::String("stdio".into())),
            ("command".into(), Raw::String("node".into())),
        ]);
        admit(&Config::parse(&raw).unwrap(), wire).unwrap()
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({ "name": name, "description": description, "inputSchema": { "type": "object" } })
    }

    #[test]
    fn an_import_counts_what_it_keeps_alive_and_each_tool_own_texts() {
        assert_eq!(import_bytes(&[], &[]), KEPT_ALIVE);
        let short = import_bytes(&tools(vec![tool("a", "")]), &[]);
        let long = import_bytes(&tools(vec![tool("a", &"d".repeat(100_000))]), &[]);
        assert_eq!(long - short, 100_000);
        assert!(short > KEPT_ALIVE + size_of::<ToolSpec>());
        let left_out = [("x".to_owned(), "r".repeat(50))];
        assert_eq!(
            import_bytes(&[], &left_out),
            KEPT_ALIVE + size_of::<(String, String)>() + 51
        );
    }

    #[test]
    fn trees_count_every_node_and_text_and_schemas_are_left_to_their_owners() {
        let mut titled = tool("a", "");
        titled["annotations"] = json!({ "title": "t".repeat(1_000), "hints": [true, false, null] });
        let plain = import_bytes(&tools(vec![tool("a", "")]), &[]);
        let annotated = import_bytes(&tools(vec![titled]), &[]);
        // The object, its two keys, the string and its text, the array and its three items.
        let tree = 2 * size_of::<Value>()
            + 2 * size_of::<String>()
            + "title".len()
            + "hints".len()
            + 1_000
            + 4 * size_of::<Value>();
        assert_eq!(annotated - plain, tree);
        // A schema is shared by every import of it: a bigger one adds nothing here.
        let mut wide = tool("a", "");
        wide["inputSchema"] = json!({ "type": "object", "description": "s".repeat(100_000) });
        assert_eq!(import_bytes(&tools(vec![wide]), &[]), plain);
    }
}
