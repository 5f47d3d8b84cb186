//! A stdio child's stderr. The child writes into a pipe of ours rather than straight into the
//! host's descriptor 2, for two reasons: Node marks its own stderr close-on-exec, so a child
//! given it as is would start with descriptor 2 closed (its logs lost, and the first file it
//! opens would become its stderr); and the last lines are kept, so an error about the process
//! ending or failing to start can say why it did. With `inherit` every byte is copied on to
//! the host's stderr as it arrives; with `pipe` it is only kept; `ignore` has no pipe at all.

use crate::core::secrets::{tail, Cut, Secrets};
use crate::sync::lock;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// What is shown: the last 8 KiB, and of that the last 20 lines.
const TAIL_BYTES: usize = 8 * 1024;
const TAIL_LINES: usize = 20;
/// Kept beyond what is shown, so a secret that crosses the shown tail's start is redacted
/// whole before the tail is cut (cut first, its end would be shown).
const KEPT_BYTES: usize = 2 * TAIL_BYTES;

pub struct StderrTail {
    bytes: Mutex<Kept>,
    /// Turns true when the pipe reached its end (every writer closed it).
    ended: watch::Sender<bool>,
}

impl StderrTail {
    /// Reads `pipe` on a thread of its own until its end, copying to the host's stderr when
    /// `forward`. A plain thread: the copy may block on the host's stderr, which no runtime
    /// worker may do.
    pub fn capture(mut pipe: impl Read + Send + 'static, forward: bool) -> Arc<Self> {
        let tail = Arc::new(Self {
            bytes: Mutex::new(Kept::default()),
            ended: watch::channel(false).0,
        });
        let keeper = tail.clone();
        let started = std::thread::Builder::new()
            .name("rulvar-mcp-stderr".into())
            .spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    let n = match pipe.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => break,
                    };
                    if forward {
                        copy_to_host(&buf[..n]);
                    }
                    keeper.keep(&buf[..n]);
                }
                keeper.ended.send_replace(true);
            });
        if started.is_err() {
            tail.ended.send_replace(true);
        }
        tail
    }

    fn keep(&self, chunk: &[u8]) {
        let mut kept = lock(&self.bytes);
        let Kept { bytes, dropped } = &mut *kept;
        *dropped |= chunk.len() > KEPT_BYTES;
        bytes.extend(chunk.iter().rev().take(KEPT_BYTES).rev());
        let excess = bytes.len().saturating_sub(KEPT_BYTES);
        *dropped |= excess > 0;
        bytes.drain(..excess);
    }

    /// Waits (at most `within`) for what the child wrote before it ended to be read.
    pub async fn settled(&self, within: Duration) {
        let mut ended = self.ended.subscribe();
        let _ = tokio::time::timeout(within, ended.wait_for(|e| *e)).await;
    }

    /// The last lines, redacted, then cut and trimmed; empty when the child wrote nothing.
    /// What was dropped before the kept bytes may have held a secret's start: its end, at
    /// the kept bytes' start, is redacted by itself (`Cut::Start`).
    pub fn text(&self, secrets: &Secrets) -> String {
        let (bytes, dropped): (Vec<u8>, bool) = {
            let kept = lock(&self.bytes);
            (kept.bytes.iter().copied().collect(), kept.dropped)
        };
        let cut = if dropped { Cut::Start } else { Cut::Neither };
        let text = secrets.redact_bytes(&bytes, cut);
        let text = tail(text.trim(), TAIL_BYTES);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(TAIL_LINES)..]
            .join("\n")
            .trim()
            .to_owned()
    }
}

/// The child's last bytes, and whether any before them were dropped.
#[derive(Default)]
struct Kept {
    bytes: VecDeque<u8>,
    dropped: bool,
}

/// Writes all of `bytes` to the host's stderr. Node may have made that descriptor
/// non-blocking, so a full pipe is waited out rather than dropped; a closed one is given up.
fn copy_to_host(mut bytes: &[u8]) {
    let mut stderr = std::io::stderr().lock();
    while !bytes.is_empty() {
        match stderr.write(bytes) {
            Ok(0) => return,
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_last_lines_and_bytes() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let tail = StderrTail::capture(std::io::Cursor::new(text.into_bytes()), false);
        tail.settled(Duration::from_secs(5)).await;
        let kept = tail.text(&Secrets::default());
        assert_eq!(kept.lines().count(), TAIL_LINES);
        assert!(kept.starts_with("line 80\n") && kept.ends_with("line 99"));

        let long = vec![b'x'; 3 * TAIL_BYTES];
        let tail = StderrTail::capture(std::io::Cursor::new(long), false);
        tail.settled(Duration::from_secs(5)).await;
        assert_eq!(tail.text(&Secrets::default()).len(), TAIL_BYTES);
    }

    #[tokio::test]
    async fn redacts_a_secret_across_either_cut() {
        let secret = "sk-live-0123456789abcdefghij";
        let secrets = Secrets::new([secret]);
        // Across the shown tail's start: its first 10 bytes fall before the last 8 KiB.
        let text = format!("{secret}{}", "y".repeat(TAIL_BYTES - (secret.len() - 10)));
        let tail = StderrTail::capture(std::io::Cursor::new(text.into_bytes()), false);
        tail.settled(Duration::from_secs(5)).await;
        let kept = tail.text(&secrets);
        assert!(kept.starts_with("[redacted]yyy"), "{}", &kept[..40]);
        // Across the kept bytes' start, only its end kept at all; shown, because redaction
        // shrank the rest to less than the tail's size.
        let long = format!("{secret} ").repeat(KEPT_BYTES / (secret.len() + 1) + 1);
        // One byte (the secret's first) more than is kept.
        assert_eq!(long.len(), KEPT_BYTES + 1);
        let tail = StderrTail::capture(std::io::Cursor::new(long.into_bytes()), false);
        tail.settled(Duration::from_secs(5)).await;
        let kept = tail.text(&secrets);
        assert!(kept.len() < TAIL_BYTES);
        assert_eq!(kept.replace("[redacted]", "").trim(), "");
    }
}
