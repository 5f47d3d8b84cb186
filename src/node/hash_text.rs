//! The chunks of `toolsetHashFrom` read into contract tuples (parsed and canonicalized), beside
//! the JS thread that writes them.
//!
//! From the second chunk on, a thread of its own reads them while JS writes the next (the parse
//! and the canonical form overlapping `JSON.stringify`); once JS has written the last, the JS
//! thread reads what is still queued too, instead of waiting for that thread to get through it.
//! A toolset of one chunk is read on the JS thread alone and pays no thread.

use crate::core::hash::{self, Tuple};
use crate::sync::lock;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

#[derive(Default)]
pub(super) struct Reader {
    shared: Arc<Shared>,
    /// The reading thread, once a second chunk came; joined however the call ends.
    worker: Option<JoinHandle<()>>,
    /// How many chunks were added.
    added: usize,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    ready: Condvar,
}

#[derive(Default)]
struct State {
    /// Chunks not yet read, with their place in the toolset.
    queue: VecDeque<(usize, String)>,
    /// No chunk will come any more.
    closed: bool,
    /// The call ended early (JS gave up, or `next` failed): what is queued is not read.
    stopped: bool,
    /// Each chunk's tuples, in the order they were read (`None`: it was not a JSON array of
    /// contracts).
    read: Vec<(usize, Option<Vec<Tuple>>)>,
}

impl Shared {
    /// The next queued chunk; `None` when there is none, or (`wait`) once none will come.
    fn take(&self, wait: bool) -> Option<(usize, String)> {
        let mut state = lock(&self.state);
        loop {
            if state.stopped {
                return None;
            }
            if let Some(chunk) = state.queue.pop_front() {
                return Some(chunk);
            }
            if state.closed || !wait {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn read(&self, (at, chunk): (usize, String)) {
        let tuples = hash::tuples_of_text(&chunk);
        drop(chunk);
        lock(&self.state).read.push((at, tuples));
    }
}

impl Reader {
    pub(super) fn add(&mut self, chunk: String) {
        let at = self.added;
        self.added += 1;
        lock(&self.shared.state).queue.push_back((at, chunk));
        if at == 1 {
            let shared = self.shared.clone();
            // No thread to be had: the JS thread reads every chunk at the end.
            self.worker = std::thread::Builder::new()
                .name("rulvar-hash".into())
                .spawn(move || {
                    while let Some(chunk) = shared.take(true) {
                        shared.read(chunk);
                    }
                })
                .ok();
        }
        self.shared.ready.notify_one();
    }

    /// Every chunk's tuples in the toolset's order, or `None` if any chunk was not a JSON
    /// array of contracts (or the reading thread failed).
    pub(super) fn finish(mut self) -> Option<Vec<Tuple>> {
        lock(&self.shared.state).closed = true;
        self.shared.ready.notify_all();
        while let Some(chunk) = self.shared.take(false) {
            self.shared.read(chunk);
        }
        if let Some(worker) = self.worker.take() {
            worker.join().ok()?;
        }
        let mut read = std::mem::take(&mut lock(&self.shared.state).read);
        if read.len() != self.added {
            return None;
        }
        read.sort_unstable_by_key(|(at, _)| *at);
        let mut all = Vec::new();
        for (_, tuples) in read {
            all.extend(tuples?);
        }
        Some(all)
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            {
                let mut state = lock(&self.shared.state);
                state.stopped = true;
                state.closed = true;
            }
            self.shared.ready.notify_all();
            let _ = worker.join();
        }
    }
}
