use super::*;
use serde_json::json;

/// A legacy exchange: the opening, a list, a call with progress and a log line, a call the
/// server asks back in the middle of (elicitation), and a task polled once.
fn recorded() -> Recording {
    let mut r = Recording::default();
    r.client(1, &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}));
    r.server(1, &json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"},"capabilities":{}}}));
    r.client(
        1,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    r.client(
        1,
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}),
    );
    r.server(1, &json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}));
    r.server(
        1,
        &json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}),
    );
    r.client(1, &json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","at":1},"_meta":{"progressToken":2}}}));
    r.server(1, &json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}));
    r.server(1, &json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}));
    r.server(
        1,
        &json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}),
    );
    r.client(1, &json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{}}}));
    r.server(
        1,
        &json!({"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"sure?"}}),
    );
    r.client(
        1,
        &json!({"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"ok":true}}}),
    );
    r.server(
        1,
        &json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}]}}),
    );
    r.client(1, &json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{},"task":{"ttl":1000}}}));
    r.server(1, &json!({"jsonrpc":"2.0","id":4,"result":{"task":{"taskId":"7f1e2d3c-aaaa","status":"working","createdAt":"2026-12-03T10:00:00Z"}}}));
    r.client(
        1,
        &json!({"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"7f1e2d3c-aaaa"}}),
    );
    r.server(1, &json!({"jsonrpc":"2.0","id":5,"result":{"taskId":"7f1e2d3c-aaaa","status":"completed","lastUpdatedAt":"2026-12-03T10:00:01Z"}}));
    r
}

fn replay(c: Cassette) -> Replay {
    Replay::new(c, Ignore::default(), "c.json".into())
}

#[test]
fn a_recorded_exchange_is_written_and_read_back_the_same() {
    let cassette = recorded().cassette();
    assert_eq!(cassette.protocol, "2025-11-25");
    assert_eq!(cassette.server, json!({"name":"s","version":"1"}));
    let text = cassette.to_text();
    assert_eq!(Cassette::parse(&text).unwrap(), cassette);
    assert_eq!(Cassette::parse(&text).unwrap().to_text(), text);
    // The client's own envelope and ids are not kept; the list change follows the list's answer.
    assert!(!text.contains("_meta"));
    let list = &cassette.interactions[1];
    assert_eq!(list.answer.len(), 2);
    assert_eq!(
        list.answer[1],
        json!({"method":"notifications/tools/list_changed"})
    );
}

#[test]
fn made_up_identifiers_and_times_get_stable_stand_ins() {
    let text = recorded().cassette().to_text();
    assert!(!text.contains("7f1e2d3c-aaaa"), "{text}");
    assert!(!text.contains("2026-12-03"), "{text}");
    assert_eq!(text.matches("\"task-1\"").count(), 3);
}

#[test]
fn replay_serves_each_request_its_recorded_messages_under_the_live_ids() {
    let mut r = replay(recorded().cassette());
    let opening = r
        .request(
            "initialize",
            &json!({"capabilities":{"elicitation":{}}}),
            10,
        )
        .unwrap();
    assert_eq!(opening[0]["id"], 10);
    let call =
        json!({"name":"echo","arguments":{"message":"hi","at":1},"_meta":{"progressToken":"p9"}});
    let out = r.request("tools/call", &call, 11).unwrap();
    assert_eq!(out[0]["params"]["progressToken"], "p9");
    assert_eq!(out[1]["method"], "notifications/message");
    assert_eq!(
        out[2],
        json!({"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"Echo: hi"}]}})
    );
    // Asked back: the rest waits for the client's reply.
    let asked = r
        .request("tools/call", &json!({"name":"ask","arguments":{}}), 12)
        .unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["method"], "elicitation/create");
    let rest = r.reply(&asked[0]["id"]);
    assert_eq!(rest[0]["id"], 12);
    // A task's stand-in id is what the client sends back.
    let task = r
        .request(
            "tools/call",
            &json!({"name":"slow","arguments":{},"task":{"ttl":1000}}),
            13,
        )
        .unwrap();
    assert_eq!(task[0]["result"]["task"]["taskId"], "task-1");
    assert!(r
        .request("tasks/get", &json!({"taskId":"task-1"}), 14)
        .is_ok());
}

#[test]
fn a_request_that_matches_none_names_the_first_difference() {
    let mut r = replay(recorded().cassette());
    let miss = r
        .request(
            "tools/call",
            &json!({"name":"echo","arguments":{"message":"ho","at":1}}),
            1,
        )
        .unwrap_err();
    assert_eq!(miss.pointer.as_deref(), Some("/arguments/message"));
    assert_eq!(miss.tool.as_deref(), Some("echo"));
    assert!(miss.message.contains("tool 'echo'"), "{}", miss.message);
    let none = r
        .request("tools/call", &json!({"name":"nope"}), 2)
        .unwrap_err();
    assert_eq!(none.pointer, None);
    // Served once, as recorded; the second identical call is refused, not invented.
    let echo = json!({"name":"echo","arguments":{"message":"hi","at":1}});
    assert!(r.request("tools/call", &echo, 3).is_ok());
    let again = r.request("tools/call", &echo, 4).unwrap_err();
    assert!(
        again.message.contains("called 2 times"),
        "{}",
        again.message
    );
}

#[test]
fn ignored_argument_paths_do_not_take_part_in_matching() {
    let ignore = Ignore(vec![("echo".into(), vec!["/at".into()])]);
    let mut r = Replay::new(recorded().cassette(), ignore, "c.json".into());
    let call = json!({"name":"echo","arguments":{"message":"hi","at":99}});
    assert!(r.request("tools/call", &call, 1).is_ok());
}

#[test]
fn a_broken_or_foreign_file_is_refused_with_where() {
    let good = recorded().cassette().to_text();
    assert!(Cassette::parse("{").unwrap_err().starts_with("is not JSON"));
    let newer = good.replace("\"rulvarCassette\": 1", "\"rulvarCassette\": 2");
    assert!(Cassette::parse(&newer).unwrap_err().contains("format 2"));
    let odd = good.replace(
        "\"protocol\": \"2025-11-25\"",
        "\"protocol\": \"1999-01-01\"",
    );
    assert!(Cassette::parse(&odd).unwrap_err().contains("1999-01-01"));
    let mut v: Value = serde_json::from_str(&good).unwrap();
    v["interactions"][2]["answer"][0] = json!({"what": 1});
    let err = Cassette::parse(&v.to_string()).unwrap_err();
    assert!(err.contains("/interactions/2/answer/0"), "{err}");
}

#[test]
fn a_pinned_era_refuses_a_cassette_of_the_other() {
    let legacy = recorded().cassette();
    assert!(legacy.check_era(Protocol::Auto).is_ok());
    assert!(legacy.check_era(Protocol::Legacy).is_ok());
    assert!(legacy
        .check_era(Protocol::Modern)
        .unwrap_err()
        .contains("2025-11-25"));
}

#[test]
fn a_flooding_server_stops_the_recording() {
    let mut r = recorded();
    assert_eq!(r.overflow(), None);
    for i in 0..record::MAX_RECORDED_MESSAGES {
        r.server(
            1,
            &json!({"jsonrpc":"2.0","method":"notifications/message","params":{"data": i}}),
        );
    }
    assert_eq!(
        r.overflow(),
        Some("the server sent more than 50000 messages")
    );
    // Nothing is kept past the bound (the client's replies aside).
    let kept = |r: &Recording| -> usize {
        let c = r.cassette();
        c.interactions.iter().map(|i| i.answer.len()).sum()
    };
    let before = kept(&r);
    assert!(before <= record::MAX_RECORDED_MESSAGES + 1, "{before}");
    r.server(
        1,
        &json!({"jsonrpc":"2.0","method":"notifications/message","params":{}}),
    );
    assert_eq!(kept(&r), before);
}
