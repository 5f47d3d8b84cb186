//! Property tests: the parsers and mappers that see server data never panic, whatever comes.
//! `PROPTEST_CASES` sets the number of inputs per property: 256 by default, 1,000 in CI
//! (`.ci/run`).

use proptest::prelude::*;
use rulvar_mcp_native::core::drift::Drift;
use rulvar_mcp_native::core::result::map_result;
use rulvar_mcp_native::core::{canonical, jcs};
use rulvar_mcp_native::transport::observe::{Event, Inbound};
use rulvar_mcp_native::transport::sse::SseParser;
use serde_json::{Map, Number, Value};
use std::sync::Arc;

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        any::<i64>().prop_map(|i| Value::Number(i.into())),
        ".{0,12}".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((".{0,8}", inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Schema-shaped values: keywords, subschema positions and local or remote `$ref`s.
fn schema_like() -> impl Strategy<Value = Value> {
    let keyword = prop_oneof![
        Just("type"),
        Just("properties"),
        Just("items"),
        Just("allOf"),
        Just("anyOf"),
        Just("not"),
        Just("$ref"),
        Just("$defs"),
        Just("definitions"),
        Just("$anchor"),
        Just("title"),
        Just("additionalProperties"),
        Just("prefixItems"),
        Just("a"),
        Just("b"),
    ];
    let reference = prop_oneof![
        Just("#"),
        Just("#/$defs/a"),
        Just("#/$defs/b"),
        Just("#/properties/a"),
        Just("#a"),
        Just("#/items/0"),
        Just("other.json"),
        Just("#/$defs/a~1b"),
    ]
    .prop_map(|r| Value::String(r.to_owned()));
    let leaf = prop_oneof![json_leaf(), reference];
    leaf.prop_recursive(6, 96, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((keyword.clone(), inner), 0..5).prop_map(|members| {
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }),
        ]
    })
}

proptest! {
    #[test]
    fn jcs_is_valid_json_and_idempotent(v in json_value()) {
        let text = jcs::serialize(&v);
        let reparsed: Value = serde_json::from_str(&text).expect("JCS output parses");
        prop_assert_eq!(jcs::serialize(&reparsed), text);
    }

    #[test]
    fn the_fast_canonical_path_agrees_with_the_full_walk(v in schema_like()) {
        if canonical::certainly_canonical(&v) {
            let built = canonical::canonicalize(&v);
            prop_assert!(built.is_ok());
            let mut streamed = String::new();
            canonical::write_canonical_jcs(&mut streamed, &v);
            prop_assert_eq!(streamed, jcs::serialize(&built.unwrap()));
        }
    }

    #[test]
    fn canonicalization_never_panics(v in schema_like()) {
        if let Ok(canonical) = canonical::canonicalize(&v) {
            // The canonical form is itself canonical.
            let again = canonical::canonicalize(&canonical).expect("canonical output canonicalizes");
            prop_assert_eq!(jcs::serialize(&again), jcs::serialize(&canonical));
        }
    }

    #[test]
    fn result_mapping_never_panics(v in json_value(), with_schema in any::<bool>()) {
        let schema = rulvar_mcp_native::core::validate::Compiled::new(&serde_json::json!({"type": "object"})).unwrap();
        let _ = map_result("t", with_schema.then_some(&schema), v);
    }

    #[test]
    fn sse_events_do_not_depend_on_chunking(bytes in prop::collection::vec(any::<u8>(), 0..512), cut in any::<prop::sample::Index>()) {
        let mut whole = SseParser::default();
        let all = whole.feed(&bytes).unwrap();
        let mut split = SseParser::default();
        let at = cut.index(bytes.len() + 1);
        let mut parts = split.feed(&bytes[..at]).unwrap();
        parts.extend(split.feed(&bytes[at..]).unwrap());
        prop_assert_eq!(all, parts);
        prop_assert_eq!(whole.last_id, split.last_id);
    }

    #[test]
    fn inbound_frames_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let (inbound, mut rx) = Inbound::new(Arc::new(Drift::new(true)));
        let parsed = inbound.push_text(&bytes);
        match rx.try_recv() {
            Ok(Event::Message(_)) => prop_assert!(parsed),
            _ => prop_assert!(!parsed),
        }
    }
}

#[test]
fn a_list_changed_frame_bumps_the_generation_before_it_is_queued() {
    let drift = Arc::new(Drift::new(true));
    let (inbound, mut rx) = Inbound::new(drift.clone());
    assert!(inbound.push_text(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#));
    assert_eq!(drift.generation(), 1);
    assert!(drift.poisoned());
    assert!(matches!(rx.try_recv(), Ok(Event::Message(_))));
}
