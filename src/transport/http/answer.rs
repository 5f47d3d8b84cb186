//! The answer to a POST of a streamable-HTTP connection: a reply (one JSON message or an
//! event stream), a refusal that is itself the JSON-RPC answer, or a status that fails the
//! request (or, for a session the server forgot, ends the connection).

use super::{content_type, read_frame, Shared};
use crate::core::error::Failure;
use crate::sync::lock;
use crate::transport::web::read_text;
use reqwest::header::HeaderMap;
use serde_json::Value;
use std::sync::Arc;

impl Shared {
    /// One message POSTed, and what its answer does: a reply pushed, the request failed, or
    /// the connection ended.
    pub(super) async fn post(
        self: Arc<Self>,
        body: String,
        request_id: Option<u64>,
        opening: bool,
        route: Option<HeaderMap>,
    ) {
        let response = self
            .send(
                Some(&body),
                "application/json, text/event-stream",
                None,
                opening,
                route.as_ref(),
            )
            .await;
        drop(body);
        let response = match response {
            Ok(r) => r,
            Err(e) => return self.fail(request_id, e),
        };
        let status = response.status();
        if status == reqwest::StatusCode::ACCEPTED || (request_id.is_none() && status.is_success())
        {
            return;
        }
        if status.is_client_error() && content_type(&response).starts_with("application/json") {
            return self.client_error(response, status, request_id).await;
        }
        if !status.is_success() {
            return self.error_status(response, status, request_id).await;
        }
        if self.body(response, request_id).await {
            // A stream that ended without answering its request fails it rather than leave it
            // hanging; after a real answer the dispatcher ignores this one (the id is gone).
            self.fail(
                request_id,
                Failure::lost(
                    "mcp: the server ended its HTTP answer without a JSON-RPC response".into(),
                ),
            );
        }
    }

    /// Fails the request `request_id`, if the POST carried one.
    fn fail(&self, request_id: Option<u64>, failure: Failure) {
        if let Some(id) = request_id {
            self.inbound.fail_request(id, failure);
        }
    }

    /// A 4xx with a JSON body. A modern server refuses what it cannot serve (a legacy opening
    /// among them) with a 4xx whose body is the JSON-RPC error: that error is the answer, which
    /// tells the opening which era the server speaks.
    async fn client_error(
        &self,
        response: reqwest::Response,
        status: reqwest::StatusCode,
        request_id: Option<u64>,
    ) {
        let (Some(id), Ok(bytes)) = (request_id, read_frame(response).await) else {
            let failure = format!("mcp: POST {} answered HTTP {status}", self.shown);
            return self.fail(request_id, failure.into());
        };
        let answers = serde_json::from_slice::<Value>(&bytes).is_ok_and(|m| {
            m.get("id").and_then(Value::as_u64) == Some(id) && m.get("error").is_some()
        });
        if answers && self.inbound.push_text(&bytes) {
            return;
        }
        let detail = self.secrets.redact(&String::from_utf8_lossy(&bytes));
        let detail: String = detail.chars().take(512).collect();
        let failure = format!("mcp: POST {} answered HTTP {status}: {detail}", self.shown);
        self.fail(request_id, failure.into());
    }

    /// Any other status that is no success.
    async fn error_status(
        &self,
        response: reqwest::Response,
        status: reqwest::StatusCode,
        request_id: Option<u64>,
    ) {
        let detail = read_text(response, 512, &self.secrets).await;
        if status == reqwest::StatusCode::NOT_FOUND && lock(&self.session).id.is_some() {
            // The session is gone: this connection is over, the next tools() starts afresh.
            return self.inbound.close(format!(
                "mcp: POST {} answered HTTP 404: the server no longer knows this session; the connection was closed",
                self.shown
            ));
        }
        let failure = format!("mcp: POST {} answered HTTP {status}: {detail}", self.shown);
        self.fail(request_id, failure.into());
    }

    /// A successful answer's body, an event stream or one JSON message; `true` when it may have
    /// ended without answering the request.
    async fn body(self: &Arc<Self>, response: reqwest::Response, request_id: Option<u64>) -> bool {
        let content_type = content_type(&response);
        if content_type.starts_with("text/event-stream") {
            let end = self.read_events(response, request_id).await;
            if end.answered {
                return false;
            }
            if let Some(refusal) = end.refused {
                self.fail(request_id, refusal.into());
                return false;
            }
            if let (Some(id), Some(last_id)) = (request_id, end.last_id) {
                self.resume(id, last_id, end.retry).await;
            }
        } else if content_type.starts_with("application/json") {
            match read_frame(response).await {
                Ok(bytes) => {
                    if !self.inbound.push_text(&bytes) {
                        let failure = "mcp: the server answered with a body that is not JSON";
                        self.fail(request_id, failure.into());
                    }
                }
                Err(e) => self.fail(request_id, e.into()),
            }
        } else {
            self.fail(request_id, format!(
                "mcp: the server answered with content type '{content_type}', expected application/json or text/event-stream"
            ).into());
        }
        true
    }
}
