//! Incremental `text/event-stream` parsing for the streamable-HTTP transport: events cut at
//! blank lines, `data:` lines joined, `id:` and `retry:` kept for resuming a stream; each event
//! bounded by the frame limit.

use super::MAX_FRAME_BYTES;
use std::time::Duration;

/// Incremental `text/event-stream` parsing: `data:` lines joined per event, `id:`, `retry:`.
#[derive(Default)]
pub struct SseParser {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    pub last_id: Option<String>,
    pub retry: Option<Duration>,
}

impl SseParser {
    /// Frees the buffers of a stream that ended (a huge unfinished event among them).
    pub fn release(self) {
        super::release_buffer(self.line);
        super::release_buffer(self.data.into_bytes());
    }

    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<String>, String> {
        let mut events = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                let line = std::mem::take(&mut self.line);
                let line = line.strip_suffix(b"\r").unwrap_or(&line);
                self.field(line, &mut events);
            } else {
                self.line.push(b);
                if self.line.len() + self.data.len() > MAX_FRAME_BYTES {
                    return Err(super::frame_limit_refusal());
                }
            }
        }
        Ok(events)
    }

    fn field(&mut self, line: &[u8], events: &mut Vec<String>) {
        if line.is_empty() {
            if self.has_data {
                events.push(std::mem::take(&mut self.data));
                self.has_data = false;
            }
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (name, value) = match text.find(':') {
            Some(0) => return, // a comment
            Some(i) => (
                &text[..i],
                text[i + 1..].strip_prefix(' ').unwrap_or(&text[i + 1..]),
            ),
            None => (&text[..], ""),
        };
        match name {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_join_data_lines_and_track_ids() {
        let mut p = SseParser::default();
        let events = p
            .feed(b": comment\nid: 7\nretry: 250\ndata: {\"a\":\ndata: 1}\n\ndata: x")
            .unwrap();
        assert_eq!(events, vec!["{\"a\":\n1}".to_owned()]);
        assert_eq!(p.last_id.as_deref(), Some("7"));
        assert_eq!(p.retry, Some(Duration::from_millis(250)));
        assert_eq!(p.feed(b"\r\n\r\n").unwrap(), vec!["x".to_owned()]);
    }
}
