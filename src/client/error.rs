//! How a request can fail, as the client reports it to whoever sent it.

use crate::core::error::{Failure, ServerError};
use serde_json::Value;

/// `Number.MAX_SAFE_INTEGER`: a code past it would reach JS as another number than the one its
/// message quotes (the SDK's client refuses such an answer outright).
const MAX_SAFE_CODE: u64 = (1 << 53) - 1;
/// JSON-RPC's "Internal error", the code of an answer whose own code is unusable.
pub const INTERNAL_ERROR: i64 = -32603;
/// A server's `data` whose JSON text is longer is not passed on: it is untrusted, travels to
/// the host beside every failed call, and a detail this size is no longer one.
pub const MAX_DATA_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum RpcError {
    /// The server answered with a JSON-RPC error.
    Remote {
        code: i64,
        message: String,
        /// Its `data`, when it sent one (`null` included) within `MAX_DATA_BYTES`.
        data: Option<Value>,
    },
    /// Our transport could not deliver the request (its text is ours, already redacted).
    Transport(Failure),
    /// The connection is gone (closed by us, or the server died).
    Closed(String),
    TimedOut,
    /// The caller gave up (an abort signal).
    Cancelled,
}

impl RpcError {
    /// A server's error answer from its members as sent: a code that is not an integer a JS
    /// number holds exactly becomes "Internal error" (nothing downstream then has to cope with
    /// a float, a string or 1e300), and `data` past `MAX_DATA_BYTES` is dropped.
    pub fn answered(code: Option<&Value>, message: String, data: Option<Value>) -> Self {
        let code = code
            .and_then(Value::as_i64)
            .filter(|c| c.unsigned_abs() <= MAX_SAFE_CODE)
            .unwrap_or(INTERNAL_ERROR);
        let data = data.filter(|d| within(d, MAX_DATA_BYTES));
        RpcError::Remote {
            code,
            message,
            data,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            // The MCP SDK client's words (its `McpError`), which the original showed.
            RpcError::Remote { code, message, .. } => format!("MCP error {code}: {message}"),
            RpcError::Transport(failure) => failure.message.clone(),
            RpcError::Closed(reason) => reason.clone(),
            RpcError::TimedOut => "request timed out".into(),
            RpcError::Cancelled => "request was cancelled".into(),
        }
    }

    /// What the caller is told: `describe()`'s text, with the OAuth kind our transport gave it,
    /// or the server's code and data beside it.
    pub fn into_failure(self) -> Failure {
        match self {
            RpcError::Transport(failure) => failure,
            RpcError::Remote {
                code,
                message,
                data,
            } => {
                let server = ServerError {
                    code,
                    data: data.as_ref().map(Value::to_string),
                    stderr: None,
                };
                Failure::server(format!("MCP error {code}: {message}"), server)
            }
            other => other.describe().into(),
        }
    }
}

/// Whether `value`'s JSON text is at most `max` bytes, found without writing more than that.
fn within(value: &Value, max: usize) -> bool {
    struct Capped(usize, usize);
    impl std::io::Write for Capped {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            if self.0 > self.1 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Capped(0, max), value).is_ok()
}

pub type Reply = Result<Value, RpcError>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_code_js_cannot_hold_exactly_is_internal_error() {
        let code = |c: Value| match RpcError::answered(Some(&c), "m".into(), None) {
            RpcError::Remote { code, .. } => code,
            _ => unreachable!(),
        };
        assert_eq!(code(json!(-32000)), -32000);
        assert_eq!(
            code(json!(9_007_199_254_740_991_i64)),
            9_007_199_254_740_991
        );
        assert_eq!(
            code(json!(-9_007_199_254_740_991_i64)),
            -9_007_199_254_740_991
        );
        assert_eq!(code(json!(9_007_199_254_740_992_i64)), INTERNAL_ERROR);
        assert_eq!(code(json!(i64::MIN)), INTERNAL_ERROR);
        assert_eq!(code(json!(u64::MAX)), INTERNAL_ERROR);
        assert_eq!(code(json!(1.5)), INTERNAL_ERROR);
        assert_eq!(code(json!(1e300)), INTERNAL_ERROR);
        assert_eq!(code(json!("-32000")), INTERNAL_ERROR);
        assert_eq!(code(Value::Null), INTERNAL_ERROR);
    }

    #[test]
    fn data_is_passed_on_within_its_bound() {
        let data = |d: Value| match RpcError::answered(None, "m".into(), Some(d)) {
            RpcError::Remote { data, .. } => data,
            _ => unreachable!(),
        };
        assert_eq!(data(json!(null)), Some(json!(null)));
        assert_eq!(data(json!({"a": [1]})), Some(json!({"a": [1]})));
        // `"` and the quotes around: exactly at the bound, and one byte over it.
        let at = "x".repeat(MAX_DATA_BYTES - 2);
        assert_eq!(data(json!(at)), Some(json!(at)));
        assert_eq!(data(json!(format!("{at}x"))), None);
    }

    #[test]
    fn a_server_answer_fails_in_the_sdk_clients_words_with_its_code_and_data() {
        let answer = RpcError::answered(
            Some(&json!(-32603)),
            "connect ECONNREFUSED 127.0.0.1:1".into(),
            Some(json!({"port": 1})),
        );
        let failure = answer.into_failure();
        assert_eq!(
            failure.message,
            "MCP error -32603: connect ECONNREFUSED 127.0.0.1:1"
        );
        let server = failure.server.unwrap();
        assert_eq!(server.code, -32603);
        assert_eq!(server.data.as_deref(), Some(r#"{"port":1}"#));
    }
}
