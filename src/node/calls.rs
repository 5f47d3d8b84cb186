//! What every call of a source shares, between `NativeSource` (which makes it) and
//! `NativeSnapshot` (whose calls use it): its own module, so neither binding file needs the
//! other's.

use super::connector::NodeConnector;
use super::jsthread::{Completions, HandOver};
use crate::client::rpc::Listener;
use crate::core::error::Failure;
use crate::source::{ErrorType, Source};
use std::sync::Arc;

/// A source of this edge: its connector is Node's.
pub(super) type NodeSource = Source<NodeConnector>;

/// Where finished calls and progress reports go, and an in-process source's direct hand-over
/// for sends made on the JS thread.
pub(super) struct Calls {
    pub(super) completions: Arc<Completions>,
    pub(super) direct: Option<Arc<HandOver>>,
}

impl Calls {
    /// What a started call (or a resumed task) hands its outcome to: its result, or its
    /// `error.type` and then its failure, in the batch the JS side takes.
    pub(super) fn done(
        &self,
    ) -> impl FnOnce(u64, Result<String, (Failure, ErrorType)>) + Send + 'static {
        let completions = self.completions.clone();
        move |id, outcome| match outcome {
            Ok(json) => completions.push(id, Ok(json)),
            Err((failure, error_type)) => {
                completions.push_error_type(id, &error_type);
                completions.push(id, Err(failure));
            }
        }
    }

    /// Progress (and a task's status) as the JS side takes it, under the call's id.
    pub(super) fn progress_listener(&self) -> Listener {
        let completions = self.completions.clone();
        Arc::new(move |p: serde_json::Value| {
            let id = p.get("progressToken").and_then(serde_json::Value::as_u64);
            if let Some(id) = id {
                completions.push_progress(id, &serde_json::to_string(&p).unwrap_or_default());
            }
        }) as Listener
    }
}
