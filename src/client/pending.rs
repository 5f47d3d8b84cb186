//! The requests a connection waits on: each one's waiter (answered exactly once), its progress
//! listener and its deadline, in one table that the router answers from, the timer expires
//! and the connection's end empties.

use super::error::{Reply, RpcError};
use crate::core::error::Failure;
use crate::core::lite::RawObject;
use crate::sync::lock;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::Notify;

/// Receives the params of each `notifications/progress` for one request, on the reading thread.
pub type Listener = Arc<dyn Fn(Value) + Send + Sync>;

/// Maps a reply's `result` while it is still text (see `Router::frame`): the outcome, or
/// `None` to have the reply parsed into a `Value` and answered as any other.
pub type Fast = Arc<dyn Fn(&RawObject<'_>) -> Option<Result<String, Failure>> + Send + Sync>;

/// What a waiter is answered with: the reply, or what its `Fast` made of it.
pub enum Answer {
    Reply(Reply),
    Mapped(Result<String, Failure>),
}

/// Takes a request's reply exactly once. One dropped unanswered (its connection torn down
/// without a reason) answers "connection closed", so no caller ever waits forever.
pub struct Waiter {
    f: Option<Box<dyn FnOnce(Answer) + Send>>,
    fast: Option<Fast>,
}

impl Waiter {
    pub fn new(f: impl FnOnce(Reply) + Send + 'static) -> Self {
        Self::answered(None, move |answer| match answer {
            Answer::Reply(reply) => f(reply),
            // Never given without a `Fast`.
            Answer::Mapped(_) => f(Err(RpcError::Closed("connection closed".into()))),
        })
    }

    /// A waiter whose reply `fast` may map from its text, `f` then getting `Answer::Mapped`.
    pub fn answered(fast: Option<Fast>, f: impl FnOnce(Answer) + Send + 'static) -> Self {
        Self {
            f: Some(Box::new(f)),
            fast,
        }
    }

    pub(super) fn answer(self, reply: Reply) {
        self.give(Answer::Reply(reply));
    }

    pub(super) fn give(mut self, answer: Answer) {
        if let Some(f) = self.f.take() {
            f(answer);
        }
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if let Some(f) = self.f.take() {
            f(Answer::Reply(Err(RpcError::Closed(
                "connection closed".into(),
            ))));
        }
    }
}

pub(super) struct Entry {
    pub(super) waiter: Waiter,
    pub(super) deadline: Option<Instant>,
}

#[derive(Default)]
pub(super) struct Pending {
    pub(super) replies: HashMap<u64, Entry>,
    pub(super) progress: HashMap<u64, Listener>,
    /// Requests with a deadline, earliest first; the timer task expires them.
    pub(super) deadlines: BTreeSet<(Instant, u64)>,
    /// The deadline the timer task sleeps toward; an earlier one must wake it.
    pub(super) timer_target: Option<Instant>,
    /// Set once the connection is gone: every later request fails with it.
    pub(super) closed: Option<String>,
    /// Waiters in `replies` with a `Fast`: none (a sweep's pages, the handshake), and the
    /// router does not read a reply's text for one.
    pub(super) fast_waiters: usize,
}

impl Pending {
    /// Whether any waiter has a `Fast`.
    pub(super) fn expects_fast(&self) -> bool {
        self.fast_waiters > 0
    }

    /// The `Fast` of request `id`'s waiter, if it has one.
    pub(super) fn fast(&self, id: u64) -> Option<Fast> {
        self.replies.get(&id)?.waiter.fast.clone()
    }

    pub(super) fn insert(&mut self, id: u64, entry: Entry) {
        self.fast_waiters += usize::from(entry.waiter.fast.is_some());
        self.replies.insert(id, entry);
    }

    pub(super) fn take(&mut self, id: u64) -> Option<Waiter> {
        self.progress.remove(&id);
        let entry = self.replies.remove(&id)?;
        self.fast_waiters -= usize::from(entry.waiter.fast.is_some());
        if let Some(at) = entry.deadline {
            self.deadlines.remove(&(at, id));
        }
        Some(entry.waiter)
    }
}

pub(super) type Shared = Arc<Mutex<Pending>>;

pub(super) fn fail_all(pending: &Mutex<Pending>, timer: &Notify, reason: &str) {
    let replies = {
        let mut p = lock(pending);
        if p.closed.is_none() {
            p.closed = Some(reason.to_owned());
        }
        p.progress.clear();
        p.deadlines.clear();
        p.fast_waiters = 0;
        std::mem::take(&mut p.replies)
    };
    timer.notify_one();
    for (_, entry) in replies {
        entry
            .waiter
            .answer(Err(RpcError::Closed(reason.to_owned())));
    }
}
