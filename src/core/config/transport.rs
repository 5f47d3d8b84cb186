//! The keys of each transport: the server URL (`http://` or `https://`, its credentials kept
//! for redaction), static headers or a header hook, the stdio child's environment and stderr,
//! and the in-process server object.

use super::oauth::parse_oauth;
use super::read::{
    describe_type, forbid, header_record, literal, non_empty_string, optional_string,
    optional_string_list, refuse, require, HeaderValue,
};
use super::{sandbox, Headers, StderrMode, Transport};
use crate::core::error::Result;
use crate::core::raw::Raw;
use crate::core::url::{check_server_url, shown_url, url_credentials};

/// Which transport the config names, its own keys required and the others' forbidden.
pub(super) enum TransportKind {
    Stdio,
    Http,
    InProcess,
}

pub(super) fn transport_kind(raw: &Raw) -> Result<TransportKind> {
    let name = raw.get("transport");
    match name.as_str() {
        Some("stdio") => {
            require(raw, "stdio", "command")?;
            forbid(raw, "stdio", &["url", "server", "http"])?;
            Ok(TransportKind::Stdio)
        }
        Some("streamable-http") => {
            require(raw, "streamable-http", "url")?;
            forbid(
                raw,
                "streamable-http",
                &[
                    "command", "args", "server", "env", "cwd", "stderr", "sandbox",
                ],
            )?;
            Ok(TransportKind::Http)
        }
        Some("inprocess") => {
            require(raw, "inprocess", "server")?;
            forbid(
                raw,
                "inprocess",
                &[
                    "command", "args", "url", "http", "env", "cwd", "stderr", "sandbox", "cassette",
                ],
            )?;
            Ok(TransportKind::InProcess)
        }
        _ => Err(refuse(format!(
            "mcp: unknown transport '{}'",
            name.display()
        ))),
    }
}

/// The transport's own keys, read (`headers`: `http.headers`, read before).
pub(super) fn parse_transport(
    raw: &Raw,
    kind: TransportKind,
    headers: Headers,
) -> Result<Transport> {
    Ok(match kind {
        TransportKind::Stdio => Transport::Stdio {
            command: non_empty_string(raw, "command")?,
            args: optional_string_list(raw, "args")?.unwrap_or_default(),
            env: parse_env(raw.get("env"))?,
            cwd: optional_string(raw, "cwd")?,
            stderr: parse_stderr(raw.get("stderr"))?,
            sandbox: sandbox::parse(raw)?,
        },
        TransportKind::Http => http(raw, headers)?,
        TransportKind::InProcess => {
            check_server(raw.get("server"))?;
            Transport::InProcess
        }
    })
}

/// streamable-http: the URL, and `http.oauth`, which holds the URL to the trust rules and
/// replaces a static `Authorization` header.
fn http(raw: &Raw, headers: Headers) -> Result<Transport> {
    let url = parse_url(raw)?;
    let oauth = parse_oauth(raw.get("http").get("oauth"))?.map(Box::new);
    if oauth.is_some() {
        check_server_url(&url, &shown_url(&url))?;
        if let Headers::Static(h) = &headers {
            if h.iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
            {
                return Err(refuse(
                    "mcp: 'http.headers' has a static 'Authorization' header, which 'http.oauth' replaces; give one of them".into(),
                ));
            }
        }
    }
    Ok(Transport::Http {
        credentials: url_credentials(&url),
        url,
        headers,
        oauth,
    })
}

pub(super) fn parse_headers(http: &Raw) -> Result<Headers> {
    let headers = match http {
        Raw::Undefined => return Ok(Headers::None),
        Raw::Object(_) => http.get("headers"),
        other => {
            return Err(refuse(format!(
                "mcp: 'http' must be an object with an optional 'headers' member, got {}",
                other.display()
            )))
        }
    };
    match headers {
        Raw::Undefined => Ok(Headers::None),
        Raw::Function => Ok(Headers::Hook),
        Raw::Object(members) => {
            let members = members.iter().map(|(name, value)| {
                let value = match value {
                    Raw::Undefined | Raw::Null => HeaderValue::Absent,
                    Raw::String(s) => HeaderValue::Text(s),
                    _ => HeaderValue::Other,
                };
                (name.as_str(), value)
            });
            // Values are secrets: the message names the header, never its value.
            header_record(members).map(Headers::Static).map_err(|name| {
                refuse(format!(
                    "mcp: 'http.headers' value of '{name}' must be a string"
                ))
            })
        }
        _ => Err(refuse(
            "mcp: 'http.headers' must be a record of header values or a (possibly async) function returning one"
                .into(),
        )),
    }
}

pub(super) fn parse_url(raw: &Raw) -> Result<String> {
    let url = non_empty_string(raw, "url")?;
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(refuse(format!(
            "mcp: 'url' must be an http:// or https:// URL, got '{}'",
            shown_url(&url)
        )));
    }
    Ok(url)
}

pub(super) fn check_server(server: &Raw) -> Result<()> {
    if let Raw::Object(_) = server {
        if matches!(server.get("connect"), Raw::Function) {
            return Ok(());
        }
    }
    Err(refuse(
        "mcp: 'server' must be an object with a connect(transport) method (an @modelcontextprotocol/sdk Server or McpServer)".into(),
    ))
}

pub(super) fn parse_env(value: &Raw) -> Result<Vec<(String, String)>> {
    let members = match value {
        Raw::Undefined => return Ok(Vec::new()),
        Raw::Object(members) => members,
        other => {
            return Err(refuse(format!(
                "mcp: 'env' must be a record of environment variable values, got {}",
                describe_type(other)
            )))
        }
    };
    let mut out = Vec::with_capacity(members.len());
    for (name, value) in members {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(refuse(format!(
                "mcp: 'env' has an invalid variable name '{name}'"
            )));
        }
        match value {
            Raw::Undefined => {}
            // Values are secrets: never echo them.
            Raw::String(s) if !s.contains('\0') => out.push((name.clone(), s.clone())),
            _ => {
                return Err(refuse(format!(
                    "mcp: 'env.{name}' must be a string without NUL characters"
                )))
            }
        }
    }
    Ok(out)
}

pub(super) fn parse_stderr(value: &Raw) -> Result<StderrMode> {
    literal(
        value,
        "stderr",
        &[
            ("inherit", StderrMode::Inherit),
            ("ignore", StderrMode::Ignore),
            ("pipe", StderrMode::Pipe),
        ],
        StderrMode::Inherit,
    )
}
