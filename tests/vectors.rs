//! The engine's hashing vectors (`tests/vectors/hashing.json`, origin and format in the README
//! beside it), run against the pure core.

use rulvar_mcp_native::core::{canonical, hash, jcs};
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/hashing.json");
    let text = std::fs::read_to_string(path).expect("tests/vectors/hashing.json is in the repo");
    serde_json::from_str(&text).expect("vectors parse")
}

fn run(kind: &str, input: &Value) -> Result<Value, String> {
    let out = match kind {
        "jcs" => Value::String(jcs::serialize(input)),
        "canonicalize" => canonical::canonicalize(input).map_err(|e| e.message)?,
        "schemaHash" => Value::String(hash::schema_hash(Some(input)).map_err(|e| e.message)?),
        "toolContractHash" => Value::String(
            hash::tool_contract_hash(hash::ContractRef::of(input)).map_err(|e| e.message)?,
        ),
        "toolsetHash" => {
            let items = input.as_array().expect("toolsetHash input is an array");
            let contracts: Vec<_> = items.iter().map(hash::ContractRef::of).collect();
            Value::String(hash::toolset_hash(&contracts).map_err(|e| e.message)?)
        }
        other => panic!("unknown vector kind {other}"),
    };
    Ok(out)
}

#[test]
fn every_vector_passes_bit_for_bit() {
    let cases = vectors();
    assert!(cases.len() > 100, "the vector file is complete");
    let mut failures = Vec::new();
    for case in &cases {
        let id = case["id"].as_str().unwrap_or("?");
        let got = run(case["kind"].as_str().unwrap_or(""), &case["input"]);
        let ok = match (case.get("output"), case.get("error"), &got) {
            // canonicalize compares structurally: member order carries no meaning.
            (Some(want), None, Ok(out)) => jcs::serialize(want) == jcs::serialize(out),
            (None, Some(Value::String(want)), Err(msg)) => want == msg,
            _ => false,
        };
        if !ok {
            failures.push(format!("{id}: got {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "failing vectors:\n{}",
        failures.join("\n")
    );
}
