//! A stdio child's stderr. The child writes into a pipe of ours rather than straight into the
//! host's descriptor 2, for two reasons: Node marks its own stderr close-on-exec, so a child
//! given it as is would start with descriptor 2 closed (its logs lost, and the first file it
//! opens would become its stderr); and the last lines are kept, so an error about the process
//! ending or failing to start can say why it did. With `inherit` every byte is copied on to
//! the host's stderr as it arrives; with `pipe` it is only kept; `ignore` has no pipe at all.

use crate::core::secrets::Secrets;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// What is kept: the last 8 KiB, and of that the last 20 lines.
const TAIL_BYTES: usize = 8 * 1024;
const TAIL_LINES: usize = 20;

pub struct StderrTail {
    bytes: Mutex<VecDeque<u8>>,
    /// Turns true when the pipe reached its end (every writer closed it).
    ended: watch::Sender<bool>,
}

impl StderrTail {
    /// Reads `pipe` on a thread of its own until its end, copying to the host's stderr when
    /// `forward`. A plain thread: the copy may block on the host's stderr, which no runtime
    /// worker may do.
    pub fn capture(mut pipe: impl Read + Send + 'static, forward: bool) -> Arc<Self> {
        let tail = Arc::new(Self {
            bytes: Mutex::new(VecDeque::new()),
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
        let mut bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        bytes.extend(chunk.iter().rev().take(TAIL_BYTES).rev());
        let excess = bytes.len().saturating_sub(TAIL_BYTES);
        bytes.drain(..excess);
    }

    /// Waits (at most `within`) for what the child wrote before it ended to be read.
    pub async fn settled(&self, within: Duration) {
        let mut ended = self.ended.subscribe();
        let _ = tokio::time::timeout(within, ended.wait_for(|e| *e)).await;
    }

    /// The last lines, trimmed and redacted; empty when the child wrote nothing.
    pub fn text(&self, secrets: &Secrets) -> String {
        let bytes: Vec<u8> = {
            let kept = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
            kept.iter().copied().collect()
        };
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        let lines: Vec<&str> = text.lines().collect();
        secrets.redact(
            lines[lines.len().saturating_sub(TAIL_LINES)..]
                .join("\n")
                .trim(),
        )
    }
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
}
