//! Cassettes on the wire (`core::cassette`). A recording connection is the real one, with
//! what each side sends shown to the source's `Recorder`; a replayed one is a wire of its own
//! that answers from the cassette, with no process and no socket. The source above (its
//! opening, sweeps, calls, drift, lock and bounds) cannot tell either from a server.

use super::observe::Inbound;
use super::Wire;
use crate::core::cassette::{
    Cassette, Recording, Replay, Settings, MAX_CASSETTE_BYTES, MODE_VARIABLE,
};
use crate::core::config::Protocol;
use crate::core::error::Failure;
use crate::core::secrets::Secrets;
use crate::sync::lock;
use futures::future::BoxFuture;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A source's cassette: whether it records or replays is decided at its first connect (the
/// file there or not, `RULVAR_CASSETTE_MODE`) and holds for the source's life.
pub(crate) struct Tape {
    settings: Settings,
    protocol: Protocol,
    secrets: Arc<Secrets>,
    decided: Mutex<Option<Decided>>,
}

#[derive(Clone)]
pub(crate) enum Decided {
    Record(Arc<Recorder>),
    Replay(Arc<Player>),
}

impl Tape {
    pub(crate) fn new(settings: Settings, protocol: Protocol, secrets: Arc<Secrets>) -> Self {
        Self {
            settings,
            protocol,
            secrets,
            decided: Mutex::new(None),
        }
    }

    /// Records or replays; `Err` a refusal (no file to replay, a file that is not a
    /// cassette or of the other era).
    pub(crate) fn decide(&self) -> Result<Decided, String> {
        let mut decided = lock(&self.decided);
        if let Some(d) = decided.as_ref() {
            return Ok(d.clone());
        }
        let forced = std::env::var(MODE_VARIABLE).ok();
        let exists = Path::new(&self.settings.path).exists();
        let d = if self.settings.records(forced.as_deref(), exists)? {
            Decided::Record(Arc::new(Recorder::new(
                &self.settings.path,
                self.secrets.clone(),
            )))
        } else {
            Decided::Replay(Arc::new(Player::load(
                &self.settings,
                self.protocol,
                self.secrets.clone(),
            )?))
        };
        *decided = Some(d.clone());
        Ok(d)
    }

    /// The recorder, once the source records.
    pub(crate) fn recorder(&self) -> Option<Arc<Recorder>> {
        match lock(&self.decided).as_ref() {
            Some(Decided::Record(r)) => Some(r.clone()),
            _ => None,
        }
    }
}

/// What a recording source has seen, written to its file after each import and when each
/// connection ends.
pub(crate) struct Recorder {
    path: PathBuf,
    recording: Mutex<Recording>,
    secrets: Arc<Secrets>,
    connections: AtomicU64,
    /// One write at a time (each writes a temporary file, then renames it).
    writing: Mutex<()>,
}

impl Recorder {
    fn new(path: &str, secrets: Arc<Secrets>) -> Self {
        Self {
            path: PathBuf::from(path),
            recording: Mutex::default(),
            secrets,
            connections: AtomicU64::new(0),
            writing: Mutex::new(()),
        }
    }

    /// A new connection: its inbound side, shown to the recorder, and its number.
    pub(crate) fn tap(self: &Arc<Self>, inbound: &Inbound) -> (Inbound, u64) {
        let conn = self.connections.fetch_add(1, Ordering::Relaxed);
        let recorder = self.clone();
        let tapped = inbound.tapped(Arc::new(move |m: &Value| recorder.note(conn, false, m)));
        (tapped, conn)
    }

    /// `wire`, with what the client sends on it shown to the recorder.
    pub(crate) fn wrap(self: &Arc<Self>, wire: Arc<dyn Wire>, conn: u64) -> Arc<dyn Wire> {
        Arc::new(RecordingWire {
            inner: wire,
            recorder: self.clone(),
            conn,
        })
    }

    /// Every value the source holds secret is redacted before it is kept (and again when
    /// written, for a token learned later).
    fn note(&self, conn: u64, from_client: bool, message: &Value) {
        let mut message = message.clone();
        self.secrets.redact_value(&mut message);
        let mut recording = lock(&self.recording);
        match from_client {
            true => recording.client(conn, &message),
            false => recording.server(conn, &message),
        }
    }

    fn note_text(&self, conn: u64, text: &str) {
        if let Ok(message) = serde_json::from_str::<Value>(text) {
            self.note(conn, true, &message);
        }
    }

    /// An import finished with `hash`: kept, and the file written.
    pub(crate) fn imported(&self, hash: String) -> Result<(), String> {
        lock(&self.recording).set_toolset_hash(hash);
        self.save()
    }

    /// Writes the cassette (nothing when nothing passed yet); `Err` why it could not.
    pub(crate) fn save(&self) -> Result<(), String> {
        let _one = lock(&self.writing);
        let mut cassette = {
            let recording = lock(&self.recording);
            if let Some(why) = recording.overflow() {
                return Err(format!(
                    "mcp: cassette '{}' was not written: {why}, more than a recording holds",
                    self.path.display()
                ));
            }
            if recording.is_empty() {
                return Ok(());
            }
            recording.cassette()
        };
        redact(&mut cassette, &self.secrets);
        write_atomically(&self.path, cassette.to_text().as_bytes()).map_err(|e| {
            format!(
                "mcp: cassette '{}' could not be written: {e}",
                self.path.display()
            )
        })
    }
}

fn redact(cassette: &mut Cassette, secrets: &Secrets) {
    let values = cassette
        .interactions
        .iter_mut()
        .flat_map(|i| std::iter::once(&mut i.params).chain(i.answer.iter_mut()))
        .chain(cassette.early.iter_mut())
        .chain(std::iter::once(&mut cassette.server));
    values.for_each(|v| secrets.redact_value(v));
}

/// A reader never sees half a file: the text goes to a temporary file beside it first.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

struct RecordingWire {
    inner: Arc<dyn Wire>,
    recorder: Arc<Recorder>,
    conn: u64,
}

impl Wire for RecordingWire {
    fn send(&self, message: String, request_id: Option<u64>) -> Result<(), String> {
        self.recorder.note_text(self.conn, &message);
        self.inner.send(message, request_id)
    }

    fn send_routed(
        &self,
        message: String,
        request_id: u64,
        route: super::Route<'_>,
    ) -> Result<(), String> {
        self.recorder.note_text(self.conn, &message);
        self.inner.send_routed(message, request_id, route)
    }

    fn initialized(
        &self,
        version: &str,
        notification: String,
    ) -> BoxFuture<'static, Result<(), String>> {
        self.inner.initialized(version, notification)
    }

    fn diagnostics(&self) -> Option<String> {
        self.inner.diagnostics()
    }

    fn session_id(&self) -> Option<String> {
        self.inner.session_id()
    }

    fn close_stream(&self, request_id: u64) -> bool {
        self.inner.close_stream(request_id)
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        self.saved_after(self.inner.shutdown())
    }

    fn abort(&self) -> BoxFuture<'static, ()> {
        self.saved_after(self.inner.abort())
    }
}

impl RecordingWire {
    /// `done`, then the file written with everything the connection carried. A failure to
    /// write has no caller here: the next import reports it, as the write after it fails too.
    fn saved_after(&self, done: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        let recorder = self.recorder.clone();
        Box::pin(async move {
            done.await;
            let _ = recorder.save();
        })
    }
}

/// The cassette at `path`, bounded and checked; `Err` the refusal.
pub(crate) fn read(path: &str) -> Result<Cassette, String> {
    let refused = |why: String| format!("mcp: cassette '{path}' {why}");
    let size = std::fs::metadata(path)
        .map_err(|e| refused(format!("could not be read: {e}")))?
        .len();
    if size > MAX_CASSETTE_BYTES {
        return Err(refused(format!(
            "is {size} bytes, over the {} MiB a cassette may be",
            MAX_CASSETTE_BYTES >> 20
        )));
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| refused(format!("could not be read: {e}")))?;
    Cassette::parse(&text).map_err(refused)
}

/// A replaying source's cassette, shared by its connections: each identical request is served
/// once, in the order recorded, across reconnects.
pub(crate) struct Player {
    replay: Mutex<Replay>,
    secrets: Arc<Secrets>,
    connections: AtomicU64,
}

impl Player {
    fn load(
        settings: &Settings,
        protocol: Protocol,
        secrets: Arc<Secrets>,
    ) -> Result<Self, String> {
        let path = &settings.path;
        let cassette = read(path)?;
        let refused = |why: String| format!("mcp: cassette '{path}' {why}");
        cassette.check_era(protocol).map_err(refused)?;
        Ok(Self {
            replay: Mutex::new(Replay::new(cassette, settings.ignore.clone(), path.clone())),
            secrets,
            connections: AtomicU64::new(0),
        })
    }

    /// A connection served from the cassette; what the server sent before any request comes
    /// on the first.
    pub(crate) fn connect(self: &Arc<Self>, inbound: Inbound) -> Arc<dyn Wire> {
        if self.connections.fetch_add(1, Ordering::Relaxed) == 0 {
            let early = lock(&self.replay).early();
            early.into_iter().for_each(|m| inbound.push(m));
        }
        Arc::new(ReplayWire {
            player: self.clone(),
            inbound,
        })
    }
}

struct ReplayWire {
    player: Arc<Player>,
    inbound: Inbound,
}

impl Wire for ReplayWire {
    /// Answers at once, on the sender's thread: the recorded messages are pushed as a server's
    /// would be, after the cassette's lock is let go (what they start may send again).
    fn send(&self, message: String, request_id: Option<u64>) -> Result<(), String> {
        let Ok(mut message) = serde_json::from_str::<Value>(&message) else {
            return Ok(());
        };
        // Matched as recorded: with the source's secrets redacted.
        self.player.secrets.redact_value(&mut message);
        let method = message.get("method").and_then(Value::as_str);
        let out = match (method, message.get("id"), request_id) {
            (Some(method), Some(_), Some(id)) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                let served = lock(&self.player.replay).request(method, &params, id);
                match served {
                    Ok(out) => out,
                    Err(miss) => {
                        self.inbound.fail_request(id, Failure::replay_miss(miss));
                        return Ok(());
                    }
                }
            }
            (None, Some(id), _) => lock(&self.player.replay).reply(id),
            _ => Vec::new(),
        };
        out.into_iter().for_each(|m| self.inbound.push(m));
        Ok(())
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        self.inbound
            .close("mcp: the replayed connection was closed".into());
        Box::pin(async {})
    }
}
