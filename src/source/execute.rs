//! A call of an imported tool, started: the input judged before anything is sent, the request
//! written once (`plan::params`), the plan of its further rounds when the host answers what a
//! server asks back or the call may be repeated, a task resumed by its id, and cancellation.

use super::{call, plan, tasks, Connector, ErrorType, Snapshot, Source};
use crate::client::rpc::{Listener, RpcError};
use crate::core::admit::ToolSpec;
use crate::core::error::Failure;
use crate::core::headers;
use crate::core::lite;
use crate::core::validate::describe;
use crate::transport::observe::MAX_JSON_DEPTH;
use serde_json::{json, Value};
use std::sync::Arc;

/// `listener` for a call of further rounds: a round's progress (its token is that request's
/// id) and a task's status are told as the call's, under the id the host knows it by.
fn told_as(listener: Listener, id: u64) -> Listener {
    Arc::new(move |mut p: Value| {
        p["progressToken"] = Value::from(id);
        listener(p)
    })
}

/// `listener`, handed what a server says during a call (progress messages, log messages, a
/// task's status) under the one rule for a server's text that reaches the host
/// (`core::shown::server_value`: the source's secrets redacted, controls made visible,
/// bounded).
fn shown_to(listener: Listener, secrets: Arc<crate::core::secrets::Secrets>) -> Listener {
    Arc::new(move |p: Value| {
        let redact = |text: &str| secrets.redact(text);
        listener(crate::core::shown::server_value(&p, &redact))
    })
}

/// The call's input judged before anything is sent. Valid input is judged in a borrowed tree
/// (`core::lite`); anything else is read as a `Value`, which words why it is refused.
fn judge(spec: &ToolSpec, input: &str) -> Result<(), Failure> {
    let valid = lite::parse(input, MAX_JSON_DEPTH).and_then(|t| spec.input.lite_valid(t.root()));
    if valid == Some(true) {
        return Ok(());
    }
    let arguments: Value = serde_json::from_str(input)
        .map_err(|e| Failure::from(crate::core::error::input_not_json(&spec.name, &e)))?;
    let issues = spec.input.issues(&arguments);
    match issues.is_empty() {
        true => Ok(()),
        false => Err(Failure::from(format!(
            "mcp: invalid input for tool '{}': {}",
            spec.name,
            describe(&issues)
        ))),
    }
}

/// The arguments the era mirrors outside the body (only a tool whose declarations it read has
/// any).
fn mirrored(spec: &ToolSpec, input: &str) -> Vec<(String, String)> {
    match spec.headers.is_empty() {
        true => Vec::new(),
        false => serde_json::from_str::<Value>(input)
            .map(|arguments| headers::values(&spec.headers, &arguments))
            .unwrap_or_default(),
    }
}

impl<C: Connector> Source<C> {
    /// `execute`, started: validates the input, sends tools/call with the original name, and
    /// hands `done` the call's id and the mapped result's JSON text (`result.rs`) on
    /// whichever thread the reply, the timeout or the connection's end arrives (a failure with
    /// its `error.type` for tracing). Input that fails validation is refused here, before
    /// anything is sent. `meta`: trace members for the request's `_meta` (`client::trace`).
    /// `checked_in_js`: the JS side checks the structured result (`map_raw_result`).
    /// Returns the request id, which `cancel` takes.
    #[allow(clippy::too_many_arguments)]
    pub fn start_call(
        &self,
        snapshot: &Arc<Snapshot>,
        index: usize,
        input: &str,
        progress: Option<Listener>,
        meta: Option<&str>,
        checked_in_js: bool,
        done: impl FnOnce(u64, Result<String, (Failure, ErrorType)>) + Send + 'static,
    ) -> Result<u64, Failure> {
        let Some(spec) = snapshot.tools.get(index) else {
            return Err(Failure::from(format!(
                "mcp: '{}' has no tool #{index}",
                self.id
            )));
        };
        judge(spec, input)?;
        let progress = progress.map(|l| shown_to(l, self.secrets.clone()));
        let call_ms = self.config.timeouts.call.ms;
        let id = snapshot.conn.rpc.reserve_id();
        let rules = snapshot.conn.rpc.rules();
        // A call asks to run as a task only of a tool that says it can, in an era that asks.
        let task = (spec.tasks && self.asker.tasks())
            .then(|| rules.task_request(call_ms))
            .flatten()
            .unwrap_or_default();
        let text = plan::params(&spec.original, input, &task);
        let mirrored = mirrored(spec, input);
        let timeout = self.config.timeouts.call.duration;
        let mut plan = plan::Plan {
            snapshot: snapshot.clone(),
            index,
            secrets: self.secrets.clone(),
            call_ms,
            first: id,
            rounds: None,
            checked_in_js,
        };
        // A host that answers input requests: the call may take further rounds, which need
        // its arguments again and a runtime to answer on. So does a call the host said is safe
        // to repeat, in an era that sends a call whose answer was lost again. A call of any
        // other source pays nothing for it.
        let repeatable = rules.resends_lost() && self.config.repeatable(&spec.original);
        let runtime = (self.asker.offered() || repeatable)
            .then(|| self.asker.runtime())
            .flatten();
        let Some(runtime) = runtime else {
            let done = plan::Done::new(id, snapshot.clone(), index, done);
            let plan = Arc::new(plan);
            call::submit(plan, id, &text, meta, mirrored, timeout, progress, done);
            return Ok(id);
        };
        let deadline = std::time::Instant::now() + timeout;
        let told = progress.clone().map(|listener| told_as(listener, id));
        plan.rounds = Some(plan::Rounds {
            asker: self.asker.clone(),
            input: input.to_owned(),
            mirrored: mirrored.clone(),
            progress: told,
            meta: meta.map(str::to_owned),
            deadline,
            runtime,
            taken: Default::default(),
            repeatable,
            repeated: Default::default(),
        });
        let done = plan::Done::new(
            id,
            snapshot.clone(),
            index,
            self.tracked(&plan, id, deadline, done),
        );
        let plan = Arc::new(plan);
        call::submit(plan, id, &text, meta, mirrored, timeout, progress, done);
        Ok(id)
    }

    /// `done`, with call `id` among the calls in flight until it runs (the table a 2025
    /// server's request and a log message are tied to a call by).
    fn tracked<D>(
        &self,
        plan: &plan::Plan,
        id: u64,
        deadline: std::time::Instant,
        done: D,
    ) -> impl FnOnce(u64, Result<String, plan::Failed>) + Send + 'static
    where
        D: FnOnce(u64, Result<String, plan::Failed>) + Send + 'static,
    {
        let told = plan.rounds.as_ref().and_then(|r| r.progress.clone());
        self.asker.begin(id, deadline, told);
        let asker = self.asker.clone();
        move |first, outcome| {
            asker.end(first);
            done(first, outcome);
        }
    }

    /// Follows a task the host kept the id of (a run resumed after a restart) to its end, as
    /// a call of tool `index` that came back as that task would be: `done` as for
    /// `start_call`, under the id returned (which `cancel_call` takes).
    pub fn resume_task(
        &self,
        snapshot: &Arc<Snapshot>,
        index: usize,
        task_id: &str,
        progress: Option<Listener>,
        done: impl FnOnce(u64, Result<String, plan::Failed>) + Send + 'static,
    ) -> Result<u64, Failure> {
        if snapshot.tools.get(index).is_none() {
            return Err(format!("mcp: '{}' has no tool #{index}", self.id).into());
        }
        let runtime = self.asker.tasks().then(|| self.asker.runtime()).flatten();
        let Some(runtime) = runtime else {
            return Err(format!(
                "mcp: '{}' resumes a task only with 'tasks: true' set",
                self.id
            )
            .into());
        };
        let call_ms = self.config.timeouts.call.ms;
        let id = snapshot.conn.rpc.reserve_id();
        let deadline = std::time::Instant::now() + self.config.timeouts.call.duration;
        let told = progress.map(|listener| told_as(shown_to(listener, self.secrets.clone()), id));
        let plan = plan::Plan {
            snapshot: snapshot.clone(),
            index,
            secrets: self.secrets.clone(),
            call_ms,
            first: id,
            rounds: Some(plan::Rounds {
                asker: self.asker.clone(),
                input: "{}".into(),
                mirrored: Vec::new(),
                progress: told,
                meta: None,
                deadline,
                runtime,
                taken: Default::default(),
                repeatable: false,
                repeated: Default::default(),
            }),
            checked_in_js: false,
        };
        let done = plan::Done::new(
            id,
            snapshot.clone(),
            index,
            self.tracked(&plan, id, deadline, done),
        );
        let dialect = snapshot.conn.rpc.rules().tasks();
        // Polled at once: the task has run while the host was away.
        let task = json!({ "taskId": task_id, "status": "working", dialect.poll_key: 0 });
        tasks::follow(Arc::new(plan), dialect, task, done);
        Ok(id)
    }

    /// Gives up on a call started by `start_call`; its `done` gets "was aborted".
    pub fn cancel_call(&self, snapshot: &Snapshot, id: u64) {
        // A call in a further round is on the wire under another id.
        let current = self.asker.cancel(id).unwrap_or(id);
        snapshot
            .conn
            .rpc
            .abandon(current, "cancelled by the caller", RpcError::Cancelled);
    }

    /// What the native validator says of tool `index`'s structured result `text` (as a call
    /// started with `checked_in_js` handed it on) when the JS side's check did not accept it:
    /// the refusal, redacted, or `Ok` when it is valid after all.
    pub fn recheck_result(
        &self,
        snapshot: &Snapshot,
        index: usize,
        text: &str,
    ) -> Result<(), Failure> {
        let Some(spec) = snapshot.tools.get(index) else {
            return Err(format!("mcp: '{}' has no tool #{index}", self.id).into());
        };
        crate::core::result::recheck_structured(&spec.name, spec.output.as_ref(), text)
            .map_err(|f| super::redacted_failure(&self.secrets, f))
    }
}
