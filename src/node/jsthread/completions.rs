//! Finished calls on their way to the JS thread, batched.
//!
//! A reply is read on a runtime thread; settling its Promise must happen on the JS thread.
//! Crossing once per call (a thread-safe function per Promise) costs more than the call
//! itself, so finished calls accumulate here as one JSON text, `[[id, kind, value], ...]` (kind 0 progress,
//! 1 result, 2 failure: its message, `{message, kind, error}` for an OAuth one, or
//! `{message, code, data}` for a server's error answer, which a
//! kind 3 entry may precede with its `error.type`), and
//! the JS thread is woken only when the batch goes from empty to non-empty. Under load one
//! wake-up and one `JSON.parse` settle many calls.
//!
//! A reply routed on the JS thread itself (an in-process server's deliverer, a stdio pipe's
//! feeder) wakes no one: the entry that routed it returns the batch to JS
//! (`Completions::replying`).

use super::turn;
use crate::core::error::Failure;
use crate::core::jcs::write_string;
use std::collections::VecDeque;
use std::fmt::Write;
use std::sync::Mutex;

/// The kinds of entry, as the JS side reads them.
pub(crate) const PROGRESS: char = '0';
pub(crate) const RESULT: char = '1';
pub(crate) const FAILURE: char = '2';
/// The `error.type` of a failure that follows for the same call (for tracing); the value is
/// its word or JSON-RPC code, as a string.
pub(crate) const ERROR_TYPE: char = '3';

/// A buffer grown past this by a burst of large results is let go rather than kept.
const MAX_KEPT_CAPACITY: usize = 4 * 1024 * 1024;
/// A segment is closed once it passes this size, so the JS strings stay below V8's
/// large-object threshold (about 128 KiB), which costs fresh pages per string.
const SEGMENT_BYTES: usize = 48 * 1024;

#[derive(Default)]
struct Batch {
    /// Closed segments (each a complete JSON array), oldest first.
    full: VecDeque<String>,
    /// The segment being appended to; without its closing `]`.
    text: String,
    /// The previous batch's buffer, emptied: reused so a busy source does not allocate (and,
    /// past the mmap threshold, fault in fresh pages) for every batch.
    spare: String,
    /// A wake-up is on its way to the JS thread; later pushes ride on it.
    scheduled: bool,
}

pub(crate) struct Completions {
    batch: Mutex<Batch>,
    wake: Box<dyn Fn() + Send + Sync>,
}

impl Completions {
    pub(crate) fn new(wake: impl Fn() + Send + Sync + 'static) -> Self {
        Self {
            batch: Mutex::default(),
            wake: Box::new(wake),
        }
    }

    /// A call finished: `Ok` holds the JSON text of its value, `Err` its failure.
    pub(crate) fn push(&self, id: u64, outcome: Result<String, Failure>) {
        match outcome {
            Ok(json) => self.append(id, RESULT, |text| text.push_str(&json)),
            Err(Failure {
                replay: Some(miss), ..
            }) => self.append(id, FAILURE, |text| {
                text.push_str("{\"cassette\":true,\"message\":");
                write_string(text, &miss.message);
                for (key, value) in [("tool", &miss.tool), ("pointer", &miss.pointer)] {
                    if let Some(value) = value {
                        let _ = write!(text, ",\"{key}\":");
                        write_string(text, value);
                    }
                }
                text.push('}');
            }),
            Err(Failure {
                message,
                oauth: None,
                server: None,
                ..
            }) => self.append(id, FAILURE, |text| write_string(text, &message)),
            Err(Failure {
                message,
                oauth: None,
                server: Some(server),
                ..
            }) => self.append(id, FAILURE, |text| {
                text.push_str("{\"message\":");
                write_string(text, &message);
                let _ = write!(text, ",\"code\":{}", server.code);
                // JSON text already (serde_json's, of a parsed value).
                if let Some(data) = &server.data {
                    text.push_str(",\"data\":");
                    text.push_str(data);
                }
                text.push('}');
            }),
            Err(Failure {
                message,
                oauth: Some(oauth),
                ..
            }) => self.append(id, FAILURE, |text| {
                text.push_str("{\"message\":");
                write_string(text, &message);
                text.push_str(",\"kind\":");
                write_string(text, oauth.kind());
                if let Some(error) = oauth.error() {
                    text.push_str(",\"error\":");
                    write_string(text, error);
                }
                text.push('}');
            }),
        }
    }

    /// A failed call's `error.type`, pushed just before its failure.
    pub(crate) fn push_error_type(&self, id: u64, error_type: &str) {
        self.append(id, ERROR_TYPE, |text| write_string(text, error_type));
    }

    /// A call reported progress (the JSON text of the notification's params). It travels in
    /// the same batch as outcomes, so it is never seen after the call it belongs to settled.
    pub(crate) fn push_progress(&self, id: u64, params: &str) {
        self.append(id, PROGRESS, |text| text.push_str(params));
    }

    fn append(&self, id: u64, kind: char, value: impl FnOnce(&mut String)) {
        let wake = {
            let mut batch = self.lock();
            let text = &mut batch.text;
            text.push(if text.is_empty() { '[' } else { ',' });
            let _ = write!(text, "[{id},");
            text.push(kind);
            text.push(',');
            value(text);
            text.push(']');
            if text.len() >= SEGMENT_BYTES {
                text.push(']');
                let closed = std::mem::take(text);
                batch.full.push_back(closed);
            }
            let wake = !batch.scheduled && !turn::replied(turn::whose(self));
            batch.scheduled |= wake;
            wake
        };
        if wake {
            (self.wake)();
        }
    }

    /// After the JS thread took the oldest segment itself (the deliverer): a wake-up for any
    /// segment left behind, so the caller need not ask again for what is almost never there.
    pub(crate) fn wake_if_pending(&self) {
        let wake = {
            let mut batch = self.lock();
            let left = !batch.full.is_empty() || !batch.text.is_empty();
            let wake = left && !batch.scheduled;
            batch.scheduled |= wake;
            wake
        };
        if wake {
            (self.wake)();
        }
    }

    /// Hands the oldest segment's JSON text to `read` (which copies it where it must go)
    /// without holding the lock, then keeps the buffer for later. Call until `None`: a busy
    /// source's batch comes in several segments. One reader at a time.
    pub(crate) fn take_with<R>(&self, read: impl FnOnce(&str) -> R) -> Option<R> {
        let mut full = {
            let mut batch = self.lock();
            batch.scheduled = false;
            if let Some(closed) = batch.full.pop_front() {
                closed
            } else if batch.text.is_empty() {
                return None;
            } else {
                batch.text.push(']');
                let spare = std::mem::take(&mut batch.spare);
                std::mem::replace(&mut batch.text, spare)
            }
        };
        let out = read(&full);
        full.clear();
        if full.capacity() <= MAX_KEPT_CAPACITY {
            self.lock().spare = full;
        }
        Some(out)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Batch> {
        crate::sync::lock(&self.batch)
    }

    /// Runs `f`, which routes replies on the JS thread, whose caller takes this batch and
    /// returns it to JS right after: what `f` finishes is pushed without a wake-up.
    pub(crate) fn replying<R>(&self, f: impl FnOnce() -> R) -> R {
        turn::replying(turn::whose(self), f)
    }
}

/// The value text of call `id`'s result in `batch` (a segment `take_with` handed out), or
/// `None` when it holds none.
pub(crate) fn result_in(batch: &str, id: u64) -> Option<&str> {
    let entries: Vec<(u64, u8, &serde_json::value::RawValue)> = serde_json::from_str(batch).ok()?;
    let result = RESULT as u8 - b'0';
    entries
        .into_iter()
        .find(|(of, kind, _)| *of == id && *kind == result)
        .map(|(_, _, value)| value.get())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn counted() -> (Completions, Arc<AtomicUsize>) {
        let wakes = Arc::new(AtomicUsize::new(0));
        let w = wakes.clone();
        let c = Completions::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        });
        (c, wakes)
    }

    #[test]
    fn one_wake_per_batch_and_valid_json() {
        let (c, wakes) = counted();
        assert_eq!(c.take_with(str::to_owned), None);
        c.push(1, Ok("{\"a\":1}".into()));
        c.push(2, Err("bad \"x\"\n".into()));
        c.push_progress(3, "{\"progress\":1}");
        c.push(3, Ok("\"s\"".into()));
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        let text = c.take_with(str::to_owned).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            serde_json::json!([[1, 1, {"a": 1}], [2, 2, "bad \"x\"\n"], [3, 0, {"progress": 1}], [3, 1, "s"]])
        );
        assert_eq!(c.take_with(str::to_owned), None);
        c.push(4, Ok("null".into()));
        assert_eq!(wakes.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_result_is_found_in_its_batch_by_id() {
        let (c, _) = counted();
        c.push_progress(4, "{\"progress\":1}");
        c.push(4, Ok("{\"a\":[1,2]}".into()));
        c.push(5, Ok("\"s\"".into()));
        let text = c.take_with(str::to_owned).unwrap();
        assert_eq!(result_in(&text, 4), Some("{\"a\":[1,2]}"));
        assert_eq!(result_in(&text, 5), Some("\"s\""));
        assert_eq!(result_in(&text, 6), None);
        assert_eq!(result_in("not a batch", 4), None);
    }

    #[test]
    fn an_oauth_failure_carries_its_kind_and_code() {
        use crate::core::error::OAuthFailure;
        let (c, _) = counted();
        let refused = OAuthFailure::Refused(Some("invalid_grant".into()));
        c.push(1, Err(Failure::oauth(refused, "no \"1\"".into())));
        c.push(
            2,
            Err(Failure::oauth(OAuthFailure::StepUpExhausted, "no".into())),
        );
        let text = c.take_with(str::to_owned).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            serde_json::json!([
                [1, 2, {"message": "no \"1\"", "kind": "refused", "error": "invalid_grant"}],
                [2, 2, {"message": "no", "kind": "step_up_exhausted"}]
            ])
        );
    }

    #[test]
    fn a_server_answer_carries_its_code_and_data() {
        use crate::core::error::ServerError;
        let (c, _) = counted();
        let server = |data: Option<&str>| ServerError {
            code: -32603,
            data: data.map(str::to_owned),
            stderr: None,
        };
        let with_data = server(Some(r#"{"why":["a \"b\""]}"#));
        c.push(
            1,
            Err(Failure::server("MCP error -32603: no".into(), with_data)),
        );
        c.push(
            2,
            Err(Failure::server("MCP error -32603: no".into(), server(None))),
        );
        let text = c.take_with(str::to_owned).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            serde_json::json!([
                [1, 2, {"message": "MCP error -32603: no", "code": -32603, "data": {"why": ["a \"b\""]}}],
                [2, 2, {"message": "MCP error -32603: no", "code": -32603}]
            ])
        );
    }

    #[test]
    fn a_large_batch_comes_in_segments_of_valid_json_in_order() {
        let (c, wakes) = counted();
        let big = format!("\"{}\"", "x".repeat(20_000));
        for id in 0..10 {
            c.push(id, Ok(big.clone()));
        }
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        let mut ids = Vec::new();
        let mut segments = 0;
        while let Some(text) = c.take_with(str::to_owned) {
            segments += 1;
            assert!(text.len() < 2 * SEGMENT_BYTES);
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            ids.extend(v.as_array().unwrap().iter().map(|e| e[0].as_u64().unwrap()));
        }
        assert!(segments > 1);
        assert_eq!(ids, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn caller_that_takes_the_batch_needs_no_wake() {
        let (c, wakes) = counted();
        c.replying(|| c.push(7, Ok("1".into())));
        assert_eq!(wakes.load(Ordering::SeqCst), 0);
        assert_eq!(c.take_with(str::to_owned).as_deref(), Some("[[7,1,1]]"));
        c.push(8, Ok("2".into()));
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_caller_that_took_one_segment_of_several_leaves_the_rest_to_a_wake() {
        let (c, wakes) = counted();
        let big = format!("\"{}\"", "x".repeat(60_000)); // one segment each
        c.replying(|| {
            c.push(1, Ok(big.clone()));
            c.push(2, Ok(big.clone()));
        });
        assert!(c.take_with(str::to_owned).is_some());
        c.wake_if_pending();
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
        assert!(c.take_with(str::to_owned).is_some());
        assert_eq!(c.take_with(str::to_owned), None);
        c.wake_if_pending();
        assert_eq!(wakes.load(Ordering::SeqCst), 1);
    }
}
