//! The official JSON Schema test suite (draft 2020-12 and draft 7, required tests; origin in
//! `tests/vectors/json-schema-test-suite/README.md`) through the validator tool schemas and
//! `validateJson` use: every test's verdict must be the suite's, and no schema may be refused.
//! Tests that need a remote document are left out (a network `$ref` is never dereferenced).

use rulvar_mcp_native::core::validate::Compiled;
use serde_json::{json, Value};
use std::path::Path;

const REMOTE: &str = "http://localhost:1234";

fn suite(draft: &str) -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors/json-schema-test-suite")
        .join(draft);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "refRemote.json"))
        .map(|p| {
            let name = format!("{draft}/{}", p.file_name().unwrap().to_string_lossy());
            let text = std::fs::read_to_string(&p).unwrap();
            (name, serde_json::from_str(&text).unwrap())
        })
        .collect()
}

/// Runs one draft's tests; returns how many ran and every miss.
fn run(draft: &str, meta: &str) -> (usize, Vec<String>) {
    let mut ran = 0;
    let mut misses = Vec::new();
    for (file, groups) in suite(draft) {
        for group in groups.as_array().unwrap() {
            let mut schema = group["schema"].clone();
            if schema.to_string().contains(REMOTE) {
                continue;
            }
            // A draft-7 test's schema may leave its dialect implied by where it sits.
            if let Value::Object(m) = &mut schema {
                m.entry("$schema").or_insert_with(|| json!(meta));
            }
            let about = group["description"].as_str().unwrap_or("");
            let compiled = Compiled::new(&schema);
            for test in group["tests"].as_array().unwrap() {
                ran += 1;
                let what = format!(
                    "{file}: {about} / {}",
                    test["description"].as_str().unwrap_or("")
                );
                let expected = test["valid"].as_bool().unwrap();
                match &compiled {
                    Err(e) => misses.push(format!("{what}: refused: {}", e.message)),
                    Ok(c) => {
                        let valid = c.issues(&test["data"]).is_empty();
                        if valid != expected {
                            misses
                                .push(format!("{what}: valid {valid}, the suite says {expected}"));
                        }
                    }
                }
            }
        }
    }
    (ran, misses)
}

#[test]
fn draft_2020_12_required_tests_all_pass() {
    let (ran, misses) = run(
        "draft2020-12",
        "https://json-schema.org/draft/2020-12/schema",
    );
    assert!(ran > 1200, "only {ran} tests ran");
    assert!(
        misses.is_empty(),
        "{} of {ran} missed:\n{}",
        misses.len(),
        misses.join("\n")
    );
}

#[test]
fn draft_7_required_tests_all_pass() {
    let (ran, misses) = run("draft7", "http://json-schema.org/draft-07/schema#");
    assert!(ran > 800, "only {ran} tests ran");
    assert!(
        misses.is_empty(),
        "{} of {ran} missed:\n{}",
        misses.len(),
        misses.join("\n")
    );
}
