//! A stdio child's stdout read by Node's event loop (Unix): the pipe is handed to the JS side
//! (lib/pipe.js), which reads it as a socket and feeds each chunk back through the source's
//! feeder (`NativeSource.feeder()`), on the JS thread, where the calls it finishes settle at
//! once.

use super::jsthread::JsHook;
use crate::sync::lock;
use crate::transport::stdout::{Feed, ReadOn};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use tokio::process::ChildStdout;

/// The pipes of one source being read by Node, by number (a source's later connections have
/// pipes of their own; a chunk of an earlier one must not reach a later one's reader).
#[derive(Default)]
pub(super) struct Pipes {
    last: AtomicU32,
    live: Mutex<Vec<(u32, Weak<Feed>)>>,
}

impl Pipes {
    fn add(&self, feed: &Arc<Feed>) -> u32 {
        let number = self.last.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        let mut live = lock(&self.live);
        live.retain(|(_, f)| f.strong_count() > 0);
        live.push((number, Arc::downgrade(feed)));
        number
    }

    fn remove(&self, number: u32) {
        lock(&self.live).retain(|(n, _)| *n != number);
    }

    /// The reader of pipe `number`, while its connection lasts.
    pub(super) fn get(&self, number: u32) -> Option<Arc<Feed>> {
        lock(&self.live)
            .iter()
            .find(|(n, _)| *n == number)
            .and_then(|(_, f)| f.upgrade())
    }
}

/// Hands a child's stdout to the JS side through the `pipe` hook: text `"<fd> <number>"`.
pub(super) struct JsPipe {
    pub(super) hook: JsHook,
    pub(super) pipes: Arc<Pipes>,
}

impl ReadOn for JsPipe {
    #[cfg(unix)]
    fn read(&self, stdout: ChildStdout, feed: Arc<Feed>) -> Result<(), ChildStdout> {
        use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};
        // Taken off the runtime's reactor: from here on only Node's loop polls it.
        let Ok(fd) = stdout.into_owned_fd() else {
            // Not handed back either: its reader fails, so the connection ends with a reason.
            feed.end(Some("the pipe could not be handed to Node".into()));
            return Ok(());
        };
        let number = self.pipes.add(&feed);
        let raw = fd.into_raw_fd();
        if matches!(self.hook.fire(format!("{raw} {number}")), napi::Status::Ok) {
            return Ok(());
        }
        self.pipes.remove(number);
        // SAFETY: `raw` came from `into_raw_fd` above and the hook that would have owned it
        // was never queued, so nothing else holds or closes it.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        match ChildStdout::from_std(std::process::ChildStdout::from(fd)) {
            Ok(stdout) => Err(stdout),
            Err(_) => {
                // Not reachable in practice (the runtime is there); the reader fails then.
                feed.end(Some("the pipe could not be read".into()));
                Ok(())
            }
        }
    }

    /// Node reads a Windows pipe through its own handles, not a descriptor we could hand over:
    /// a runtime task reads it.
    #[cfg(not(unix))]
    fn read(&self, stdout: ChildStdout, _feed: Arc<Feed>) -> Result<(), ChildStdout> {
        Err(stdout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::drift::Drift;
    use crate::transport::observe::Inbound;
    use crate::transport::stdout::End;

    fn a_feed() -> Arc<Feed> {
        let (inbound, _events) = Inbound::new(Arc::new(Drift::new(false)));
        let end = End {
            reason: Box::new(|alive| Box::pin(async move { alive.to_owned() })),
            kill: Box::new(|| {}),
        };
        Feed::new(inbound, end)
    }

    /// Each connection's pipe has a number of its own: a chunk an earlier connection's socket
    /// still delivers finds no reader once that connection is gone, never the next one's.
    #[tokio::test]
    async fn a_pipe_number_names_one_connection() {
        let pipes = Pipes::default();
        let (first, second) = (a_feed(), a_feed());
        let (one, two) = (pipes.add(&first), pipes.add(&second));
        assert_ne!(one, two);
        assert!(Arc::ptr_eq(&pipes.get(one).unwrap(), &first));
        assert!(Arc::ptr_eq(&pipes.get(two).unwrap(), &second));
        drop(first);
        assert!(pipes.get(one).is_none());
        assert!(Arc::ptr_eq(&pipes.get(two).unwrap(), &second));
        pipes.remove(two);
        assert!(pipes.get(two).is_none());
    }
}
