//! JS values to and from `serde_json::Value`, strict where `JSON.stringify` is lax.
//!
//! Identity hashing must refuse what cannot be JSON instead of silently writing `null`: an
//! `undefined` array element, a non-finite number, a function, symbol or bigint. An object
//! member whose value is `undefined` is omitted, as JCS omits it. Nesting is bounded so a
//! cyclic or hostile value is refused instead of overflowing the stack.

use super::js::{self, Env, Kind, Val};
use crate::core::raw::Raw;
use crate::core::ConfigError;
use napi::Error;
use serde_json::{Map, Number, Value};

/// Deepest nesting accepted from JS; a cycle hits it too.
pub const MAX_VALUE_DEPTH: usize = 1000;

#[derive(Debug)]
pub enum ConvertError {
    /// The value cannot be JSON: a typed refusal.
    Refused(ConfigError),
    /// N-API itself failed (a getter threw, the env is going away).
    Napi(Error),
}

impl From<Error> for ConvertError {
    fn from(e: Error) -> Self {
        ConvertError::Napi(e)
    }
}

fn refused(message: String) -> ConvertError {
    ConvertError::Refused(ConfigError::new(message))
}

/// Prefixes a refusal with where it happened, built only on the error path.
fn at(e: ConvertError, segment: &str) -> ConvertError {
    match e {
        ConvertError::Refused(mut c) if c.message.starts_with("at $") => {
            c.message.insert_str(4, segment);
            ConvertError::Refused(c)
        }
        other => other,
    }
}

/// What to reserve for a JS container of `len` elements: its length is the host's to set
/// (`new Array(2 ** 32 - 1)` has no elements), so it is a hint up to a small bound only.
fn reserve_for(len: u32) -> usize {
    (len as usize).min(1024)
}

pub fn to_json(env: Env, v: Val) -> Result<Value, ConvertError> {
    to_json_at(env, v, 0)
}

fn to_json_at(env: Env, v: Val, depth: usize) -> Result<Value, ConvertError> {
    to_json_of(env, v, js::kind(env, v)?, depth)
}

/// `kind` is `js::kind(env, v)`, which a caller that has already asked passes along: this
/// walk runs once per value of every hashed schema.
fn to_json_of(env: Env, v: Val, kind: Kind, depth: usize) -> Result<Value, ConvertError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(refused(format!(
            "value nests deeper than {MAX_VALUE_DEPTH} levels (or is cyclic); it cannot be JSON"
        )));
    }
    if kind == Kind::Object {
        // The members' handles die with this container, not with the whole walk.
        return js::scoped(env, || container_to_json(env, v, depth))?;
    }
    scalar_to_json(env, v, kind)
}

fn container_to_json(env: Env, v: Val, depth: usize) -> Result<Value, ConvertError> {
    if js::is_array(env, v)? {
        let len = js::array_len(env, v)?;
        let mut items = Vec::with_capacity(reserve_for(len));
        for i in 0..len {
            let item = js::element(env, v, i)?;
            let kind = js::kind(env, item)?;
            if kind == Kind::Undefined {
                return Err(refused(format!(
                    "at $[{i}]: undefined in an array cannot be JSON"
                )));
            }
            items.push(
                to_json_of(env, item, kind, depth + 1).map_err(|e| at(e, &format!("[{i}]")))?,
            );
        }
        return Ok(Value::Array(items));
    }
    let keys = js::own_keys(env, v)?;
    let len = js::array_len(env, keys)?;
    let mut map = Map::with_capacity(reserve_for(len));
    for i in 0..len {
        let key = js::element(env, keys, i)?;
        let member = js::property(env, v, key)?;
        let kind = js::kind(env, member)?;
        if kind == Kind::Undefined {
            continue;
        }
        let name = js::string(env, key)?;
        let value =
            to_json_of(env, member, kind, depth + 1).map_err(|e| at(e, &format!(".{name}")))?;
        map.insert(name, value);
    }
    Ok(Value::Object(map))
}

fn scalar_to_json(env: Env, v: Val, kind: Kind) -> Result<Value, ConvertError> {
    match kind {
        Kind::Null => Ok(Value::Null),
        Kind::Boolean => Ok(Value::Bool(js::boolean(env, v)?)),
        Kind::String => Ok(Value::String(js::string(env, v)?)),
        Kind::Number => {
            let n = js::number(env, v)?;
            Number::from_f64(n).map(Value::Number).ok_or_else(|| {
                refused(format!(
                    "at $: the non-finite number {} cannot be JSON",
                    crate::core::jcs::format_f64(n)
                ))
            })
        }
        Kind::Undefined => Err(refused("at $: undefined cannot be JSON".into())),
        other => Err(refused(format!(
            "at $: a {} cannot be JSON",
            format!("{other:?}").to_lowercase()
        ))),
    }
}

pub fn from_json(env: Env, value: &Value) -> napi::Result<Val> {
    match value {
        Value::Null => js::null(env),
        Value::Bool(b) => js::create_bool(env, *b),
        Value::Number(n) => js::create_number(env, n.as_f64().unwrap_or(0.0)),
        Value::String(s) => js::create_string(env, s),
        Value::Array(items) => {
            let arr = js::create_array(env, items.len())?;
            for (i, item) in items.iter().enumerate() {
                let v = from_json(env, item)?;
                js::set_element(env, arr, i as u32, v)?;
            }
            Ok(arr)
        }
        Value::Object(map) => {
            let obj = js::create_object(env)?;
            for (k, item) in map {
                let v = from_json(env, item)?;
                js::set_member(env, obj, k, v)?;
            }
            Ok(obj)
        }
    }
}

/// How deep the config walk looks: `config.risk.<tool>` is the deepest member checked (but
/// for the members of what `Look::Open` names).
const CONFIG_DEPTH: usize = 3;

/// The host config as the core's checks see it. `server` is only probed for a `connect`
/// method: it is a live object (often cyclic) that the core never needs to see into.
pub fn to_raw(env: Env, v: Val) -> napi::Result<Raw> {
    to_raw_at(env, v, 0, Look::Plain)
}

/// How one config value is read.
#[derive(Clone, Copy)]
enum Look {
    /// As its depth allows.
    Plain,
    /// A host object the config only calls methods of (`server.connect`, `http.oauth.store`'s
    /// `load` and `save`), read as those named members (inherited ones too: a class instance).
    Named(&'static [&'static str]),
    /// An object one level past `CONFIG_DEPTH` that the config checks (`http.oauth.dpop`,
    /// `http.oauth.tokenExchange`): its own members are read, objects among them are not.
    Open,
    /// A record whose members, whatever their names, are lists one level past the depth
    /// (`cassette.ignore`: tool names to JSON pointers): each read as `Open`.
    Lists,
}

fn look(depth: usize, name: &str) -> Look {
    match (depth, name) {
        (0, "server") => Look::Named(&["connect"]),
        (2, "store") => Look::Named(&["load", "save"]),
        (2, "dpop" | "tokenExchange") => Look::Open,
        // `sandbox.fs.read`, `sandbox.fs.write`, `sandbox.net.connect`: lists of strings (and
        // port numbers) one level past the depth.
        (2, "read" | "write" | "connect") => Look::Open,
        (1, "ignore") => Look::Lists,
        _ => Look::Plain,
    }
}

fn to_raw_at(env: Env, v: Val, depth: usize, how: Look) -> napi::Result<Raw> {
    Ok(match js::kind(env, v)? {
        Kind::Undefined => Raw::Undefined,
        Kind::Null => Raw::Null,
        Kind::Boolean => Raw::Bool(js::boolean(env, v)?),
        Kind::Number => Raw::Number(js::number(env, v)?),
        Kind::String => Raw::String(js::string(env, v)?),
        Kind::Function => Raw::Function,
        Kind::Object if matches!(how, Look::Named(_)) => {
            let names = match how {
                Look::Named(names) => names,
                _ => &[],
            };
            let mut members = Vec::new();
            for name in names {
                let member = js::named(env, v, name)?;
                members.push((
                    (*name).to_owned(),
                    to_raw_at(env, member, CONFIG_DEPTH, Look::Plain)?,
                ));
            }
            Raw::Object(members)
        }
        Kind::Object if depth >= CONFIG_DEPTH && !matches!(how, Look::Open) => {
            Raw::Other("[object Object]".into())
        }
        Kind::Object if js::is_array(env, v)? => {
            let len = js::array_len(env, v)?;
            let mut items = Vec::with_capacity(reserve_for(len));
            for i in 0..len {
                let item = to_raw_at(env, js::element(env, v, i)?, depth + 1, Look::Plain)?;
                // Every array of the config is one of strings, so its first undefined element
                // (a hole of `new Array(2 ** 32 - 1)` among them) is refused whatever follows:
                // reading on would only make the JS thread walk billions of holes first.
                let hole = item == Raw::Undefined;
                items.push(item);
                if hole {
                    break;
                }
            }
            Raw::Array(items)
        }
        Kind::Object => {
            let keys = js::own_keys(env, v)?;
            let len = js::array_len(env, keys)?;
            let mut members = Vec::with_capacity(reserve_for(len));
            for i in 0..len {
                let key = js::element(env, keys, i)?;
                let name = js::string(env, key)?;
                let member = js::property(env, v, key)?;
                let how = match how {
                    Look::Lists => Look::Open,
                    _ => look(depth, &name),
                };
                members.push((name, to_raw_at(env, member, depth + 1, how)?));
            }
            Raw::Object(members)
        }
        Kind::Symbol => Raw::Other("Symbol()".into()),
        Kind::BigInt => Raw::Other("bigint".into()),
        Kind::External => Raw::Other("[object Object]".into()),
    })
}

impl From<ConvertError> for Error<String> {
    fn from(e: ConvertError) -> Self {
        match e {
            ConvertError::Refused(c) => super::errors::refusal(c),
            ConvertError::Napi(n) => super::errors::from_napi(n),
        }
    }
}
