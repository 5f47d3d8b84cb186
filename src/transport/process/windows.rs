//! Starting and ending stdio servers on Windows. Each child runs in a Job Object of its own,
//! created with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`; whatever the child starts joins the job
//! (jobs nest on Windows 8 and later), so:
//! - `close()`'s escalation ends the whole tree at once (`TerminateJobObject`): Windows has no
//!   SIGTERM for a console program without a console of its own, so `terminate` and `kill`
//!   both end the job, as Node's `subprocess.kill()` ends the process;
//! - the environment's teardown ends its own children's jobs (`Children::kill_all`);
//! - the host exiting in any way (`process.exit()`, a crash, being killed) closes its handles,
//!   the job's last handle among them, and the system ends the tree.
//!
//! The child is created suspended and resumed only once it is in the job, so nothing it starts
//! can escape. The job handle is not inheritable: no child can keep the job open.

use crate::sync::lock;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::process::{Child, Command};
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, CREATE_SUSPENDED, THREAD_SUSPEND_RESUME,
};

/// The exit code of processes ended through their job.
const KILLED: u32 = 1;

/// A Job Object handle, closed (and with kill-on-close, the tree ended) when dropped.
struct Job(HANDLE);

// SAFETY: a job handle may be used and closed from any thread (a kernel handle is not tied to
// the thread that opened it); the `Job` owns it, and closes it once, when dropped.
unsafe impl Send for Job {}
// SAFETY: through `&Job` the handle is only passed to calls the system makes safe to run at
// once from several threads (TerminateJobObject, AssignProcessToJobObject); nothing in `Job`
// is ever changed.
unsafe impl Sync for Job {}

impl Job {
    fn new() -> std::io::Result<Self> {
        // SAFETY: null attributes (the default security, a handle no child inherits) and a null
        // name (an unnamed job) are both allowed; the handle returned is checked just below.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        let job = Job(handle);
        // SAFETY: a C struct of integers and nested structs of them: all zeros is a value
        // (every limit off), as the documentation's own examples start it.
        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: `job.0` is the live job handle made above; the pointer and size given are
        // those of `info`, a local of the very type this information class takes.
        let set = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if set == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(job)
    }

    fn terminate(&self) {
        // SAFETY: `self.0` is the job handle this `Job` owns, open until it is dropped.
        unsafe { TerminateJobObject(self.0, KILLED) };
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle this `Job` owns, closed once, here; nothing uses it after.
        unsafe { CloseHandle(self.0) };
    }
}

/// The jobs one Node environment started and has not reaped yet, by child process id.
#[derive(Default)]
pub struct Children {
    jobs: Mutex<HashMap<u32, Arc<Job>>>,
}

impl Children {
    pub fn new() -> Arc<Self> {
        // No exit handler: the system closes the host's handles when it ends, and kill-on-close
        // ends every tree whose job was still open.
        Arc::default()
    }

    /// Ends every tree this environment started (its environment is going away).
    pub fn kill_all(&self) {
        for job in lock(&self.jobs).values() {
            job.terminate();
        }
    }
}

/// A started child's job, registered with its environment until `reaped`.
pub struct Group {
    pid: u32,
    job: Arc<Job>,
    children: Arc<Children>,
}

impl Group {
    /// Ends the whole tree: Windows has no polite request to send a console program.
    pub fn terminate(&self) {
        self.job.terminate();
    }

    /// Ends the whole tree now.
    pub fn kill(&self) {
        self.job.terminate();
    }

    /// The child was waited for; the job itself stays open (and kill-on-close armed) until the
    /// group is dropped.
    pub fn reaped(&self) {
        lock(&self.children.jobs).remove(&self.pid);
    }
}

/// Spawns `cmd` suspended, puts it in a new kill-on-close job, then lets it run.
/// `_confine`: nothing is enforced on Windows yet (`sandbox::other`): a policy reaches here
/// only with `onUnsupported: 'warn'`, and the host was told.
pub fn spawn(
    mut cmd: Command,
    children: &Arc<Children>,
    _confine: Option<super::sandbox::Confinement>,
) -> std::io::Result<(Child, Option<Group>)> {
    let job = Arc::new(Job::new()?);
    cmd.kill_on_drop(true).creation_flags(CREATE_SUSPENDED);
    let mut child = cmd.spawn()?;
    // Dropped here: our copies of the child's pipe ends close now.
    drop(cmd);
    let (Some(pid), Some(handle)) = (child.id(), child.raw_handle()) else {
        return Ok((child, None));
    };
    // SAFETY: `job.0` is the live job handle made above; `handle` is the child's process
    // handle, owned by `child`, which lives through this call.
    let started = if unsafe { AssignProcessToJobObject(job.0, handle as HANDLE) } == 0 {
        Err(std::io::Error::last_os_error())
    } else {
        resume(pid)
    };
    if let Err(e) = started {
        let _ = child.start_kill();
        return Err(e);
    }
    lock(&children.jobs).insert(pid, job.clone());
    Ok((
        child,
        Some(Group {
            pid,
            job,
            children: children.clone(),
        }),
    ))
}

/// Resumes the threads of the suspended process `pid` (its main thread, the only one).
fn resume(pid: u32) -> std::io::Result<()> {
    // SAFETY: a snapshot of every thread (the process id is ignored for TH32CS_SNAPTHREAD);
    // the handle returned is checked just below and closed at the end.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a C struct of integers: all zeros is a value (its size is set just below).
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: `snapshot` is the live snapshot handle; `entry` a local with `dwSize` set, as
    // the call requires.
    let mut more = unsafe { Thread32First(snapshot, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: integer arguments only (not inheritable); the handle is checked below.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: `thread` is the live handle just opened, with THREAD_SUSPEND_RESUME.
                if unsafe { ResumeThread(thread) } != u32::MAX {
                    resumed += 1;
                }
                // SAFETY: the thread handle opened above, closed once, not used after.
                unsafe { CloseHandle(thread) };
            }
        }
        // SAFETY: as for Thread32First: the live snapshot and a local entry with its size.
        more = unsafe { Thread32Next(snapshot, &mut entry) } != 0;
    }
    // SAFETY: the snapshot handle opened above, closed once, not used after.
    unsafe { CloseHandle(snapshot) };
    if resumed == 0 {
        return Err(std::io::Error::other(
            "the process could not be resumed after joining its job",
        ));
    }
    Ok(())
}

/// Resolves `command` as the MCP SDK's `cross-spawn` does on Windows (Node's own
/// `child_process.spawn` tries only `.com` and `.exe` and refuses to run `.cmd`/`.bat` without a
/// shell): a name with a directory part is taken relative to the child's `cwd`; a bare name is
/// looked up in the child's `cwd`, then each directory of the child's `PATH` (the host's unless
/// `env` sets one), trying it as given when it has an extension, then with each of `PATHEXT`'s
/// runnable extensions (`.COM;.EXE;.BAT;.CMD` when unset). So `npx` finds `npx.cmd`. A `.cmd`/`.bat` is
/// run by std through `cmd.exe` with arguments escaped for it; an argument that cannot be
/// escaped safely is refused. Nothing found: the name as given (the spawn then fails with the
/// system's "not found").
pub fn program(command: &str, env: &[(String, String)], cwd: Option<&str>) -> PathBuf {
    let lookup = |name: &str| -> Option<std::ffi::OsString> {
        env.iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.into())
            .or_else(|| std::env::var_os(name))
    };
    let base = match cwd {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir().unwrap_or_default(),
    };
    let given = Path::new(command);
    if command.contains(['/', '\\']) || given.is_absolute() {
        return base.join(given);
    }
    let exts: Vec<String> = lookup("PATHEXT")
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_else(|| ".COM;.EXE;.BAT;.CMD".to_owned())
        .split(';')
        // Only what CreateProcess (with std's cmd.exe route for batch files) can start.
        .filter(|e| [".COM", ".EXE", ".BAT", ".CMD"].contains(&e.to_ascii_uppercase().as_str()))
        .map(str::to_owned)
        .collect();
    let has_ext = given.extension().is_some();
    let mut dirs = vec![base];
    if let Some(path) = lookup("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    for dir in dirs {
        if has_ext {
            let candidate = dir.join(command);
            if candidate.is_file() {
                return candidate;
            }
        }
        for ext in &exts {
            let candidate = dir.join(format!("{command}{ext}"));
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    command.into()
}

/// Variables a Windows program needs to start at all (`SYSTEMROOT` for Winsock and crypto, the
/// profile folders), passed on beside the common allow-list: the MCP SDK's Windows default list.
pub const PLATFORM_ENV: [&str; 11] = [
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
];

/// Whether `child` has exited within `limit`. A Job Object names the tree by handle, not by a
/// reusable id, so waiting for (and reaping) the child here is safe.
pub async fn exited_within(child: &mut Child, limit: std::time::Duration) -> bool {
    tokio::time::timeout(limit, child.wait()).await.is_ok()
}

/// How the process ended, for error messages (Windows has exit codes only).
pub fn describe_exit(status: &std::process::ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => "exited".to_owned(),
    }
}
