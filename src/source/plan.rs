//! What one call carries through all its requests (the first, an `input_required` round, a
//! repeat, a task's polls): its tool and snapshot, its deadline, the host's hooks, how its end
//! is told, and the rules every path ends it by (a timeout's words, a mapped result, the
//! answers to what the server asked).

use super::asks::Asker;
use super::{redacted_failure, ErrorType, Snapshot};
use crate::client::rpc::Listener;
use crate::core::error::Failure;
use crate::core::jcs::{format_f64, write_string};
use crate::core::result::map_result;
use crate::core::secrets::Secrets;
use serde_json::{Map, Value};
use std::sync::atomic::AtomicU32;
use std::sync::Arc;
use std::time::Instant;

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
    /// The params of a further round's request: the call's arguments again, and `extra`
    /// members.
    pub(super) fn params(&self, name: &str, extra: &str) -> String {
        params(name, &self.input, extra)
    }
}

/// The call's end: its first id and its mapped result's JSON text, or why it failed.
pub(super) type Done = Box<dyn FnOnce(u64, Result<String, Failed>) + Send>;

/// `f` as a failure of the kind `error_type` names.
pub(super) fn typed(error_type: &'static str) -> impl FnOnce(Failure) -> Failed {
    move |f| (f, ErrorType::Borrowed(error_type))
}

pub(super) fn timed_out(tool: &str, call_ms: f64) -> Failure {
    format!(
        "mcp: tool '{tool}' timed out after {}ms (timeouts.callMs)",
        format_f64(call_ms)
    )
    .into()
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
