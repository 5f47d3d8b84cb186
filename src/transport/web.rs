//! What every HTTP request of this crate shares: the TLS crypto provider, the client builder,
//! one bounded body reader, and how a request's failure is worded (never with its URL, which can
//! carry credentials). The MCP transport and the OAuth requests both ask it.

use crate::core::secrets::{head, Cut, Secrets};

/// rustls needs one process-wide crypto provider before any client is built.
fn ensure_crypto_provider() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // Err only when the host process already installed one, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A client built from `builder` (the caller's redirect policy and timeouts), with the crypto
/// provider in place.
pub(crate) fn client(builder: reqwest::ClientBuilder) -> Result<reqwest::Client, String> {
    ensure_crypto_provider();
    builder
        .build()
        .map_err(|e| format!("mcp: could not build the HTTP client: {e}"))
}

/// A request's failure and its causes, without its URL (which can carry credentials).
pub(crate) fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut out = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// A body read to a bound.
pub(crate) struct Body {
    pub bytes: Vec<u8>,
    /// The body went on past the bound (only the bound was read).
    pub cut: bool,
    /// Reading failed part-way (`describe`'s words); `bytes` holds what came before.
    pub failed: Option<String>,
}

/// Reads at most `max` bytes of `response`'s body, stopping at the first chunk past it: a
/// hostile server's endless body costs at most `max` bytes and one chunk.
pub(crate) async fn read_upto(mut response: reqwest::Response, max: usize) -> Body {
    let mut body = Body {
        bytes: Vec::new(),
        cut: false,
        failed: None,
    };
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = max - body.bytes.len();
                if chunk.len() > room {
                    body.bytes.extend_from_slice(&chunk[..room]);
                    body.cut = true;
                    return body;
                }
                body.bytes.extend_from_slice(&chunk);
            }
            Ok(None) => return body,
            Err(e) => {
                body.failed = Some(describe(e));
                return body;
            }
        }
    }
}

/// A whole body of at most `max` bytes; `Err(None)` when it is larger, `Err(Some(why))` when
/// reading failed. A refused large buffer is handed back to the system at once.
pub(crate) async fn read_body(
    response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, Option<String>> {
    let body = read_upto(response, max).await;
    if let Some(why) = body.failed {
        return Err(Some(why));
    }
    if body.cut {
        super::release_buffer(body.bytes);
        return Err(None);
    }
    Ok(body.bytes)
}

/// How much more than it shows `read_text` reads, so a secret that crosses the cut is seen
/// whole and redacted.
const DETAIL_MARGIN: usize = 4096;

/// The start of an error body as an error text may show it: at most `max` characters,
/// redacted of `secrets`.
pub(crate) async fn read_text(
    response: reqwest::Response,
    max: usize,
    secrets: &Secrets,
) -> String {
    // Read past `max` so a value that crosses it is seen whole, then redact, then cut: cut
    // first, the part of a secret before the cut would be shown (and one that runs past
    // what is read is redacted by its part, `Cut::End`).
    let body = read_upto(response, max + DETAIL_MARGIN).await;
    let cut = if body.cut { Cut::End } else { Cut::Neither };
    let text = secrets.redact_bytes(&body.bytes, cut);
    head(text.trim(), max).trim_end().to_owned()
}
