//! Identity hashes, bit-exact with the engine: lowercase hex SHA-256 of JCS texts.

use super::canonical::canonical_jcs;
use super::error::Result;
use super::jcs;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

fn hex(digest: &[u8]) -> String {
    let mut out = String::with_capacity(64);
    for &byte in digest {
        out.push(char::from_digit((byte >> 4) as u32, 16).unwrap_or('0'));
        out.push(char::from_digit((byte & 0xf) as u32, 16).unwrap_or('0'));
    }
    out
}

/// `schemaHash`: absent hashes exactly like `true`.
pub fn schema_hash(schema: Option<&Value>) -> Result<String> {
    let mut out = String::new();
    write_canonical_or_true(&mut out, schema)?;
    Ok(sha256_hex(&out))
}

/// The JCS text of a schema's canonical form; an absent schema is `true`.
fn write_canonical_or_true(out: &mut String, schema: Option<&Value>) -> Result<()> {
    match schema {
        Some(s) => canonical_jcs(out, s),
        None => {
            out.push_str("true");
            Ok(())
        }
    }
}

/// The fields of a tool contract that identity covers; any other member is ignored.
#[derive(Debug, Clone, Copy)]
pub struct ContractRef<'a> {
    pub name: Option<&'a Value>,
    pub description: Option<&'a Value>,
    pub parameters: Option<&'a Value>,
    pub version: Option<&'a Value>,
}

impl<'a> ContractRef<'a> {
    /// Reads the contract members of a JSON object (a non-object has none).
    pub fn of(value: &'a Value) -> Self {
        let get = |k: &str| value.as_object().and_then(|m| m.get(k));
        Self {
            name: get("name"),
            description: get("description"),
            parameters: get("parameters"),
            version: get("version"),
        }
    }

    fn name_str(&self) -> &str {
        self.name.and_then(Value::as_str).unwrap_or("")
    }

    /// The JCS text of `{ name, description, parameters: canonical(parameters), version? }`,
    /// written in one pass (the members are already in JCS order here).
    pub fn write_tuple(&self, out: &mut String) -> Result<()> {
        let mut first = true;
        let mut member = |out: &mut String, key: &str| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
            jcs::write_string(out, key);
            out.push(':');
        };
        out.push('{');
        if let Some(d) = self.description {
            member(out, "description");
            jcs::write_value(out, d);
        }
        if let Some(n) = self.name {
            member(out, "name");
            jcs::write_value(out, n);
        }
        member(out, "parameters");
        write_canonical_or_true(out, self.parameters)?;
        if let Some(v) = self.version {
            member(out, "version");
            jcs::write_value(out, v);
        }
        out.push('}');
        Ok(())
    }
}

pub fn tool_contract_hash(contract: ContractRef<'_>) -> Result<String> {
    let mut out = String::new();
    contract.write_tuple(&mut out)?;
    Ok(sha256_hex(&out))
}

/// One contract's tuple text, with the name it sorts by; a tuple that could not be written
/// keeps its refusal, so that the one reported is the first in the toolset's order, whatever
/// order the tuples were written in.
pub struct Tuple {
    name: String,
    text: Result<String>,
}

impl Tuple {
    pub fn of(contract: ContractRef<'_>) -> Self {
        let mut text = String::with_capacity(256);
        Self {
            name: contract.name_str().to_owned(),
            text: contract.write_tuple(&mut text).map(|()| text),
        }
    }
}

/// `toolsetHash`: the tuples sorted by name (stable, UTF-16 order).
pub fn toolset_hash(contracts: &[ContractRef<'_>]) -> Result<String> {
    toolset_hash_of(contracts.iter().copied().map(Tuple::of).collect())
}

/// `toolsetHash` of tuples already written, in the toolset's order.
pub fn toolset_hash_of(mut tuples: Vec<Tuple>) -> Result<String> {
    tuples.sort_by(|a, b| jcs::cmp_utf16(&a.name, &b.name));
    let mut digest = Sha256::new();
    digest.update(b"[");
    for (i, tuple) in tuples.into_iter().enumerate() {
        if i > 0 {
            digest.update(b",");
        }
        digest.update(tuple.text?.as_bytes());
    }
    digest.update(b"]");
    Ok(hex(&digest.finalize()))
}

/// The tuples of a JSON array of contracts as text (`{ name, description, parameters,
/// version? }` each, as `JSON.stringify` wrote them), or `None` when the text is not such an
/// array: the caller then reads the contracts another way, which decides.
pub fn tuples_of_text(text: &str) -> Option<Vec<Tuple>> {
    let contracts: Vec<Value> = serde_json::from_str(text).ok()?;
    Some(
        contracts
            .iter()
            .map(|c| Tuple::of(ContractRef::of(c)))
            .collect(),
    )
}

/// One tool's authority: what it is, whether it needs approval, where it runs, its risk.
#[derive(Debug, Clone, Copy)]
pub struct AuthorityRef<'a> {
    pub contract: ContractRef<'a>,
    pub needs_approval: bool,
    pub executor: &'a str,
    pub risk: Option<&'a str>,
    /// The digest of the confinement its server runs under (`sandbox`), when it has one: absent
    /// otherwise, so every record without one is the engine's own.
    pub sandbox: Option<&'a str>,
}

/// `toolsetAuthorityHash`: `{ name, contract, needsApproval, executor, risk?, sandbox? }` sorted
/// by name.
pub fn toolset_authority_hash(tools: &[AuthorityRef<'_>]) -> Result<String> {
    let mut sorted: Vec<&AuthorityRef<'_>> = tools.iter().collect();
    sorted.sort_by(|a, b| jcs::cmp_utf16(a.contract.name_str(), b.contract.name_str()));
    let mut records = Vec::with_capacity(sorted.len());
    for tool in sorted {
        let mut record = Map::with_capacity(5);
        if let Some(n) = tool.contract.name {
            record.insert("name".into(), n.clone());
        }
        record.insert(
            "contract".into(),
            Value::String(tool_contract_hash(tool.contract)?),
        );
        record.insert("needsApproval".into(), Value::Bool(tool.needs_approval));
        record.insert("executor".into(), Value::String(tool.executor.to_owned()));
        if let Some(r) = tool.risk {
            record.insert("risk".into(), Value::String(r.to_owned()));
        }
        if let Some(s) = tool.sandbox {
            record.insert("sandbox".into(), Value::String(s.to_owned()));
        }
        records.push(Value::Object(record));
    }
    Ok(sha256_hex(&jcs::serialize(&Value::Array(records))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absent_schema_hashes_like_true() {
        assert_eq!(
            schema_hash(None).unwrap(),
            schema_hash(Some(&json!(true))).unwrap()
        );
        assert_eq!(sha256_hex("[]"), toolset_hash(&[]).unwrap());
    }

    #[test]
    fn toolset_order_ignores_input_order() {
        let a = json!({"name": "a", "description": "", "parameters": {}});
        let b = json!({"name": "b", "description": "", "parameters": {"title": "x"}});
        let one = toolset_hash(&[ContractRef::of(&a), ContractRef::of(&b)]).unwrap();
        let two = toolset_hash(&[ContractRef::of(&b), ContractRef::of(&a)]).unwrap();
        assert_eq!(one, two);
    }

    #[test]
    fn text_of_contracts_hashes_like_their_values() {
        let list = json!([
            {"name": "b", "description": "", "parameters": {"properties": {"x": {"$ref": "#/$defs/d"}}, "$defs": {"d": {"type": "string", "title": "t"}}}},
            {"name": "a", "description": "é", "parameters": {"minimum": 1.0, "maximum": 1e21}, "version": 2}
        ]);
        let values = list.as_array().unwrap();
        let refs: Vec<ContractRef<'_>> = values.iter().map(ContractRef::of).collect();
        let tuples = tuples_of_text(&list.to_string()).unwrap();
        assert_eq!(
            toolset_hash_of(tuples).unwrap(),
            toolset_hash(&refs).unwrap()
        );
        assert!(tuples_of_text("{}").is_none());
        assert!(tuples_of_text(r#"[{"name":"\ud800"}]"#).is_none());
    }

    #[test]
    fn the_refusal_reported_is_the_first_by_name() {
        let list = json!([
            {"name": "b", "parameters": {"$ref": "#/nowhere"}},
            {"name": "a", "parameters": {"$ref": "remote.json"}}
        ]);
        let values = list.as_array().unwrap();
        let refs: Vec<ContractRef<'_>> = values.iter().map(ContractRef::of).collect();
        let first = refs[1].write_tuple(&mut String::new()).unwrap_err();
        assert_eq!(toolset_hash(&refs).unwrap_err().message, first.message);
    }

    #[test]
    fn authority_changes_with_approval() {
        let a = json!({"name": "a", "description": "", "parameters": {}});
        let rec = |needs_approval| AuthorityRef {
            contract: ContractRef::of(&a),
            needs_approval,
            executor: "inprocess",
            risk: None,
            sandbox: None,
        };
        assert_ne!(
            toolset_authority_hash(&[rec(true)]).unwrap(),
            toolset_authority_hash(&[rec(false)]).unwrap()
        );
    }
}
