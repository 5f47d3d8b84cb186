//! Platforms where no confinement is enforced yet (macOS, Windows): a policy that asks for
//! anything is unsupported as a whole, and `onUnsupported` decides.

use super::{refusal, Prepared};
use crate::core::sandbox::{Net, OnUnsupported, Sandbox};

/// Nothing to apply in the child.
pub struct Confinement;

impl Confinement {
    /// Between fork and exec: nothing to do.
    pub fn apply(&mut self) -> std::io::Result<()> {
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
            confinement: Confinement,
            unenforced: Some(format!(
                "the server runs unconfined: {what} is not implemented on {}",
                std::env::consts::OS
            )),
        }),
    }
}
