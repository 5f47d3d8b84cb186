//! What one call carries through all its requests (the first, an `input_required` round, a
//! repeat, a task's polls): its tool and snapshot, its deadline, the host's hooks, how its end
//! is told, and the rules every path ends it by (a timeout's words, a mapped result, the
//! answers to what the server asked).

use super::asks::Asker;
use super::{redacted_failure, ErrorType, Snapshot};
use crate::client::rpc::Listener;
use crate::core::error::Failure;
use crate::core::jcs::write_string;
use crate::core::result::map_result;
use crate::core::secrets::Secrets;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU32, Ordering};
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
    /// The JS side validates the structured result itself (`core::result::map_raw_result`).
    pub checked_in_js: bool,
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

/// What a call's end is handed: its first id and its mapped result's JSON text, or why it
/// failed.
type End = Box<dyn FnOnce(u64, Result<String, Failed>) + Send>;

/// A call's end, told exactly once. `finish` tells the outcome; a `Done` dropped unfinished
/// (the work that held it unwound in a panic, returned early, or was dropped with its runtime
/// or by `close()`) tells a typed failure from its drop, so a call settles by construction:
/// an `execute()` never waits past every deadline for an end nobody holds any more.
pub(super) struct Done {
    first: u64,
    end: Option<End>,
    /// The tool, for the failure's words (a shared handle: the call path pays no copy).
    snapshot: Arc<Snapshot>,
    index: usize,
}

impl Done {
    pub fn new(
        first: u64,
        snapshot: Arc<Snapshot>,
        index: usize,
        end: impl FnOnce(u64, Result<String, Failed>) + Send + 'static,
    ) -> Self {
        Self {
            first,
            end: Some(Box::new(end)),
            snapshot,
            index,
        }
    }

    /// Tells the call's outcome.
    pub fn finish(mut self, outcome: Result<String, Failed>) {
        if let Some(end) = self.end.take() {
            end(self.first, outcome);
        }
    }
}

impl Drop for Done {
    fn drop(&mut self) {
        let Some(end) = self.end.take() else {
            return;
        };
        let tool = self.snapshot.tools.get(self.index).map_or("?", |t| &t.name);
        let why = crate::core::error::call_failed(tool, "the call ended without an outcome");
        end(self.first, Err(typed("internal")(why.into())));
    }
}

/// How often a call's further work (a round's hooks, a task's polls) looks whether its
/// connection ended.
const CLOSED_WATCH: std::time::Duration = std::time::Duration::from_millis(50);

/// `work` of the call, ended early with the connection's end (`close()`, a dead server): a
/// round waiting on a hook or a task waiting between polls then settles at once, not at its
/// deadline.
pub(super) async fn until_closed<T>(
    plan: &Plan,
    work: impl std::future::Future<Output = Result<T, Failed>>,
) -> Result<T, Failed> {
    let rpc = &plan.snapshot.conn.rpc;
    let closed = async {
        loop {
            if let Some(reason) = rpc.is_closed() {
                return reason;
            }
            tokio::time::sleep(CLOSED_WATCH).await;
        }
    };
    tokio::select! {
        outcome = work => outcome,
        reason = closed => Err(typed("closed")(reason.into())),
    }
}

/// Counts one more round of input the call's server asked for (a call's `input_required`
/// result, or a task's): the call ends past `maxInputRounds`.
pub(super) fn another_round(plan: &Plan) -> Result<(), Failed> {
    let rounds = plan.rounds()?;
    let taken = rounds.taken.fetch_add(1, Ordering::Relaxed) + 1;
    let max = rounds.asker.max_rounds();
    if taken <= max {
        return Ok(());
    }
    let spec = &plan.snapshot.tools[plan.index];
    Err(typed("invalid_result")(
        format!(
            "mcp: tool '{}' asked for input more than {max} times (maxInputRounds); the call ends unanswered",
            spec.name
        )
        .into(),
    ))
}

/// `f` as a failure of the kind `error_type` names.
pub(super) fn typed(error_type: &'static str) -> impl FnOnce(Failure) -> Failed {
    move |f| (f, ErrorType::Borrowed(error_type))
}

pub(super) fn timed_out(tool: &str, call_ms: f64) -> Failure {
    crate::core::error::timed_out(tool, call_ms).into()
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

/// How many of the methods an `input_required` result asks for its refusal names.
const LISTED_METHODS: usize = 4;

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
        // The server's words: each clipped and made visible, and only the first few listed.
        let mut shown: Vec<String> = methods
            .iter()
            .take(LISTED_METHODS)
            .map(|m| crate::core::lockdiff::visible(m, 64))
            .collect();
        if methods.len() > LISTED_METHODS {
            shown.push(format!("{} more", methods.len() - LISTED_METHODS));
        }
        let what = match shown.is_empty() {
            true => "input".to_owned(),
            false => shown.join(", "),
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
