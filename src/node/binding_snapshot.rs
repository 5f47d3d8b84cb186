//! `NativeSnapshot`: one sweep's admitted tools, held by the ToolDefs built from it; starts and
//! cancels their calls.

use super::calls::{Calls, NodeSource};
use super::entry::{entry, Args};
use super::js::{self, Kind};
use crate::client::trace::{members_text, meta_members, result_error_type};
use crate::core::error::Failure;
use crate::source::Snapshot;
use napi::bindgen_prelude::{Either, Env, ObjectFinalize, Unknown};
use napi_derive::napi;
use std::sync::Arc;

/// One snapshot of admitted tools, held by the ToolDefs built from it.
#[napi(custom_finalize)]
pub struct NativeSnapshot {
    pub(super) source: Arc<NodeSource>,
    pub(super) snapshot: Arc<Snapshot>,
    pub(super) calls: Arc<Calls>,
    /// The native bytes V8 was told this object keeps (`core::held`), given back when it is
    /// collected.
    reported: i64,
}

impl NativeSnapshot {
    /// The JS side's handle of `snapshot`, which tells V8 what it keeps in native memory: V8
    /// weighs it when it decides to collect, so closed sources' imports do not pile up
    /// outside its heap unseen. A second handle of one snapshot (a sweep that found the list
    /// unchanged) counts it again until that handle is collected: an overstatement that only
    /// makes V8 collect sooner.
    pub(super) fn new(
        env: &Env,
        source: Arc<NodeSource>,
        snapshot: Arc<Snapshot>,
        calls: Arc<Calls>,
    ) -> Self {
        let held = i64::try_from(snapshot.held).unwrap_or(i64::MAX);
        // Best effort: when V8 was not told, nothing is given back either.
        let reported = match env.adjust_external_memory(held) {
            Ok(_) => held,
            Err(_) => 0,
        };
        Self {
            source,
            snapshot,
            calls,
            reported,
        }
    }
}

impl ObjectFinalize for NativeSnapshot {
    fn finalize(self, env: Env) -> napi::Result<()> {
        // Never an error from here: napi-rs would throw it from a finalizer, where nothing
        // catches it.
        if self.reported != 0 {
            let _ = env.adjust_external_memory(-self.reported);
        }
        Ok(())
    }
}

#[napi]
impl NativeSnapshot {
    #[napi(getter)]
    pub fn key(&self) -> String {
        self.snapshot.key()
    }

    /// The protocol revision the connection of this import speaks (its era).
    #[napi(getter)]
    pub fn protocol(&self) -> Option<String> {
        self.snapshot.conn.rpc.era().map(|e| e.version().to_owned())
    }

    /// The session id of the connection of this import (a stateful HTTP server's), for tracing.
    #[napi(getter)]
    pub fn session_id(&self) -> Option<String> {
        self.snapshot
            .conn
            .rpc
            .wire()
            .session_id()
            .map(|s| crate::client::trace::attribute_text(&s))
    }

    /// The tools the import left out, each with why, as JSON text `[{ name, reason }]`.
    #[napi(catch_unwind)]
    pub fn left_out(&self) -> String {
        let out: Vec<serde_json::Value> = self
            .snapshot
            .left_out
            .iter()
            .map(|(name, reason)| serde_json::json!({ "name": name, "reason": reason }))
            .collect();
        serde_json::Value::Array(out).to_string()
    }

    /// The admitted tools as JSON text: `[{ name, description, parameters, needsApproval, risk? }]`.
    #[napi(catch_unwind)]
    pub fn json(&self) -> String {
        super::tooldefs::tools_json(&self.snapshot.tools)
    }

    /// The sweep that listed this snapshot (its source's count of sweeps).
    #[napi(getter)]
    pub fn sweep(&self) -> i64 {
        self.snapshot.sweep as i64
    }

    /// The admitted tools from `start` on, as `json()` writes them, when the JS side holds the
    /// first `start` already (handed over page by page during sweep `sweep`, this one); `null`
    /// when it cannot (another sweep's pages, or more than were handed over): then `json()`.
    #[napi(catch_unwind)]
    pub fn json_from(&self, sweep: i64, start: u32) -> Option<String> {
        let start = start as usize;
        let own = u64::try_from(sweep).is_ok_and(|s| s == self.snapshot.sweep);
        (own && start <= self.snapshot.streamed)
            .then(|| super::tooldefs::tools_json(&self.snapshot.tools[start..]))
    }

    /// The bytes of schema tool `index` declares, input and output, as `maxSchemaBytes` counts
    /// them; `null` when there is no such tool.
    #[napi(catch_unwind)]
    pub fn schema_bytes(&self, index: u32) -> Option<u32> {
        let tool = self.snapshot.tools.get(index as usize)?;
        Some(crate::core::admit::declared_schema_bytes(tool) as u32)
    }

    /// Why tool `index`'s input or output runs without a validator (`unvalidatedReasons`), as
    /// JSON text `{ input?, output? }`; `null` when both have one or there is no such tool.
    #[napi(catch_unwind)]
    pub fn unvalidated(&self, index: u32) -> Option<String> {
        let tool = self.snapshot.tools.get(index as usize)?;
        super::tooldefs::unvalidated_json(tool)
    }

    /// Tool `index`'s output schema as JSON text (the JS side compiles its own check of it,
    /// `lib/outputcheck.js`); `null` when it declares none or there is no such tool.
    #[napi(catch_unwind)]
    pub fn output_schema(&self, index: u32) -> Option<String> {
        let tool = self.snapshot.tools.get(index as usize)?;
        tool.output.as_ref().map(|o| o.json().to_owned())
    }

    /// The native validator's word on call `id`'s structured result, which the JS side's check
    /// of tool `index`'s output did not accept: `null` when it is valid after all, else its
    /// refusal as `[error.type, message]`. `batch` is the segment of `takeCompletions()` it came
    /// in.
    #[napi(catch_unwind)]
    pub fn recheck(&self, index: u32, batch: String, id: i64) -> Option<Vec<String>> {
        let text = u64::try_from(id)
            .ok()
            .and_then(|id| super::jsthread::completions::result_in(&batch, id));
        let refusal = match text {
            Some(text) => {
                self.source
                    .recheck_result(&self.snapshot, index as usize, text)
                    .err()?
                    .message
            }
            None => {
                let tool = self
                    .snapshot
                    .tools
                    .get(index as usize)
                    .map_or("?", |t| &t.name);
                crate::core::error::call_failed(tool, "its result was not found to check")
            }
        };
        Some(vec![result_error_type(false).into_owned(), refusal])
    }

    /// The lock file's text for this import (`rulvar-mcp lock`).
    #[napi(catch_unwind)]
    pub fn lock_text(&self) -> napi::Result<String, String> {
        self.source
            .lock_text(&self.snapshot)
            .map_err(super::errors::refusal)
    }

    /// The function that starts this snapshot's calls, `(index, input, wantsProgress,
    /// checksOutput, trace?)`: tool `index` with `input` (JSON text of `input ?? {}`). It
    /// returns the call's id (its JSON-RPC request id), under which its outcome arrives in
    /// `takeCompletions()`, or the message of a refusal made before anything was sent (input
    /// that is not valid). No Promise, no task: the request is on its way when it returns.
    /// `trace`: a propagator's carrier as JSON text; its W3C trace members go in the request's
    /// `_meta`. A plain function rather than a method: it runs once per call (`entry`).
    #[napi(
        catch_unwind,
        ts_return_type = "(index: number, input: string, wantsProgress: boolean, checksOutput: boolean, trace?: string) => number | string"
    )]
    pub fn starter<'env>(&self, env: &'env Env) -> napi::Result<Unknown<'env>> {
        let (source, snapshot, calls) = (
            self.source.clone(),
            self.snapshot.clone(),
            self.calls.clone(),
        );
        let body = move |raw: js::Env, args: &Args| {
            let trace = match js::kind(raw, args[4])? {
                Kind::Undefined | Kind::Null => None,
                _ => Some(js::string(raw, args[4])?),
            };
            let started = start(
                &Env::from_raw(raw),
                &source,
                &snapshot,
                &calls,
                Call {
                    index: js::whole(raw, args[0])?,
                    input: &js::string(raw, args[1])?,
                    wants_progress: js::boolean(raw, args[2])?,
                    checks_output: js::boolean(raw, args[3])?,
                    trace: trace.as_deref(),
                },
            )?;
            match started {
                Ok(id) => js::create_number(raw, id as f64),
                Err(message) => js::create_string(raw, &message),
            }
        };
        entry(env, "call", Box::new(body))
    }

    /// Follows task `task_id` of tool `index` to its end (`resumeTask`): like the starter, the id
    /// its outcome arrives under, or the message of a refusal.
    #[napi(catch_unwind, ts_return_type = "number | string")]
    pub fn resume(
        &self,
        index: u32,
        task_id: String,
        wants_progress: bool,
    ) -> napi::Result<Either<i64, String>> {
        let progress = wants_progress.then(|| self.calls.progress_listener());
        let started = self.source.resume_task(
            &self.snapshot,
            index as usize,
            &task_id,
            progress,
            self.calls.done(),
        );
        Ok(match started {
            Ok(id) => Either::A(id as i64),
            Err(Failure { message, .. }) => Either::B(message),
        })
    }

    /// Gives up on a call (its `ctx.signal` aborted); its outcome is "was aborted".
    #[napi(catch_unwind)]
    pub fn cancel(&self, id: i64) {
        if let Ok(id) = u64::try_from(id) {
            self.source.cancel_call(&self.snapshot, id);
        }
    }
}

/// A call as the JS side starts it.
struct Call<'a> {
    /// The tool's index in the snapshot; `None` for a number that is no index.
    index: Option<u32>,
    /// `input ?? {}` as JSON text.
    input: &'a str,
    wants_progress: bool,
    checks_output: bool,
    /// A propagator's carrier as JSON text.
    trace: Option<&'a str>,
}

/// Starts `call`: its id, or the message of a refusal made before anything was sent.
fn start(
    env: &Env,
    source: &NodeSource,
    snapshot: &Arc<Snapshot>,
    calls: &Calls,
    call: Call<'_>,
) -> napi::Result<Result<u64, String>> {
    let progress = call.wants_progress.then(|| calls.progress_listener());
    let meta = call
        .trace
        .and_then(|carrier| members_text(&meta_members(carrier)));
    // No index: past every tool, which the source refuses.
    let index = call.index.map_or(usize::MAX, |i| i as usize);
    let begin = || {
        source.start_call(
            snapshot,
            index,
            call.input,
            progress,
            meta.as_deref(),
            call.checks_output,
            calls.done(),
        )
    };
    let started = match &calls.direct {
        None => begin(),
        Some(hand_over) => hand_over.starting(env, begin)?,
    };
    Ok(started.map_err(|Failure { message, .. }| message))
}
