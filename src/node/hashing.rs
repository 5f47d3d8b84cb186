//! Identity hashing exports (bit-exact with the engine) and `validateJson`.

use super::convert::{from_json, to_json};
use super::errors::{refusal, JsError};
use super::hash_text::Reader;
use super::js::{self, Kind};
use super::value::JsAny;
use crate::core::hash::{self, AuthorityRef, ContractRef};
use crate::core::validate::Compiled;
use crate::core::{canonical, jcs};
use napi::bindgen_prelude::{Env, Function, JsValue, Unknown};
use napi_derive::napi;
use serde_json::{Map, Value};

#[napi(js_name = "jcsSerialize", catch_unwind)]
pub fn jcs_serialize(env: Env, value: Unknown) -> napi::Result<String, String> {
    Ok(jcs::serialize(&to_json(env.raw(), value.raw())?))
}

#[napi(
    js_name = "canonicalizeSchema",
    catch_unwind,
    ts_return_type = "unknown"
)]
pub fn canonicalize_schema(env: Env, schema: Unknown) -> napi::Result<JsAny, String> {
    let canonical = canonical::canonicalize(&to_json(env.raw(), schema.raw())?).map_err(refusal)?;
    Ok(JsAny(
        from_json(env.raw(), &canonical).map_err(super::errors::from_napi)?,
    ))
}

#[napi(js_name = "schemaHash", catch_unwind)]
pub fn schema_hash(env: Env, schema: Option<Unknown>) -> napi::Result<String, String> {
    let schema = match schema {
        Some(s)
            if js::kind(env.raw(), s.raw()).map_err(super::errors::from_napi)?
                != Kind::Undefined =>
        {
            Some(to_json(env.raw(), s.raw())?)
        }
        _ => None,
    };
    hash::schema_hash(schema.as_ref()).map_err(refusal)
}

/// The members of a contract that identity covers, read one by one: a ToolDef's other members
/// (its `execute` function among them) are ignored, not converted.
const CONTRACT_MEMBERS: [&str; 4] = ["name", "description", "parameters", "version"];

fn contract_value(env: Env, obj: Unknown) -> Result<Value, JsError> {
    let raw = env.raw();
    let mut map = Map::with_capacity(4);
    if js::kind(raw, obj.raw()).map_err(super::errors::from_napi)? != Kind::Object {
        return Err(refusal(crate::core::ConfigError::new(
            "a tool contract must be an object with name, description and parameters",
        )));
    }
    for key in CONTRACT_MEMBERS {
        let member = js::named(raw, obj.raw(), key).map_err(super::errors::from_napi)?;
        if js::kind(raw, member).map_err(super::errors::from_napi)? != Kind::Undefined {
            map.insert(key.to_owned(), to_json(raw, member)?);
        }
    }
    Ok(Value::Object(map))
}

fn list<'a>(env: Env, array: Unknown<'a>) -> Result<Vec<Unknown<'a>>, JsError> {
    let raw = env.raw();
    let is_array = js::is_array(raw, array.raw()).map_err(super::errors::from_napi)?;
    if !is_array {
        return Err(refusal(crate::core::ConfigError::new(
            "expected an array of tool contracts",
        )));
    }
    let len = js::array_len(raw, array.raw()).map_err(super::errors::from_napi)?;
    (0..len)
        .map(|i| {
            let v = js::element(raw, array.raw(), i).map_err(super::errors::from_napi)?;
            // SAFETY: `v` is an element just read on `env`, the env of the call this runs in,
            // in that call's own scope (no inner scope is opened here), so it lives as long as
            // `array`'s lifetime `'a`, which the `Unknown` is given.
            Ok(unsafe { Unknown::from_raw_unchecked(raw, v) })
        })
        .collect()
}

#[napi(js_name = "toolContractHash", catch_unwind)]
pub fn tool_contract_hash(env: Env, contract: Unknown) -> napi::Result<String, String> {
    let value = contract_value(env, contract)?;
    hash::tool_contract_hash(ContractRef::of(&value)).map_err(refusal)
}

#[napi(js_name = "toolsetHash", catch_unwind)]
pub fn toolset_hash(env: Env, contracts: Unknown) -> napi::Result<String, String> {
    let values = list(env, contracts)?
        .into_iter()
        .map(|c| contract_value(env, c))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<ContractRef<'_>> = values.iter().map(ContractRef::of).collect();
    hash::toolset_hash(&refs).map_err(refusal)
}

/// `toolsetHash` from the contracts' JSON text, which lib/hashing.js writes in chunks (with
/// `JSON.stringify`, after a walk in JS has found nothing it would write differently from the
/// strict walk above): `next()` returns the next chunk, `null` after the last, or `false` when
/// a value was not plain JSON (the chunks are read as `hash_text::Reader` says). `null` comes
/// back whenever this path cannot be sure (a `false`, a text serde refuses, such as a lone
/// surrogate's escape, or a contract the canonical form refuses), and the caller then asks
/// `toolsetHash`, which decides and words any refusal.
#[napi(js_name = "toolsetHashFrom", catch_unwind)]
pub fn toolset_hash_from(
    env: Env,
    next: Function<(), Unknown>,
) -> napi::Result<Option<String>, String> {
    let raw = env.raw();
    let mut reader = Reader::default();
    loop {
        let chunk = next.call(()).map_err(super::errors::from_napi)?;
        match js::kind(raw, chunk.raw()).map_err(super::errors::from_napi)? {
            Kind::String => {
                reader.add(js::string(raw, chunk.raw()).map_err(super::errors::from_napi)?)
            }
            Kind::Null => break,
            _ => return Ok(None),
        }
    }
    Ok(reader
        .finish()
        .and_then(|tuples| hash::toolset_hash_of(tuples).ok()))
}

#[napi(js_name = "toolsetAuthorityHash", catch_unwind)]
pub fn toolset_authority_hash(env: Env, tools: Unknown) -> napi::Result<String, String> {
    let raw = env.raw();
    let mut records = Vec::new();
    for tool in list(env, tools)? {
        let contract = contract_value(env, tool)?;
        let read = |key: &str| -> Result<Value, JsError> {
            let v = js::named(raw, tool.raw(), key).map_err(super::errors::from_napi)?;
            match js::kind(raw, v).map_err(super::errors::from_napi)? {
                Kind::Undefined => Ok(Value::Null),
                _ => Ok(to_json(raw, v)?),
            }
        };
        let needs_approval = read("needsApproval")?.as_bool().unwrap_or(false);
        let executor = match read("executor")? {
            Value::String(s) => s,
            _ => "inprocess".to_owned(),
        };
        let risk = read("risk")?.as_str().map(str::to_owned);
        // A confined source's tools carry its policy's digest (non-enumerable).
        let sandbox = read("sandbox")?.as_str().map(str::to_owned);
        records.push((contract, needs_approval, executor, risk, sandbox));
    }
    let refs: Vec<AuthorityRef<'_>> = records
        .iter()
        .map(
            |(c, needs_approval, executor, risk, sandbox)| AuthorityRef {
                contract: ContractRef::of(c),
                needs_approval: *needs_approval,
                executor,
                risk: risk.as_deref(),
                sandbox: sandbox.as_deref(),
            },
        )
        .collect();
    hash::toolset_authority_hash(&refs).map_err(refusal)
}

#[napi(
    js_name = "validateJson",
    catch_unwind,
    ts_return_type = "{ valid: true } | { valid: false, issues: Array<{ message: string, path?: string }> }"
)]
pub fn validate_json(env: Env, schema: Unknown, value: Unknown) -> napi::Result<JsAny, String> {
    let raw = env.raw();
    let compiled = Compiled::new(&to_json(raw, schema.raw())?).map_err(|mut e| {
        e.message = format!("validateJson: {}", e.message);
        refusal(e)
    })?;
    let issues = compiled.issues(&to_json(raw, value.raw())?);
    let mut out = Map::new();
    out.insert("valid".into(), Value::Bool(issues.is_empty()));
    if !issues.is_empty() {
        let list = issues
            .into_iter()
            .map(|i| {
                let mut m = Map::new();
                m.insert("message".into(), Value::String(i.message));
                if !i.path.is_empty() {
                    m.insert("path".into(), Value::String(i.path));
                }
                Value::Object(m)
            })
            .collect();
        out.insert("issues".into(), Value::Array(list));
    }
    Ok(JsAny(
        from_json(raw, &Value::Object(out)).map_err(super::errors::from_napi)?,
    ))
}
