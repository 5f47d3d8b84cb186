//! stdio: a child process speaking newline-delimited JSON-RPC.
//!
//! No shell; the environment is an allow-list plus the config's `env`; the child leads its own
//! process group so close() can end grandchildren too; every line is bounded.

use super::observe::Inbound;
use super::pipe_writer::PipeWriter;
use super::{Wire, MAX_FRAME_BYTES};
use crate::core::config::{StderrMode, ENV_ALLOW_LIST};
use futures::future::BoxFuture;
use std::collections::HashSet;
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};
use tokio::sync::mpsc;

pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
    pub stderr: StderrMode,
}

/// Grace periods of the close sequence: stdin closed, then SIGTERM, then SIGKILL.
const GRACE: Duration = Duration::from_millis(500);
/// How much of a piped stderr is kept for error messages.
const STDERR_TAIL: usize = 4096;

/// Process groups of live children, killed when the host's environment is torn down.
fn live_groups() -> &'static Mutex<HashSet<i32>> {
    static GROUPS: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    GROUPS.get_or_init(Default::default)
}

/// Kills every child process group still alive (host exit without close()).
pub fn kill_all_children() {
    let groups: Vec<i32> = live_groups()
        .lock()
        .map(|g| g.iter().copied().collect())
        .unwrap_or_default();
    for pgid in groups {
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
    }
}

pub struct StdioWire {
    /// None when the child's stdin could not be piped.
    out: Option<Arc<PipeWriter>>,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    pgid: Option<i32>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    closing: mpsc::UnboundedSender<()>,
}

pub fn spawn(spec: &StdioSpec, inbound: Inbound) -> Result<Arc<StdioWire>, String> {
    let mut cmd = Command::new(&spec.command);
    cmd.args(&spec.args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(match spec.stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Ignore => Stdio::null(),
            StderrMode::Pipe => Stdio::piped(),
        })
        .process_group(0)
        .kill_on_drop(true);
    for key in ENV_ALLOW_LIST {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    for (key, value) in &spec.env {
        cmd.env(key, value);
    }
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("mcp: could not start '{}': {e}", spec.command))?;
    let pgid = child.id().map(|p| p as i32);
    if let Some(p) = pgid {
        if let Ok(mut g) = live_groups().lock() {
            g.insert(p);
        }
    }
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr_tail = Arc::new(Mutex::new(Vec::new()));
    if let Some(mut stderr) = child.stderr.take() {
        let tail = stderr_tail.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = tail.lock() {
                    t.extend_from_slice(&buf[..n]);
                    let excess = t.len().saturating_sub(STDERR_TAIL);
                    t.drain(..excess);
                }
            }
        });
    }

    let out = stdin.map(PipeWriter::start);

    let child = Arc::new(tokio::sync::Mutex::new(Some(child)));
    let (closing_tx, closing_rx) = mpsc::unbounded_channel::<()>();
    if let Some(stdout) = stdout {
        tokio::spawn(read_frames(
            stdout,
            inbound,
            child.clone(),
            stderr_tail.clone(),
            closing_rx,
        ));
    }
    Ok(Arc::new(StdioWire {
        out,
        child,
        pgid,
        stderr_tail,
        closing: closing_tx,
    }))
}

async fn read_frames(
    stdout: ChildStdout,
    inbound: Inbound,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
    mut closing: mpsc::UnboundedReceiver<()>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut frame: Vec<u8> = Vec::new();
    let reason = loop {
        let chunk = tokio::select! {
            chunk = reader.fill_buf() => chunk,
            _ = closing.recv() => break "mcp: the connection was closed".to_owned(),
        };
        let available = match chunk {
            Ok([]) => break exit_reason(&child, &stderr_tail).await,
            Ok(bytes) => bytes,
            Err(e) => break format!("mcp: reading the server's stdout failed: {e}"),
        };
        let (consumed, complete) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if frame.len() + consumed > MAX_FRAME_BYTES + 1 {
            reader.consume(consumed);
            // The stream can no longer be trusted to be in step: end the connection.
            kill_group(&child).await;
            break format!(
                "mcp: the server sent a message larger than the {} MiB frame limit",
                MAX_FRAME_BYTES / (1024 * 1024)
            );
        }
        if complete && frame.is_empty() {
            // The common case: the whole line is in the buffer, no copy.
            inbound.push_text(trim_line(&available[..consumed]));
        } else {
            frame.extend_from_slice(&available[..consumed]);
            if complete {
                inbound.push_text(trim_line(&frame));
                frame.clear();
                // A long-lived connection should not keep its largest message's buffer:
                // with many sources open that adds up.
                if frame.capacity() > 64 * 1024 {
                    frame = Vec::new();
                }
            }
        }
        reader.consume(consumed);
    };
    inbound.close(reason);
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

async fn exit_reason(
    child: &Arc<tokio::sync::Mutex<Option<Child>>>,
    stderr_tail: &Mutex<Vec<u8>>,
) -> String {
    // Stdout closed: give the process a moment to report how it ended.
    let status = {
        let mut guard = child.lock().await;
        match guard.as_mut() {
            Some(c) => tokio::time::timeout(Duration::from_millis(100), c.wait())
                .await
                .ok()
                .and_then(|r| r.ok()),
            None => None,
        }
    };
    let how = match status {
        Some(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(sig)) => format!("was killed by signal {sig}"),
            _ => "exited".to_owned(),
        },
        None => "closed its stdout".to_owned(),
    };
    let tail = stderr_tail
        .lock()
        .map(|t| String::from_utf8_lossy(&t).trim().to_owned())
        .unwrap_or_default();
    if tail.is_empty() {
        format!("mcp: the server process {how}")
    } else {
        format!("mcp: the server process {how}; its stderr ended with: {tail}")
    }
}

async fn kill_group(child: &Arc<tokio::sync::Mutex<Option<Child>>>) {
    if let Some(c) = child.lock().await.as_mut() {
        if let Some(pid) = c.id() {
            unsafe { libc::killpg(pid as i32, libc::SIGKILL) };
        }
    }
}

impl StdioWire {
    pub fn stderr_tail(&self) -> String {
        self.stderr_tail
            .lock()
            .map(|t| String::from_utf8_lossy(&t).trim().to_owned())
            .unwrap_or_default()
    }

    /// The close sequence. The child stays locked throughout, so a second, concurrent stop
    /// returns only once the first has reaped the child.
    async fn stop(&self, graceful: bool) {
        let _ = self.closing.send(());
        let mut guard = self.child.lock().await;
        let Some(child) = guard.as_mut() else { return };
        let pgid = self.pgid;
        let signal_group = |sig| {
            if let Some(p) = pgid {
                unsafe { libc::killpg(p, sig) };
            }
        };
        if graceful {
            if let Some(out) = &self.out {
                out.end();
            }
            let exited = tokio::time::timeout(GRACE, child.wait()).await.is_ok();
            if !exited {
                signal_group(libc::SIGTERM);
                if tokio::time::timeout(GRACE, child.wait()).await.is_err() {
                    signal_group(libc::SIGKILL);
                }
            }
        }
        // Whatever is left of the group (grandchildren included) goes now.
        signal_group(libc::SIGKILL);
        let _ = child.kill().await;
        let _ = child.wait().await;
        *guard = None;
        if let Some(p) = pgid {
            if let Ok(mut g) = live_groups().lock() {
                g.remove(&p);
            }
        }
    }
}

impl Wire for StdioWire {
    fn send(&self, message: String, _request_id: Option<u64>) -> Result<(), String> {
        match &self.out {
            Some(out) => out.send(message),
            None => Err("mcp: the server's stdin is closed".to_owned()),
        }
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        let this = self.handle();
        Box::pin(async move { this.stop(true).await })
    }

    fn abort(&self) -> BoxFuture<'static, ()> {
        let this = self.handle();
        Box::pin(async move { this.stop(false).await })
    }
}

impl StdioWire {
    /// A second owner of the same child, for the close sequence to run detached from `self`.
    fn handle(&self) -> StdioWire {
        StdioWire {
            out: self.out.clone(),
            child: self.child.clone(),
            pgid: self.pgid,
            stderr_tail: self.stderr_tail.clone(),
            closing: self.closing.clone(),
        }
    }
}
