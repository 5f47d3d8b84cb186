//! Lines to a child's stdin, written by whichever thread sends them.
//!
//! Handing each line to a writer task costs a thread wake-up per message, more than the write
//! itself. A sender writes straight to the (non-blocking) pipe when nothing is queued ahead of
//! it; only what the pipe cannot take at once is queued for the writer task, which alone
//! writes until the queue is empty again, so lines never interleave or reorder.
//!
//! The direct write is platform code (`direct`): on Unix a non-blocking write to the pipe's
//! descriptor. On Windows tokio writes a child's anonymous pipe from its blocking pool, and a
//! write on the sender's thread could block it (the JS thread above all) on a full pipe, so
//! there every line goes to the writer task: one wake-up per message, never a blocked caller.

use super::observe::Inbound;
use crate::sync::lock;
use direct::{Direct, Watch};
use std::sync::{Arc, Mutex, Weak};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::Notify;

#[derive(Default)]
struct State {
    /// The pipe, until the writer task closes it; nobody writes to it after that.
    fd: Option<Direct>,
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
    /// Told once the pipe's reader is gone although no write failed (see `direct::Watch`).
    gone: Arc<Notify>,
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
        let fd = Direct::new(&stdin);
        let watch = Watch::new(&stdin);
        let wake = Arc::new(Notify::new());
        let writer = Arc::new(Self {
            state: Mutex::new(State {
                fd: Some(fd),
                ..State::default()
            }),
            wake: wake.clone(),
            gone: Arc::new(Notify::new()),
        });
        tokio::spawn(drain(stdin, watch, Arc::downgrade(&writer), wake, inbound));
        writer
    }

    /// Resolves once the server stopped reading for good (it closed its stdin, or ended) while
    /// nothing we wrote failed: a request already in the pipe's buffer is lost with it, and its
    /// caller would otherwise wait out its timeout, or for ever without one.
    pub fn reader_gone(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let gone = self.gone.clone();
        async move { gone.notified().await }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
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
            match fd.write(rest) {
                Ok(n) if n == rest.len() => return Ok(()),
                Ok(n) => rest = &rest[n..],
                Err(()) => {
                    state.broken = true;
                    return closed();
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
    mut watch: Watch,
    owner: Weak<PipeWriter>,
    wake: Arc<Notify>,
    inbound: Inbound,
) {
    let mut buf = Vec::new();
    let mut ids = Vec::new();
    loop {
        let gone = tokio::select! {
            _ = wake.notified() => false,
            _ = watch.reader_gone() => true,
        };
        let Some(writer) = owner.upgrade() else {
            return;
        };
        if gone {
            // Later sends fail at once; the transport ends the connection, which fails what is
            // pending (the lines already in the pipe included).
            writer.lock().broken = true;
            watch = Watch::none();
            writer.gone.notify_one();
            wake.notify_one();
            continue;
        }
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
                    // The watch holds a copy of the descriptor: the child sees the end of its
                    // input only once both are closed.
                    drop(watch);
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

/// Writing on the sender's own thread without ever blocking it.
#[cfg(unix)]
mod direct {
    use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;
    use tokio::process::ChildStdin;

    /// Tells when the pipe's reader is gone though no write failed: the system flags the write
    /// end of such a pipe (`POLLERR` on Linux, `EV_EOF` from kqueue on macOS), which tokio
    /// reports as its write side closed. Watches a duplicate of the descriptor, since the
    /// reactor has the original registered already; writes on the original wake nothing here
    /// (they wake the pipe's readers), so the watch costs nothing per message.
    pub struct Watch(Option<AsyncFd<OwnedFd>>);

    impl Watch {
        pub fn new(stdin: &ChildStdin) -> Self {
            let copy = stdin.as_fd().try_clone_to_owned().ok();
            Self(copy.and_then(|fd| {
                // SAFETY: the AsyncFd owns the descriptor (an OwnedFd), so it stays open and
                // names the same pipe for as long as it is registered.
                unsafe { AsyncFd::register_with_interest(fd, Interest::WRITABLE) }.ok()
            }))
        }

        pub fn none() -> Self {
            Self(None)
        }

        pub async fn reader_gone(&mut self) {
            let Some(fd) = &self.0 else {
                return std::future::pending().await;
            };
            loop {
                let Ok(mut ready) = fd.ready(Interest::WRITABLE).await else {
                    return std::future::pending().await;
                };
                if ready.ready().is_write_closed() {
                    return;
                }
                // Only room in the pipe: wait for the next change.
                ready.clear_ready();
            }
        }
    }

    #[derive(Clone, Copy)]
    pub struct Direct(RawFd);

    impl Direct {
        pub fn new(stdin: &ChildStdin) -> Self {
            let fd = stdin.as_raw_fd();
            // A sender on the JS thread must never block on a full pipe; tokio's pipes are
            // non-blocking already, this only makes it certain.
            // SAFETY: `fd` is the descriptor of `stdin`, borrowed and open for this call; the
            // two fcntl calls read and set its status flags, no memory of ours.
            unsafe {
                let flags = libc::fcntl(fd, libc::F_GETFL);
                if flags >= 0 && flags & libc::O_NONBLOCK == 0 {
                    libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
                }
            }
            Self(fd)
        }

        /// Writes what the pipe takes now: fewer bytes than given when it is full, an error
        /// when it is broken (the child closed its input or is gone).
        pub fn write(self, bytes: &[u8]) -> Result<usize, ()> {
            let mut written = 0;
            while written < bytes.len() {
                let rest = &bytes[written..];
                // SAFETY: the write reads `rest.len()` bytes from `rest`, a live slice. The
                // descriptor is the child's stdin, open while a `Direct` of it is in the
                // writer's state: senders write only under its lock, and the writer task, which
                // owns the pipe, takes `fd` out under that lock before it closes the pipe.
                let n = unsafe { libc::write(self.0, rest.as_ptr().cast(), rest.len()) };
                if n >= 0 {
                    written += n as usize;
                    continue;
                }
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => break,
                    _ => return Err(()),
                }
            }
            Ok(written)
        }
    }
}

/// Windows: nothing is written on the sender's thread (see the module's comment).
#[cfg(not(unix))]
mod direct {
    use tokio::process::ChildStdin;

    /// Windows reports a pipe whose reader is gone only to a write (`ERROR_NO_DATA`), which the
    /// writer task then sees as a failed write; there is no readiness to watch.
    pub struct Watch;

    impl Watch {
        pub fn new(_stdin: &ChildStdin) -> Self {
            Self
        }

        pub fn none() -> Self {
            Self
        }

        pub async fn reader_gone(&mut self) {
            std::future::pending().await
        }
    }

    #[derive(Clone, Copy)]
    pub struct Direct;

    impl Direct {
        pub fn new(_stdin: &ChildStdin) -> Self {
            Self
        }

        /// Takes nothing: every byte goes to the writer task.
        pub fn write(self, _bytes: &[u8]) -> Result<usize, ()> {
            Ok(0)
        }
    }
}
