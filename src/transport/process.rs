//! Starting and ending stdio servers. Each child is started so that `close()` can end it and
//! everything it started (servers launched through `npx` or `uvx` start grandchildren), is owned
//! by the Node environment that started it, and dies with the host as far as the platform
//! allows. How is platform code, one module per family:
//! - `unix` (Linux, macOS): the child leads its own process group; SIGTERM then SIGKILL to the
//!   group; `PR_SET_PDEATHSIG` on Linux.
//! - `windows`: the child runs in a Job Object of its own with kill-on-close; ending the job
//!   ends the whole tree, and closing the last handle (the host exiting or being killed) too.
//!
//! Both offer the same surface: `Children` (per Node environment, `kill_all` at its teardown),
//! `Group` (`terminate`, `kill`, `reaped`), `spawn`, `program` (how `command` is resolved),
//! `describe_exit`, and `PLATFORM_ENV` (variables passed on beside the common allow-list).

pub mod sandbox;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
