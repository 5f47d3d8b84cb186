//! What a server's own requests (a 2025 server's `elicitation/create`, `sampling/createMessage`,
//! `roots/list`) may cost the host per connection. Each one spends: a hook calls the host's
//! model (paid) or a person, and each waits on a task of its own. A server that floods them
//! is refused at once, typed, rather than answered without bound. The bounds grow with the
//! host's own calls in flight (each may be asked something at the same time, as a server that
//! confirms every call does), never with what the server sends.

use std::time::Instant;

/// How many of a server's requests are answered at once, beyond one per call in flight; more
/// are refused until one ends.
pub const AT_ONCE: usize = 4;
/// How many may come in a burst, and how many a second after it, beyond one per call in
/// flight.
pub const BURST: f64 = 16.0;
pub const PER_SECOND: f64 = 4.0;

/// How many may be answered at once with `calls` in flight.
pub fn at_once(calls: usize) -> usize {
    AT_ONCE.saturating_add(calls)
}

/// The error a refused request is answered with (JSON-RPC's internal error: the client is
/// able to answer, just not now).
pub const REFUSED_CODE: i64 = -32603;

/// Why a request is refused, in the words the server receives.
pub fn too_many_at_once() -> String {
    format!("mcp: the client answers at most {AT_ONCE} of the server's requests at once, and one more per tool call in flight")
}

pub fn too_fast() -> String {
    format!(
        "mcp: the server asks faster than the client answers (a burst of {BURST}, then {PER_SECOND} a second, and one more of each per tool call in flight)"
    )
}

pub fn outside_a_call() -> String {
    "mcp: the client answers the server's requests only while one of its tool calls is in flight ('asksOutsideCalls' allows more)".into()
}

/// A token bucket: `BURST` requests at once, refilled at `PER_SECOND`.
#[derive(Debug, Clone)]
pub struct Rate {
    tokens: f64,
    /// The burst the bucket holds now (`BURST` and one per call in flight).
    cap: f64,
    at: Option<Instant>,
}

impl Default for Rate {
    fn default() -> Self {
        Self {
            tokens: BURST,
            cap: BURST,
            at: None,
        }
    }
}

impl Rate {
    /// Takes one request's token at `now`, with `calls` in flight; false when none is left.
    pub fn take(&mut self, now: Instant, calls: usize) -> bool {
        let calls = calls as f64;
        let (burst, per_second) = (BURST + calls, PER_SECOND + calls);
        // Each call that started since is owed its token at once; the bucket shrinks back as
        // calls end.
        if burst > self.cap {
            self.tokens += burst - self.cap;
        }
        self.cap = burst;
        if let Some(at) = self.at {
            let elapsed = now.saturating_duration_since(at).as_secs_f64();
            self.tokens += elapsed * per_second;
        }
        self.tokens = self.tokens.min(burst);
        self.at = Some(now);
        if self.tokens < 1.0 {
            return false;
        }
        self.tokens -= 1.0;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_then_the_steady_rate() {
        let mut rate = Rate::default();
        let start = Instant::now();
        let burst = (0..100).filter(|_| rate.take(start, 0)).count();
        assert_eq!(burst, BURST as usize);
        // A second later, `PER_SECOND` more.
        let later = start + Duration::from_secs(1);
        let more = (0..100).filter(|_| rate.take(later, 0)).count();
        assert_eq!(more, PER_SECOND as usize);
        // A long pause fills the bucket no further than the burst.
        let much_later = later + Duration::from_secs(3600);
        let refilled = (0..100).filter(|_| rate.take(much_later, 0)).count();
        assert_eq!(refilled, BURST as usize);
        // With 24 calls in flight, each may be asked at once, right after a burst was spent;
        // a flood during them is still cut.
        let again = much_later + Duration::from_millis(1);
        let owed = (0..100).filter(|_| rate.take(again, 24)).count();
        assert_eq!(owed, 24);
        let flood = (0..100).filter(|_| rate.take(again, 24)).count();
        assert_eq!(flood, 0);
        // One call in flight does not lift the bound.
        let mut fresh = Rate::default();
        assert_eq!(
            (0..100).filter(|_| fresh.take(start, 1)).count(),
            BURST as usize + 1
        );
    }
}
