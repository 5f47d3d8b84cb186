//! Identity hashes, bit-exact with the engine: lowercase hex SHA-256 of JCS texts.

use super::canonical::canonical_jcs;
use super::error::Result;
use super::jcs;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(64);
    for byte in digest {
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

/// `toolsetHash`: the tuples sorted by name (stable, UTF-16 order).
pub fn toolset_hash(contracts: &[ContractRef<'_>]) -> Result<String> {
    let mut sorted: Vec<&ContractRef<'_>> = contracts.iter().collect();
    sorted.sort_by(|a, b| jcs::cmp_utf16(a.name_str(), b.name_str()));
    let mut out = String::with_capacity(contracts.len() * 512);
    out.push('[');
    for (i, contract) in sorted.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        contract.write_tuple(&mut out)?;
    }
    out.push(']');
    Ok(sha256_hex(&out))
}

/// One tool's authority: what it is, whether it needs approval, where it runs, its risk.
#[derive(Debug, Clone, Copy)]
pub struct AuthorityRef<'a> {
    pub contract: ContractRef<'a>,
    pub needs_approval: bool,
    pub executor: &'a str,
    pub risk: Option<&'a str>,
}

/// `toolsetAuthorityHash`: `{ name, contract, needsApproval, executor, risk? }` sorted by name.
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
    fn authority_changes_with_approval() {
        let a = json!({"name": "a", "description": "", "parameters": {}});
        let rec = |needs_approval| AuthorityRef {
            contract: ContractRef::of(&a),
            needs_approval,
            executor: "inprocess",
            risk: None,
        };
        assert_ne!(
            toolset_authority_hash(&[rec(true)]).unwrap(),
            toolset_authority_hash(&[rec(false)]).unwrap()
        );
    }
}
