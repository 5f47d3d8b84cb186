//! One tool call on the wire: its request, the waiter that maps its result (from the reply's
//! text when it can, `core::result`), and, when the host answers what a server asks
//! (`source/asks.rs`), the further rounds of a 2026 `input_required` result: each
//! `inputRequests` entry answered by the host's hooks, the call sent again with a new id, the
//! `inputResponses` and the server's `requestState` as it sent it, within the call's one
//! `callMs` and at most `maxInputRounds` times.

use super::asks::Asker;
use super::tasks;
use super::{redacted, redacted_failure, ErrorType, Snapshot};
use crate::client::rpc::{Answer, Fast, Listener, Request, RpcError, Waiter};
use crate::client::trace::{result_error_type, rpc_error_type};
use crate::core::error::Failure;
use crate::core::jcs::{format_f64, write_string};
use crate::core::lite::RawObject;
use crate::core::result::{map_raw_result, map_result};
use crate::core::secrets::Secrets;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What every round of one call shares.
pub(super) struct Plan {
    pub snapshot: Arc<Snapshot>,
    pub index: usize,
    pub secrets: Arc<Secrets>,
    pub call_ms: f64,
    /// The id the host knows the call by: its first request's.
    pub first: u64,
    /// Set when the host answers input requests.
    pub rounds: Option<Rounds>,
}

impl Plan {
    /// What a further round needs; a plan made without it has no further round (never asked
    /// of one: the rounds path is taken only when the plan has them).
    pub fn rounds(&self) -> Result<&Rounds, Failed> {
        self.rounds.as_ref().ok_or_else(|| {
            typed("invalid_result")("mcp: the call cannot take a further round".into())
        })
    }

    /// Whether a reply may be a task handle to follow.
    pub fn tasks(&self) -> bool {
        self.rounds.as_ref().is_some_and(|r| r.asker.tasks())
    }
}

/// What a further round needs.
pub(super) struct Rounds {
    pub asker: Arc<Asker>,
    /// The arguments' JSON text, sent again each round.
    pub input: String,
    pub mirrored: Vec<(String, String)>,
    pub progress: Option<Listener>,
    /// The trace members of the call's `_meta` (`client::trace`), sent again each round.
    pub meta: Option<String>,
    pub deadline: Instant,
    pub runtime: tokio::runtime::Handle,
    pub taken: AtomicU32,
    /// The call may be sent again once when its answer is lost (a modern connection's stream
    /// ended under it): the host said it is safe to repeat.
    pub repeatable: bool,
    pub repeated: std::sync::atomic::AtomicBool,
}

/// Why a call failed, with its `error.type` for tracing.
pub(super) type Failed = (Failure, ErrorType);

impl Rounds {
    /// The params of request `id` of a further round: the call's arguments and trace members
    /// again, and `extra` members.
    fn params(&self, name: &str, extra: &str) -> String {
        params(name, &self.input, extra)
    }
}

/// The call's end: its first id and its mapped result's JSON text, or why it failed.
pub(super) type Done = Box<dyn FnOnce(u64, Result<String, Failed>) + Send>;

/// `f` as a failure of the kind `error_type` names.
pub(super) fn typed(error_type: &'static str) -> impl FnOnce(Failure) -> Failed {
    move |f| (f, ErrorType::Borrowed(error_type))
}

/// The params of a request for the tool, around the caller's own input text (JSON already):
/// the arguments are not printed again on every call. The client writes `_meta` (the trace
/// members, the progress token) around them.
pub(super) fn params(name: &str, input: &str, extra: &str) -> String {
    let mut params = String::with_capacity(input.len() + name.len() + extra.len() + 24);
    params.push_str("{\"name\":");
    write_string(&mut params, name);
    params.push_str(",\"arguments\":");
    params.push_str(input);
    params.push_str(extra);
    params.push('}');
    params
}

/// Sends request `id` of the call.
#[allow(clippy::too_many_arguments)]
pub(super) fn submit<D>(
    plan: Arc<Plan>,
    id: u64,
    params: &str,
    meta: Option<&str>,
    mirrored: Vec<(String, String)>,
    timeout: Duration,
    progress: Option<Listener>,
    done: D,
) where
    D: FnOnce(u64, Result<String, Failed>) + Send + 'static,
{
    let snapshot = plan.snapshot.clone();
    let spec = &snapshot.tools[plan.index];
    let waiter = waiter(plan, done);
    let request = Request {
        meta,
        name: Some(&spec.original),
        mirrored,
        ..Request::new("tools/call", params)
    };
    snapshot
        .conn
        .rpc
        .send(id, request, Some(timeout), progress, waiter);
}

fn waiter<D>(plan: Arc<Plan>, done: D) -> Waiter
where
    D: FnOnce(u64, Result<String, Failed>) + Send + 'static,
{
    let fast_plan = plan.clone();
    let fast: Fast = Arc::new(move |result: &RawObject| {
        let spec = &fast_plan.snapshot.tools[fast_plan.index];
        if let Some(kind) = result.get("resultType").filter(|k| *k != "\"complete\"") {
            if fast_plan.rounds.is_some() && (kind == "\"input_required\"" || kind == "\"task\"") {
                // Answered on the `Value` path, which has the requests to answer.
                return None;
            }
            let kind = serde_json::from_str(kind).unwrap_or(Value::Null);
            let asked = result
                .get("inputRequests")
                .and_then(|t| serde_json::from_str(t).ok());
            let failure = incomplete(&spec.name, &kind, asked.as_ref());
            return Some(Err(redacted_failure(&fast_plan.secrets, failure)));
        }
        if fast_plan.tasks() && result.get("task").is_some() {
            // A 2025 task handle: followed on the `Value` path.
            return None;
        }
        map_raw_result(&spec.name, spec.output.as_ref(), result)
            .map(|mapped| mapped.map_err(|f| redacted_failure(&fast_plan.secrets, f)))
    });
    Waiter::answered(Some(fast), move |answer| {
        let first = plan.first;
        let reply = match answer {
            Answer::Mapped(outcome) => {
                return done(first, outcome.map_err(|f| (f, result_error_type(false))))
            }
            Answer::Reply(reply) => reply,
        };
        let spec = &plan.snapshot.tools[plan.index];
        let error_type = match &reply {
            Err(e) => rpc_error_type(e),
            Ok(result) => result_error_type(result.get("isError") == Some(&Value::Bool(true))),
        };
        let reply = reply.map_err(|e| match e {
            RpcError::TimedOut => timed_out(&spec.name, plan.call_ms),
            RpcError::Cancelled => format!("mcp: tool '{}' was aborted", spec.name).into(),
            other => redacted(&plan.secrets, other)
                .into_failure()
                .map_message(|m| format!("mcp: tool '{}' failed: {m}", spec.name)),
        });
        let result = match reply {
            Ok(result) => result,
            Err(f) if f.lost && plan.snapshot.conn.rpc.modern() => {
                if let Some(rounds) = plan.rounds.as_ref().filter(|r| r.repeatable) {
                    if !rounds.repeated.swap(true, Ordering::Relaxed) {
                        return repeat(plan, Box::new(done));
                    }
                }
                let unknown = f.map_message(|m| {
                    format!(
                        "{m}; whether it ran is unknown, and it was not sent again (a call is sent again only for a tool with risk 'read' or listed in 'idempotent', and once)"
                    )
                });
                return done(
                    first,
                    Err((unknown, ErrorType::Borrowed("unknown_outcome"))),
                );
            }
            Err(f) => return done(first, Err((f, error_type))),
        };
        let mapped = match result.get("resultType") {
            Some(kind) if kind == "input_required" && plan.rounds.is_some() => {
                return again(plan, result, Box::new(done));
            }
            Some(kind) if kind == "task" && plan.tasks() => {
                return tasks::follow(plan, true, result, Box::new(done));
            }
            None if plan.tasks() && result.get("task").is_some_and(Value::is_object) => {
                let task = result.get("task").cloned().unwrap_or_default();
                return tasks::follow(plan, false, task, Box::new(done));
            }
            Some(kind) if kind != "complete" => Err(redacted_failure(
                &plan.secrets,
                incomplete(&spec.name, kind, result.get("inputRequests")),
            )),
            _ => map_result(&spec.name, spec.output.as_ref(), result)
                .map_err(|f| redacted_failure(&plan.secrets, f)),
        }
        // serde_json's writer, not `Display`, which goes through `fmt` per token.
        .map(|value| serde_json::to_string(&value).unwrap_or_else(|_| "null".into()))
        .map_err(|f| (f, error_type));
        done(first, mapped);
    })
}

pub(super) fn timed_out(tool: &str, call_ms: f64) -> Failure {
    format!(
        "mcp: tool '{tool}' timed out after {}ms (timeouts.callMs)",
        format_f64(call_ms)
    )
    .into()
}

/// An `input_required` result: its requests answered by the host, then the call again.
fn again(plan: Arc<Plan>, result: Value, done: Done) {
    let Some(rounds) = &plan.rounds else {
        return;
    };
    let runtime = rounds.runtime.clone();
    runtime.spawn(async move {
        match next_round(&plan, result).await {
            Ok((id, params)) => {
                let Some(rounds) = &plan.rounds else {
                    return;
                };
                let left = rounds.deadline.saturating_duration_since(Instant::now());
                let (mirrored, progress) = (rounds.mirrored.clone(), rounds.progress.clone());
                submit(
                    plan.clone(),
                    id,
                    &params,
                    rounds.meta.as_deref(),
                    mirrored,
                    left,
                    progress,
                    done,
                );
            }
            Err((f, kind)) => done(plan.first, Err((redacted_failure(&plan.secrets, f), kind))),
        }
    });
}

/// A call whose answer was lost, sent again as a new request (once).
fn repeat(plan: Arc<Plan>, done: Done) {
    let Some(rounds) = &plan.rounds else {
        return;
    };
    let spec = &plan.snapshot.tools[plan.index];
    let id = plan.snapshot.conn.rpc.reserve_id();
    if !rounds.asker.moved(plan.first, id) {
        let aborted = format!("mcp: tool '{}' was aborted", spec.name).into();
        return done(plan.first, Err(typed("cancelled")(aborted)));
    }
    let left = rounds.deadline.saturating_duration_since(Instant::now());
    let text = rounds.params(&spec.original, "");
    let (mirrored, progress) = (rounds.mirrored.clone(), rounds.progress.clone());
    let meta = rounds.meta.as_deref();
    submit(
        plan.clone(),
        id,
        &text,
        meta,
        mirrored,
        left,
        progress,
        done,
    );
}

/// A result mapped for the host (its JSON text), as the waiter maps a reply.
pub(super) fn mapped(plan: &Plan, result: Value) -> Result<String, Failure> {
    let spec = &plan.snapshot.tools[plan.index];
    map_result(&spec.name, spec.output.as_ref(), result)
        .map_err(|f| redacted_failure(&plan.secrets, f))
        .map(|value| serde_json::to_string(&value).unwrap_or_else(|_| "null".into()))
}

/// Answers each entry of `requests` through the host's hooks: the `inputResponses`, or why the
/// call ends here.
pub(super) async fn answers(
    plan: &Plan,
    requests: Map<String, Value>,
) -> Result<Map<String, Value>, Failure> {
    let rounds = plan.rounds().map_err(|(f, _)| f)?;
    let spec = &plan.snapshot.tools[plan.index];
    let mut responses = Map::new();
    for (key, request) in requests {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        match rounds
            .asker
            .answer(Some(plan.first), rounds.deadline, method, params)
            .await
        {
            Ok(response) => {
                responses.insert(key, response);
            }
            Err(refused) if refused.code == -32601 => {
                let asked = serde_json::json!({ key: request });
                return Err(incomplete(
                    &spec.name,
                    &Value::from("input_required"),
                    Some(&asked),
                ));
            }
            Err(refused) => {
                return Err(format!(
                    "mcp: tool '{}' asked for input that was not given: {}",
                    spec.name, refused.message
                )
                .into())
            }
        }
    }
    Ok(responses)
}

/// The next request of the call (its id and params), or why the call ends here.
async fn next_round(plan: &Plan, result: Value) -> Result<(u64, String), Failed> {
    let rounds = plan.rounds()?;
    let spec = &plan.snapshot.tools[plan.index];
    let taken = rounds.taken.fetch_add(1, Ordering::Relaxed) + 1;
    let max = rounds.asker.max_rounds();
    if taken > max {
        return Err(format!(
            "mcp: tool '{}' asked for input more than {max} times (maxInputRounds); the call ends unanswered",
            spec.name
        )
        .into())
        .map_err(typed("invalid_result"));
    }
    let mut result = match result {
        Value::Object(r) => r,
        _ => Map::new(),
    };
    let requests = match result.remove("inputRequests") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(requests)) => requests,
        Some(_) => {
            return Err(format!(
                "mcp: tool '{}' returned inputRequests that are not an object",
                spec.name
            )
            .into())
            .map_err(typed("invalid_result"))
        }
    };
    let responses = answers(plan, requests)
        .await
        .map_err(typed("input_not_given"))?;
    if Instant::now() >= rounds.deadline {
        return Err(timed_out(&spec.name, plan.call_ms)).map_err(typed("timeout"));
    }
    let rpc = &plan.snapshot.conn.rpc;
    let id = rpc.reserve_id();
    if !rounds.asker.moved(plan.first, id) {
        return Err(format!("mcp: tool '{}' was aborted", spec.name).into())
            .map_err(typed("cancelled"));
    }
    let mut extra = String::from(",\"inputResponses\":");
    extra.push_str(&Value::Object(responses).to_string());
    // Opaque to the client: sent back as the server wrote it, and only when it sent one.
    if let Some(state) = result.remove("requestState") {
        extra.push_str(",\"requestState\":");
        extra.push_str(&state.to_string());
    }
    let text = rounds.params(&spec.original, &extra);
    Ok((id, text))
}

/// A modern result that is not the call's outcome (`resultType` other than `complete`; absent
/// means complete): an `input_required` one asks the client for something (a person's answer,
/// a model's completion, the roots) that the host offers no way to give, so the call ends
/// with an error that names what was asked.
pub(super) fn incomplete(tool: &str, kind: &Value, asked: Option<&Value>) -> Failure {
    if kind == "input_required" {
        let mut methods: Vec<&str> = asked
            .and_then(Value::as_object)
            .map(|m| {
                m.values()
                    .filter_map(|r| r.get("method")?.as_str())
                    .collect()
            })
            .unwrap_or_default();
        methods.sort_unstable();
        methods.dedup();
        let what = match methods.is_empty() {
            true => "input".to_owned(),
            false => methods.join(", "),
        };
        return format!(
            "mcp: tool '{tool}' needs input from the client that it cannot give (the server asked for {what})"
        )
        .into();
    }
    let kind = match kind.as_str() {
        Some(k) => format!("'{}'", k.chars().take(64).collect::<String>()),
        None => "that is not a string".to_owned(),
    };
    format!("mcp: tool '{tool}' returned a result of type {kind}, which this client does not know")
        .into()
}
