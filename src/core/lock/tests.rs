//! Unit tests of `lock.rs`: the text round trip, the fast path, redaction, policies, identity.
use super::*;
use crate::core::admit::{admit, Admission};
use crate::core::raw::Raw;
use std::sync::Arc;

fn config(extra: Vec<(&str, Raw)>) -> Config {
    let mut m = vec![
        ("transport".to_string(), Raw::String("stdio".into())),
        ("command".to_string(), Raw::String("srv".into())),
        (
            "env".to_string(),
            Raw::Object(vec![("TOKEN".into(), Raw::String("s3cret".into()))]),
        ),
    ];
    m.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
    Config::parse(&Raw::Object(m)).unwrap()
}

fn same(s: &str) -> String {
    s.to_owned()
}

fn wire() -> Vec<Value> {
    vec![
        json!({"name": "b", "description": "B", "inputSchema": {"type": "object", "maximum": 1.0}}),
        json!({"name": "a", "title": "A", "description": "A", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}}),
    ]
}

#[test]
fn written_text_reads_back_as_no_change() {
    let c = config(vec![]);
    let specs = admit(&c, wire()).unwrap();
    let text = write(&c, &specs, "2025-11-25", None).unwrap();
    assert!(!text.contains("s3cret"), "{text}");
    assert!(
        text.contains("\"envKeys\": [\n      \"TOKEN\"\n    ]"),
        "{text}"
    );
    // Sorted by final name, numbers as JavaScript writes them.
    assert!(text.find("\"name\": \"a\"") < text.find("\"name\": \"b\""));
    assert!(text.contains("\"maximum\": 1,"), "{text}");
    let lock = parse(&text, "the lock").unwrap();
    lock.check_identity(&c).unwrap();
    let (report, verdict) = lock.check(&c, &specs, &same);
    assert!(report.changes.is_empty() && report.signs.is_empty());
    verdict.unwrap();
    // With a lock configured, admission asks the lock about each tool as it admits it.
    let locked = Arc::new(config(vec![("lock", Raw::String("f".into()))]));
    let lock = Arc::new(lock);
    let pins = lock.clone();
    let mut admission = Admission::new(locked.clone(), Default::default(), false).pinned_by(Some(
        Arc::new(move |name: &str, c: &Value| pins.pins(name, c)),
    ));
    admission.page(1, wire());
    let specs = admission.finish::<()>(Ok(())).ok().unwrap();
    // Tool 'a' takes the fast way (equal trees, nothing kept); 'b' spells 1 as `1.0`, so
    // its trees differ and the diff decides, finding no change.
    assert!(specs[1].pinned && specs[1].contract.is_none());
    assert!(!specs[0].pinned && specs[0].contract.is_some());
    let (report, verdict) = lock.check(&locked, &specs, &same);
    assert!(report.changes.is_empty(), "{:?}", report.changes);
    verdict.unwrap();
}

#[test]
fn a_secret_is_redacted_before_a_line_clips_it() {
    let c = config(vec![]);
    let lock = parse(
        write(&c, &admit(&c, wire()).unwrap(), "2025-11-25", None).unwrap(),
        "x",
    )
    .unwrap();
    let mut changed = wire();
    // The secret straddles the 60 chars a line quotes: clipped first, its head would show.
    changed[0]["description"] = json!(format!("B{}SECRET-TOKEN-VALUE", "x".repeat(50)));
    let redact = |s: &str| s.replace("SECRET-TOKEN-VALUE", "[redacted]");
    let (report, _) = lock.check(&c, &admit(&c, changed).unwrap(), &redact);
    let line = &report.changes[0].text;
    assert!(
        line.contains("[redacted]") && !line.contains("SECRET"),
        "{line}"
    );
}

#[test]
fn policies_decide_on_the_same_changes() {
    let c = config(vec![]);
    let lock = parse(
        write(&c, &admit(&c, wire()).unwrap(), "2025-11-25", None).unwrap(),
        "x",
    )
    .unwrap();
    let mut grown = wire();
    grown.push(json!({"name": "z", "description": "", "inputSchema": {"type": "object"}}));
    let policy = |p: &str| {
        config(vec![
            ("lock", Raw::String("f".into())),
            ("lockPolicy", Raw::String(p.into())),
        ])
    };
    let specs = admit(&c, grown.clone()).unwrap();
    assert!(lock.check(&policy("refuse"), &specs, &same).1.is_err());
    assert!(lock
        .check(&policy("allow-additions"), &specs, &same)
        .1
        .is_ok());
    let shrunk = admit(&c, wire()[..1].to_vec()).unwrap();
    let e = lock
        .check(&policy("allow-additions"), &shrunk, &same)
        .1
        .unwrap_err();
    assert!(
        e.message.ends_with("1 change(s):\n  tool 'a' removed"),
        "{}",
        e.message
    );
    let (report, verdict) = lock.check(&policy("report"), &shrunk, &same);
    assert!(verdict.is_ok());
    assert_eq!(report.changes.len(), 1);
    // The shaping config is part of what is pinned.
    let prefixed = config(vec![("prefix", Raw::String("p".into()))]);
    let (report, _) = lock.check(&prefixed, &admit(&prefixed, wire()).unwrap(), &same);
    assert_eq!(
        report.changes[0].text,
        "config.prefix changed: null -> \"p\""
    );
    // Another command is another source.
    let other = Config::parse(&Raw::Object(vec![
        ("transport".into(), Raw::String("stdio".into())),
        ("command".into(), Raw::String("other".into())),
    ]))
    .unwrap();
    let e = lock.check_identity(&other).unwrap_err();
    assert_eq!(
        e.message,
        "mcp: the lock is for another source than 'mcp:stdio:other' (source.command changed (was \"srv\", now \"other\"); source.envKeys: - 'TOKEN'); write a lock for this source with 'rulvar-mcp lock'"
    );
}

/// What a hostile server or a hand edit could slip past a lock: the era the tools were listed
/// in, a tool listed twice (the second a changed copy), tools a reader cannot read (fail
/// closed, never an empty lock), a name pinned twice, and a switch to running as a task.
#[test]
fn era_duplicates_unreadable_tools_and_task_support_are_held_to_the_lock() {
    let c = config(vec![]);
    let specs = admit(&c, wire()).unwrap();
    let text = write(&c, &specs, "2025-11-25", None).unwrap();
    let lock = parse(&text, "the lock").unwrap();
    let (report, verdict) =
        check_import(Some(&lock), &c, &specs, &same, Some("2026-07-28")).unwrap();
    assert_eq!(
        report.changes[0].text,
        "era changed: '2025-11-25' -> '2026-07-28'"
    );
    assert!(verdict.is_err());
    let (_, verdict) = check_import(Some(&lock), &c, &specs, &same, Some("2025-11-25")).unwrap();
    verdict.unwrap();

    let mut twice = wire();
    twice.push(json!({"name": "a", "description": "changed", "inputSchema": {"type": "object"}}));
    let doubled = admit(&c, twice).unwrap();
    let (_, verdict) = check_import(Some(&lock), &c, &doubled, &same, None).unwrap();
    assert!(
        verdict
            .unwrap_err()
            .message
            .contains("list 'a' more than once"),
        "a changed copy passed as an addition"
    );

    // An entry no tree can be built of, and a pinned contract read only when an import
    // differs from it: each refuses, never admits.
    for (edit, what) in [
        (
            ("\"tools\": [", "\"tools\": [1e400, "),
            "an unreadable lock read as an empty one",
        ),
        (
            ("\"readOnlyHint\": true", "\"readOnlyHint\": 1e400"),
            "a pinned contract no tree can be built of passed",
        ),
    ] {
        let unreadable = text.replacen(edit.0, edit.1, 1);
        assert_ne!(unreadable, text);
        let lock = parse(&unreadable, "the lock").unwrap();
        let (_, verdict) = check_import(Some(&lock), &c, &specs, &same, None).unwrap();
        let refusal = verdict.unwrap_err().message;
        assert!(
            refusal.contains("'tools' cannot be read"),
            "{what}: {refusal}"
        );
    }

    let entries: Value = serde_json::from_str::<Value>(&text).unwrap()["tools"].clone();
    let mut pinned_twice: Value = serde_json::from_str(&text).unwrap();
    let first = entries[0].clone();
    pinned_twice["tools"].as_array_mut().unwrap().push(first);
    let lock = parse(pinned_twice.to_string(), "the lock").unwrap();
    let (_, verdict) = check_import(Some(&lock), &c, &specs, &same, None).unwrap();
    assert!(verdict.unwrap_err().message.contains("pins 'a' twice"));

    let tasked = |support: &str| {
        let mut w = wire();
        w[0]["execution"] = json!({ "taskSupport": support });
        admit(&c, w).unwrap()
    };
    let text = write(&c, &tasked("forbidden"), "2025-11-25", None).unwrap();
    let lock = parse(&text, "the lock").unwrap();
    let (report, verdict) =
        check_import(Some(&lock), &c, &tasked("required"), &same, None).unwrap();
    assert_eq!(
        report.changes[0].text,
        "tool 'b': execution.taskSupport changed (was \"forbidden\", now \"required\")"
    );
    assert!(verdict.is_err());
}

/// A refusal lists at most a few lines and counts the rest; the report keeps them.
#[test]
fn a_refusal_of_many_changes_is_bounded() {
    let c = config(vec![]);
    let many = |d: &str| -> Vec<Value> {
        (0..500)
            .map(|i| json!({"name": format!("t{i}"), "description": d, "inputSchema": {"type": "object"}}))
            .collect()
    };
    let text = write(&c, &admit(&c, many("old")).unwrap(), "2025-11-25", None).unwrap();
    let lock = parse(&text, "the lock").unwrap();
    let (report, verdict) = check_import(
        Some(&lock),
        &c,
        &admit(&c, many("new")).unwrap(),
        &same,
        None,
    )
    .unwrap();
    assert_eq!(report.changes.len(), 500);
    let message = verdict.unwrap_err().message;
    assert_eq!(message.lines().count(), 1 + 20 + 1, "{message}");
    assert!(message.ends_with("... and 480 more; lockReport() lists them"));
}
