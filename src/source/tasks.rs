//! A call that comes back as a task (MCP Tasks, with `tasks: true`): followed to its end within
//! the call's `callMs`, in the dialect of the revision its handle came in (`era::TaskDialect`:
//! the handle, the poll interval's member, whether a completed task carries its result).
//! `tasks/get` is polled at the server's interval. A task whose dialect carries its result
//! (2026-07-28's `io.modelcontextprotocol/tasks` extension) hands it over when completed, and
//! an `input_required` one its `inputRequests`, answered through the host's hooks and sent with
//! `tasks/update`; otherwise (2025-11-25's experimental form), once the task completes or needs
//! input, `tasks/result` delivers the result, the server's requests arriving meanwhile as on
//! any call. The host's abort and the call's deadline send `tasks/cancel`. Each status the task
//! passes through reaches the calling tool's log, with the task id, so a host can keep it.

use super::call_failure;
use super::plan::{answers, mapped, timed_out, typed, until_closed, Done, Failed, Plan};
use crate::client::era::TaskDialect;
use crate::client::rpc::RpcError;
use crate::client::trace::{result_error_type, rpc_error_type};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Polls happen no faster than this and no slower than `POLL_MAX`, whatever the server asks.
const POLL_MIN: Duration = Duration::from_millis(10);
const POLL_MAX: Duration = Duration::from_secs(30);
/// The poll interval when the server suggests none.
const POLL_DEFAULT: Duration = Duration::from_secs(1);
/// How often a wait between polls looks for the host's abort.
const WATCH: Duration = Duration::from_millis(50);

/// Follows `task`, in the `dialect` its handle came in, to its end, which `done` is told.
pub(super) fn follow(plan: Arc<Plan>, dialect: &'static TaskDialect, task: Value, done: Done) {
    let Some(rounds) = &plan.rounds else {
        return;
    };
    let runtime = rounds.runtime.clone();
    runtime.spawn(async move {
        let outcome = until_closed(&plan, to_its_end(&plan, dialect, task)).await;
        done.finish(outcome);
    });
}

async fn to_its_end(plan: &Plan, dialect: &TaskDialect, mut task: Value) -> Result<String, Failed> {
    let spec = &plan.snapshot.tools[plan.index];
    let Some(id) = task
        .get("taskId")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return Err(typed("invalid_result")(
            format!("mcp: tool '{}' returned a task without a taskId", spec.name).into(),
        ));
    };
    let mut told = String::new();
    loop {
        // Told when the status or its message changes, not on every poll.
        let now_told = format!(
            "{}\n{}",
            task.get("status").and_then(Value::as_str).unwrap_or(""),
            task.get("statusMessage").unwrap_or(&Value::Null)
        );
        if now_told != told {
            tell(plan, &id, &task);
            told = now_told;
        }
        if let Some(outcome) = on_status(plan, dialect, &id, &mut task).await? {
            return Ok(outcome);
        }
        wait(plan, &id, poll_interval(task.get(dialect.poll_key))).await?;
        task = asked(plan, &id, "tasks/get").await?;
    }
}

/// What the task's status leads to: the call's outcome once the task ended, `None` while it
/// is to be polled again (the input it waits on given, in a dialect that takes it so).
async fn on_status(
    plan: &Plan,
    dialect: &TaskDialect,
    id: &str,
    task: &mut Value,
) -> Result<Option<String>, Failed> {
    let status = task.get("status").and_then(Value::as_str).unwrap_or("");
    match status {
        "completed" if dialect.carries_result => {
            let result = task.get_mut("result").map(Value::take).unwrap_or_default();
            mapped(plan, result)
                .map(Some)
                .map_err(|f| (f, result_error_type(false)))
        }
        "completed" | "input_required" if !dialect.carries_result => {
            // The result, and the server's requests before it, come with tasks/result.
            let result = asked(plan, id, "tasks/result").await?;
            mapped(plan, result)
                .map(Some)
                .map_err(|f| (f, result_error_type(false)))
        }
        "failed" => {
            let why = task
                .pointer("/error/message")
                .or_else(|| task.get("statusMessage"))
                .and_then(Value::as_str)
                .unwrap_or("the task failed")
                .to_owned();
            let data = task.pointer_mut("/error/data").map(Value::take);
            let code = task.pointer("/error/code");
            Err(failed(plan, RpcError::answered(code, why, data)))
        }
        "cancelled" => Err(typed("cancelled")(
            format!(
                "mcp: tool '{}' was cancelled by the server (task {})",
                plan.snapshot.tools[plan.index].name,
                clip(id)
            )
            .into(),
        )),
        "input_required" => give_input(plan, id, task).await.map(|()| None),
        _ => Ok(None),
    }
}

/// An `input_required` task's requests, answered through the host's hooks and sent with
/// `tasks/update`. Each round counts against the call's maxInputRounds, as a call's own rounds
/// do; past them the task is cancelled.
async fn give_input(plan: &Plan, id: &str, task: &mut Value) -> Result<(), Failed> {
    let rounds = plan.rounds()?;
    if let Err(past) = super::plan::another_round(plan) {
        cancel(plan, id);
        return Err(past);
    }
    let requests = match task.get_mut("inputRequests").map(Value::take) {
        Some(Value::Object(requests)) => requests,
        _ => Map::new(),
    };
    let responses = answers(plan, requests)
        .await
        .map_err(typed("input_not_given"))?;
    let update = json!({ "taskId": id, "inputResponses": responses });
    let left = rounds.deadline.saturating_duration_since(Instant::now());
    let rpc = &plan.snapshot.conn.rpc;
    rpc.request("tasks/update", update, Some(left))
        .await
        .map(drop)
        .map_err(|e| failed(plan, e))
}

/// `method` asked of the task within the call's deadline; the task is cancelled when the
/// deadline passes first.
async fn asked(plan: &Plan, id: &str, method: &str) -> Result<Value, Failed> {
    let rounds = plan.rounds()?;
    let left = rounds.deadline.saturating_duration_since(Instant::now());
    let rpc = &plan.snapshot.conn.rpc;
    match rpc
        .request(method, json!({ "taskId": id }), Some(left))
        .await
    {
        Ok(answer) => Ok(answer),
        Err(RpcError::TimedOut) => {
            cancel(plan, id);
            let tool = &plan.snapshot.tools[plan.index].name;
            Err(typed("timeout")(timed_out(tool, plan.call_ms)))
        }
        Err(e) => Err(failed(plan, e)),
    }
}

/// The call's failure for an error of the task's requests (or the task's own).
fn failed(plan: &Plan, e: RpcError) -> Failed {
    let kind = rpc_error_type(&e);
    let tool = &plan.snapshot.tools[plan.index].name;
    (call_failure(&plan.secrets, tool, e), kind)
}

/// The wait before the next poll: the server's milliseconds, bounded before they become a
/// `Duration` (a server's `1e300` or `-1` must not reach `Duration::from_secs_f64`, which
/// panics past `u64::MAX` seconds); anything that is not a number waits the default.
fn poll_interval(asked: Option<&Value>) -> Duration {
    let (min, max) = (POLL_MIN.as_secs_f64(), POLL_MAX.as_secs_f64());
    match asked.and_then(Value::as_f64) {
        Some(ms) if ms.is_finite() => Duration::from_secs_f64((ms / 1000.0).clamp(min, max)),
        Some(ms) if ms == f64::INFINITY => POLL_MAX,
        Some(_) => POLL_MIN,
        None => POLL_DEFAULT,
    }
}

/// Waits `interval` between polls; the host's abort or the call's deadline end the task.
async fn wait(plan: &Plan, id: &str, interval: Duration) -> Result<(), Failed> {
    let rounds = plan.rounds()?;
    let spec = &plan.snapshot.tools[plan.index];
    let until = Instant::now() + interval;
    loop {
        if rounds.asker.cancelled(plan.first) {
            cancel(plan, id);
            return Err(typed("cancelled")(
                crate::core::error::aborted(&spec.name).into(),
            ));
        }
        let now = Instant::now();
        if now >= rounds.deadline {
            cancel(plan, id);
            return Err(typed("timeout")(timed_out(&spec.name, plan.call_ms)));
        }
        if now >= until {
            return Ok(());
        }
        tokio::time::sleep(WATCH.min(until - now).min(rounds.deadline - now)).await;
    }
}

/// Tells the server the client no longer wants the task (cooperative: not awaited).
fn cancel(plan: &Plan, id: &str) {
    let Some(rounds) = &plan.rounds else {
        return;
    };
    let rpc = plan.snapshot.conn.rpc.clone();
    let params = json!({ "taskId": id });
    rounds.runtime.spawn(async move {
        let _ = rpc
            .request("tasks/cancel", params, Some(Duration::from_secs(5)))
            .await;
    });
}

/// The task's id and status, for the calling tool's log (through the progress listener).
fn tell(plan: &Plan, id: &str, task: &Value) {
    let Some(listener) = plan.rounds.as_ref().and_then(|r| r.progress.as_ref()) else {
        return;
    };
    let mut told = Map::new();
    told.insert("taskId".into(), Value::from(id));
    // The server's words reach the host through the call's listener, which redacts and
    // bounds them as all of a server's text (`core::shown::server_value`).
    for key in ["status", "statusMessage"] {
        if let Some(v) = task.get(key).filter(|v| v.is_string()) {
            told.insert(key.into(), v.clone());
        }
    }
    listener(json!({ "progressToken": plan.first, "task": told }));
}

fn clip(id: &str) -> String {
    id.chars().take(128).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_poll_interval_is_bounded_before_it_becomes_a_duration() {
        let at = |v: Value| poll_interval(Some(&v));
        assert_eq!(at(json!(1e300)), POLL_MAX);
        assert_eq!(at(json!(f64::MAX)), POLL_MAX);
        assert_eq!(at(json!(-1e300)), POLL_MIN);
        assert_eq!(at(json!(-0.0)), POLL_MIN);
        assert_eq!(at(json!(u64::MAX)), POLL_MAX);
        assert_eq!(at(json!(i64::MIN)), POLL_MIN);
        assert_eq!(at(json!(250)), Duration::from_millis(250));
        assert_eq!(at(json!("250")), POLL_DEFAULT);
        assert_eq!(at(json!(null)), POLL_DEFAULT);
        assert_eq!(poll_interval(None), POLL_DEFAULT);
    }
}
