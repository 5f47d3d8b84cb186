//! A source's toolset lock: the check of every import against it (and for poisoning signs),
//! the report the host reads, and the lock text of an import. A child of `source` for the
//! source's private state; the decisions are `core::lock`'s.

use super::{Connector, Error, Snapshot, Source, SourceError};
use crate::core::admit::ToolSpec;
use crate::core::error::ConfigError;
use crate::core::lock::{check_import, verdict as lock_verdict};
use crate::core::signs::{across, Neighbour};
use crate::sync::lock;

/// What every live source of this process admitted last, for the signs across sources.
pub(super) mod neighbours {
    use super::Neighbour;
    use crate::core::admit::ToolSpec;
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};

    fn all() -> &'static Mutex<HashMap<usize, Neighbour>> {
        static ALL: OnceLock<Mutex<HashMap<usize, Neighbour>>> = OnceLock::new();
        ALL.get_or_init(Default::default)
    }

    /// Records what source `key` admitted.
    pub fn admitted(key: usize, id: &str, tools: &[ToolSpec]) {
        let names = tools.iter().map(|t| t.name.clone()).collect();
        let neighbour = Neighbour {
            source: id.to_owned(),
            names,
        };
        crate::sync::lock(all()).insert(key, neighbour);
    }

    /// What the live sources other than `key` admitted last.
    pub fn others(key: usize) -> Vec<Neighbour> {
        let all = crate::sync::lock(all());
        all.iter()
            .filter(|(k, _)| **k != key)
            .map(|(_, n)| Neighbour {
                source: n.source.clone(),
                names: n.names.clone(),
            })
            .collect()
    }

    /// Source `key` was closed or dropped: nothing of it is admitted any more.
    pub fn forget(key: usize) {
        crate::sync::lock(all()).remove(&key);
    }
}

impl<C: Connector> Source<C> {
    /// Checks an import against the lock (and for poisoning signs), keeps the report, and
    /// hands the tools back unless the policy (or `strict`) refuses them.
    /// `era`: the protocol revision the tools were listed in.
    pub(super) async fn check_lock(
        &self,
        tools: Vec<ToolSpec>,
        era: Option<String>,
    ) -> Result<Vec<ToolSpec>, Error<C>> {
        // Every import is made known to the others once admitted (whether or not it is
        // checked itself), so theirs can be checked against it.
        if self.lock.is_none() && !self.config.strict {
            neighbours::admitted(self.key(), self.id(), &tools);
            return Ok(tools);
        }
        let others = neighbours::others(self.key());
        if let Some(lock) = &self.lock {
            lock.check_issuer(&self.config, self.connector.issuer().as_deref())
                .map_err(SourceError::Refused)?;
        }
        let lock = self.lock.clone();
        let config = self.config.clone();
        let secrets = self.secrets.clone();
        let checked = tokio::task::spawn_blocking(move || {
            let redact = |text: &str| secrets.redact(text);
            let checked = check_import(lock.as_deref(), &config, &tools, &redact, era.as_deref())
                .map(|(mut report, verdict)| {
                    let mut across = across(&tools, &others);
                    if across.is_empty() {
                        return (report, verdict);
                    }
                    for sign in &mut across {
                        sign.text = redact(&sign.text);
                    }
                    report.add_signs(across);
                    let verdict = verdict.and_then(|()| lock_verdict(&config, &report));
                    (report, verdict)
                });
            (tools, checked)
        })
        .await
        .map_err(|_| SourceError::Failed("mcp: the lock check panicked".into()))?;
        let (tools, checked) = checked;
        // The lines quote what the server sent, which can echo a header or env value: the check
        // redacted it (before clipping).
        let Some((report, verdict)) = checked else {
            neighbours::admitted(self.key(), self.id(), &tools);
            return Ok(tools);
        };
        *crate::sync::lock(&self.report) = Some(report);
        verdict.map_err(SourceError::Refused)?;
        neighbours::admitted(self.key(), self.id(), &tools);
        Ok(tools)
    }

    /// This source among the live ones (its address, stable while it lives).
    pub(super) fn key(&self) -> usize {
        self as *const Self as usize
    }

    /// What the latest import's lock check found, as JSON text (`lockReport()`); `None`
    /// before any import, or when no lock and no `strict` is in use.
    pub fn lock_report(&self) -> Option<String> {
        let report = lock(&self.report);
        let policy = self.lock.as_ref().map(|_| self.config.lock_policy);
        report.as_ref().map(|r| r.to_json(policy))
    }

    /// The lock file's text for `snapshot`'s import (`rulvar-mcp lock`).
    pub fn lock_text(&self, snapshot: &Snapshot) -> Result<String, ConfigError> {
        let era = snapshot.conn.rpc.era().map_or(
            crate::core::revisions::PROTOCOL_VERSION,
            crate::client::era::Era::version,
        );
        let issuer = self.connector.issuer();
        crate::core::lock::write(&self.config, &snapshot.tools, era, issuer.as_deref())
    }
}
