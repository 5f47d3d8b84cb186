//! The protocol era of a connection, and every answer that differs between the revisions.
//! `legacy.rs` answers for 2025-11-25 and before (the `initialize` handshake, a session),
//! `modern.rs` for 2026-07-28 (no handshake, no session: every request carries its protocol
//! version, client info and capabilities in `_meta`). Each answers every question of `Rules`,
//! one method per difference, so a revision to come is one more file here and one more `Era`.
//!
//! The opening (`client::handshake`) chooses the era and sets it once on the connection
//! (`Speaking`), before anything is sent in it and before the connection is handed to anyone;
//! from then on the client and the source ask the connection's `Rules`, never "is this
//! modern?". Transports carry text and stay unaware of the era: what a modern request mirrors
//! outside its body reaches them as a `transport::Route`.

pub(crate) mod legacy;
pub(crate) mod modern;

use crate::core::config::Protocol;
use crate::transport::Route;
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// The revision a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Era {
    /// The version `initialize` agreed (one of `core::revisions::SUPPORTED_VERSIONS`).
    Legacy(&'static str),
    Modern,
}

impl Era {
    /// The revision spoken.
    pub(crate) fn version(self) -> &'static str {
        match self {
            Era::Legacy(version) => version,
            Era::Modern => modern::VERSION,
        }
    }

    /// The era's answer to each question that differs.
    pub(crate) fn rules(self) -> &'static dyn Rules {
        match self {
            Era::Legacy(_) => &legacy::Legacy,
            Era::Modern => &modern::Modern,
        }
    }

    /// The `protocol` pin that opens a connection in this era at once: a source that learned
    /// its server's era opens its later connections in it.
    pub(crate) fn pin(self) -> Protocol {
        match self {
            Era::Legacy(_) => Protocol::Legacy,
            Era::Modern => Protocol::Modern,
        }
    }
}

/// What a connection follows until its opening chose an era: the legacy revision's rules, as
/// the opening begins in it (no envelope, nothing mirrored, a server's requests answered).
pub(crate) fn rules(era: Option<Era>) -> &'static dyn Rules {
    era.map_or(&legacy::Legacy, Era::rules)
}

/// What the host's config offers a server, before an era declares it its own way
/// (`Rules::declared`).
pub(crate) struct Capabilities {
    /// The capabilities the host offers to answer (JSON text; `{}` when it offers none, so the
    /// opening stays byte for byte what it was).
    pub(crate) offered: String,
    /// The host follows calls that become tasks (`tasks: true`).
    pub(crate) tasks: bool,
    /// The level of the server's log messages the host hears (`serverLogs`), if it asks.
    pub(crate) log_level: Option<&'static str>,
}

/// How one revision carries a tool call that became a task.
pub(crate) struct TaskDialect {
    /// Takes the task out of a call's result when the result is this dialect's handle of one;
    /// any other result is left as it was.
    pub(crate) handle: fn(&mut Value) -> Option<Value>,
    /// A completed task carries its result, and an `input_required` one the requests it waits
    /// on (answered with `tasks/update`). Otherwise `tasks/result` delivers the result of
    /// either, the server's requests arriving meanwhile as on any call.
    pub(crate) carries_result: bool,
    /// The member of a task that suggests the wait before the next poll, in milliseconds.
    pub(crate) poll_key: &'static str,
}

/// The questions whose answers differ between the revisions, one method each.
pub(crate) trait Rules: Sync {
    /// The client capabilities the revision declares, as JSON text.
    fn declared(&self, capabilities: &Capabilities) -> String;
    /// The `_meta` members every request carries, as JSON text without braces (written once
    /// per connection, spliced into each request by `client::text`), if any.
    fn envelope(&self, capabilities: &Capabilities) -> Option<String>;
    /// What a transport may mirror of a request outside its body (`params`: the arguments its
    /// tool declares mirrored), if anything.
    fn route<'a>(
        &self,
        method: &'a str,
        name: Option<&'a str>,
        params: Vec<(String, String)>,
    ) -> Option<Route<'a>>;
    /// Whether a server's own requests (other than ping) reach the host's answers; else they
    /// are "not found".
    fn answers_server_requests(&self) -> bool;
    /// The request (method, params text) a connection must hold open to hear of list changes
    /// when its server offers them, if the revision needs one.
    fn list_changes(&self) -> Option<(&'static str, &'static str)>;
    /// The request (method, params) that asks the server for the log level the host hears, if
    /// the revision sets it with one.
    fn log_level(&self, level: &str) -> Option<(&'static str, Value)>;
    /// The members (text, after the arguments) a call of a tool that can run as a task carries
    /// to ask for one, when the host follows tasks; `ttl_ms` is the call's `callMs`.
    fn task_request(&self, ttl_ms: f64) -> Option<String>;
    /// How a call that became a task is followed.
    fn tasks(&self) -> &'static TaskDialect;
    /// Whether a request whose answer was lost (its stream ended under it) may be sent again
    /// as a new request: the opening's and a list's are, once; a tool call only when the host
    /// said it is safe to repeat, and any other tool call's outcome is then unknown.
    fn resends_lost(&self) -> bool;
    /// Whether a request is cancelled by closing the stream that carries it, where the
    /// transport has one of its own (else, or when it cannot, by `notifications/cancelled`).
    fn closes_stream_to_cancel(&self) -> bool;
    /// Whether a tool's `x-mcp-header` declarations are read (and a tool whose declarations
    /// break their rules is left out of the import).
    fn reads_header_declarations(&self) -> bool;
}

/// The task a call's result hands back, with the dialect its shape names. A result is read by
/// its shape on any connection: either revision's handle is followed wherever it comes.
pub(crate) fn task_in(result: &mut Value) -> Option<(&'static TaskDialect, Value)> {
    [&modern::Modern as &dyn Rules, &legacy::Legacy]
        .into_iter()
        .map(Rules::tasks)
        .find_map(|dialect| (dialect.handle)(result).map(|task| (dialect, task)))
}

/// Whether the server says it announces changes of its tool list (`initialize`'s answer and
/// `server/discover`'s say it alike).
pub(crate) fn offers_list_changes(answer: &Value) -> bool {
    answer
        .pointer("/capabilities/tools/listChanged")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The era a connection speaks, with its envelope written once. The opening sets it before it
/// sends anything in the era; the connection's `Rpc`, router and deadline timer each hold it.
#[derive(Clone, Default)]
pub(crate) struct Speaking(Arc<OnceLock<(Era, Option<String>)>>);

impl Speaking {
    /// Set once: a second era is ignored.
    pub(crate) fn set(&self, era: Era, capabilities: &Capabilities) {
        let _ = self.0.set((era, era.rules().envelope(capabilities)));
    }

    pub(crate) fn era(&self) -> Option<Era> {
        self.0.get().map(|(era, _)| *era)
    }

    /// The answers of the era spoken (the legacy ones while none is: `rules`).
    pub(crate) fn rules(&self) -> &'static dyn Rules {
        rules(self.era())
    }

    /// The `_meta` members every request carries in the era spoken, if any.
    pub(crate) fn envelope(&self) -> Option<&str> {
        self.0.get()?.1.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_dialect_takes_only_its_own_handle() {
        let modern = json!({"resultType": "task", "taskId": "t", "status": "working"});
        let legacy = json!({"task": {"taskId": "t", "status": "working"}});
        let mut result = modern.clone();
        let (dialect, task) = task_in(&mut result).unwrap();
        assert_eq!((dialect.poll_key, task), ("pollIntervalMs", modern));
        let mut result = legacy.clone();
        let (dialect, task) = task_in(&mut result).unwrap();
        assert_eq!(
            (dialect.poll_key, task),
            ("pollInterval", legacy["task"].clone())
        );
        for other in [
            json!({"content": []}),
            json!({"resultType": "complete", "task": {"taskId": "t"}}),
            json!({"task": "t"}),
        ] {
            let mut result = other.clone();
            assert!(task_in(&mut result).is_none());
            assert_eq!(result, other, "left as it was");
        }
    }

    #[test]
    fn an_era_not_chosen_follows_the_legacy_rules() {
        assert!(rules(None).envelope(&capabilities()).is_none());
        assert!(rules(None).answers_server_requests());
        assert!(rules(Some(Era::Modern)).envelope(&capabilities()).is_some());
    }

    fn capabilities() -> Capabilities {
        Capabilities {
            offered: "{}".into(),
            tasks: false,
            log_level: None,
        }
    }
}
