//! One tool call on the wire: its request, the waiter that maps its result (from the reply's
//! text when it can, `core::result`), and, when the host answers what a server asks
//! (`source/asks.rs`), the further rounds of a 2026 `input_required` result: each
//! `inputRequests` entry answered by the host's hooks, the call sent again with a new id, the
//! `inputResponses` and the server's `requestState` as it sent it, within the call's one
//! `callMs` and at most `maxInputRounds` times.

use super::plan::{
    another_round, answers, incomplete, timed_out, typed, until_closed, Done, Failed, Plan,
};
use super::tasks;
use super::{call_failure, redacted_failure, ErrorType};
use crate::client::era;
use crate::client::rpc::{Answer, Fast, Listener, Request, RpcError, Waiter};
use crate::client::trace::{result_error_type, rpc_error_type};
use crate::core::error::Failure;
use crate::core::lite::RawObject;
use crate::core::result::{map_raw_result, map_result};
use serde_json::{Map, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sends request `id` of the call.
#[allow(clippy::too_many_arguments)]
pub(super) fn submit(
    plan: Arc<Plan>,
    id: u64,
    params: &str,
    meta: Option<&str>,
    mirrored: Vec<(String, String)>,
    timeout: Duration,
    progress: Option<Listener>,
    done: Done,
) {
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

fn waiter(plan: Arc<Plan>, done: Done) -> Waiter {
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
        map_raw_result(
            &spec.name,
            spec.output.as_ref(),
            result,
            fast_plan.checked_in_js,
        )
        .map(|mapped| mapped.map_err(|f| redacted_failure(&fast_plan.secrets, f)))
    });
    Waiter::answered(Some(fast), move |answer| match answer {
        Answer::Mapped(outcome) => done.finish(outcome.map_err(|f| (f, result_error_type(false)))),
        Answer::Reply(reply) => answered(plan, reply, done),
    })
}

/// The `Value` path: a reply the `Fast` path left (an error, a result that is not the call's
/// outcome yet, a task, or one `Fast` declined).
fn answered(plan: Arc<Plan>, reply: Result<Value, RpcError>, done: Done) {
    let spec = &plan.snapshot.tools[plan.index];
    let error_type = match &reply {
        Err(e) => rpc_error_type(e),
        Ok(result) => result_error_type(result.get("isError") == Some(&Value::Bool(true))),
    };
    let reply = reply.map_err(|e| match e {
        RpcError::TimedOut => timed_out(&spec.name, plan.call_ms),
        RpcError::Cancelled => crate::core::error::aborted(&spec.name).into(),
        other => call_failure(&plan.secrets, &spec.name, other),
    });
    let mut result = match reply {
        Ok(result) => result,
        Err(f) if f.lost && plan.snapshot.conn.rpc.rules().resends_lost() => {
            return lost(plan, f, done)
        }
        Err(f) => return done.finish(Err((f, error_type))),
    };
    if plan.tasks() {
        if let Some((dialect, task)) = era::task_in(&mut result) {
            return tasks::follow(plan, dialect, task, done);
        }
    }
    let mapped = match result.get("resultType") {
        Some(kind) if kind == "input_required" && plan.rounds.is_some() => {
            return again(plan, result, done);
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
    done.finish(mapped);
}

/// A call whose answer was lost, in an era that may send it again: sent again once when the
/// host said it is safe to repeat, else ended with its outcome unknown.
fn lost(plan: Arc<Plan>, failure: Failure, done: Done) {
    if let Some(rounds) = plan.rounds.as_ref().filter(|r| r.repeatable) {
        if !rounds.repeated.swap(true, Ordering::Relaxed) {
            return repeat(plan, done);
        }
    }
    let unknown = failure.map_message(|m| {
        format!(
            "{m}; whether it ran is unknown, and it was not sent again (a call is sent again only for a tool with risk 'read' or listed in 'idempotent', and once)"
        )
    });
    done.finish(Err((unknown, ErrorType::Borrowed("unknown_outcome"))));
}

/// An `input_required` result: its requests answered by the host, then the call again.
fn again(plan: Arc<Plan>, result: Value, done: Done) {
    let Some(rounds) = &plan.rounds else {
        return;
    };
    let runtime = rounds.runtime.clone();
    runtime.spawn(async move {
        match until_closed(&plan, next_round(&plan, result)).await {
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
            Err((f, kind)) => done.finish(Err((redacted_failure(&plan.secrets, f), kind))),
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
        let aborted = crate::core::error::aborted(&spec.name).into();
        return done.finish(Err(typed("cancelled")(aborted)));
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

/// The next request of the call (its id and params), or why the call ends here.
async fn next_round(plan: &Plan, result: Value) -> Result<(u64, String), Failed> {
    let rounds = plan.rounds()?;
    let spec = &plan.snapshot.tools[plan.index];
    another_round(plan)?;
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
        return Err(crate::core::error::aborted(&spec.name).into()).map_err(typed("cancelled"));
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
