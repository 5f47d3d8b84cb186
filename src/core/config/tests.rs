use super::*;
use crate::core::raw::test_values::{obj, s};
use crate::core::url::url_credentials;

fn stdio(extra: &[(&str, Raw)]) -> Raw {
    let mut m = vec![("transport", s("stdio")), ("command", s("node"))];
    m.extend(extra.iter().cloned());
    obj(&m)
}
fn err(raw: Raw) -> String {
    Config::parse(&raw).unwrap_err().message
}

#[test]
fn credentials_in_the_url_are_never_shown() {
    assert_eq!(
        shown_url("https://u:p%40ss@h.example/mcp?api_key=k1&v=2&X-Amz-Signature=s&flag"),
        "https://h.example/mcp?api_key=[redacted]&v=2&X-Amz-Signature=[redacted]&flag"
    );
    assert_eq!(
        shown_url("https://h.example/mcp?v=2"),
        "https://h.example/mcp?v=2"
    );
    assert_eq!(shown_url("http://u:p@[bad/x?token=t"), "http://[bad/x");
    let mut found = url_credentials("https://us3r:p%40ss@h.example/mcp?api_key=k1&v=2");
    found.sort();
    assert_eq!(found, vec!["k1", "p%40ss", "p@ss", "us3r"]);
    let c = Config::parse(&obj(&[
        ("transport", s("streamable-http")),
        ("url", s("https://alice:pw-123@h.example/mcp?token=t0k3n")),
    ]))
    .unwrap();
    assert_eq!(c.id(), "mcp:http:https://h.example/mcp?token=[redacted]");
    assert!(c.secret_values().contains(&"pw-123") && c.secret_values().contains(&"t0k3n"));
}

#[test]
fn bounds_refuse_non_positive_integers() {
    for (v, shown) in [
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (0.0, "0"),
        (-1.0, "-1"),
        (1.5, "1.5"),
    ] {
        for key in BOUND_KEYS {
            assert_eq!(
                err(stdio(&[(key, Raw::Number(v))])),
                format!("mcp: '{key}' must be a positive integer, got {shown}")
            );
        }
    }
}

#[test]
fn checks_run_in_contract_order() {
    // A bad bound wins over a bad timeout, which wins over a bad transport.
    let raw = obj(&[
        ("transport", s("carrier-pigeon")),
        ("maxPages", Raw::Number(0.0)),
        ("timeouts", obj(&[("listMs", Raw::Number(-5.0))])),
    ]);
    assert_eq!(
        err(raw),
        "mcp: 'maxPages' must be a positive integer, got 0"
    );
    let raw = obj(&[
        ("transport", s("carrier-pigeon")),
        ("timeouts", obj(&[("listMs", Raw::Number(-5.0))])),
    ]);
    assert_eq!(
        err(raw),
        "mcp: 'timeouts.listMs' must be a positive finite number of milliseconds, got -5"
    );
    assert_eq!(
        err(obj(&[("transport", s("carrier-pigeon"))])),
        "mcp: unknown transport 'carrier-pigeon'"
    );
}

#[test]
fn require_bounds_lists_missing_in_order() {
    let raw = stdio(&[
        ("requireBounds", Raw::Bool(true)),
        ("maxTools", Raw::Number(5.0)),
        ("maxPages", Raw::Number(5.0)),
    ]);
    assert_eq!(
        err(raw),
        "mcp: requireBounds demands every discovery bound; missing maxSchemaBytes, timeouts.discoveryMs"
    );
}

#[test]
fn transports_require_and_forbid_keys() {
    assert_eq!(
        err(obj(&[("transport", s("stdio"))])),
        "mcp: the stdio transport requires 'command'"
    );
    assert_eq!(
        err(stdio(&[("url", s("http://x"))])),
        "mcp: 'url' is not a config key of the 'stdio' transport (exactly the keys matching the chosen transport)"
    );
    let http = obj(&[
        ("transport", s("streamable-http")),
        ("url", s("http://127.0.0.1:1/mcp")),
        ("env", obj(&[])),
    ]);
    assert!(err(http).starts_with("mcp: 'env' is not a config key of the 'streamable-http'"));
}

#[test]
fn extension_checks_name_the_key() {
    assert!(err(stdio(&[("maxtools", Raw::Number(1.0))]))
        .starts_with("mcp: unknown config key 'maxtools'"));
    assert!(err(stdio(&[("risk", obj(&[("a", s("dangerous"))]))]))
        .starts_with("mcp: 'risk.a' must be one of read, write"));
    assert!(err(stdio(&[("allow", Raw::Array(vec![Raw::Number(1.0)]))]))
        .starts_with("mcp: 'allow' must be an array of strings"));
    let secret = err(stdio(&[("env", obj(&[("TOKEN", Raw::Number(42.0))]))]));
    assert!(!secret.contains("42"));
}

#[test]
fn parses_a_full_stdio_config() {
    let c = Config::parse(&stdio(&[
        ("args", Raw::Array(vec![s("server.js")])),
        ("prefix", s("gh")),
        ("approval", obj(&[("push", Raw::Bool(true))])),
        ("risk", obj(&[("push", s("write"))])),
        ("drift", s("refuse")),
        ("maxTools", Raw::Number(10.0)),
        ("timeouts", obj(&[("callMs", Raw::Number(1.5))])),
        ("id", Raw::Undefined),
    ]))
    .unwrap();
    assert_eq!(c.id(), "mcp:stdio:node");
    assert!(c.needs_approval("push") && !c.needs_approval("pull"));
    assert_eq!(c.drift, Drift::Refuse);
    assert_eq!(c.max_tools, Some(10));
    assert_eq!(c.timeouts.call.ms, 1.5);
    assert_eq!(c.timeouts.list, Wait::of(DEFAULT_TIMEOUT_MS));
    assert_eq!(c.timeouts.discovery, None);
    assert_eq!(wait_of(1.5), std::time::Duration::from_micros(1500));
    // Accepted values beyond what a clock can hold are the longest wait, not a panic.
    assert_eq!(wait_of(1e300), MAX_WAIT);
    assert_eq!(wait_of(f64::MAX), MAX_WAIT);
}
