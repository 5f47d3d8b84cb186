//! A stdio child's stdout: newline-delimited frames to the inbound side.
//!
//! Read by whoever can wake the caller soonest. Under Node on Unix that is Node's own event
//! loop (`ReadOn`): a reply read on the JS thread settles its call there, one wake-up in all,
//! where a runtime thread that read it had to wake the JS thread in turn (two wake-ups per
//! call, each one tens of microseconds on a small VM). Elsewhere a runtime task reads it. Both
//! feed the same `Feed`, which splits the lines, bounds them, and ends the connection once.

use super::observe::Inbound;
use super::pipe_writer::STDIN_CLOSED;
use super::MAX_FRAME_BYTES;
use crate::sync::lock;
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStdout;
use tokio::sync::{mpsc, Notify};

/// Someone other than a runtime task that reads the child's stdout (Node's event loop, on the
/// JS thread) and hands what it reads to `feed`.
pub trait ReadOn: Send + Sync {
    /// Takes the pipe over; hands it back when it cannot, and a runtime task reads it then.
    fn read(&self, stdout: ChildStdout, feed: Arc<Feed>) -> Result<(), ChildStdout>;
}

/// What the reader needs of the child when the stream ends.
pub struct End {
    /// Why the server's side went away (how the child ended, its stderr tail), else the words
    /// given.
    pub reason: Box<dyn Fn(&'static str) -> BoxFuture<'static, String> + Send + Sync>,
    /// Ends the child's group at once: a stream past the frame limit is out of step for good.
    pub kill: Box<dyn Fn() + Send + Sync>,
}

/// The line reader of one connection, whoever feeds it.
pub struct Feed {
    inbound: Inbound,
    end: End,
    /// The start of a line not yet complete; `None` once the connection ended.
    partial: Mutex<Option<Vec<u8>>>,
    /// Told when the connection ended, so that its watch stops.
    ended: Notify,
    runtime: tokio::runtime::Handle,
    /// What a reader outside the runtime read that waits for a runtime thread (`fed`).
    handed: Mutex<Handed>,
}

/// Chunks handed to a runtime thread, and whether one is working through them: while it is,
/// every later chunk queues behind them, so lines are routed in the order they were read.
#[derive(Default)]
struct Handed {
    chunks: Vec<Vec<u8>>,
    /// The bytes in `chunks`: past `PAUSE_BYTES` the reader is asked to pause (`Fed::Pause`).
    bytes: usize,
    working: bool,
    /// The pipe's end, read while the thread was at work: told once the chunks before it are.
    end: Option<Option<String>>,
}

/// What a reader outside the runtime does after a chunk (`Feed::fed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fed {
    /// Read on.
    Go,
    /// Stop reading until `backlog` falls under `RESUME_BYTES`: a runtime thread has more
    /// than `PAUSE_BYTES` of the pipe still to work through (without this, a server writing
    /// faster than its huge lines are parsed would queue without bound in the host).
    Pause,
    /// The connection is over: nothing more of the pipe is wanted.
    Stop,
}

/// The hand-over queue's bound before the reader pauses, and where it reads on.
pub const PAUSE_BYTES: usize = 4 * 1024 * 1024;
pub const RESUME_BYTES: usize = 1024 * 1024;

/// One complete line found under the lock, routed after it is let go.
enum Line<'a> {
    /// Whole within what was read: no copy.
    Read(&'a [u8]),
    /// Gathered across reads: taken out of the line buffer.
    Gathered(Vec<u8>),
}

/// A message that has grown to this size in the line buffer is finished and parsed on a
/// runtime thread: a server must not hold the host's event loop for the parse of a huge line
/// (up to the frame limit). Replies and list pages of ordinary size stay on the JS thread,
/// where a hand-over would cost a wake-up each way.
const HAND_OVER_BYTES: usize = 1024 * 1024;

impl Feed {
    /// Must run inside the tokio runtime (a fed end is worked out there).
    pub fn new(inbound: Inbound, end: End) -> Arc<Self> {
        Arc::new(Self {
            inbound,
            end,
            partial: Mutex::new(Some(Vec::new())),
            ended: Notify::new(),
            runtime: tokio::runtime::Handle::current(),
            handed: Mutex::default(),
        })
    }

    /// What a reader outside the runtime read (Node's loop, on the JS thread): routed here,
    /// unless a huge message is being read (`HAND_OVER_BYTES`), whose rest goes to a runtime
    /// thread, as does everything read while that thread is at work. False once the
    /// connection is over: the reader stops.
    /// Never waits on the line buffer's lock while a runtime thread parses (nothing is parsed
    /// under it), so the JS thread is held only for its own lines.
    pub fn fed(self: &Arc<Self>, bytes: &[u8]) -> Fed {
        let mut handed = lock(&self.handed);
        if handed.working && self.is_over() {
            return Fed::Stop;
        }
        if !handed.working {
            let huge = match lock(&self.partial).as_ref() {
                Some(frame) => frame.len() >= HAND_OVER_BYTES,
                None => return Fed::Stop,
            };
            if !huge {
                drop(handed);
                return match self.chunk(bytes) {
                    true => Fed::Go,
                    false => Fed::Stop,
                };
            }
            handed.working = true;
            let feed = self.clone();
            self.runtime.spawn(async move { feed.work_through() });
        }
        handed.chunks.push(bytes.to_vec());
        handed.bytes += bytes.len();
        match handed.bytes > PAUSE_BYTES {
            true => Fed::Pause,
            false => Fed::Go,
        }
    }

    /// The bytes handed over and not yet worked through; `None` once the connection is over.
    pub fn backlog(&self) -> Option<usize> {
        let bytes = lock(&self.handed).bytes;
        (!self.is_over()).then_some(bytes)
    }

    /// Routes the handed chunks, in order, until none is left; then the end, if it came.
    fn work_through(self: &Arc<Self>) {
        loop {
            let chunks = {
                let mut handed = lock(&self.handed);
                if handed.chunks.is_empty() {
                    handed.working = false;
                    if let Some(error) = handed.end.take() {
                        drop(handed);
                        self.end_now(error);
                    }
                    return;
                }
                std::mem::take(&mut handed.chunks)
            };
            for chunk in chunks {
                // Once the connection is over the rest is dropped unread, as a reader would.
                let going = self.chunk(&chunk);
                lock(&self.handed).bytes -= chunk.len();
                if !going {
                    lock(&self.handed).bytes = 0;
                    break;
                }
            }
        }
    }

    /// Bytes read from the pipe: every line they complete goes to the inbound side, in order.
    /// False once the connection is over: the reader stops.
    /// One feeder at a time (the JS thread, or the runtime thread it handed over to, or the
    /// watch task), so lines keep their order; the lock only guards the buffer against the
    /// connection's end, and each line is routed (parsed) after it is let go.
    pub fn chunk(&self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() {
            let line = {
                let mut partial = lock(&self.partial);
                let Some(frame) = partial.as_mut() else {
                    return false;
                };
                let (consumed, complete) = match memchr::memchr(b'\n', bytes) {
                    Some(i) => (i + 1, true),
                    None => (bytes.len(), false),
                };
                if frame.len() + consumed > MAX_FRAME_BYTES + 1 {
                    // The stream can no longer be trusted to be in step: end the connection.
                    (self.end.kill)();
                    drop(partial);
                    self.finish(super::frame_limit_refusal());
                    return false;
                }
                let line = &bytes[..consumed];
                bytes = &bytes[consumed..];
                if complete && frame.is_empty() {
                    // The common case: the whole line is in what was read, no copy.
                    Line::Read(line)
                } else {
                    grow(frame, line.len());
                    frame.extend_from_slice(line);
                    if !complete {
                        continue;
                    }
                    Line::Gathered(std::mem::take(frame))
                }
            };
            match line {
                Line::Read(line) => {
                    self.inbound.push_text(trim_line(line));
                }
                Line::Gathered(mut frame) => {
                    self.inbound.push_text(trim_line(&frame));
                    frame.clear();
                    // A long-lived connection should not keep its largest message's buffer:
                    // with many sources open that adds up. A small one is used again.
                    if frame.capacity() > 64 * 1024 {
                        super::release_buffer(frame);
                    } else if let Some(empty) = lock(&self.partial).as_mut() {
                        if empty.is_empty() {
                            *empty = frame;
                        }
                    }
                }
            }
        }
        true
    }

    /// The pipe ended (`error`: reading it failed, in the reader's words). Told after what
    /// was read before it, even while a runtime thread still works through that.
    pub fn end(self: &Arc<Self>, error: Option<String>) {
        let mut handed = lock(&self.handed);
        if handed.working {
            handed.end.get_or_insert(error);
            return;
        }
        drop(handed);
        self.end_now(error);
    }

    fn end_now(self: &Arc<Self>, error: Option<String>) {
        let feed = self.clone();
        self.runtime.spawn(async move {
            let reason = match error {
                Some(e) => read_failed(e),
                None => (feed.end.reason)(STDOUT_CLOSED).await,
            };
            feed.finish(reason);
        });
    }

    /// Ends the connection with `reason`, the first time only.
    fn finish(&self, reason: String) {
        let Some(frame) = lock(&self.partial).take() else {
            return;
        };
        super::release_buffer(frame);
        self.inbound.close(reason);
        self.ended.notify_one();
    }

    fn is_over(&self) -> bool {
        lock(&self.partial).is_none()
    }
}

/// Why the connection ended when the child's stdout did (and its exit tells nothing more).
const STDOUT_CLOSED: &str = "mcp: the server process closed its stdout";

/// Why the connection ended when reading the child's stdout failed, whoever read it.
fn read_failed(error: impl std::fmt::Display) -> String {
    format!("mcp: reading the server's stdout failed: {error}")
}

/// How long what a server wrote is still read once it stopped reading.
const READ_ON: Duration = Duration::from_millis(100);

/// Watches one connection's stdout to its end: reads it when `stdout` is given (nobody else
/// does), and ends it when close() asks, or a while after the server stopped reading.
pub async fn watch(
    stdout: Option<ChildStdout>,
    feed: Arc<Feed>,
    input_gone: Option<impl std::future::Future<Output = ()>>,
    mut closing: mpsc::UnboundedReceiver<()>,
) {
    let mut reader = stdout.map(|s| BufReader::with_capacity(64 * 1024, s));
    let input_gone = async move {
        match input_gone {
            Some(gone) => gone.await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(input_gone);
    // Set once the server stopped reading: until then what it already wrote is still read (a
    // server that answers and exits closes both pipes at once, and its last answer must not
    // lose the race with its stdin's end).
    let mut read_until: Option<tokio::time::Instant> = None;
    let reason = loop {
        if feed.is_over() {
            return;
        }
        let grace = async {
            match read_until {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let read = async {
            match reader.as_mut() {
                Some(reader) => reader.fill_buf().await,
                None => std::future::pending().await,
            }
        };
        let chunk = tokio::select! {
            biased;
            _ = closing.recv() => break "mcp: the connection was closed".to_owned(),
            // Nothing sent from now on reaches the server: what is pending fails now.
            _ = grace => break (feed.end.reason)(STDIN_CLOSED).await,
            _ = feed.ended.notified() => return,
            chunk = read => chunk,
            _ = &mut input_gone, if read_until.is_none() => {
                read_until = Some(tokio::time::Instant::now() + READ_ON);
                continue;
            }
        };
        let consumed = match chunk {
            Ok([]) => break (feed.end.reason)(STDOUT_CLOSED).await,
            Ok(bytes) => {
                if !feed.chunk(bytes) {
                    return;
                }
                bytes.len()
            }
            Err(e) => break read_failed(e),
        };
        if let Some(reader) = reader.as_mut() {
            reader.consume(consumed);
        }
    };
    feed.finish(reason);
}

/// Room for `more` bytes in a line buffer: doubled as a `Vec` would, but never past the frame
/// limit, so a line at the limit holds one frame's worth and not twice that.
fn grow(frame: &mut Vec<u8>, more: usize) {
    let needed = frame.len() + more;
    if needed <= frame.capacity() {
        return;
    }
    let target = needed
        .max(frame.capacity() * 2)
        .min(MAX_FRAME_BYTES + 1)
        .max(needed);
    frame.reserve_exact(target - frame.len());
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::drift::Drift;
    use crate::transport::observe::Event;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn feed() -> (Arc<Feed>, mpsc::UnboundedReceiver<Event>, Arc<AtomicUsize>) {
        let (inbound, events) = Inbound::new(Arc::new(Drift::new(false)));
        let kills = Arc::new(AtomicUsize::new(0));
        let killed = kills.clone();
        let end = End {
            reason: Box::new(|alive| Box::pin(async move { alive.to_owned() })),
            kill: Box::new(move || {
                killed.fetch_add(1, Ordering::Relaxed);
            }),
        };
        (Feed::new(inbound, end), events, kills)
    }

    fn drained(events: &mut mpsc::UnboundedReceiver<Event>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(event) = events.try_recv() {
            out.push(match event {
                Event::Message(m) => m.to_string(),
                Event::Closed(reason) => format!("closed: {reason}"),
                Event::Failed(id, _) => format!("failed {id}"),
            });
        }
        out
    }

    /// Whatever sizes the reads come in, every line arrives once, whole and in order: a reply
    /// cut between reads, several in one read, CRLF ends, a banner that is not JSON between.
    #[tokio::test]
    async fn lines_come_whole_and_in_order_however_the_reads_cut_them() {
        let text =
            "{\"id\":1}\r\nbanner, not JSON\n{\"id\":2,\"result\":{\"a\":\"\\n\"}}\n{\"id\":3}\n";
        let want = [
            r#"{"id":1}"#,
            r#"{"id":2,"result":{"a":"\n"}}"#,
            r#"{"id":3}"#,
        ];
        for size in 1..=text.len() {
            let (feed, mut events, _) = feed();
            for piece in text.as_bytes().chunks(size) {
                assert!(feed.chunk(piece));
            }
            assert_eq!(drained(&mut events), want, "reads of {size} bytes");
        }
    }

    /// A line past the frame limit ends the connection once, with the limit's words, kills
    /// the child (the stream is out of step) and stops the reader; nothing after it is routed.
    #[tokio::test]
    async fn a_line_past_the_frame_limit_ends_the_connection() {
        let (feed, mut events, kills) = feed();
        assert!(feed.chunk(b"{\"id\":1}\n"));
        let piece = vec![b'x'; 1024 * 1024];
        let mut fed = 0;
        while feed.chunk(&piece) {
            fed += piece.len();
            assert!(fed <= MAX_FRAME_BYTES, "the limit was not enforced");
        }
        assert!(!feed.chunk(b"{\"id\":2}\n"));
        assert_eq!(
            drained(&mut events),
            [
                r#"{"id":1}"#.to_owned(),
                format!("closed: {}", super::super::frame_limit_refusal())
            ]
        );
        assert_eq!(kills.load(Ordering::Relaxed), 1);
    }

    /// What the JS thread feeds is routed there, except a huge message: once one has 1 MiB in
    /// the line buffer, its rest and everything after it go to a runtime thread until that
    /// one is done, and the lines, then the pipe's end, still arrive in the order read.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_huge_message_is_finished_on_a_runtime_thread_in_order() {
        struct Threads(Mutex<Vec<(String, std::thread::ThreadId)>>);
        impl crate::transport::observe::Sink for Threads {
            fn event(&self, event: Event) {
                let id = match event {
                    Event::Message(m) => m["id"].to_string(),
                    Event::Closed(reason) => reason,
                    Event::Failed(id, _) => format!("failed {id}"),
                };
                lock(&self.0).push((id, std::thread::current().id()));
            }
        }
        let sink = Arc::new(Threads(Mutex::new(Vec::new())));
        let inbound = Inbound::with_sink(Arc::new(Drift::new(false)), sink.clone());
        let end = End {
            reason: Box::new(|alive| Box::pin(async move { alive.to_owned() })),
            kill: Box::new(|| {}),
        };
        let feed = Feed::new(inbound, end);
        let here = std::thread::current().id();
        assert_eq!(feed.fed(b"{\"id\":1}\n"), Fed::Go);
        let huge = format!(
            "{{\"id\":2,\"result\":\"{}\"}}\n{{\"id\":3}}\n",
            "x".repeat(3 * 1024 * 1024)
        );
        for piece in huge.as_bytes().chunks(64 * 1024) {
            assert_eq!(feed.fed(piece), Fed::Go);
        }
        assert_eq!(feed.fed(b"{\"id\":4}\n"), Fed::Go);
        // The end read right after is told after them all.
        feed.end(None);
        for _ in 0..500 {
            if lock(&sink.0).len() == 5 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let seen = lock(&sink.0).clone();
        let ids: Vec<&str> = seen.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "3", "4", STDOUT_CLOSED]);
        assert_eq!(seen[0].1, here, "a short line is routed where it was read");
        assert_ne!(
            seen[1].1, here,
            "the huge one was parsed on the reading thread"
        );
    }

    /// The pipe's end, read while a runtime thread still works through a huge message, waits
    /// for it: the last answer of a server that answers and exits is not lost to its end.
    /// Nothing runs on the runtime until the end was fed, so the order cannot come by chance.
    #[test]
    fn an_end_read_while_a_huge_message_is_parsed_comes_after_it() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let (feed, mut events, _) = {
            let _context = runtime.enter();
            feed()
        };
        let huge = format!(
            "{{\"id\":1,\"result\":\"{}\"}}\n{{\"id\":2}}\n",
            "x".repeat(2 * 1024 * 1024)
        );
        for piece in huge.as_bytes().chunks(64 * 1024) {
            assert_eq!(feed.fed(piece), Fed::Go);
        }
        feed.end(None);
        assert!(
            lock(&feed.handed).end.is_some(),
            "the end was told before the chunks read ahead of it"
        );
        let mut seen = Vec::new();
        runtime.block_on(async {
            for _ in 0..500 {
                while let Ok(event) = events.try_recv() {
                    seen.push(match event {
                        Event::Message(m) => m["id"].to_string(),
                        Event::Closed(reason) => reason,
                        Event::Failed(id, _) => format!("failed {id}"),
                    });
                }
                if seen.len() == 3 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        assert_eq!(seen, ["1", "2", STDOUT_CLOSED]);
    }

    /// The end of the pipe ends the connection with the child's reason; an end reported twice
    /// (an error, then the close of the socket) is told once.
    #[tokio::test]
    async fn an_end_is_told_once() {
        let (feed, mut events, _) = feed();
        assert!(feed.chunk(b"{\"id\":1}\n{\"id\""));
        feed.end(None);
        feed.end(Some("EIO".into()));
        feed.ended.notified().await;
        // Time for the second end's task to run too.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            drained(&mut events),
            [
                r#"{"id":1}"#,
                "closed: mcp: the server process closed its stdout"
            ]
        );
        assert!(!feed.chunk(b"{\"id\":2}\n"));
    }

    /// A line is routed with the line buffer's lock let go: the JS thread, which looks at that
    /// buffer on every chunk it feeds, never waits on a runtime thread's parse of a huge line
    /// (it once sat in `fed` for seconds while 51 MiB lines were parsed). Fails when a line is
    /// routed under the lock.
    #[tokio::test]
    async fn no_line_is_routed_under_the_buffer_lock() {
        struct Looks(std::sync::OnceLock<std::sync::Weak<Feed>>, Mutex<Vec<bool>>);
        impl crate::transport::observe::Sink for Looks {
            fn event(&self, _: Event) {
                let free = match self.0.get().and_then(std::sync::Weak::upgrade) {
                    Some(feed) => feed.partial.try_lock().is_ok(),
                    None => false,
                };
                lock(&self.1).push(free);
            }
        }
        let looks = Arc::new(Looks(Default::default(), Mutex::new(Vec::new())));
        let inbound = Inbound::with_sink(Arc::new(Drift::new(false)), looks.clone());
        let end = End {
            reason: Box::new(|alive| Box::pin(async move { alive.to_owned() })),
            kill: Box::new(|| {}),
        };
        let feed = Feed::new(inbound, end);
        let _ = looks.0.set(Arc::downgrade(&feed));
        assert!(feed.chunk(b"{\"id\":1}\n{\"id\":"));
        assert!(feed.chunk(b"2}\n"));
        assert_eq!(*lock(&looks.1), [true, true]);
    }

    /// A server that writes faster than a runtime thread works through its huge lines makes
    /// the reader pause once `PAUSE_BYTES` wait, and read on once they are worked through:
    /// the hand-over queue is bounded.
    #[test]
    fn the_hand_over_queue_asks_the_reader_to_pause() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let (feed, _events, _) = {
            let _context = runtime.enter();
            feed()
        };
        let head = format!("{{\"id\":1,\"result\":\"{}", "x".repeat(HAND_OVER_BYTES));
        assert_eq!(feed.fed(head.as_bytes()), Fed::Go);
        let piece = vec![b'x'; 64 * 1024];
        let mut fed = 0;
        let paused = loop {
            match feed.fed(&piece) {
                Fed::Go => fed += piece.len(),
                other => break other,
            }
        };
        assert_eq!(paused, Fed::Pause);
        assert!(fed <= PAUSE_BYTES, "{fed}");
        assert!(feed.backlog().is_some_and(|b| b > PAUSE_BYTES));
        // Nothing ran on the runtime until now: its thread works the backlog off.
        runtime.block_on(async {
            for _ in 0..500 {
                if feed.backlog() == Some(0) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        assert_eq!(feed.backlog(), Some(0));
    }
}
