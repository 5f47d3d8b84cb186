//! The event streams of a streamable-HTTP connection: a POST answered with SSE, the GET stream
//! for what the server sends outside any request, and resuming either after its last event.

use super::{content_type, Shared, DEFAULT_RETRY};
use crate::transport::sse::SseParser;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// How many times a request's broken SSE stream is resumed before the request fails.
const RESUME_ATTEMPTS: usize = 5;
/// Times the notification stream is opened again after it ends, before listening stops: a
/// server that ends it at once on every open must not keep the connection busy for ever.
const MAX_STREAM_RECONNECTS: usize = 1000;

impl Shared {
    /// Pushes every event of an SSE response; tells whether `awaited` got its answer.
    pub(super) async fn read_events(
        self: &Arc<Self>,
        response: reqwest::Response,
        awaited: Option<u64>,
    ) -> SseEnd {
        let mut parser = SseParser::default();
        let mut response = response;
        let mut answered = false;
        let mut refused = None;
        loop {
            match response.chunk().await {
                Ok(Some(bytes)) => {
                    let events = match parser.feed(&bytes) {
                        Ok(events) => events,
                        Err(refusal) => {
                            refused = Some(refusal);
                            break;
                        }
                    };
                    for data in events {
                        if let Some(message) = self.inbound.parse(data.as_bytes()) {
                            answered |= awaited.is_some()
                                && message.get("id").and_then(Value::as_u64) == awaited
                                && message.get("method").is_none();
                            self.inbound.push(message);
                        }
                    }
                }
                Ok(None) => break,
                Err(_) => break,
            }
        }
        let end = SseEnd {
            last_id: parser.last_id.take(),
            retry: parser.retry,
            answered,
            refused,
        };
        parser.release();
        end
    }

    /// A GET event stream, resuming after `last_id` when given; None when the server has none.
    pub(super) async fn open_stream(&self, last_id: Option<&str>) -> Option<reqwest::Response> {
        match self
            .send(None, "text/event-stream", last_id, false, None)
            .await
        {
            Ok(r)
                if r.status().is_success() && content_type(&r).starts_with("text/event-stream") =>
            {
                Some(r)
            }
            _ => None,
        }
    }

    /// A request's SSE stream ended before its answer but named its last event: resume with
    /// a GET after the server's `retry` delay (SEP-1699) instead of failing the request.
    pub(super) async fn resume(
        self: &Arc<Self>,
        request_id: u64,
        mut last_id: String,
        mut retry: Option<Duration>,
    ) {
        for _attempt in 0..RESUME_ATTEMPTS {
            tokio::time::sleep(retry.unwrap_or(DEFAULT_RETRY)).await;
            let Some(response) = self.open_stream(Some(&last_id)).await else {
                return;
            };
            let end = self.read_events(response, Some(request_id)).await;
            if end.answered {
                return;
            }
            if let Some(id) = end.last_id {
                last_id = id;
            }
            retry = end.retry.or(retry);
        }
    }

    /// The optional GET stream for notifications outside any request (listChanged among them),
    /// starting with `first`, the response the handshake waited for. Reconnects with
    /// `Last-Event-ID` after the server's `retry` delay; a 405 (or any refusal) means none.
    pub(super) async fn listen(self: Arc<Self>, first: reqwest::Response) {
        let mut last_id: Option<String> = None;
        let mut retry = DEFAULT_RETRY;
        let mut first = Some(first);
        for _attempt in 0..MAX_STREAM_RECONNECTS {
            let response = match first.take() {
                Some(response) => response,
                None => match self.open_stream(last_id.as_deref()).await {
                    Some(response) => response,
                    None => return,
                },
            };
            let end = self.read_events(response, None).await;
            if end.last_id.is_some() {
                last_id = end.last_id;
            }
            if let Some(r) = end.retry {
                retry = r;
            }
            tokio::time::sleep(retry).await;
        }
    }
}

/// Where an SSE stream stopped: what a reconnect resumes from, and the server's retry delay.
pub(super) struct SseEnd {
    pub(super) last_id: Option<String>,
    pub(super) retry: Option<Duration>,
    /// The awaited request's answer came on this stream.
    pub(super) answered: bool,
    /// The stream was given up: an event over the frame limit.
    pub(super) refused: Option<String>,
}
