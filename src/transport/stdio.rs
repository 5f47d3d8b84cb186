//! stdio: a child process speaking newline-delimited JSON-RPC.
//!
//! No shell; the environment is an allow-list plus the config's `env` (secrets in the host's
//! environment must not reach third-party servers); the child is started so that close() can
//! end grandchildren too (`process`: a process group on Unix, a job on Windows); its stderr is shown and its tail kept
//! (`stderr`); its stdout is read line by line, each bounded by the frame limit, by Node's loop
//! or a runtime task (`stdout`).

use super::observe::Inbound;
use super::pipe_writer::{PipeWriter, STDIN_CLOSED};
use super::process::{self, Children, Group};
use super::stderr::StderrTail;
use super::stdout::{self, End, Feed, ReadOn};
use super::Wire;
use crate::core::config::{StderrMode, ENV_ALLOW_LIST};
use crate::core::error::with_diagnostics;
use crate::core::secrets::Secrets;
use futures::future::BoxFuture;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
    pub stderr: StderrMode,
    /// The Node environment that owns the child.
    pub children: Arc<Children>,
    /// Redacts the stderr lines quoted in errors (a server may log its `env`).
    pub secrets: Arc<Secrets>,
    /// Who reads the child's stdout, if not a runtime task.
    pub read_on: Option<Arc<dyn ReadOn>>,
    /// The server's confinement, built before the spawn, and the policy in a line (said in
    /// every error about the server's end, so a denial can be told from a bug).
    pub sandbox: Option<(process::sandbox::Confinement, String)>,
}

/// Grace periods of the close sequence: stdin closed, then SIGTERM, then SIGKILL (on Windows,
/// stdin closed, then the job ended).
const GRACE: Duration = Duration::from_millis(500);
/// How long a child that ended is given to let its last stderr lines be read.
const STDERR_SETTLE: Duration = Duration::from_millis(200);

pub struct StdioWire {
    /// None when the child's stdin could not be piped.
    out: Option<Arc<PipeWriter>>,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    group: Option<Arc<Group>>,
    stderr: Option<Arc<StderrTail>>,
    secrets: Arc<Secrets>,
    closing: mpsc::UnboundedSender<()>,
    /// The sandbox policy in force, in a line, if any.
    policy: Option<Arc<str>>,
}

pub fn spawn(mut spec: StdioSpec, inbound: Inbound) -> Result<Arc<StdioWire>, String> {
    let (confinement, policy) = match spec.sandbox.take() {
        Some((confinement, policy)) => (Some(confinement), Some(Arc::<str>::from(policy))),
        None => (None, None),
    };
    let spec = &spec;
    let could_not_start =
        |e: std::io::Error| format!("mcp: could not start '{}': {e}", spec.command);
    let (cmd, stderr_pipe) = command(spec).map_err(could_not_start)?;
    // The command (and with it our copy of the stderr pipe's write end) is dropped by the
    // spawn, so the reader sees the end of the pipe once the child's side is closed.
    let (mut child, group) =
        process::spawn(cmd, &spec.children, confinement).map_err(could_not_start)?;
    let stderr =
        stderr_pipe.map(|pipe| StderrTail::capture(pipe, spec.stderr == StderrMode::Inherit));
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let out = stdin.map(|stdin| PipeWriter::start(stdin, inbound.clone()));
    let input_gone = out.as_ref().map(|out| out.reader_gone());

    let child = Arc::new(tokio::sync::Mutex::new(Some(child)));
    let (closing_tx, closing_rx) = mpsc::unbounded_channel::<()>();
    let group = group.map(Arc::new);
    if let Some(stdout) = stdout {
        let ended = Owned {
            child: child.clone(),
            group: group.clone(),
            stderr: stderr.clone(),
            secrets: spec.secrets.clone(),
            policy: policy.clone(),
        };
        let feed = Feed::new(inbound, ended.end());
        // Read elsewhere when someone can (Node's loop); by a runtime task otherwise.
        let stdout = match &spec.read_on {
            Some(read_on) => read_on.read(stdout, feed.clone()).err(),
            None => Some(stdout),
        };
        tokio::spawn(stdout::watch(stdout, feed, input_gone, closing_rx));
    }
    Ok(Arc::new(StdioWire {
        out,
        child,
        group,
        stderr,
        secrets: spec.secrets.clone(),
        closing: closing_tx,
        policy,
    }))
}

/// The child's command: its program, arguments and directory, an environment of the allowed
/// host variables and its own, stdin and stdout piped, and stderr piped back to us (its read
/// end returned) unless it is ignored.
fn command(spec: &StdioSpec) -> std::io::Result<(Command, Option<std::io::PipeReader>)> {
    let mut cmd = Command::new(process::program(
        &spec.command,
        &spec.env,
        spec.cwd.as_deref(),
    ));
    cmd.args(&spec.args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let stderr_pipe = match spec.stderr {
        StderrMode::Ignore => {
            cmd.stderr(Stdio::null());
            None
        }
        StderrMode::Inherit | StderrMode::Pipe => {
            let (reader, writer) = std::io::pipe()?;
            cmd.stderr(writer);
            Some(reader)
        }
    };
    for key in ENV_ALLOW_LIST.iter().chain(&process::PLATFORM_ENV) {
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
    Ok((cmd, stderr_pipe))
}

/// What the end of the child's stdout is told with: the child, its group, its stderr.
struct Owned {
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    group: Option<Arc<Group>>,
    stderr: Option<Arc<StderrTail>>,
    secrets: Arc<Secrets>,
    policy: Option<Arc<str>>,
}

impl Owned {
    /// Why the connection ended, and how to kill what is left of the child.
    fn end(self) -> End {
        let kill = {
            let group = self.group.clone();
            Box::new(move || {
                if let Some(group) = &group {
                    group.kill();
                }
            })
        };
        let owned = Arc::new(self);
        End {
            reason: Box::new(move |alive| {
                let owned = owned.clone();
                Box::pin(async move {
                    let ended = Ended {
                        group: owned.group.as_deref(),
                        stderr: owned.stderr.as_deref(),
                        secrets: &owned.secrets,
                        policy: owned.policy.as_deref(),
                    };
                    end_reason(&owned.child, ended, alive).await
                })
            }),
            kill,
        }
    }
}

/// Why the server's end of the connection went away (its stdout ended, or it stopped reading):
/// how the process ended, if it did, else `alive`; and the last lines it wrote to stderr.
/// What `end_reason` tells the end with besides the child.
struct Ended<'a> {
    group: Option<&'a Group>,
    stderr: Option<&'a StderrTail>,
    secrets: &'a Secrets,
    policy: Option<&'a str>,
}

async fn end_reason(
    child: &Arc<tokio::sync::Mutex<Option<Child>>>,
    ended: Ended<'_>,
    alive: &str,
) -> String {
    let Ended {
        group,
        stderr,
        secrets,
        policy,
    } = ended;
    // Stdout closed: give the process a moment to report how it ended. One that ended is
    // reaped here, as the close sequence would (its group first).
    let status = {
        let mut guard = child.lock().await;
        let status = match guard.as_mut() {
            Some(c) => match process::exited_within(c, Duration::from_millis(100)).await {
                true => reap(c, group).await,
                false => None,
            },
            None => None,
        };
        // A reaped child is gone from here: the close sequence finds nothing left to end.
        if status.is_some() {
            *guard = None;
        }
        status
    };
    let how = match status {
        Some(s) => format!("mcp: the server process {}", process::describe_exit(&s)),
        None => alive.to_owned(),
    };
    if let Some(stderr) = stderr {
        stderr.settled(STDERR_SETTLE).await;
    }
    let tail = stderr.map(|s| s.text(secrets)).filter(|t| !t.is_empty());
    with_diagnostics(how, noted(tail, policy))
}

/// The stderr tail with a line saying the server ran confined, and how: an `EACCES` in the
/// tail is then a denial, not a bug.
fn noted(tail: Option<String>, policy: Option<&str>) -> Option<String> {
    let Some(policy) = policy else {
        return tail;
    };
    let note = format!("(a sandbox was in force: the server {policy})");
    Some(match tail {
        Some(tail) => format!("{tail}\n{note}"),
        None => note,
    })
}

/// Ends what is left of the child's group (grandchildren included) while the child is not yet
/// reaped, so the group id cannot name anyone else; unregisters the group; then reaps.
async fn reap(child: &mut Child, group: Option<&Group>) -> Option<std::process::ExitStatus> {
    if let Some(group) = group {
        group.kill();
        group.reaped();
    }
    let _ = child.start_kill();
    child.wait().await.ok()
}

impl StdioWire {
    /// The close sequence. The child stays locked throughout, so a second, concurrent stop
    /// returns only once the first has reaped the child.
    async fn stop(&self, graceful: bool) {
        let _ = self.closing.send(());
        let mut guard = self.child.lock().await;
        let Some(child) = guard.as_mut() else { return };
        let group = self.group.as_deref();
        if graceful {
            if let Some(out) = &self.out {
                out.end();
            }
            if !process::exited_within(child, GRACE).await {
                if let Some(group) = group {
                    group.terminate();
                }
                process::exited_within(child, GRACE).await;
            }
        }
        reap(child, group).await;
        *guard = None;
    }
}

impl Wire for StdioWire {
    fn send(&self, message: String, request_id: Option<u64>) -> Result<(), String> {
        match &self.out {
            Some(out) => out.send(message, request_id),
            None => Err(STDIN_CLOSED.to_owned()),
        }
    }

    fn diagnostics(&self) -> Option<String> {
        let tail = self
            .stderr
            .as_ref()
            .map(|s| s.text(&self.secrets))
            .filter(|t| !t.is_empty());
        noted(tail, self.policy.as_deref())
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
            group: self.group.clone(),
            stderr: self.stderr.clone(),
            secrets: self.secrets.clone(),
            closing: self.closing.clone(),
            policy: self.policy.clone(),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::core::drift::Drift;
    use crate::transport::observe::Event;

    fn spec(script: &str, children: &Arc<Children>) -> StdioSpec {
        StdioSpec {
            command: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: Vec::new(),
            cwd: None,
            stderr: StderrMode::Ignore,
            children: children.clone(),
            secrets: Arc::new(Secrets::new(Vec::new())),
            read_on: None,
            sandbox: None,
        }
    }

    /// A server that exits by itself is reaped when its stdout ends, and its group is
    /// unregistered with it: a later close(), environment teardown or `atexit` must not
    /// signal an id the system may since have given to an unrelated process group.
    #[tokio::test]
    async fn a_server_that_exits_by_itself_is_unregistered_when_reaped() {
        let children = Children::new();
        let (inbound, mut events) = Inbound::new(Arc::new(Drift::new(false)));
        let wire = spawn(spec("exit 3", &children), inbound).expect("sh starts");
        assert_eq!(children.registered(), 1);
        let reason = loop {
            match events.recv().await {
                Some(Event::Closed(reason)) => break reason,
                Some(_) => continue,
                None => panic!("the inbound side ended without a reason"),
            }
        };
        assert!(reason.contains("exited with code 3"), "{reason}");
        assert_eq!(children.registered(), 0);
        wire.shutdown().await;
        assert_eq!(children.registered(), 0);
    }

    /// A server that exited by itself is never signalled again: close() after it must not
    /// kill a process group that took its id since. The id is handed on for real: the kernel
    /// is told to give the next process the reaped leader's id (`ns_last_pid`, root only), a
    /// victim leads a group of that id, and it must outlive the close.
    #[tokio::test]
    async fn close_after_a_server_exited_signals_no_group_that_took_its_id() {
        let children = Children::new();
        let (inbound, mut events) = Inbound::new(Arc::new(Drift::new(false)));
        let wire = spawn(spec("exit 0", &children), inbound).expect("sh starts");
        let pgid = wire
            .child
            .lock()
            .await
            .as_ref()
            .and_then(|c| c.id())
            .expect("a pid");
        while !matches!(events.recv().await, Some(Event::Closed(_)) | None) {}
        let mut victim = None;
        for _ in 0..50 {
            std::fs::write("/proc/sys/kernel/ns_last_pid", format!("{}", pgid - 1))
                .expect("this test needs to write /proc/sys/kernel/ns_last_pid (root)");
            let mut cmd = std::process::Command::new("sleep");
            std::os::unix::process::CommandExt::process_group(cmd.arg("30"), 0);
            let mut started = cmd.spawn().expect("sleep starts");
            if started.id() == pgid {
                victim = Some(started);
                break;
            }
            let _ = started.kill();
            let _ = started.wait();
        }
        let mut victim = victim.expect("the kernel handed the reaped leader's id on");
        wire.shutdown().await;
        std::thread::sleep(Duration::from_millis(100));
        let alive = victim.try_wait().expect("waitable").is_none();
        let _ = victim.kill();
        let _ = victim.wait();
        assert!(
            alive,
            "close() signalled the group that took the reaped server's id"
        );
    }

    /// The close sequence unregisters the group before it reaps the leader, whichever grace
    /// period ends it.
    #[tokio::test]
    async fn close_unregisters_the_group() {
        let children = Children::new();
        let (inbound, _events) = Inbound::new(Arc::new(Drift::new(false)));
        // Ignores the end of its input and SIGTERM: only the SIGKILL ends it.
        let wire = spawn(
            spec("trap '' TERM; while :; do sleep 1; done", &children),
            inbound,
        )
        .expect("sh starts");
        assert_eq!(children.registered(), 1);
        wire.shutdown().await;
        assert_eq!(children.registered(), 0);
    }
}
