//! Platforms where no confinement is enforced yet (macOS, Windows): a policy that asks for
//! anything is unsupported as a whole, and `onUnsupported` decides.

use super::{refusal, Prepared};
use crate::core::sandbox::{Net, OnUnsupported, Sandbox};

/// Only the resource limits to apply in the child (on a Unix).
pub struct Confinement(crate::core::sandbox::Limits);

impl Confinement {
    /// Between fork and exec: the resource limits, where the platform has them.
    pub fn apply(&mut self) -> std::io::Result<()> {
        #[cfg(unix)]
        super::set_limits(&self.0)?;
        Ok(())
    }
}

pub(super) fn build(policy: &Sandbox, _program: &std::path::Path) -> Result<Prepared, String> {
    let what = match policy.net {
        Net::Allow => "filesystem confinement",
        _ => "filesystem and network confinement",
    };
    match policy.on_unsupported {
        OnUnsupported::Refuse => Err(refusal(&format!(
            "{what} is not implemented on this platform"
        ))),
        OnUnsupported::Warn => Ok(Prepared {
            confinement: Confinement(policy.limits),
            unenforced: Some(format!(
                "the server runs unconfined: {what} is not implemented on {}",
                std::env::consts::OS
            )),
        }),
    }
}
