//! Landlock (ABI 6 asked for: filesystem rights, TCP bind and connect by port, scoping of
//! abstract Unix sockets and signals to the server's own domain), with `no_new_privs`. The
//! ruleset is created and its rules added in the host; the child only restricts itself with it.
//! Landlock does not confine UDP or connecting to a Unix socket by path: `net: 'deny'` means no
//! TCP (docs/sandbox.md says what a confined server can still do).

use super::{install_tree, refusal, Prepared};
use crate::core::sandbox::{Limits, Net, OnUnsupported, Sandbox, DEFAULT_READ, DEFAULT_WRITE};
use landlock::BitFlags;
use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};
use std::path::Path;

/// The ABI whose rights a policy is built from: the newest this code knows the meaning of.
const ABI_ASKED: ABI = ABI::V6;

/// A ruleset ready to restrict the child with, and the resource limits to set.
pub struct Confinement(Option<RulesetCreated>, Limits);

impl Confinement {
    /// Between fork and exec, in the child: `prctl(PR_SET_NO_NEW_PRIVS)` and
    /// `landlock_restrict_self` on the ruleset built before the fork (no allocation on success,
    /// no lock). Once applied it cannot be lifted, by the server or anything it starts.
    pub fn apply(&mut self) -> std::io::Result<()> {
        super::set_limits(&self.1)?;
        let Some(ruleset) = self.0.take() else {
            return Ok(());
        };
        ruleset
            .restrict_self()
            .map(|_| ())
            .map_err(|_| std::io::Error::last_os_error())
    }
}

pub(super) fn build(policy: &Sandbox, program: &Path) -> Result<Prepared, String> {
    match ruleset(policy, program, CompatLevel::HardRequirement) {
        Ok(created) => Ok(Prepared {
            confinement: Confinement(Some(created), policy.limits),
            unenforced: None,
        }),
        Err(Failure::Path(why)) => Err(why),
        Err(Failure::Kernel(why)) if policy.on_unsupported == OnUnsupported::Refuse => {
            Err(refusal(&format!(
                "this kernel's Landlock lacks a right asked for: {why}"
            )))
        }
        Err(Failure::Kernel(why)) => {
            let created =
                ruleset(policy, program, CompatLevel::BestEffort).map_err(Failure::words)?;
            Ok(Prepared {
                confinement: Confinement(Some(created), policy.limits),
                unenforced: Some(format!(
                    "this kernel's Landlock lacks a right asked for, and the server runs with what it enforces: {why}"
                )),
            })
        }
    }
}

/// Why a ruleset could not be built: a granted path (the host's to fix), or the kernel.
enum Failure {
    Path(String),
    Kernel(String),
}

impl Failure {
    fn words(self) -> String {
        match self {
            Failure::Path(why) | Failure::Kernel(why) => why,
        }
    }
}

fn ruleset(
    policy: &Sandbox,
    program: &Path,
    level: CompatLevel,
) -> Result<RulesetCreated, Failure> {
    let kernel = |e: landlock::RulesetError| Failure::Kernel(e.to_string());
    let mut ruleset = Ruleset::default()
        .set_compatibility(level)
        .handle_access(AccessFs::from_all(ABI_ASKED))
        .map_err(kernel)?;
    if policy.net != Net::Allow {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI_ASKED))
            .map_err(kernel)?;
    }
    let mut created = ruleset
        .scope(Scope::from_all(ABI_ASKED))
        .map_err(kernel)?
        .create()
        .map_err(kernel)?;
    let read = AccessFs::from_read(ABI_ASKED);
    let all = AccessFs::from_all(ABI_ASKED);
    // The system's runtime and the command's install tree: granted where they exist.
    let defaults = DEFAULT_READ
        .iter()
        .map(|p| (Path::new(p).to_path_buf(), read));
    let defaults = defaults
        .chain(install_tree(program).into_iter().map(|p| (p, read)))
        .chain(
            DEFAULT_WRITE
                .iter()
                .map(|p| (Path::new(p).to_path_buf(), all)),
        );
    for (path, access) in defaults {
        if let Ok(fd) = PathFd::new(&path) {
            created = created
                .add_rule(PathBeneath::new(fd, fitted(&path, access)))
                .map_err(kernel)?;
        }
    }
    // The host's own grants: each must exist.
    let granted = policy.read.iter().map(|p| (p, read, "read"));
    for (path, access, key) in granted.chain(policy.write.iter().map(|p| (p, all, "write"))) {
        let fd = PathFd::new(path).map_err(|e| {
            Failure::Path(format!(
                "mcp: sandbox.fs.{key}: '{path}' cannot be granted: {}",
                e
            ))
        })?;
        created = created
            .add_rule(PathBeneath::new(fd, fitted(Path::new(path), access)))
            .map_err(kernel)?;
    }
    if let Net::Connect(to) = &policy.net {
        for endpoint in to {
            created = created
                .add_rule(NetPort::new(endpoint.port, AccessNet::ConnectTcp))
                .map_err(kernel)?;
        }
    }
    Ok(created)
}

/// `access` as a rule on `path` can carry it: a file (`/etc/hosts`, `/dev/null`) takes no
/// directory-only right (listing, creating, removing entries).
fn fitted(path: &Path, access: BitFlags<AccessFs>) -> BitFlags<AccessFs> {
    match std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        true => access,
        false => access & AccessFs::from_file(ABI_ASKED),
    }
}
