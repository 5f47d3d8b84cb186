//! Reading what an authorization server answers, and the small helpers every part of the flow
//! uses.

use crate::core::error::{Failure, OAuthFailure};
use crate::core::oauth::error_code;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

/// The largest metadata document, registration or token answer read.
pub(super) const MAX_BODY: usize = 256 * 1024;
pub(super) use crate::core::revisions::PROTOCOL_VERSION;

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub(super) fn random_b64(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut buf)
        .map_err(|_| "mcp: oauth: the system's random source failed".to_owned())?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

pub(super) fn form_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The JSON answer of a request to the authorization server, or the server's refusal (`what`
/// names the request).
pub(super) async fn json_answer(response: reqwest::Response, what: &str) -> Result<Value, Failure> {
    let status = response.status();
    let body = read_body(response).await.unwrap_or_default();
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if !status.is_success() {
        return Err(refusal(what, status.as_u16(), &value));
    }
    Ok(value)
}

/// The authorization server refused: its error code (never its description), or the status.
fn refusal(what: &str, status: u16, body: &Value) -> Failure {
    let code = body.get("error").and_then(Value::as_str).map(error_code);
    let message = match &code {
        Some(code) => format!(
            "mcp: oauth: the authorization server refused the {what} ({code}, HTTP {status})"
        ),
        None => format!("mcp: oauth: the authorization server refused the {what} (HTTP {status})"),
    };
    Failure::oauth(OAuthFailure::Refused(code), message)
}

pub(super) async fn read_body(response: reqwest::Response) -> Option<Vec<u8>> {
    crate::transport::web::read_body(response, MAX_BODY)
        .await
        .ok()
}
