//! Mapping a tools/call result to what `execute` resolves with: `isError` rejects with the text,
//! then `structuredContent` (required by, and validated against, a declared outputSchema), else
//! the content blocks (one string when all are text, else an array).

use super::error::Failure;
use super::jcs::write_string;
use super::lite::{self, Lite, RawObject};
use super::plain::plain;
use super::validate::{describe, Compiled, Issue};
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
        (Some(validator), Some(value)) => judged(tool, validator, &value).map(|()| value),
        (None, Some(value)) => Ok(value),
        (None, None) => Ok(map_content(content)),
    }
}

/// A structured value held to its tool's output schema: the refusal `map_result` words.
fn judged(tool: &str, validator: &Compiled, value: &Value) -> Result<(), Failure> {
    let issues = validator.issues(value);
    match issues.is_empty() {
        true => Ok(()),
        false => Err(does_not_match(tool, &issues)),
    }
}

/// A structured value held to its tool's output schema in its text (`core::lite`); `None` when
/// only the `Value` path can judge it (a part `lite` refuses, a validator only `Value`s have).
fn judged_text(tool: &str, validator: &Compiled, text: &str) -> Option<Result<(), Failure>> {
    let tree = lite::parse(text, RAW_DEPTH)?;
    Some(match validator.lite_valid(tree.root())? {
        true => Ok(()),
        false => Err(does_not_match(
            tool,
            &validator.issues(&tree.root().to_value()),
        )),
    })
}

fn does_not_match(tool: &str, issues: &[Issue]) -> Failure {
    Failure::from(format!(
        "mcp: tool '{tool}' returned structured content that does not match its output schema: {}",
        describe(issues)
    ))
}

/// Nesting a result's parts may have for `map_raw_result`; deeper ones take the `Value` path,
/// which alone decides where the message's depth limit falls.
const RAW_DEPTH: usize = 96;

/// `map_result` for a result still in its text (its members' values as the reply carried
/// them): the JSON text `map_result`'s value would be written as, or its failure. A
/// structured result is validated in the text (`core::lite`) and handed on as the server
/// wrote it. `None` when the `Value` path must decide: an error result, a part `lite` refuses
/// (a repeated key, deep nesting, text that is not JSON), a validator only `Value`s have, or
/// a shape `map_result` refuses (it words the refusal).
///
/// `checked_in_js`: the JS side validates the structured value itself (`lib/outputcheck.js`)
/// and asks `recheck_structured` whenever it does not accept it, so a structured text both
/// parsers read alike (`core::plain`) is handed on unparsed and unvalidated here.
pub(crate) fn map_raw_result(
    tool: &str,
    output: Option<&Compiled>,
    result: &RawObject<'_>,
    checked_in_js: bool,
) -> Option<Result<String, Failure>> {
    if result.get("isError") == Some("true") {
        return None;
    }
    let content = match result.get("content") {
        None => None,
        Some(c) => Some(lite::parse(c, RAW_DEPTH).filter(|t| t.root().is_array())?),
    };
    match (output, result.get("structuredContent")) {
        (Some(_), None) => None,
        (Some(_), Some(text)) if checked_in_js && plain(text) => Some(Ok(text.to_owned())),
        (Some(validator), Some(text)) => {
            Some(judged_text(tool, validator, text)?.map(|()| text.to_owned()))
        }
        (None, Some(text)) => {
            lite::parse(text, RAW_DEPTH)?;
            Some(Ok(text.to_owned()))
        }
        (None, None) => {
            let blocks = content
                .as_ref()
                .map(|t| t.root().items())
                .unwrap_or_default();
            let mut out = String::new();
            if blocks.clone().all(|b| lite_is_text(&b)) {
                let text: String = blocks
                    .map(|b| b.get("text").and_then(|t| t.as_str()).unwrap_or(""))
                    .collect();
                write_string(&mut out, &text);
            } else {
                let value = map_content(blocks.map(|b| b.to_value()).collect());
                out = serde_json::to_string(&value).ok()?;
            }
            Some(Ok(out))
        }
    }
}

/// What the native path says of a structured value the JS side did not accept (its text as it
/// was handed on, `map_raw_result` with `checked_in_js`): `Ok` when it is valid after all, else
/// the refusal, worded as `map_result` words it. The JS side's check only ever accepts what this
/// accepts; whatever it declines is decided here.
pub(crate) fn recheck_structured(
    tool: &str,
    output: Option<&Compiled>,
    text: &str,
) -> Result<(), Failure> {
    let Some(validator) = output else {
        return Ok(());
    };
    if let Some(judged) = judged_text(tool, validator, text) {
        return judged;
    }
    // A repeated key, deep nesting, a validator only `Value`s have: as the `Value` path.
    let value: Value = serde_json::from_str(text).map_err(|_| {
        Failure::from(format!(
            "mcp: tool '{tool}' returned structured content that could not be read"
        ))
    })?;
    judged(tool, validator, &value)
}

fn lite_is_text(block: &Lite<'_>) -> bool {
    block.get("type").and_then(|t| t.as_str()) == Some("text")
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

    /// `map_raw_result` answers as `map_result` does wherever it answers, and declines where
    /// only the `Value` path can say what a result means.
    #[test]
    fn raw_results_map_as_values_do() {
        use super::super::validate::Use;
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}, "when": {"type": "string", "format": "date"}}, "required": ["n"]});
        let output = Compiled::with_text(&schema, schema.to_string(), Use::Output);
        let answered = [
            (
                r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b\n\"c\"","annotations":{}}]}"#,
                None,
            ),
            (r#"{"content":[]}"#, None),
            (r#"{}"#, None),
            (r#"{"content":null,"isError":false}"#, None),
            (
                r#"{"content":[{"type":"text","text":"see"},{"type":"image","data":"AA","mimeType":"image/png"}]}"#,
                None,
            ),
            (r#"{"content":[{"type":"text"}]}"#, None),
            (
                r#"{"content":[],"structuredContent":{"z":1,"a":[1.0,-0,1e300,"\u00e9"]}}"#,
                None,
            ),
            (
                r#"{"content":[],"structuredContent":{"n":3,"when":"2026-12-01"}}"#,
                Some(&output),
            ),
            (
                r#"{"content":[],"structuredContent":{"n":3.5}}"#,
                Some(&output),
            ),
            (
                r#"{"content":[],"structuredContent":{"n":3,"when":"yesterday"}}"#,
                Some(&output),
            ),
            (
                r#"{"content":[],"structuredContent":{"when":"2026-12-01"}}"#,
                Some(&output),
            ),
        ];
        for (raw, output) in answered {
            let fast = map_raw_result("t", output, &serde_json::from_str(raw).unwrap(), false)
                .unwrap_or_else(|| panic!("declined {raw}"));
            let slow = map_result("t", output, serde_json::from_str(raw).unwrap());
            match (fast, slow) {
                (Ok(text), Ok(value)) => {
                    assert_eq!(
                        serde_json::from_str::<Value>(&text).unwrap(),
                        value,
                        "{raw}"
                    )
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{raw}"),
                (a, b) => panic!("{raw}: {a:?} vs {b:?}"),
            }
        }
        let deep = format!(
            "{{\"structuredContent\":{}1{}}}",
            "[".repeat(120),
            "]".repeat(120)
        );
        let declined = [
            r#"{"content":[{"type":"text","text":"no"}],"isError":true}"#,
            r#"{"content":"text"}"#,
            r#"{"content":[],"content":[]}"#,
            r#"{"structuredContent":{"a":1,"a":2}}"#,
            r#"[]"#,
            r#"[[{"type":"text","text":"positional"}]]"#,
            r#"null"#,
            &deep,
        ];
        for raw in declined {
            let declined = serde_json::from_str::<RawObject>(raw)
                .map_or(true, |r| map_raw_result("t", None, &r, false).is_none());
            assert!(declined, "{raw}");
        }
        // A validator's tool without structured content: `map_result` words that refusal.
        let empty = serde_json::from_str(r#"{"content":[]}"#).unwrap();
        assert_eq!(map_raw_result("t", Some(&output), &empty, false), None);
    }

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

    /// The one rule, held by generated results: wherever the text path answers, it answers
    /// what the `Value` path answers for the same reply text (the same value, or the same
    /// refusal), including replies that repeat a member, which the text path must leave to the
    /// `Value` path; and for a tool without an output schema, it answers every result that is
    /// not an error and whose members are readable.
    mod agreement {
        use super::super::super::validate::Use;
        use super::*;
        use proptest::prelude::*;

        fn leaf() -> BoxedStrategy<Value> {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                (-1e9f64..1e9).prop_map(Value::from),
                "[a-z\"\\\\\u{e9}\n ]{0,6}".prop_map(Value::from),
            ]
            .boxed()
        }

        fn json() -> BoxedStrategy<Value> {
            leaf()
                .prop_recursive(3, 24, 4, |inner| {
                    prop_oneof![
                        prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                        prop::collection::vec(
                            (
                                prop::sample::select(vec!["n", "when", "a", "type", "text"]),
                                inner
                            ),
                            0..4
                        )
                        .prop_map(|m| Value::Object(
                            m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                        )),
                    ]
                })
                .boxed()
        }

        fn block() -> BoxedStrategy<Value> {
            prop_oneof![
                "[a-z\"\n]{0,5}".prop_map(|t| json!({"type": "text", "text": t})),
                "[a-z]{0,3}"
                    .prop_map(|t| json!({"type": "text", "text": t, "annotations": {"p": 1}})),
                Just(json!({"type": "text"})),
                Just(json!({"type": "image", "data": "AA", "mimeType": "image/png"})),
                json(),
            ]
            .boxed()
        }

        fn structured() -> BoxedStrategy<Value> {
            prop_oneof![
                json(),
                (
                    any::<i32>(),
                    prop::sample::select(vec!["2026-12-01", "yesterday"])
                )
                    .prop_map(|(n, when)| json!({"n": n, "when": when})),
                (-10.0f64..10.0).prop_map(|n| json!({"n": n})),
            ]
            .boxed()
        }

        /// A result's members (as the server would write them, in order) and a member written
        /// twice, if any.
        fn members() -> impl Strategy<Value = (Vec<(String, Value)>, Option<usize>)> {
            let content = prop_oneof![
                3 => prop::collection::vec(block(), 0..4).prop_map(Value::Array),
                1 => json(),
            ];
            (
                prop::option::of(content),
                prop::option::of(prop_oneof![Just(json!(true)), Just(json!(false)), leaf()]),
                prop::option::of(structured()),
                prop::option::of(json()),
                prop::option::of(0usize..4),
            )
                .prop_map(|(content, is_error, structured, extra, twice)| {
                    let mut m = Vec::new();
                    for (k, v) in [
                        ("content", content),
                        ("isError", is_error),
                        ("structuredContent", structured),
                        ("_meta", extra),
                    ] {
                        if let Some(v) = v {
                            m.push((k.to_owned(), v));
                        }
                    }
                    let twice = twice.filter(|i| *i < m.len());
                    (m, twice)
                })
        }

        fn text_of(members: &[(String, Value)], twice: Option<usize>) -> String {
            let mut parts: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
                .collect();
            if let Some(i) = twice {
                parts.push(format!("{}:[]", Value::from(members[i].0.as_str())));
            }
            format!("{{{}}}", parts.join(","))
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
            #[test]
            fn the_text_path_answers_as_the_value_path_does(
                (members, twice) in members(),
                schema in 0usize..3,
            ) {
                let schemas = [
                    None,
                    Some(json!({"type": "object", "properties": {"n": {"type": "integer"}, "when": {"type": "string", "format": "date"}}, "required": ["n"]})),
                    Some(json!({"type": "array"})),
                ];
                let output = schemas[schema]
                    .as_ref()
                    .map(|s| Compiled::with_text(s, s.to_string(), Use::Output));
                let text = text_of(&members, twice);
                let raw: RawObject = match serde_json::from_str(&text) {
                    Ok(raw) => raw,
                    // A repeated member: the reply is read as a `Value` alone.
                    Err(_) => {
                        prop_assert!(twice.is_some(), "{}", text);
                        return Ok(());
                    }
                };
                prop_assert!(twice.is_none(), "{}", text);
                let fast = map_raw_result("t", output.as_ref(), &raw, false);
                let slow = map_result("t", output.as_ref(), serde_json::from_str(&text).unwrap());
                // The recheck of a structured text the JS side declined answers as the
                // mapping of the whole result does, wherever that turned on the schema.
                if let Some(structured) = raw.get("structuredContent") {
                    let recheck = recheck_structured("t", output.as_ref(), structured);
                    match &slow {
                        Ok(_) => prop_assert_eq!(recheck, Ok(()), "{}", text),
                        Err(f) if f.message.contains("does not match") => {
                            prop_assert_eq!(recheck, Err(f.clone()), "{}", text)
                        }
                        Err(_) => {}
                    }
                }
                match fast {
                    Some(Ok(t)) => prop_assert_eq!(
                        Ok(serde_json::from_str::<Value>(&t).unwrap()),
                        slow,
                        "{}", text
                    ),
                    Some(Err(f)) => prop_assert_eq!(Err(f), slow, "{}", text),
                    None => {
                        let error = members.iter().any(|(k, v)| k == "isError" && v == &json!(true));
                        let odd_content = members.iter().any(|(k, v)| k == "content" && !v.is_array());
                        prop_assert!(
                            output.is_some() || error || odd_content,
                            "declined {}", text
                        );
                    }
                }
            }
        }
    }
}
