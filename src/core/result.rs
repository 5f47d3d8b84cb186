//! Mapping a tools/call result to what `execute` resolves with: `isError` rejects with the text,
//! then `structuredContent` (required by, and validated against, a declared outputSchema), else
//! the content blocks (one string when all are text, else an array).

use super::error::Failure;
use super::validate::{describe, Compiled};
use serde_json::{Map, Value};

pub fn map_result(tool: &str, output: Option<&Compiled>, result: Value) -> Result<Value, Failure> {
    let Value::Object(mut result) = result else {
        return Err(Failure::from(format!(
            "mcp: tool '{tool}' returned a result that is not an object"
        )));
    };
    let content = match result.remove("content") {
        Some(Value::Array(blocks)) => blocks,
        None | Some(Value::Null) => Vec::new(),
        Some(_) => {
            return Err(Failure::from(format!(
                "mcp: tool '{tool}' returned 'content' that is not an array"
            )))
        }
    };
    if result.get("isError") == Some(&Value::Bool(true)) {
        let text = joined_text(&content);
        return Err(Failure::from(if text.is_empty() {
            "MCP tool reported an error".to_owned()
        } else {
            text
        }));
    }
    let structured = match result.remove("structuredContent") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v),
    };
    match (output, structured) {
        (Some(_), None) => Err(Failure::from(format!(
            "mcp: tool '{tool}' has an output schema but did not return structured content"
        ))),
        (Some(validator), Some(value)) => {
            let issues = validator.issues(&value);
            if issues.is_empty() {
                Ok(value)
            } else {
                Err(Failure::from(format!(
                    "mcp: tool '{tool}' returned structured content that does not match its output schema: {}",
                    describe(&issues)
                )))
            }
        }
        (None, Some(value)) => Ok(value),
        (None, None) => Ok(map_content(content)),
    }
}

fn is_text(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("text")
}

fn text_of(block: &Value) -> &str {
    block.get("text").and_then(Value::as_str).unwrap_or("")
}

fn joined_text(content: &[Value]) -> String {
    content.iter().filter(|b| is_text(b)).map(text_of).collect()
}

/// All text (or none): one string. Otherwise an array, text blocks normalized to
/// `{ type: 'text', text }` and every other block passed through unchanged.
fn map_content(content: Vec<Value>) -> Value {
    if content.iter().all(is_text) {
        return Value::String(joined_text(&content));
    }
    Value::Array(
        content
            .into_iter()
            .map(|block| {
                if is_text(&block) {
                    let mut m = Map::with_capacity(2);
                    m.insert("type".into(), Value::String("text".into()));
                    m.insert("text".into(), Value::String(text_of(&block).to_owned()));
                    Value::Object(m)
                } else {
                    block
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_blocks_concatenate() {
        let r = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "annotations": {}}]});
        assert_eq!(map_result("t", None, r).unwrap(), json!("ab"));
        assert_eq!(
            map_result("t", None, json!({"content": []})).unwrap(),
            json!("")
        );
    }

    #[test]
    fn non_text_blocks_pass_through_beside_normalized_text() {
        let image = json!({"type": "image", "data": "AAAA", "mimeType": "image/png"});
        let r = json!({"content": [{"type": "text", "text": "see", "annotations": {"x": 1}}, image.clone()]});
        assert_eq!(
            map_result("t", None, r).unwrap(),
            json!([{"type": "text", "text": "see"}, image])
        );
    }

    #[test]
    fn errors_follow_the_contract_order() {
        let err = |r: Value, out: Option<&Compiled>| map_result("t", out, r).unwrap_err().message;
        assert_eq!(
            err(
                json!({"isError": true, "content": [{"type": "text", "text": "boom"}]}),
                None
            ),
            "boom"
        );
        assert_eq!(
            err(json!({"isError": true, "content": []}), None),
            "MCP tool reported an error"
        );
        let schema = Compiled::new(&json!({"type": "object", "properties": {"doubled": {"type": "number"}}, "required": ["doubled"]})).unwrap();
        assert!(err(json!({"content": []}), Some(&schema))
            .contains("has an output schema but did not return structured content"));
        assert!(err(
            json!({"structuredContent": {"doubled": "x"}}),
            Some(&schema)
        )
        .contains("does not match its output schema"));
        assert_eq!(
            map_result(
                "t",
                Some(&schema),
                json!({"structuredContent": {"doubled": 42}})
            )
            .unwrap(),
            json!({"doubled": 42})
        );
    }
}
