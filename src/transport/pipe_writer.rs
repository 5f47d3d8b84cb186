//! Lines to a child's stdin, written by whichever thread sends them.
//!
//! Handing each line to a writer task costs a thread wake-up per message, more than the write
//! itself. A sender writes straight to the (non-blocking) pipe when nothing is queued ahead of
//! it; only what the pipe cannot take at once is queued for the writer task, which alone
//! writes until the queue is empty again, so lines never interleave or reorder.

use super::observe::Inbound;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, Weak};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::Notify;

#[derive(Default)]
struct State {
    /// The pipe, until the writer task closes it; nobody writes to it after that.
    fd: Option<RawFd>,
    /// Bytes waiting for the writer task, in order.
    queued: Vec<u8>,
    /// The requests whose lines are (at least partly) in `queued`: if the pipe breaks before
    /// they are written, they fail at once instead of waiting out their timeout.
    queued_ids: Vec<u64>,
    /// The writer task holds bytes it has not finished writing: senders must queue.
    writing: bool,
    /// close() asked for end of input: the writer task closes the pipe once drained.
    ending: bool,
    /// A write failed (the child closed its input or is gone): this and later sends fail at
    /// once instead of waiting out their timeout.
    broken: bool,
}

/// Why a line could not be written: the child closed its input, or is gone.
pub const STDIN_CLOSED: &str = "mcp: the server's stdin is closed";

pub struct PipeWriter {
    state: Mutex<State>,
    wake: Arc<Notify>,
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        // The writer task sees its owner is gone and closes the pipe.
        self.wake.notify_one();
    }
}

impl PipeWriter {
    /// Must run inside the tokio runtime: it starts the writer task.
    /// Requests that were queued when the pipe broke are failed through `inbound`.
    pub fn start(stdin: ChildStdin, inbound: Inbound) -> Arc<Self> {
        let fd = stdin.as_raw_fd();
        // A sender on the JS thread must never block on a full pipe; tokio's pipes are
        // non-blocking already, this only makes it certain.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 && flags & libc::O_NONBLOCK == 0 {
                libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
            }
        }
        let wake = Arc::new(Notify::new());
        let writer = Arc::new(Self {
            state: Mutex::new(State {
                fd: Some(fd),
                ..State::default()
            }),
            wake: wake.clone(),
        });
        tokio::spawn(drain(stdin, Arc::downgrade(&writer), wake, inbound));
        writer
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends one line (the newline is added here); `request` is the id of the request it
    /// carries, if any.
    pub fn send(&self, line: String, request: Option<u64>) -> Result<(), String> {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        let mut state = self.lock();
        let closed = || Err(STDIN_CLOSED.to_owned());
        let Some(fd) = state.fd.filter(|_| !state.ending && !state.broken) else {
            return closed();
        };
        let mut rest: &[u8] = &bytes;
        if state.queued.is_empty() && !state.writing {
            loop {
                let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
                if n >= 0 {
                    rest = &rest[n as usize..];
                    if rest.is_empty() {
                        return Ok(());
                    }
                    continue;
                }
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => break,
                    _ => {
                        state.broken = true;
                        return closed();
                    }
                }
            }
        }
        state.queued.extend_from_slice(rest);
        state.queued_ids.extend(request);
        drop(state);
        self.wake.notify_one();
        Ok(())
    }

    /// Ends the child's input once everything sent before is written.
    pub fn end(&self) {
        self.lock().ending = true;
        self.wake.notify_one();
    }
}

async fn drain(
    mut stdin: ChildStdin,
    owner: Weak<PipeWriter>,
    wake: Arc<Notify>,
    inbound: Inbound,
) {
    let mut buf = Vec::new();
    let mut ids = Vec::new();
    loop {
        wake.notified().await;
        let Some(writer) = owner.upgrade() else {
            return;
        };
        loop {
            let idle = {
                let mut state = writer.lock();
                if state.queued.is_empty() || state.broken {
                    state.queued.clear();
                    ids.append(&mut state.queued_ids);
                    state.writing = false;
                    if state.ending {
                        // Given up under the lock: no sender can be using the fd number
                        // once it is closed below.
                        state.fd = None;
                    }
                    Some(state.ending)
                } else {
                    state.writing = true;
                    std::mem::swap(&mut buf, &mut state.queued);
                    std::mem::swap(&mut ids, &mut state.queued_ids);
                    None
                }
            };
            // Requests dropped with a broken pipe's queue: their lines will never be written.
            if idle.is_some() {
                for id in ids.drain(..) {
                    inbound.fail_request(id, STDIN_CLOSED.to_owned());
                }
            }
            match idle {
                Some(true) => {
                    let _ = stdin.shutdown().await;
                    return;
                }
                Some(false) => break,
                None => {}
            }
            if stdin.write_all(&buf).await.is_err() {
                writer.lock().broken = true;
                for id in ids.drain(..) {
                    inbound.fail_request(id, STDIN_CLOSED.to_owned());
                }
            }
            buf.clear();
            ids.clear();
        }
    }
}
