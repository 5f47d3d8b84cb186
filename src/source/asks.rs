//! Answers what a server asks back in the middle of a call, by the host's hooks: a 2025
//! server's own request (`elicitation/create`, `sampling/createMessage`, `roots/list`) and
//! each `inputRequests` entry of a 2026 `input_required` result go through `Asker::answer`
//! alike, so a hook never knows the era. `core::asks` decides what reaches a hook and what
//! its answer must be; this module bounds the wait (the calling tool's `callMs`) and says
//! what the server gets when a hook fails.

use crate::client::router::Answerer;
use crate::client::rpc::Listener;
use crate::core::ask_budget;
use crate::core::asks::{Ask, Asks, Refused};
use crate::sync::lock;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a host hook did not answer.
#[derive(Debug, Clone, PartialEq)]
pub enum HookFailure {
    /// It threw or rejected (what it said stays in the host's own log).
    Threw,
    /// The calling tool's signal aborted, or the call's time ran out, while it ran.
    Aborted,
}

/// The host's side: one callback for every kind of ask (the JS side picks the hook).
pub trait AskHook: Send + Sync {
    /// `request` is `{ call, method, params, ms }` as JSON text: the id of the calling tool's
    /// call (when it is known), the server's method and params, and the milliseconds left.
    /// Resolves with the hook's answer as JSON text.
    fn ask(&self, request: String) -> BoxFuture<'static, Result<String, HookFailure>>;
}

/// One source's answers: its offer, its hook, and the calls in flight (so a 2025 server's
/// request can be tied to the call it came during).
pub struct Asker {
    asks: Asks,
    hook: Option<Arc<dyn AskHook>>,
    /// Calls in flight, by the id the host knows each by.
    calls: Mutex<HashMap<u64, Flight>>,
    call_ms: Duration,
    /// The runtime of the latest connection, where further rounds of a call are answered.
    runtime: Mutex<Option<tokio::runtime::Handle>>,
}

/// One call in flight.
struct Flight {
    /// Where the call's progress goes (its `ctx.log`), when the host gave one.
    told: Option<Listener>,
    deadline: Instant,
    /// The id of its request on the wire now (a further round has a new one).
    current: u64,
    cancelled: bool,
}

impl Asker {
    pub fn new(asks: Asks, hook: Option<Arc<dyn AskHook>>, call_ms: Duration) -> Arc<Self> {
        Arc::new(Self {
            asks,
            hook,
            calls: Mutex::new(HashMap::new()),
            call_ms,
            runtime: Mutex::new(None),
        })
    }

    /// Whether the host offers any answer (else nothing here runs, and no call pays for it).
    pub fn offered(&self) -> bool {
        self.asks.offered()
    }

    pub fn max_rounds(&self) -> u32 {
        self.asks.max_rounds
    }

    /// What the host offers a server, which each era declares its own way.
    pub fn capabilities(&self) -> crate::client::era::Capabilities {
        crate::client::era::Capabilities {
            offered: self.asks.capabilities(),
            tasks: self.asks.tasks,
            log_level: self.asks.logs,
        }
    }

    /// The level of the server's log messages the host hears (`serverLogs`), if any.
    pub fn log_level(&self) -> Option<&'static str> {
        self.asks.logs
    }

    /// A server's log message (`notifications/message`), told to the calling tool's log when
    /// it can be tied to one call (the one in flight), and dropped otherwise.
    pub fn log(&self, params: Value) {
        let told = {
            let calls = self.calls();
            match (calls.len(), calls.iter().next()) {
                (1, Some((id, flight))) => flight.told.clone().map(|t| (*id, t)),
                _ => None,
            }
        };
        if let Some((id, told)) = told {
            told(json!({ "progressToken": id, "log": params }));
        }
    }

    /// Whether a call may be answered with a task, followed to its end.
    pub fn tasks(&self) -> bool {
        self.asks.tasks
    }

    /// Whether the host gave up on the call.
    pub fn cancelled(&self, call: u64) -> bool {
        self.calls().get(&call).is_none_or(|f| f.cancelled)
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Flight>> {
        lock(&self.calls)
    }

    pub fn set_runtime(&self, runtime: tokio::runtime::Handle) {
        *lock(&self.runtime) = Some(runtime);
    }

    pub fn runtime(&self) -> Option<tokio::runtime::Handle> {
        lock(&self.runtime).clone()
    }

    pub fn begin(&self, call: u64, deadline: Instant, told: Option<Listener>) {
        let flight = Flight {
            told,
            deadline,
            current: call,
            cancelled: false,
        };
        self.calls().insert(call, flight);
    }

    pub fn end(&self, call: u64) {
        self.calls().remove(&call);
    }

    /// The call goes on as request `id`; false when it was cancelled meanwhile.
    pub fn moved(&self, call: u64, id: u64) -> bool {
        match self.calls().get_mut(&call) {
            Some(flight) if !flight.cancelled => {
                flight.current = id;
                true
            }
            _ => false,
        }
    }

    /// The host gave up on the call: its request on the wire now, to abandon.
    pub fn cancel(&self, call: u64) -> Option<u64> {
        let mut calls = self.calls();
        let flight = calls.get_mut(&call)?;
        flight.cancelled = true;
        Some(flight.current)
    }

    /// Whether no call of the source is in flight.
    fn idle(&self) -> bool {
        self.calls().is_empty()
    }

    /// The call a 2025 server's request belongs to: the one call in flight, if there is just
    /// one (the 2025 wire does not say which; with several, the hook gets the source's own
    /// context), and the deadline its answer must keep.
    fn related(&self) -> (Option<u64>, Instant) {
        let calls = self.calls();
        match calls.len() {
            1 => match calls.iter().next() {
                Some((id, flight)) => (Some(*id), flight.deadline),
                None => (None, Instant::now() + self.call_ms),
            },
            _ => (None, Instant::now() + self.call_ms),
        }
    }

    /// Answers one ask: checked, passed to the hook within `deadline`, its answer checked.
    pub async fn answer(
        &self,
        call: Option<u64>,
        deadline: Instant,
        method: &str,
        params: Value,
    ) -> Result<Value, Refused> {
        let ask = self.asks.admit(method, &params)?;
        let params = crate::core::asks::for_the_hook(ask, params);
        if ask == Ask::Roots {
            if let Some(fixed) = self.asks.fixed_roots() {
                return Ok(fixed);
            }
        }
        let failed = |timed_out: bool, why: String| match ask.fallback(timed_out) {
            Some(polite) => Ok(polite),
            None => Err(Refused {
                code: -32603,
                message: why,
            }),
        };
        let Some(hook) = &self.hook else {
            return failed(false, format!("mcp: no {} hook is set", ask.hook()));
        };
        let left = deadline.saturating_duration_since(Instant::now());
        let request = json!({
            "call": call,
            "method": method,
            "params": params,
            "ms": left.as_millis() as u64,
        })
        .to_string();
        let text = match tokio::time::timeout(left, hook.ask(request)).await {
            Ok(Ok(text)) => text,
            Ok(Err(HookFailure::Threw)) => {
                return failed(false, format!("mcp: the {} hook failed", ask.hook()))
            }
            Ok(Err(HookFailure::Aborted)) | Err(_) => {
                return failed(
                    true,
                    format!(
                        "mcp: the {} hook did not answer before the call ended",
                        ask.hook()
                    ),
                )
            }
        };
        let Ok(answer) = serde_json::from_str::<Value>(&text) else {
            return Err(Refused {
                code: -32603,
                message: format!("mcp: the {} hook's answer is not JSON", ask.hook()),
            });
        };
        self.asks.answer(ask, &params, answer)
    }
}

/// How long after its call's deadline a 2025 server's request is still waited on.
const AFTER_THE_CALL: Duration = Duration::from_millis(500);

/// A 2025 server's request, answered for the call in flight.
pub struct ForServer(pub Arc<Asker>);

impl ForServer {
    /// Anything but a fixed list of roots reaches a hook (a person, a paid model): only for a
    /// call in flight, unless the host said otherwise.
    fn refused_now(&self, method: &str) -> Option<(i64, String)> {
        let asker = &self.0;
        let fixed = method == "roots/list" && asker.asks.fixed_roots().is_some();
        (!fixed && asker.idle() && !asker.asks.outside_calls)
            .then(|| (ask_budget::REFUSED_CODE, ask_budget::outside_a_call()))
    }
}

impl Answerer for ForServer {
    fn log(&self, params: Value) {
        self.0.log(params);
    }

    fn admit(&self, method: &str) -> Result<(), (i64, String)> {
        self.refused_now(method).map_or(Ok(()), Err)
    }

    fn calls_in_flight(&self) -> usize {
        self.0.calls().len()
    }

    fn answer(
        &self,
        method: &str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, (i64, String)>> {
        // Looked at again here: the call in flight may have ended since `admit`.
        let refused = self.refused_now(method);
        let asker = self.0.clone();
        let method = method.to_owned();
        Box::pin(async move {
            if let Some(refused) = refused {
                return Err(refused);
            }
            let (call, deadline) = asker.related();
            // The call's own timer ends a call at its deadline (and the JS side then ends the
            // hook's wait): the answer to the server waits a little longer, so it never
            // overtakes that end with a result of its own.
            let deadline = match call {
                Some(_) => deadline + AFTER_THE_CALL,
                None => deadline,
            };
            asker
                .answer(call, deadline, &method, params)
                .await
                .map_err(|r| (r.code, r.message))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::asks::{Elicit, Roots};

    struct Scripted(Result<String, HookFailure>, Option<Duration>);

    impl AskHook for Scripted {
        fn ask(&self, _: String) -> BoxFuture<'static, Result<String, HookFailure>> {
            let (answer, delay) = (self.0.clone(), self.1);
            Box::pin(async move {
                if let Some(d) = delay {
                    tokio::time::sleep(d).await;
                }
                answer
            })
        }
    }

    fn asker(hook: Scripted) -> Arc<Asker> {
        let asks = Asks {
            elicit: Some(Elicit {
                form: true,
                url: false,
            }),
            roots: Some(Roots::List(vec![json!({"uri": "file:///w"})])),
            ..Asks::default()
        };
        Asker::new(asks, Some(Arc::new(hook)), Duration::from_secs(5))
    }

    fn form() -> Value {
        json!({"message": "ok?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean", "default": true}}}})
    }

    #[tokio::test]
    async fn a_hook_that_never_answers_is_cancelled_at_the_deadline() {
        let asker = asker(Scripted(Ok("{}".into()), Some(Duration::from_secs(60))));
        let deadline = Instant::now() + Duration::from_millis(50);
        let answer = asker
            .answer(Some(1), deadline, "elicitation/create", form())
            .await;
        assert_eq!(answer, Ok(json!({"action": "cancel"})));
    }

    #[tokio::test]
    async fn a_hook_that_throws_declines_and_a_fixed_list_needs_no_hook() {
        let asker = asker(Scripted(Err(HookFailure::Threw), None));
        let soon = Instant::now() + Duration::from_secs(1);
        let answer = asker.answer(None, soon, "elicitation/create", form()).await;
        assert_eq!(answer, Ok(json!({"action": "decline"})));
        let roots = asker.answer(None, soon, "roots/list", Value::Null).await;
        assert_eq!(roots, Ok(json!({"roots": [{"uri": "file:///w"}]})));
        let refused = asker
            .answer(None, soon, "sampling/createMessage", json!({}))
            .await;
        assert_eq!(refused.unwrap_err().code, -32601);
    }

    #[tokio::test]
    async fn a_2025_request_goes_to_the_one_call_in_flight() {
        let asker = asker(Scripted(Ok(r#"{"action":"accept"}"#.into()), None));
        asker.begin(7, Instant::now() + Duration::from_secs(1), None);
        assert_eq!(asker.related().0, Some(7));
        asker.begin(8, Instant::now() + Duration::from_secs(1), None);
        assert_eq!(asker.related().0, None);
        asker.end(7);
        let answer = ForServer(asker.clone())
            .answer("elicitation/create", form())
            .await;
        assert_eq!(
            answer,
            Ok(json!({"action": "accept", "content": {"ok": true}}))
        );
        // With no call in flight the hook is not asked; a fixed list of roots still answers.
        asker.end(8);
        let refused = ForServer(asker.clone())
            .answer("elicitation/create", form())
            .await;
        assert_eq!(refused.unwrap_err().1, ask_budget::outside_a_call());
        let roots = ForServer(asker).answer("roots/list", Value::Null).await;
        assert_eq!(roots, Ok(json!({"roots": [{"uri": "file:///w"}]})));
    }
}
