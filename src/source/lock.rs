//! A source's toolset lock: the check of every import against it (and for poisoning signs),
//! the report the host reads, and the lock text of an import. A child of `source` for the
//! source's private state; the decisions are `core::lock`'s.

use super::{Connector, Error, Snapshot, Source, SourceError};
use crate::core::admit::ToolSpec;
use crate::core::error::ConfigError;
use crate::core::lock::check_import;

impl<C: Connector> Source<C> {
    /// Checks an import against the lock (and for poisoning signs), keeps the report, and
    /// hands the tools back unless the policy (or `strict`) refuses them.
    pub(super) async fn check_lock(&self, tools: Vec<ToolSpec>) -> Result<Vec<ToolSpec>, Error<C>> {
        if self.lock.is_none() && !self.config.strict {
            return Ok(tools);
        }
        let lock = self.lock.clone();
        let config = self.config.clone();
        let secrets = self.secrets.clone();
        let checked = tokio::task::spawn_blocking(move || {
            let redact = |text: &str| secrets.redact(text);
            let checked = check_import(lock.as_deref(), &config, &tools, &redact);
            (tools, checked)
        })
        .await
        .map_err(|_| SourceError::Failed("mcp: the lock check panicked".into()))?;
        let (tools, checked) = checked;
        // The lines quote what the server sent, which can echo a header or env value: the check
        // redacted it (before clipping).
        let Some((report, verdict)) = checked else {
            return Ok(tools);
        };
        *self.report.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
        verdict.map_err(SourceError::Refused)?;
        Ok(tools)
    }

    /// What the latest import's lock check found, as JSON text (`lockReport()`); `None`
    /// before any import, or when no lock and no `strict` is in use.
    pub fn lock_report(&self) -> Option<String> {
        let report = self.report.lock().unwrap_or_else(|e| e.into_inner());
        let policy = self.lock.as_ref().map(|_| self.config.lock_policy);
        report.as_ref().map(|r| r.to_json(policy))
    }

    /// The lock file's text for `snapshot`'s import (`rulvar-mcp lock`).
    pub fn lock_text(&self, snapshot: &Snapshot) -> Result<String, ConfigError> {
        let era = snapshot.conn.era.get().map_or(
            crate::client::handshake::PROTOCOL_VERSION,
            crate::client::era::Era::version,
        );
        crate::core::lock::write(&self.config, &snapshot.tools, era)
    }
}
