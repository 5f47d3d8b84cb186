//! The source's own races and rules, against a fake connector: a server written here in Rust
//! that answers the opening and `tools/list` over a wire of its own, with delays and list
//! changes the test chooses. What the vitest suites prove through real servers and the napi
//! edge, these prove at the source alone: single-flight sweeps, close overtaking a connect or a
//! sweep in each phase, the cache's generation and the drift poison.

use super::*;
use crate::core::raw::test_values::{obj, s};
use crate::core::raw::Raw;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

/// What the fake server does, shared by every connection the connector opens.
#[derive(Default)]
struct Script {
    /// How long the first connect takes before its wire exists.
    open_delay: Duration,
    /// How long the server takes to answer `initialize` and each `tools/list` on the first
    /// connection (later ones answer at once).
    init_delay: Duration,
    list_delay: Duration,
    /// The server sends `notifications/tools/list_changed` before its next list answer.
    change_before_list: AtomicBool,
    /// Counts, seen from outside: connects begun, wires made, connects undone, lists,
    /// wires shut down.
    started: AtomicUsize,
    opens: AtomicUsize,
    abandoned: AtomicUsize,
    lists: AtomicUsize,
    shutdowns: AtomicUsize,
    /// The tools listed.
    tools: Mutex<Vec<&'static str>>,
    /// The inbound side of the latest connection, for a notification the test sends.
    latest: Mutex<Option<Inbound>>,
}

impl Script {
    /// The server tells the latest connection that its tool list changed.
    fn list_changed(&self) {
        let change = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        if let Some(inbound) = lock(&self.latest).as_ref() {
            inbound.push_text(change.to_string().as_bytes());
        }
    }
}

struct FakeWire {
    script: Arc<Script>,
    inbound: Inbound,
    runtime: tokio::runtime::Handle,
    /// The wire's own end: a shut-down wire answers nothing more.
    ended: Arc<AtomicBool>,
    /// The first connection, which takes the script's delays.
    first: bool,
}

impl FakeWire {
    fn answer(&self, id: Value, result: Value, delay: Duration, change_first: bool) {
        let inbound = self.inbound.clone();
        let ended = self.ended.clone();
        self.runtime.spawn(async move {
            tokio::time::sleep(delay).await;
            if ended.load(SeqCst) {
                return;
            }
            if change_first {
                let change =
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                inbound.push_text(change.to_string().as_bytes());
            }
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            inbound.push_text(reply.to_string().as_bytes());
        });
    }
}

impl Wire for FakeWire {
    fn send(&self, message: String, _request_id: Option<u64>) -> Result<(), String> {
        let message: Value = serde_json::from_str(&message).map_err(|e| e.to_string())?;
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            return Ok(());
        };
        match method {
            "initialize" => self.answer(
                id.clone(),
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "fake", "version": "1"}
                }),
                if self.first {
                    self.script.init_delay
                } else {
                    Duration::ZERO
                },
                false,
            ),
            "tools/list" => {
                self.script.lists.fetch_add(1, SeqCst);
                let tools: Vec<Value> = lock(&self.script.tools)
                    .iter()
                    .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
                    .collect();
                let change = self.script.change_before_list.swap(false, SeqCst);
                self.answer(
                    id.clone(),
                    json!({ "tools": tools }),
                    if self.first {
                        self.script.list_delay
                    } else {
                        Duration::ZERO
                    },
                    change,
                );
            }
            _ => {}
        }
        Ok(())
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        self.ended.store(true, SeqCst);
        self.script.shutdowns.fetch_add(1, SeqCst);
        let inbound = self.inbound.clone();
        Box::pin(async move { inbound.close("mcp: the fake connection ended".into()) })
    }
}

struct FakeConnector(Arc<Script>);

impl Connector for FakeConnector {
    type HostError = String;

    fn open(&self, inbound: Inbound) -> BoxFuture<'static, Result<Arc<dyn Wire>, Error<Self>>> {
        let script = self.0.clone();
        Box::pin(async move {
            let first = script.started.fetch_add(1, SeqCst) == 0;
            if first {
                tokio::time::sleep(script.open_delay).await;
            }
            script.opens.fetch_add(1, SeqCst);
            *lock(&script.latest) = Some(inbound.clone());
            let wire = FakeWire {
                script: script.clone(),
                inbound,
                runtime: tokio::runtime::Handle::current(),
                ended: Default::default(),
                first,
            };
            Ok(Arc::new(wire) as Arc<dyn Wire>)
        })
    }

    fn abandon(&self) -> BoxFuture<'static, ()> {
        self.0.abandoned.fetch_add(1, SeqCst);
        Box::pin(async {})
    }
}

fn source(script: Script, extra: &[(&str, Raw)]) -> (Arc<Source<FakeConnector>>, Arc<Script>) {
    let mut members = vec![
        ("transport", s("inprocess")),
        ("server", obj(&[("connect", Raw::Function)])),
    ];
    members.extend(extra.iter().cloned());
    let config = Config::parse(&obj(&members)).expect("a valid config");
    if lock(&script.tools).is_empty() {
        *lock(&script.tools) = vec!["a", "b"];
    }
    let script = Arc::new(script);
    let secrets = Arc::new(Secrets::new([]));
    let connector = Arc::new(FakeConnector(script.clone()));
    (
        Source::new(Arc::new(config), connector, secrets, None),
        script,
    )
}

fn names(snapshot: &Snapshot) -> Vec<&str> {
    snapshot.tools.iter().map(|t| t.name.as_str()).collect()
}

fn failed<T>(r: Result<T, Error<FakeConnector>>) -> String {
    match r {
        Ok(_) => panic!("expected a failure"),
        Err(SourceError::Failed(m)) => m,
        Err(SourceError::Refused(r)) => r.message,
        Err(SourceError::OAuth(_, m)) => m,
        Err(SourceError::Server(m, _)) => m,
        Err(SourceError::Cassette(miss)) => miss.message,
        Err(SourceError::Host(h)) => h,
    }
}

#[tokio::test]
async fn concurrent_cold_calls_make_one_connection_and_one_sweep() {
    let script = Script {
        list_delay: Duration::from_millis(30),
        ..Script::default()
    };
    let (source, script) = source(script, &[]);
    let calls = (0..8).map(|_| {
        let source = source.clone();
        tokio::spawn(async move { source.tools().await.map(|s| s.key()) })
    });
    let keys: Vec<String> = futures::future::join_all(calls)
        .await
        .into_iter()
        .map(|r| r.unwrap().unwrap_or_else(|_| panic!("tools() failed")))
        .collect();
    assert!(keys.iter().all(|k| k == &keys[0]), "{keys:?}");
    assert_eq!(script.opens.load(SeqCst), 1);
    assert_eq!(script.lists.load(SeqCst), 1);
    assert_eq!(source.cached_key().as_deref(), Some(keys[0].as_str()));
    source.close().await;
}

#[tokio::test]
async fn close_overtaking_a_connect_in_each_phase_releases_it_and_the_next_call_starts_afresh() {
    // Spawning (the connector has not made the wire yet), handshaking, and sweeping.
    for phase in ["open", "initialize", "list"] {
        // Far longer than any wait below: a close that waited it out would show.
        let slow = Duration::from_secs(20);
        let script = Script {
            open_delay: if phase == "open" {
                slow
            } else {
                Duration::ZERO
            },
            init_delay: if phase == "initialize" {
                slow
            } else {
                Duration::ZERO
            },
            list_delay: if phase == "list" {
                slow
            } else {
                Duration::ZERO
            },
            ..Script::default()
        };
        let (source, script) = source(script, &[]);
        let first = tokio::spawn({
            let source = source.clone();
            async move { source.tools().await.map(|s| s.key()) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        // Neither close() nor the call it overtook waits out the slow phase (nor connectMs).
        let bound = Duration::from_secs(5);
        tokio::time::timeout(bound, source.close())
            .await
            .unwrap_or_else(|_| panic!("{phase}: close() waited"));
        let ended = tokio::time::timeout(bound, first).await;
        let message = failed(
            ended
                .unwrap_or_else(|_| panic!("{phase}: tools() waited"))
                .unwrap(),
        );
        assert!(message.contains("was closed"), "{phase}: {message}");
        // Whatever phase it was in, what the connect made is released.
        let released = script.shutdowns.load(SeqCst) + script.abandoned.load(SeqCst);
        assert!(released >= 1, "{phase}: nothing released");
        assert_eq!(source.cached_key(), None, "{phase}");
        // A later call connects afresh and succeeds.
        let opens = script.opens.load(SeqCst);
        let snapshot = source.tools().await.unwrap_or_else(|_| panic!("{phase}"));
        assert_eq!(names(&snapshot), ["a", "b"], "{phase}");
        assert_eq!(script.opens.load(SeqCst), opens + 1, "{phase}");
        source.close().await;
    }
}

#[tokio::test]
async fn a_list_change_during_the_sweep_keeps_its_result_out_of_the_cache() {
    let (source, script) = source(Script::default(), &[]);
    script.change_before_list.store(true, SeqCst);
    let first = source.tools().await.unwrap_or_else(|_| panic!("tools()"));
    assert_eq!(names(&first), ["a", "b"]);
    assert_eq!(source.cached_key(), None, "a stale list was cached");
    *lock(&script.tools) = vec!["a", "b", "c"];
    let second = source.tools().await.unwrap_or_else(|_| panic!("tools()"));
    assert_eq!(names(&second), ["a", "b", "c"]);
    assert_eq!(script.lists.load(SeqCst), 2);
    // One connection throughout: a list change is no reason to reconnect.
    assert_eq!(script.opens.load(SeqCst), 1);
    assert_eq!(source.cached_key(), Some(second.key()));
    let third = source.tools().await.unwrap_or_else(|_| panic!("tools()"));
    assert_eq!((third.key(), script.lists.load(SeqCst)), (second.key(), 2));
    // A change after the import invalidates the cached list: the next call sweeps again.
    script.list_changed();
    assert_eq!(source.cached_key(), None);
    let fourth = source.tools().await.unwrap_or_else(|_| panic!("tools()"));
    assert_ne!(fourth.key(), third.key());
    assert_eq!(script.lists.load(SeqCst), 3);
    source.close().await;
}

#[tokio::test]
async fn drift_refuse_holds_the_source_closed_until_close_resets_it() {
    let (source, script) = source(Script::default(), &[("drift", s("refuse"))]);
    source.tools().await.unwrap_or_else(|_| panic!("tools()"));
    // The list changes after the import.
    script.list_changed();
    let refused = failed(source.tools().await);
    assert!(
        refused.contains("drift policy 'refuse' holds the source closed"),
        "{refused}"
    );
    source.close().await;
    let again = source.tools().await.unwrap_or_else(|_| panic!("tools()"));
    assert_eq!(names(&again), ["a", "b"]);
    source.close().await;
}

#[tokio::test]
async fn a_dead_connection_invalidates_its_list_and_the_next_call_reconnects() {
    let (source, script) = source(Script::default(), &[]);
    let first = source.tools().await.unwrap_or_else(|_| panic!("tools()"));
    first.conn.rpc.close("mcp: the server died");
    assert_eq!(source.cached_key(), None);
    let second = source.tools().await.unwrap_or_else(|_| panic!("tools()"));
    assert_ne!(first.key(), second.key());
    assert_eq!(script.opens.load(SeqCst), 2);
    source.close().await;
}

#[test]
fn a_page_is_small_enough_to_admit_inline_by_its_count_of_values() {
    let tool = serde_json::json!({"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}});
    // 7 values: the tool, its name, the schema, its type, properties, a, a's type.
    assert!(super::within(std::slice::from_ref(&tool), 7));
    assert!(!super::within(std::slice::from_ref(&tool), 6));
    let huge = serde_json::json!({"inputSchema": {"enum": vec![1; 10_000]}});
    assert!(!super::within(&[huge], super::INLINE_VALUES));
}

#[test]
fn a_server_answer_is_redacted_in_its_message_and_in_every_string_of_its_data() {
    let secrets = Secrets::new(["tok-0a1b2c3d"]);
    let answer = RpcError::Remote {
        code: -32000,
        message: "tok-0a1b2c3d was refused".into(),
        // In a key, and in a string whose JSON text escapes the quotes around it.
        data: Some(json!({"tok-0a1b2c3d": ["a \"tok-0a1b2c3d\"", 1, null]})),
    };
    let failure = call_failure(&secrets, "echo", answer);
    assert_eq!(failure.message, "MCP error -32000: [redacted] was refused");
    let data = failure.server.and_then(|s| s.data).unwrap();
    assert_eq!(data, r#"{"[redacted]":["a \"[redacted]\"",1,null]}"#);
    // Anything else names the tool, as before.
    let closed = call_failure(&secrets, "echo", RpcError::Closed("gone".into()));
    assert_eq!(closed.message, "mcp: tool 'echo' failed: gone");
}
