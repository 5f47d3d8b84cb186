//! Starting and ending stdio servers on Unix (Linux, macOS): each child leads its own process
//! group (servers started through `npx` or `uvx` start grandchildren, and close() must end those
//! too), is owned by the Node environment that started it, and dies with the host.
//!
//! How children die with the host, when `close()` was never called:
//! - the environment is torn down (end of the event loop, a worker thread that exits): its
//!   cleanup hook calls `Children::kill_all` for that environment's children only;
//! - `process.exit()`: Node calls `exit()` without tearing environments down, so an `atexit`
//!   handler kills every group still alive in the process;
//! - the host is killed (SIGKILL) on Linux: the kernel sends the child SIGKILL when its parent
//!   dies (`PR_SET_PDEATHSIG`). The kernel ties that to the thread that forked, not the
//!   process, so children are forked by one thread that lives as long as the process: a
//!   runtime thread that exits must not take children with it. Grandchildren are not reached
//!   this way (nothing is left to signal their group).
//! - the host is killed on other Unixes (macOS): there is no parent-death signal, so the
//!   child forks a watcher before it execs (`watcher`): it holds the read end of a pipe whose
//!   only write end is the host's, and kills the whole group, grandchildren included, when that
//!   end closes, which the system does when the host dies in any way. The watcher is in the
//!   group, so the group's ends take it too.

use crate::sync::lock;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, Once, OnceLock};
use tokio::process::{Child, Command};

/// The process groups one Node environment started and has not reaped yet.
#[derive(Default)]
pub struct Children {
    groups: Mutex<HashSet<i32>>,
}

/// Every live group in the process, for the `atexit` handler.
fn all_groups() -> &'static Mutex<HashSet<i32>> {
    static ALL: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    ALL.get_or_init(Default::default)
}

impl Children {
    pub fn new() -> Arc<Self> {
        static AT_EXIT: Once = Once::new();
        AT_EXIT.call_once(|| {
            extern "C" fn kill_everything() {
                // Runs inside exit(): no lock may be waited on for long, and killpg is safe.
                if let Ok(groups) = all_groups().try_lock() {
                    for &pgid in groups.iter() {
                        // SAFETY: killpg touches no memory of ours; each id is a group still
                        // registered, so its leader is not reaped yet and the id is its own.
                        unsafe { libc::killpg(pgid, libc::SIGKILL) };
                    }
                }
            }
            // SAFETY: `kill_everything` is an `extern "C" fn()` that lives as long as the
            // process, registered once (`Once`); it takes no lock it would wait on.
            unsafe { libc::atexit(kill_everything) };
        });
        Arc::default()
    }

    /// Kills every group this environment started (its environment is going away).
    pub fn kill_all(&self) {
        for &pgid in lock(&self.groups).iter() {
            // SAFETY: killpg touches no memory of ours; a group is removed from the set before
            // its leader is reaped (`Group::reaped`), so each id still names its own group.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
        }
    }

    fn add(&self, pgid: i32) {
        lock(&self.groups).insert(pgid);
        lock(all_groups()).insert(pgid);
    }

    fn remove(&self, pgid: i32) {
        lock(&self.groups).remove(&pgid);
        lock(all_groups()).remove(&pgid);
    }

    /// How many groups a later `kill_all` would signal.
    #[cfg(test)]
    pub fn registered(&self) -> usize {
        lock(&self.groups).len()
    }
}

/// A started child's process group, registered with its environment until `reaped`.
pub struct Group {
    pgid: i32,
    /// Set once the leader is about to be reaped: from then on the id may name an unrelated
    /// group, and nothing signals it. Held while a signal is sent, so a reap cannot slip in
    /// between the look and the signal.
    gone: Mutex<bool>,
    children: Arc<Children>,
    /// The host's end of the watcher's pipe (see `watcher`), closed once the child is reaped
    /// (the watcher then ends what is left of the group, and itself).
    #[cfg(not(target_os = "linux"))]
    watch: Mutex<Option<std::os::fd::OwnedFd>>,
}

impl Group {
    /// Asks the whole group to end (SIGTERM).
    pub fn terminate(&self) {
        self.signal(libc::SIGTERM);
    }

    /// Ends the whole group now (SIGKILL).
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
    }

    fn signal(&self, signal: libc::c_int) {
        let gone = lock(&self.gone);
        if !*gone {
            // SAFETY: killpg touches no memory of ours; `gone` is false and held, so the
            // leader is not reaped yet and keeps the id its own until the lock is let go.
            unsafe { libc::killpg(self.pgid, signal) };
        }
    }

    /// The child is about to be reaped: nothing signals its group from now on, because once
    /// the leader is reaped its id may name an unrelated process group (a later `kill` or
    /// `terminate`, such as close() after a server exited by itself, does nothing). Called
    /// after the last wanted `kill` and before the wait that reaps.
    pub fn reaped(&self) {
        *lock(&self.gone) = true;
        self.children.remove(self.pgid);
        #[cfg(not(target_os = "linux"))]
        drop(lock(&self.watch).take());
    }
}

/// Whether `child` has exited within `limit`, learned without reaping it (`waitid` with
/// `WNOWAIT`): while the leader is a zombie its id still names its group, so the group
/// (grandchildren included) can be killed safely before the leader is reaped. A child that
/// was reaped already counts as exited.
pub async fn exited_within(child: &mut Child, limit: std::time::Duration) -> bool {
    let Some(pid) = child.id() else { return true };
    let deadline = tokio::time::Instant::now() + limit;
    // Most servers end within a few milliseconds of their stdin closing: look often at first.
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        if exited_now(pid) {
            return true;
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return false;
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(std::time::Duration::from_millis(25));
    }
}

/// One look at `pid` with `WNOWAIT` (see `exited_within`).
fn exited_now(pid: u32) -> bool {
    // SAFETY: siginfo_t is a C struct of integers (and unions of them): all zeros is a value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is ours and zeroed; WNOHANG never blocks; WNOWAIT leaves the child
    // waitable, so tokio's later wait still reaps it and learns its status.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
        )
    };
    // An error is ECHILD: not ours to wait for any more (reaped already). Otherwise a zero
    // `si_pid` means the child has not changed state yet.
    // SAFETY: waitid filled `info`, or left it zeroed.
    r != 0 || unsafe { info.si_pid() } != 0
}

/// Spawns `cmd` as the leader of a new process group, on the long-lived forking thread.
/// `confine`: a sandbox built before the fork, applied in the child before it execs.
pub fn spawn(
    mut cmd: Command,
    children: &Arc<Children>,
    mut confine: Option<super::sandbox::Confinement>,
) -> std::io::Result<(Child, Option<Group>)> {
    cmd.process_group(0).kill_on_drop(true);
    #[cfg(target_os = "linux")]
    let host = std::process::id();
    #[cfg(not(target_os = "linux"))]
    let (watch_read, watch_write) = watcher::pipe()?;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                // The host died between fork and prctl: nobody would send the signal now.
                if libc::getppid() as u32 != host {
                    libc::_exit(1);
                }
            }
            #[cfg(not(target_os = "linux"))]
            watcher::start(watch_read);
            inherit_nothing_else();
            // Last: the confinement covers the exec and everything after it.
            if let Some(confinement) = confine.as_mut() {
                confinement.apply()?;
            }
            Ok(())
        });
    }
    let child = on_forking_thread(cmd);
    // The host keeps only the write end; the read end lives on in the watcher alone.
    // SAFETY: `watch_read` is the read end `watcher::pipe` opened for this spawn, owned by
    // nothing else in the host, and closed once, here.
    #[cfg(not(target_os = "linux"))]
    unsafe {
        libc::close(watch_read)
    };
    let child = child?;
    let group = child.id().map(|pid| {
        let group = Group {
            pgid: pid as i32,
            gone: Mutex::new(false),
            children: children.clone(),
            #[cfg(not(target_os = "linux"))]
            watch: Mutex::new(Some(watch_write)),
        };
        children.add(group.pgid);
        group
    });
    Ok((child, group))
}

/// Marks every descriptor above stderr close-on-exec in the forked child, so the server starts
/// with 0, 1 and 2 only: a descriptor the host (or a library in it) left inheritable must not
/// reach a third-party server. Close-on-exec rather than closed, so std's own pipe that reports
/// a failed exec keeps working. Only async-signal-safe calls: this runs between fork and exec.
fn inherit_nothing_else() {
    #[cfg(target_os = "linux")]
    if close_range_cloexec() {
        return;
    }
    // Kernels before 5.11, and macOS: one descriptor at a time, up to the limit of open files.
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a local the call writes; getrlimit is async-signal-safe.
    let top = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur.min(MAX_FD_SCAN) as i32
    } else {
        MAX_FD_SCAN as i32
    };
    for fd in 3..top {
        // SAFETY: fcntl is async-signal-safe and touches no memory; on a number that is not
        // open it fails with EBADF, which is fine. This child is about to exec: nothing in it
        // uses these descriptors after.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// Linux 5.11 and later mark them all in one call.
#[cfg(target_os = "linux")]
fn close_range_cloexec() -> bool {
    // SAFETY: a raw syscall with integer arguments only, async-signal-safe; an older kernel
    // answers ENOSYS (the fallback then runs). It only marks descriptors close-on-exec.
    let marked = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    marked == 0
}

/// How far the fallback of `inherit_nothing_else` looks when the limit is unknown or huge.
const MAX_FD_SCAN: libc::rlim_t = 65536;

type SpawnRequest = (
    Command,
    tokio::runtime::Handle,
    std::sync::mpsc::Sender<std::io::Result<Child>>,
);

/// Runs the spawn on one thread that never exits (see the module's comment). The command is
/// dropped there too, which closes the parent's ends of the child's pipes.
fn on_forking_thread(cmd: Command) -> std::io::Result<Child> {
    static FORKER: OnceLock<Mutex<std::sync::mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    let forker = FORKER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<SpawnRequest>();
        // Should the thread fail to start, `rx` is gone with it and every spawn says so.
        let _ = std::thread::Builder::new()
            .name("rulvar-mcp-spawn".into())
            .spawn(move || {
                for (mut cmd, runtime, reply) in rx {
                    // tokio registers the child with this runtime's reaper.
                    let _entered = runtime.enter();
                    let _ = reply.send(cmd.spawn());
                }
            });
        Mutex::new(tx)
    });
    let runtime =
        tokio::runtime::Handle::try_current().map_err(|e| std::io::Error::other(e.to_string()))?;
    let (reply, answer) = std::sync::mpsc::channel();
    lock(forker)
        .send((cmd, runtime, reply))
        .map_err(|_| std::io::Error::other("the spawning thread is gone"))?;
    answer
        .recv()
        .map_err(|_| std::io::Error::other("the spawning thread is gone"))?
}

/// `command` as given: the system's `execvp` searches the child's `PATH` (as Node does).
pub fn program(command: &str, _env: &[(String, String)], _cwd: Option<&str>) -> std::path::PathBuf {
    command.into()
}

/// Variables passed on to the child beside the common allow-list: none on Unix.
pub const PLATFORM_ENV: [&str; 0] = [];

/// How the process ended, for error messages.
pub fn describe_exit(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => "exited".to_owned(),
    }
}

/// Children die with the host where the system has no parent-death signal (macOS). The child,
/// between fork and exec, forks a watcher that closes every descriptor but the read end of a
/// pipe, blocks reading it, and kills the group once it reads end of file: the host holds the
/// only write end, and the system closes it when the host ends, however it ends (or when the
/// group is dropped). Only async-signal-safe calls in the forked code.
#[cfg(not(target_os = "linux"))]
mod watcher {
    use std::os::fd::{FromRawFd, OwnedFd, RawFd};

    /// The pipe, both ends close-on-exec (no other child may inherit them).
    pub fn pipe() -> std::io::Result<(RawFd, OwnedFd)> {
        let mut fds = [0; 2];
        // SAFETY: `fds` is a local array of the two ints pipe() writes.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        for fd in fds {
            // SAFETY: both are descriptors pipe() just opened for us; this sets a flag only.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
        // SAFETY: `fds[1]` was just opened by pipe() and nothing else owns it: the OwnedFd is
        // its only owner (the read end stays a raw number, closed by `spawn`).
        Ok((fds[0], unsafe { OwnedFd::from_raw_fd(fds[1]) }))
    }

    /// Runs in the child between fork and exec.
    pub fn start(read: RawFd) {
        // The child leads its group (as `process_group(0)` asks; done here too so the watcher
        // joins that group whatever order std runs its steps in) and the group is named by
        // its id, never looked up later: the watcher may outlive the child.
        // SAFETY: setpgid and getpid are async-signal-safe, with integer arguments only.
        let group = unsafe {
            libc::setpgid(0, 0);
            libc::getpid()
        };
        // SAFETY: fork in a forked child before exec, with only async-signal-safe calls after
        // it on either side (the child returns to std's exec; the watcher runs the code below).
        if unsafe { libc::fork() } != 0 {
            // The child (or a failed fork: the child then runs unwatched).
            return;
        }
        // The watcher: nothing of the host's or the server's stays open in it (its copies of
        // the server's stdio would keep the host from seeing the server's end).
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `limit` is a local the call writes; getrlimit is async-signal-safe.
        let top = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            limit.rlim_cur.min(super::MAX_FD_SCAN) as i32
        } else {
            super::MAX_FD_SCAN as i32
        };
        for fd in 0..top {
            if fd != read {
                // SAFETY: the watcher is a process of its own that uses none of these
                // descriptors (nothing of Rust's owns them here: it only reads `read` and
                // exits); close is async-signal-safe, and EBADF on a closed number is fine.
                unsafe { libc::close(fd) };
            }
        }
        let mut byte = 0u8;
        loop {
            // SAFETY: reads at most 1 byte into `byte`, a local; read is async-signal-safe.
            let n = unsafe { libc::read(read, (&mut byte as *mut u8).cast(), 1) };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        // SAFETY: both are async-signal-safe; `group` is the child's own group, named by its
        // id taken before the fork (this watcher is in it, and ends with it or just after);
        // _exit runs no destructors or handlers of the forked copy of the host.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
            libc::_exit(0);
        }
    }
}
