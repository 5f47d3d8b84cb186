use super::*;
use crate::core::drift::Drift;
use crate::core::lite::RawObject;
use crate::transport::observe::Inbound;

/// A wire that records what was sent and can answer through the router.
#[derive(Default)]
struct Recorder(Mutex<Vec<Value>>);

impl Wire for Recorder {
    fn send(&self, message: String, _: Option<u64>) -> Result<(), String> {
        self.0
            .lock()
            .unwrap()
            .push(serde_json::from_str(&message).unwrap());
        Ok(())
    }
    fn shutdown(&self) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

fn connection() -> (Arc<Rpc>, Arc<Recorder>, Inbound) {
    let router = Rpc::router();
    let wire = Arc::new(Recorder::default());
    let rpc = Rpc::start(wire.clone(), &router, |task| {
        tokio::spawn(task);
    });
    let inbound = Inbound::with_sink(Arc::new(Drift::new(false)), router);
    (rpc, wire, inbound)
}

fn waiter() -> (Waiter, oneshot::Receiver<Reply>) {
    let (tx, rx) = oneshot::channel();
    (Waiter::new(move |r| drop(tx.send(r))), rx)
}

#[tokio::test]
async fn a_submitted_request_gets_its_reply_and_progress() {
    let (rpc, wire, inbound) = connection();
    let (w, rx) = waiter();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let listener: Listener = Arc::new(move |p| s.lock().unwrap().push(p));
    let id = rpc.reserve_id();
    rpc.submit(
        id,
        "tools/call",
        json!({}),
        Some(Duration::from_secs(5)),
        Some(listener),
        w,
    );
    let sent = wire.0.lock().unwrap()[0].clone();
    assert_eq!(sent["params"]["_meta"]["progressToken"], json!(id));
    inbound.push(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": id, "progress": 1}}));
    inbound.push(json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}}));
    assert_eq!(rx.await.unwrap(), Ok(json!({"ok": true})));
    assert_eq!(seen.lock().unwrap().len(), 1);
    // Nothing is left behind: no entry, no deadline, no listener.
    let p = lock(&rpc.pending);
    assert!(p.replies.is_empty() && p.deadlines.is_empty() && p.progress.is_empty());
}

/// A waiter with a `Fast` gets its reply mapped from the frame's text; what is not a plain
/// reply (an error, a notification, an array, a key given twice) or what `Fast` declines
/// takes the `Value` path, answered as before.
#[tokio::test]
async fn a_fast_waiter_is_answered_from_the_text_and_anything_else_from_a_value() {
    let (rpc, _wire, inbound) = connection();
    let fast: Fast = Arc::new(|r: &RawObject| {
        r.get("decline")
            .is_none()
            .then(|| Ok(r.get("a").unwrap_or("").to_owned()))
    });
    let start = |rpc: &Rpc| {
        let (tx, rx) = oneshot::channel();
        let id = rpc.reserve_id();
        let waiter = Waiter::answered(Some(fast.clone()), move |a| {
            drop(tx.send(match a {
                Answer::Mapped(m) => format!("mapped {m:?}"),
                Answer::Reply(r) => format!("value {r:?}"),
            }))
        });
        rpc.submit(id, "tools/call", json!({}), None, None, waiter);
        (id, rx)
    };
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":ID,"result":{"a":[1, 2]}}"#,
            r#"mapped Ok("[1, 2]")"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":ID,"result":{"decline":1}}"#,
            r#"value Ok(Object {"decline": Number(1)})"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":ID,"result":{},"error":null}"#,
            r#"value Err(Remote { code: -32603, message: "unknown error", data: None })"#,
        ),
        (
            r#"{"jsonrpc":"2.0","id":ID,"id":ID,"result":{}}"#,
            r#"value Ok(Object {})"#,
        ),
    ];
    for (frame, expected) in cases {
        let (id, rx) = start(&rpc);
        assert!(inbound.push_text(frame.replace("ID", &id.to_string()).as_bytes()));
        assert_eq!(rx.await.unwrap(), expected, "{frame}");
    }
    // A positional array is no reply: it is not taken, and the call stays pending.
    let (id, _rx) = start(&rpc);
    inbound.push_text(format!("[{id},{{}}]").as_bytes());
    assert!(lock(&rpc.pending).replies.contains_key(&id));
    // Every answered fast waiter was counted out; the one still pending is counted in.
    assert_eq!(lock(&rpc.pending).fast_waiters, 1);
    rpc.close("done");
    assert!(!lock(&rpc.pending).expects_fast());
}

#[tokio::test]
async fn the_timer_expires_a_request_and_tells_the_server() {
    let (rpc, wire, _inbound) = connection();
    let (w, rx) = waiter();
    let id = rpc.reserve_id();
    rpc.submit(
        id,
        "tools/call",
        json!({}),
        Some(Duration::from_millis(30)),
        None,
        w,
    );
    // A later request with a longer deadline does not hold the earlier one back.
    let (w2, mut rx2) = waiter();
    rpc.submit(
        rpc.reserve_id(),
        "tools/call",
        json!({}),
        Some(Duration::from_secs(30)),
        None,
        w2,
    );
    let started = Instant::now();
    assert_eq!(rx.await.unwrap(), Err(RpcError::TimedOut));
    assert!(started.elapsed() < Duration::from_secs(2));
    let sent = wire.0.lock().unwrap().clone();
    assert_eq!(sent[2]["method"], "notifications/cancelled");
    assert_eq!(sent[2]["params"]["requestId"], json!(id));
    assert!(rx2.try_recv().is_err());
}

#[tokio::test]
async fn an_earlier_deadline_wakes_a_timer_sleeping_toward_a_later_one() {
    let (rpc, _wire, _inbound) = connection();
    let (w1, _rx1) = waiter();
    rpc.submit(
        rpc.reserve_id(),
        "a",
        json!({}),
        Some(Duration::from_secs(60)),
        None,
        w1,
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (w2, rx2) = waiter();
    rpc.submit(
        rpc.reserve_id(),
        "b",
        json!({}),
        Some(Duration::from_millis(20)),
        None,
        w2,
    );
    let r = tokio::time::timeout(Duration::from_secs(2), rx2).await;
    assert_eq!(r.unwrap().unwrap(), Err(RpcError::TimedOut));
}

#[tokio::test]
async fn abandon_answers_once_and_close_fails_the_rest() {
    let (rpc, _wire, inbound) = connection();
    let (w1, rx1) = waiter();
    let id1 = rpc.reserve_id();
    rpc.submit(id1, "a", json!({}), None, None, w1);
    let (w2, rx2) = waiter();
    rpc.submit(rpc.reserve_id(), "b", json!({}), None, None, w2);
    rpc.abandon(id1, "cancelled by the caller", RpcError::Cancelled);
    // A reply after giving up is ignored.
    inbound.push(json!({"jsonrpc": "2.0", "id": id1, "result": {}}));
    assert_eq!(rx1.await.unwrap(), Err(RpcError::Cancelled));
    rpc.close("gone");
    assert_eq!(rx2.await.unwrap(), Err(RpcError::Closed("gone".into())));
    let (w3, rx3) = waiter();
    rpc.submit(rpc.reserve_id(), "c", json!({}), None, None, w3);
    assert_eq!(rx3.await.unwrap(), Err(RpcError::Closed("gone".into())));
}

#[test]
fn a_waiter_dropped_unanswered_answers_closed() {
    let (w, mut rx) = waiter();
    drop(w);
    assert_eq!(
        rx.try_recv().unwrap(),
        Err(RpcError::Closed("connection closed".into()))
    );
}

/// A tracer that counts its `begin`s and never answers one.
struct Silent {
    live: bool,
    begun: Mutex<usize>,
}

impl Tracer for Silent {
    fn begin(&self, _: &str, _: u64) -> BoxFuture<'static, serde_json::Map<String, Value>> {
        *self.begun.lock().unwrap() += 1;
        Box::pin(futures::future::pending())
    }
    fn end(&self, _: u64, _: Ended) {}
    fn live(&self) -> bool {
        self.live
    }
}

#[tokio::test]
async fn a_tracer_nothing_would_see_is_not_waited_for() {
    for live in [false, true] {
        let (rpc, wire, _inbound) = connection();
        let tracer = Arc::new(Silent {
            live,
            begun: Mutex::new(0),
        });
        rpc.trace_with(tracer.clone());
        let asking = rpc.clone();
        let request = tokio::spawn(async move {
            asking
                .request("tools/list", json!({}), Some(Duration::from_millis(200)))
                .await
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        // A live tracer's `begin` is waited for (here, until the request's own timeout); one
        // nothing would see is not asked at all.
        assert_eq!(
            wire.0.lock().unwrap().len(),
            usize::from(!live),
            "live {live}"
        );
        assert_eq!(*tracer.begun.lock().unwrap(), usize::from(live));
        request.abort();
    }
}
