//! Incremental `text/event-stream` parsing for the streamable-HTTP transport: events cut at
//! blank lines, `data:` lines joined, `id:` and `retry:` kept for resuming a stream; each event
//! bounded by the frame limit.

use super::MAX_FRAME_BYTES;
use std::time::Duration;

/// The largest line buffer a stream keeps between lines.
const KEPT_LINE_BYTES: usize = 64 * 1024;

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

    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<Vec<String>, String> {
        let mut events = Vec::new();
        // Line by line, each end found with SIMD; a line that lies whole in `bytes` is read
        // where it lies, only one split across chunks is gathered in `line` (kept for reuse).
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            self.check(end)?;
            if self.line.is_empty() {
                self.ended(&bytes[..end], &mut events);
            } else {
                self.line.extend_from_slice(&bytes[..end]);
                let mut line = std::mem::take(&mut self.line);
                self.ended(&line, &mut events);
                // Kept for the next split line, unless it grew past what a stream that lives
                // for hours should hold on to (one huge event's buffer).
                if line.capacity() > KEPT_LINE_BYTES {
                    super::release_buffer(line);
                } else {
                    line.clear();
                    self.line = line;
                }
            }
            bytes = &bytes[end + 1..];
        }
        self.check(bytes.len())?;
        self.line.extend_from_slice(bytes);
        Ok(events)
    }

    /// Refuses an event that would grow past the frame limit with `more` bytes of its line.
    fn check(&self, more: usize) -> Result<(), String> {
        if self.line.len() + more + self.data.len() > MAX_FRAME_BYTES {
            return Err(super::frame_limit_refusal());
        }
        Ok(())
    }

    /// One whole line (without its `\n`; a `\r` before it is dropped too).
    fn ended(&mut self, line: &[u8], events: &mut Vec<String>) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        self.field(line, events);
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

    /// A stream cut into chunks anywhere gives the same events, ids and retry as in one piece.
    #[test]
    fn chunks_cut_anywhere_read_as_one() {
        let stream: &[u8] =
            b"id: 1\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: c\n\nretry: 9\ndata: \xc3\xa9t\xc3\xa9\n\ndata: x\nid: 2\n\n";
        let whole = {
            let mut p = SseParser::default();
            (p.feed(stream).unwrap(), p.last_id, p.retry)
        };
        assert_eq!(whole.0, vec!["{\"a\":\n1}", "été", "x"]);
        for a in 0..=stream.len() {
            for b in a..=stream.len() {
                let mut p = SseParser::default();
                let mut events = p.feed(&stream[..a]).unwrap();
                events.extend(p.feed(&stream[a..b]).unwrap());
                events.extend(p.feed(&stream[b..]).unwrap());
                assert_eq!((events, p.last_id, p.retry), whole, "cut at {a} and {b}");
            }
        }
    }

    /// An event that grows past the frame limit is refused, whether its bytes come in one
    /// chunk or in many, with or without line ends.
    #[test]
    fn an_event_past_the_frame_limit_is_refused() {
        let line = vec![b'x'; MAX_FRAME_BYTES / 4];
        let mut p = SseParser::default();
        let mut refused = false;
        for _ in 0..5 {
            let mut chunk = b"data: ".to_vec();
            chunk.extend_from_slice(&line);
            chunk.push(b'\n');
            if p.feed(&chunk).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused, "joined data lines past the limit");
        let mut p = SseParser::default();
        let mut refused = false;
        for _ in 0..5 {
            if p.feed(&line).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused, "one line past the limit");
    }

    /// A stream keeps no huge buffer after a huge line split across chunks, only a small one.
    #[test]
    fn a_split_line_leaves_no_huge_buffer() {
        let mut p = SseParser::default();
        let mut big = b"data: ".to_vec();
        big.extend(std::iter::repeat_n(b'x', 1 << 20));
        p.feed(&big).unwrap();
        assert_eq!(p.feed(b"\n\n").unwrap()[0].len(), 1 << 20);
        assert!(
            p.line.capacity() <= KEPT_LINE_BYTES,
            "kept {}",
            p.line.capacity()
        );
        p.feed(b"data: a").unwrap();
        assert_eq!(p.feed(b"b\n\n").unwrap(), vec!["ab".to_owned()]);
        assert!(
            p.line.capacity() > 0,
            "a small line's buffer is kept for reuse"
        );
    }
}
