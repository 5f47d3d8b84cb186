use super::*;
use serde_json::json;
use std::cell::RefCell;

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

/// What a scripted sweep did, in order: a page asked for (at its cursor), a page handed on
/// (its number of tools).
#[derive(Debug, PartialEq)]
enum Step {
    Asked(Option<String>),
    Listed(usize),
}

/// Runs a sweep over scripted pages, each given as text (`PageReply::Text`) or parsed; returns
/// the outcome and what it did.
fn sweep_over(
    bounds: SweepBounds,
    pages: &[Value],
    as_text: bool,
) -> (Result<Vec<Value>, SweepError>, Vec<Step>) {
    let steps = RefCell::new(Vec::new());
    let asked = RefCell::new(0);
    let mut tools = Vec::new();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let out = rt.block_on(sweep(
        "mcp:test",
        bounds,
        |cursor, _| {
            let i = *asked.borrow();
            *asked.borrow_mut() += 1;
            steps.borrow_mut().push(Step::Asked(cursor));
            let page = pages.get(i).unwrap_or_else(|| pages.last().unwrap());
            let reply = match as_text {
                true => PageReply::Text(page.to_string()),
                false => PageReply::Parsed(page.clone()),
            };
            async move { Ok(reply) }
        },
        |page| {
            steps.borrow_mut().push(Step::Listed(page.len()));
            tools.extend(page)
        },
    ));
    (out.map(|()| tools), steps.into_inner())
}

/// Runs a sweep over scripted pages both ways, which must end alike; returns the outcome and
/// the cursors queried of the parsed one.
fn run(
    bounds: SweepBounds,
    pages: Vec<Value>,
) -> (Result<Vec<Value>, SweepError>, Vec<Option<String>>) {
    let (parsed, steps) = sweep_over(bounds, &pages, false);
    let (text, _) = sweep_over(bounds, &pages, true);
    assert_eq!(parsed, text);
    let calls = steps
        .into_iter()
        .filter_map(|s| match s {
            Step::Asked(cursor) => Some(cursor),
            Step::Listed(_) => None,
        })
        .collect();
    (parsed, calls)
}

fn message(r: Result<Vec<Value>, SweepError>) -> String {
    match r {
        Err(SweepError::Refused(e)) => e.message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn pages_until_no_cursor_or_empty_cursor() {
    let (out, calls) = run(
        SweepBounds::default(),
        vec![
            json!({"tools": [tool("a")], "nextCursor": "c1"}),
            json!({"tools": [tool("b")], "nextCursor": ""}),
        ],
    );
    assert_eq!(out.unwrap().len(), 2);
    assert_eq!(calls, vec![None, Some("c1".into())]);
}

#[test]
fn echo_guard_trips_on_page_two() {
    let (out, calls) = run(
        SweepBounds::default(),
        vec![json!({"tools": [], "nextCursor": "same"})],
    );
    assert_eq!(calls.len(), 2);
    assert_eq!(
        message(out),
        "mcp: tools/list of 'mcp:test' returned the cursor it was queried with ('same') on page 2: the pagination makes no progress"
    );
}

#[test]
fn revisit_guard_trips_after_three_calls() {
    let (out, calls) = run(
        SweepBounds::default(),
        vec![
            json!({"tools": [], "nextCursor": "A"}),
            json!({"tools": [], "nextCursor": "B"}),
            json!({"tools": [], "nextCursor": "A"}),
        ],
    );
    assert_eq!(calls.len(), 3);
    assert!(message(out).contains("already visited ('A') on page 3: the pagination cycles"));
}

#[test]
fn max_pages_stops_at_exactly_the_cap() {
    let pages = (0..10)
        .map(|i| json!({"tools": [], "nextCursor": format!("c{i}")}))
        .collect();
    let bounds = SweepBounds {
        max_pages: Some(3),
        ..Default::default()
    };
    let (out, calls) = run(bounds, pages);
    assert_eq!(calls.len(), 3);
    assert_eq!(
        message(out),
        "mcp: tools/list of 'mcp:test' still reports another page after 3 page(s), over the declared maxPages 3; raise the cap or trim the server"
    );
}

#[test]
fn max_tools_counts_wire_tools_before_filtering() {
    let bounds = SweepBounds {
        max_tools: Some(2),
        ..Default::default()
    };
    let (out, _) = run(
        bounds,
        vec![json!({"tools": [tool("a"), tool("b"), tool("c")]})],
    );
    assert_eq!(
        message(out),
        "mcp: tools/list of 'mcp:test' returned at least 3 wire tools, over the declared maxTools 2; raise the cap or trim the server"
    );
}

#[test]
fn malformed_pages_name_the_tool() {
    let (out, _) = run(
        SweepBounds::default(),
        vec![json!({"tools": [tool("ok"), {"name": "bad", "inputSchema": {"type": "string"}}]})],
    );
    assert!(message(out).contains("tool 'bad' has an 'inputSchema'"));
    let (out, _) = run(SweepBounds::default(), vec![json!({"tools": "nope"})]);
    assert!(message(out).contains("'tools' is not an array"));
}

#[test]
fn clip_bounds_long_names() {
    assert_eq!(clip(&"x".repeat(10_000)).chars().count(), 201);
}

#[test]
fn a_page_as_text_has_the_next_asked_for_before_its_tools_go_on() {
    let pages = [
        json!({"tools": [tool("a"), tool("b")], "nextCursor": "c1"}),
        json!({"tools": [tool("c")]}),
    ];
    let (out, steps) = sweep_over(SweepBounds::default(), &pages, true);
    assert_eq!(out.unwrap().len(), 3);
    assert_eq!(
        steps,
        vec![
            Step::Asked(None),
            Step::Asked(Some("c1".into())),
            Step::Listed(2),
            Step::Listed(1),
        ]
    );
    // Parsed, each page goes on before the next is asked for.
    let (_, steps) = sweep_over(SweepBounds::default(), &pages, false);
    assert_eq!(steps[1], Step::Listed(2));
}

#[test]
fn a_page_whose_head_a_guard_refuses_is_read_whole_first() {
    // Over maxTools on page 1, with a next cursor: no second page is asked for, the first
    // still goes on (admission may have a refusal of its own to make first).
    let bounds = SweepBounds {
        max_tools: Some(1),
        ..Default::default()
    };
    let pages = [json!({"tools": [tool("a"), tool("b")], "nextCursor": "c1"})];
    let (out, steps) = sweep_over(bounds, &pages, true);
    assert!(message(out).contains("over the declared maxTools 1"));
    assert_eq!(steps, vec![Step::Asked(None), Step::Listed(2)]);
}

#[test]
fn every_malformed_page_is_refused_alike_as_text_and_parsed() {
    let bad = [
        json!("nope"),
        json!({"tools": null}),
        json!({"tools": [tool("a")], "_meta": 1}),
        json!({"tools": [tool("a")], "_meta": null, "nextCursor": "c"}),
        json!({"tools": [tool("a")], "nextCursor": 5}),
        json!({"tools": [tool("a")], "nextCursor": null}),
        json!({"tools": [tool("a"), 7], "nextCursor": "c"}),
        json!({"tools": [{"name": 3}], "nextCursor": "c"}),
        json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}, "title": 1}], "nextCursor": "c"}),
        json!({"tools": [{"name": "t"}], "nextCursor": "c"}),
    ];
    for page in bad {
        let (parsed, _) = sweep_over(SweepBounds::default(), std::slice::from_ref(&page), false);
        let (text, _) = sweep_over(SweepBounds::default(), std::slice::from_ref(&page), true);
        assert!(parsed.is_err(), "{page}");
        assert_eq!(parsed, text, "{page}");
    }
}
