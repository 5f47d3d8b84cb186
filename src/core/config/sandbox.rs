//! Reads a stdio source's `sandbox`: `{ fs: { read, write }, net, onUnsupported }`, each
//! refusal naming the key path. Absent: no confinement, today's behaviour exactly.

use super::read::{describe_type, only_known_keys, optional_string_list, refuse};
use crate::core::error::Result;
use crate::core::raw::Raw;
use crate::core::sandbox::{Endpoint, Limits, Net, OnUnsupported, Sandbox};

pub fn parse(raw: &Raw) -> Result<Option<Sandbox>> {
    let value = raw.get("sandbox");
    let members = match value {
        Raw::Undefined => return Ok(None),
        Raw::Object(members) => members,
        other => {
            return Err(refuse(format!(
                "mcp: 'sandbox' must be an object {{ fs?, net?, onUnsupported?, limits? }}, got {}",
                describe_type(other)
            )))
        }
    };
    only_known_keys(
        "sandbox",
        members,
        &["fs", "net", "onUnsupported", "limits"],
    )?;
    let fs = value.get("fs");
    let (read, write) = match fs {
        Raw::Undefined => (Vec::new(), Vec::new()),
        Raw::Object(members) => {
            only_known_keys("sandbox.fs", members, &["read", "write"])?;
            (
                paths(fs, "sandbox.fs.read", "read")?,
                paths(fs, "sandbox.fs.write", "write")?,
            )
        }
        other => {
            return Err(refuse(format!(
                "mcp: 'sandbox.fs' must be an object {{ read?, write? }}, got {}",
                describe_type(other)
            )))
        }
    };
    let on_unsupported = match value.get("onUnsupported") {
        Raw::Undefined => OnUnsupported::Refuse,
        Raw::String(s) if s == "refuse" => OnUnsupported::Refuse,
        Raw::String(s) if s == "warn" => OnUnsupported::Warn,
        other => {
            return Err(refuse(format!(
                "mcp: 'sandbox.onUnsupported' must be 'refuse' or 'warn', got {}",
                describe_type(other)
            )))
        }
    };
    Ok(Some(Sandbox {
        read,
        write,
        net: net(value.get("net"))?,
        on_unsupported,
        limits: limits(value.get("limits"))?,
    }))
}

/// `{ openFiles?, addressSpaceMb? }`, each a positive integer.
fn limits(value: &Raw) -> Result<Limits> {
    let members = match value {
        Raw::Undefined => return Ok(Limits::default()),
        Raw::Object(members) => members,
        other => {
            return Err(refuse(format!(
                "mcp: 'sandbox.limits' must be an object {{ openFiles?, addressSpaceMb? }}, got {}",
                describe_type(other)
            )))
        }
    };
    only_known_keys("sandbox.limits", members, &["openFiles", "addressSpaceMb"])?;
    let count = |key: &str| match value.get(key) {
        Raw::Undefined => Ok(None),
        Raw::Number(n) if *n >= 1.0 && n.fract() == 0.0 && *n <= 9e15 => Ok(Some(*n as u64)),
        other => Err(refuse(format!(
            "mcp: 'sandbox.limits.{key}' must be a positive integer, got {}",
            describe_type(other)
        ))),
    };
    Ok(Limits {
        open_files: count("openFiles")?,
        address_space_mb: count("addressSpaceMb")?,
    })
}

/// Absolute paths: a relative one would mean whatever the server's working directory is.
fn paths(parent: &Raw, path: &str, key: &str) -> Result<Vec<String>> {
    let list = optional_string_list(parent, key)
        .map_err(|e| {
            refuse(
                e.message
                    .replacen(&format!("'{key}'"), &format!("'{path}'"), 1),
            )
        })?
        .unwrap_or_default();
    if let Some(relative) = list.iter().find(|p| !p.starts_with('/')) {
        return Err(refuse(format!(
            "mcp: '{path}' takes absolute paths, got '{relative}'"
        )));
    }
    Ok(list)
}

fn net(value: &Raw) -> Result<Net> {
    let connect = match value {
        Raw::Undefined => return Ok(Net::Deny),
        Raw::String(s) if s == "deny" => return Ok(Net::Deny),
        Raw::String(s) if s == "allow" => return Ok(Net::Allow),
        Raw::Object(members) => {
            only_known_keys("sandbox.net", members, &["connect"])?;
            value.get("connect")
        }
        other => {
            return Err(refuse(format!(
                "mcp: 'sandbox.net' must be 'deny', 'allow' or {{ connect: ['host:port', ...] }}, got {}",
                describe_type(other)
            )))
        }
    };
    let Raw::Array(items) = connect else {
        return Err(refuse(format!(
            "mcp: 'sandbox.net.connect' must be an array of 'host:port' strings or port numbers, got {}",
            describe_type(connect)
        )));
    };
    items
        .iter()
        .map(endpoint)
        .collect::<Result<Vec<_>>>()
        .map(Net::Connect)
}

/// `'host:port'`, `'*:port'` or a port number (any host).
fn endpoint(item: &Raw) -> Result<Endpoint> {
    let bad = || {
        refuse(format!(
            "mcp: 'sandbox.net.connect' takes 'host:port' strings or port numbers (1-65535), got {}",
            describe_type(item)
        ))
    };
    match item {
        Raw::Number(n) if n.fract() == 0.0 && (1.0..=65535.0).contains(n) => Ok(Endpoint {
            host: "*".into(),
            port: *n as u16,
        }),
        Raw::String(s) => {
            let (host, port) = s.rsplit_once(':').ok_or_else(bad)?;
            let port: u16 = port.parse().ok().filter(|p| *p > 0).ok_or_else(bad)?;
            if host.is_empty() {
                return Err(bad());
            }
            Ok(Endpoint {
                host: host.to_owned(),
                port,
            })
        }
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(sandbox: Raw) -> Result<Option<Sandbox>> {
        parse(&Raw::Object(vec![("sandbox".into(), sandbox)]))
    }
    fn obj(members: Vec<(&str, Raw)>) -> Raw {
        Raw::Object(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
    fn strings(items: &[&str]) -> Raw {
        Raw::Array(items.iter().map(|s| Raw::String(s.to_string())).collect())
    }

    #[test]
    fn reads_the_policy_and_refuses_what_it_cannot_mean_naming_the_key() {
        let policy = with(obj(vec![
            (
                "fs",
                obj(vec![
                    ("read", strings(&["/data"])),
                    ("write", strings(&["/tmp/x"])),
                ]),
            ),
            (
                "net",
                obj(vec![(
                    "connect",
                    Raw::Array(vec![Raw::String("*:5432".into()), Raw::Number(6379.0)]),
                )]),
            ),
            ("onUnsupported", Raw::String("warn".into())),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(policy.read, ["/data"]);
        assert_eq!(policy.write, ["/tmp/x"]);
        assert_eq!(policy.on_unsupported, OnUnsupported::Warn);
        assert_eq!(
            policy.net,
            Net::Connect(vec![
                Endpoint {
                    host: "*".into(),
                    port: 5432
                },
                Endpoint {
                    host: "*".into(),
                    port: 6379
                }
            ])
        );
        assert_eq!(with(obj(vec![])).unwrap().unwrap().net, Net::Deny);
        assert!(with(Raw::Undefined).unwrap().is_none());
        let refused = |v: Raw| with(v).unwrap_err().message;
        assert_eq!(
            refused(obj(vec![("fs", obj(vec![("read", strings(&["data"]))]))])),
            "mcp: 'sandbox.fs.read' takes absolute paths, got 'data'"
        );
        assert_eq!(
            refused(obj(vec![("fs", obj(vec![("exec", strings(&["/x"]))]))])),
            "mcp: unknown config key 'sandbox.fs.exec'; the keys are sandbox.fs.read, sandbox.fs.write"
        );
        assert_eq!(
            refused(obj(vec![("net", Raw::String("some".into()))])),
            "mcp: 'sandbox.net' must be 'deny', 'allow' or { connect: ['host:port', ...] }, got the string 'some'"
        );
        assert_eq!(
            refused(obj(vec![("net", obj(vec![("connect", strings(&["db:99999"]))]))])),
            "mcp: 'sandbox.net.connect' takes 'host:port' strings or port numbers (1-65535), got the string 'db:99999'"
        );
        assert_eq!(
            refused(obj(vec![("onUnsupported", Raw::String("ignore".into()))])),
            "mcp: 'sandbox.onUnsupported' must be 'refuse' or 'warn', got the string 'ignore'"
        );
        assert_eq!(
            refused(obj(vec![(
                "limits",
                obj(vec![("openFiles", Raw::Number(0.5))])
            )])),
            "mcp: 'sandbox.limits.openFiles' must be a positive integer, got 0.5"
        );
        let limited = with(obj(vec![(
            "limits",
            obj(vec![("openFiles", Raw::Number(64.0))]),
        )]))
        .unwrap()
        .unwrap();
        assert_eq!(limited.limits.open_files, Some(64));
        assert_eq!(
            refused(Raw::Bool(true)),
            "mcp: 'sandbox' must be an object { fs?, net?, onUnsupported?, limits? }, got true"
        );
    }
}
