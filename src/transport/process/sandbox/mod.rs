//! A stdio server confined by the host's `sandbox` policy (`core::sandbox`). The rules are built
//! here, in the host, before the fork (opening the granted paths, creating the ruleset); the
//! forked child only applies them between fork and exec (`Confinement::apply`: system calls,
//! no allocation, no lock), so the server, any wrapper it is started through and every
//! grandchild inherit them. Linux enforces it with Landlock (`linux`); elsewhere nothing is
//! enforced yet (`other`), and `onUnsupported` decides whether the server starts at all.

use crate::core::sandbox::{OnUnsupported, Sandbox};

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux::build;
#[cfg(target_os = "linux")]
pub use linux::Confinement;

#[cfg(not(target_os = "linux"))]
mod other;
#[cfg(not(target_os = "linux"))]
use other::build;
#[cfg(not(target_os = "linux"))]
pub use other::Confinement;

/// A confinement ready to apply, and what the system could not enforce of the policy (with
/// `onUnsupported: 'warn'`, to tell the host once).
pub struct Prepared {
    pub confinement: Confinement,
    pub unenforced: Option<String>,
}

/// Builds `policy`'s confinement for `program` (its install tree is readable) in the host.
/// `Err`: the refusal, in words that name what cannot be enforced, or a path that cannot be
/// granted.
pub fn prepare(policy: &Sandbox, program: &std::path::Path) -> Result<Prepared, String> {
    let beyond = policy.beyond_any_platform();
    if !beyond.is_empty() && policy.on_unsupported == OnUnsupported::Refuse {
        return Err(refusal(&beyond.join("; ")));
    }
    let mut prepared = build(policy, program)?;
    if !beyond.is_empty() {
        let told = prepared.unenforced.take().into_iter().chain(beyond);
        prepared.unenforced = Some(told.collect::<Vec<_>>().join("; "));
    }
    Ok(prepared)
}

/// The refusal of a policy the system cannot enforce as declared.
fn refusal(what: &str) -> String {
    format!(
        "mcp: the sandbox cannot be enforced as declared on {} ({what}); loosen it, or set sandbox.onUnsupported: 'warn' to start the server with what can be enforced",
        std::env::consts::OS
    )
}

/// The directory the command was found in (read and run: the runtime it is, its libraries
/// beside it), and its parent when that directory is a `bin` (an install prefix's `lib/`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn install_tree(program: &std::path::Path) -> Vec<std::path::PathBuf> {
    let found = match program.components().count() > 1 {
        true => Some(program.to_path_buf()),
        false => std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
        }),
    };
    let Some(real) = found.and_then(|p| std::fs::canonicalize(p).ok()) else {
        return Vec::new();
    };
    let Some(dir) = real.parent() else {
        return Vec::new();
    };
    let mut tree = vec![dir.to_path_buf()];
    if dir.file_name().is_some_and(|n| n == "bin") {
        if let Some(prefix) = dir.parent().filter(|p| p.parent().is_some()) {
            tree.push(prefix.to_path_buf());
        }
    }
    tree
}

/// `setrlimit` for each declared limit, between fork and exec (async-signal-safe: one system
/// call each, no allocation).
#[cfg(unix)]
fn set_limits(limits: &crate::core::sandbox::Limits) -> std::io::Result<()> {
    let set = |resource, value: u64| {
        let limit = libc::rlimit {
            rlim_cur: value as libc::rlim_t,
            rlim_max: value as libc::rlim_t,
        };
        // SAFETY: `limit` is a plain struct on this stack; setrlimit reads it and touches
        // nothing else of ours.
        match unsafe { libc::setrlimit(resource, &limit) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    };
    if let Some(n) = limits.open_files {
        set(libc::RLIMIT_NOFILE, n)?;
    }
    if let Some(mb) = limits.address_space_mb {
        set(libc::RLIMIT_AS, mb.saturating_mul(1024 * 1024))?;
    }
    Ok(())
}
