//! A lock's pinned tools: each contract kept as the lock's text, and an import's tree compared
//! against that text as it is read, without building the lock's tree.
//!
//! A lock of thousands of tools is megabytes. Building a tree of every pinned contract was
//! about 60 of the 140 ms of CPU a 5,000-tool lock added to an import, on a thread beside a
//! starting server; only a contract that differs is ever needed as a tree (for the diff), and
//! it is built then. The lock's text is kept whole, each contract a range of it: copying out
//! every contract was another 14 MB for such a lock.

use super::{refusal, shown, LockedTool, Result};
use crate::core::jcs;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Range;

/// A lock's whole text and where its `tools` member lies in it.
#[derive(Debug)]
pub struct ToolsText {
    text: String,
    at: Range<usize>,
}

impl ToolsText {
    /// `at` is where `tools` lies in `text` (`span`).
    pub fn new(text: String, at: Range<usize>) -> Self {
        Self { text, at }
    }
}

/// Where `part`, a value read out of `text` (a slice of it), lies in it.
pub fn span(text: &str, part: &RawValue) -> Range<usize> {
    let start = part.get().as_ptr() as usize - text.as_ptr() as usize;
    start..start + part.get().len()
}

/// One pinned tool; its contract an object's JSON text, a range of the lock's text.
#[derive(Debug)]
struct PinnedTool {
    name: String,
    original: String,
    contract: Range<usize>,
}

#[derive(Debug)]
pub struct Pinned {
    /// The lock's text, which the contracts are ranges of.
    text: String,
    /// Sorted by final name.
    tools: Vec<PinnedTool>,
    /// Where each final name is in `tools`.
    index: HashMap<String, usize>,
}

impl Pinned {
    /// How many tools the lock pins.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Where the tool pinned under final name `name` is (sorted by final name).
    pub fn find(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    fn contract(&self, i: usize) -> &str {
        &self.text[self.tools[i].contract.clone()]
    }

    /// Whether the tool pinned under final name `name` has exactly `contract`'s tree: what
    /// parsing its text and comparing the trees answers (key order ignored, a number spelled
    /// otherwise unequal), read without building the tree. Any doubt answers no: the diff
    /// then decides on the full trees.
    pub fn pins(&self, name: &str, contract: &Value) -> bool {
        self.find(name)
            .is_some_and(|i| is_tree(self.contract(i), contract))
    }

    /// The pinned tool at `i` (sorted by final name) with its contract's tree, for the diff.
    /// `Err` when the text cannot be built into a tree (nested deeper than a parse allows):
    /// such a lock pins nothing, and refuses.
    pub fn locked(&self, i: usize, origin: &str) -> Result<LockedTool> {
        let tool = &self.tools[i];
        let contract = serde_json::from_str(self.contract(i))
            .map_err(|e| refusal(origin, format!("'tools' cannot be read ({e})")))?;
        Ok(LockedTool {
            name: tool.name.clone(),
            original: tool.original.clone(),
            contract,
        })
    }
}

/// The pinned tools of a lock's `tools` text. A malformed entry refuses the lock (fail
/// closed: tools that cannot be read pin nothing, and an empty lock would admit everything as
/// an addition).
pub fn parse_tools(tools: Option<ToolsText>, origin: &str) -> Result<Pinned> {
    let Some(ToolsText { text, at }) = tools else {
        return Err(refusal(origin, "'tools' cannot be read".into()));
    };
    // Read once as a lock written by 'rulvar-mcp lock' reads; anything else (a repeated key,
    // an entry of another shape) is read again member by member, which words the refusal.
    let mut tools = match read_written(&text, at.clone()) {
        Some(tools) => tools,
        None => read_entries(&text, at, origin)?,
    };
    tools.sort_by(|a, b| jcs::cmp_utf16(&a.name, &b.name));
    if let Some(pair) = tools.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(refusal(
            origin,
            format!(
                "'tools' pins '{}' twice",
                crate::core::lockdiff::visible(&pair[0].name, 128)
            ),
        ));
    }
    let index = tools
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.clone(), i))
        .collect();
    Ok(Pinned { text, tools, index })
}

/// The entries in one pass, when each is an object of a string `name` and `original` and an
/// object `contract`, no key repeated; `None` otherwise.
fn read_written(text: &str, at: Range<usize>) -> Option<Vec<PinnedTool>> {
    let entries: Vec<Entry<'_>> = serde_json::from_str(&text[at]).ok()?;
    entries
        .into_iter()
        .map(|entry| {
            let contract = entry.contract.filter(|c| c.get().starts_with('{'))?;
            Some(PinnedTool {
                name: entry.name?,
                original: entry.original?,
                contract: span(text, contract),
            })
        })
        .collect()
}

/// An entry as `read_written` takes it: an object only (not an array read by position), its
/// other members skipped, a repeated one refused.
#[derive(Default)]
struct Entry<'a> {
    name: Option<String>,
    original: Option<String>,
    contract: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for Entry<'de> {
    fn deserialize<D: Deserializer<'de>>(reader: D) -> std::result::Result<Self, D::Error> {
        reader.deserialize_map(EntryVisitor)
    }
}

struct EntryVisitor;

/// An entry's key, read without a copy of it.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Name,
    Original,
    Contract,
    #[serde(other)]
    Other,
}

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = Entry<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a lock entry")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Entry<'de>, A::Error> {
        use serde::de::Error;
        let mut entry = Entry::default();
        let repeated = || A::Error::custom("a repeated key");
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Name if entry.name.is_none() => entry.name = Some(map.next_value()?),
                Key::Original if entry.original.is_none() => {
                    entry.original = Some(map.next_value()?)
                }
                Key::Contract if entry.contract.is_none() => {
                    entry.contract = Some(map.next_value()?)
                }
                Key::Name | Key::Original | Key::Contract => return Err(repeated()),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(entry)
    }
}

/// The entries member by member: each refusal says which entry and what of it.
fn read_entries(text: &str, at: Range<usize>, origin: &str) -> Result<Vec<PinnedTool>> {
    let bad = |what: String| refusal(origin, what);
    let entries: Vec<&RawValue> = serde_json::from_str(&text[at])
        .map_err(|e| bad(format!("'tools' cannot be read ({e})")))?;
    // A text the lock's first scan let through (a number out of range) is unreadable here,
    // as it is to a parse of the whole.
    let read = |raw: &RawValue| {
        serde_json::from_str::<Value>(raw.get())
            .map_err(|e| bad(format!("'tools' cannot be read ({e})")))
    };
    let mut tools = Vec::with_capacity(entries.len());
    for (i, entry) in entries.into_iter().enumerate() {
        // An entry's members by key, the last of a key repeated winning as in a tree; an
        // entry that is not an object has none.
        let fields: BTreeMap<String, &RawValue> = if entry.get().starts_with('{') {
            serde_json::from_str(entry.get())
                .map_err(|e| bad(format!("'tools' cannot be read ({e})")))?
        } else {
            read(entry)?;
            BTreeMap::new()
        };
        let tree = |key: &str| fields.get(key).map(|raw| read(raw)).transpose();
        let string = |key: &str| match tree(key)? {
            Some(Value::String(s)) => Ok(s),
            other => Err(bad(format!(
                "tools[{i}].{key} must be a string, got {}",
                shown(other.as_ref())
            ))),
        };
        let name = string("name")?;
        let original = string("original")?;
        // The contract's own text is read when an import differs from it (`locked`).
        let contract = match fields.get("contract") {
            Some(raw) if raw.get().starts_with('{') => span(text, raw),
            _ => {
                return Err(bad(format!(
                    "tools[{i}].contract must be an object, got {}",
                    shown(tree("contract")?.as_ref())
                )))
            }
        };
        tools.push(PinnedTool {
            name,
            original,
            contract,
        });
    }
    Ok(tools)
}

/// Whether `text` parses to `value`'s tree. A text the parser refuses (too deep) is no.
fn is_tree(text: &str, value: &Value) -> bool {
    let mut reader = serde_json::Deserializer::from_str(text);
    Same(value).deserialize(&mut reader).unwrap_or(false)
}

/// Reads one JSON value and answers whether it equals the tree it holds. Every visit mirrors
/// how `Value` builds itself from the same call, so the answer is the trees' equality; what
/// does not match is still read to its end (the parser requires it) and ignored.
struct Same<'a>(&'a Value);

impl<'de> DeserializeSeed<'de> for Same<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, reader: D) -> std::result::Result<bool, D::Error> {
        reader.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Same<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<bool, E> {
        Ok(*self.0 == Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<bool, E> {
        Ok(*self.0 == Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<bool, E> {
        Ok(*self.0 == Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<bool, E> {
        Ok(*self.0 == Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<bool, E> {
        Ok(matches!(self.0, Value::String(s) if s == v))
    }

    fn visit_unit<E>(self) -> std::result::Result<bool, E> {
        Ok(self.0.is_null())
    }

    fn visit_none<E>(self) -> std::result::Result<bool, E> {
        Ok(self.0.is_null())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<bool, A::Error> {
        let items = self.0.as_array();
        let mut same = items.is_some();
        let mut read = 0;
        loop {
            let item = items.and_then(|items| items.get(read)).filter(|_| same);
            let next = match item {
                Some(item) => seq.next_element_seed(Same(item))?,
                None => seq.next_element::<IgnoredAny>()?.map(|_| false),
            };
            let Some(equal) = next else { break };
            same &= equal;
            read += 1;
        }
        Ok(same && items.is_some_and(|items| items.len() == read))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<bool, A::Error> {
        let Some(object) = self.0.as_object() else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(false);
        };
        let mut same = true;
        // The members matched, by where they live: a key the text repeats would match one
        // member twice (a tree keeps the last), so the count alone would not do. A text of more
        // members than the tree has is not it. A small object's are kept on the stack: one
        // allocation per object compared was a cost of its own over thousands of schemas.
        let small = object.len() <= LINEAR_LOOKUP;
        let mut on_stack = [0usize; LINEAR_LOOKUP];
        let mut on_heap: Vec<usize> = Vec::with_capacity(if small { 0 } else { object.len() });
        let mut read = 0;
        while let Some(member) = map.next_key_seed(Member(object))? {
            match member.filter(|_| same && read < object.len()) {
                Some(value) => {
                    let at = value as *const Value as usize;
                    if small {
                        on_stack[read] = at;
                    } else {
                        on_heap.push(at);
                    }
                    read += 1;
                    same = map.next_value_seed(Same(value))?;
                }
                None => {
                    same = false;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !same || read != object.len() {
            return Ok(false);
        }
        let matched = if small {
            &mut on_stack[..read]
        } else {
            &mut on_heap[..]
        };
        matched.sort_unstable();
        Ok(matched.windows(2).all(|pair| pair[0] != pair[1]))
    }
}

/// Reads a key and finds its member in the object being compared.
struct Member<'a>(&'a Map<String, Value>);

impl<'de, 'a> DeserializeSeed<'de> for Member<'a> {
    type Value = Option<&'a Value>;

    fn deserialize<D: Deserializer<'de>>(
        self,
        reader: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        reader.deserialize_str(self)
    }
}

impl<'de, 'a> Visitor<'de> for Member<'a> {
    type Value = Option<&'a Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, key: &str) -> std::result::Result<Self::Value, E> {
        // Most objects of a schema have a few members: comparing their keys in turn costs less
        // than hashing the key (the map's SipHash was about a quarter of the lock's CPU over an
        // import).
        if self.0.len() <= LINEAR_LOOKUP {
            return Ok(self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v));
        }
        Ok(self.0.get(key))
    }
}

/// Up to how many members a key is looked for in turn rather than by its hash.
const LINEAR_LOOKUP: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A lock's `tools` text on its own.
    fn whole(tools: &str) -> ToolsText {
        ToolsText {
            text: tools.to_owned(),
            at: 0..tools.len(),
        }
    }

    /// The answer a parse and a tree comparison give, for every pair.
    fn agrees(text: &str, value: &Value) -> bool {
        let tree: Value = serde_json::from_str(text).unwrap();
        let answer = is_tree(text, value);
        assert_eq!(answer, tree == *value, "{text} against {value}");
        answer
    }

    #[test]
    fn answers_what_the_trees_equality_answers() {
        let v = json!({"a": [1, -2, 2.5, "x", null, true, {"b": {}}], "c": "é\n"});
        assert!(agrees(
            r#"{"c":"\u00e9\n","a":[1,-2,2.5,"x",null,true,{"b":{}}]}"#,
            &v
        ));
        for text in [
            r#"{"a":[1,-2,2.5,"x",null,true,{"b":{}}]}"#,
            r#"{"a":[1,-2,2.5,"x",null,true,{"b":{}}],"c":"é\n","d":1}"#,
            r#"{"a":[1,-2,2.5,"x",null,true,{"b":{}},0],"c":"é\n"}"#,
            r#"{"a":[1,-2,2.5,"x",null,true],"c":"é\n"}"#,
            r#"{"a":[1.0,-2,2.5,"x",null,true,{"b":{}}],"c":"é\n"}"#,
            r#"{"a":[1,-2,2.5,"x",null,false,{"b":{}}],"c":"é\n"}"#,
            r#"{"a":[1,-2,2.5,"x",0,true,{"b":{}}],"c":"é\n"}"#,
            r#"{"a":[1,-2,2.5,"x",null,true,{"b":[]}],"c":"é\n"}"#,
            r#"{"a":{"0":1},"c":"é\n"}"#,
            r#"[1]"#,
            r#""x""#,
        ] {
            assert!(!agrees(text, &v));
        }
    }

    #[test]
    fn extreme_numbers_and_escaped_text_answer_as_trees_do() {
        // Each text against the tree of every other: only its own tree (or one it parses to)
        // is the same.
        let texts = [
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "1.7976931348623157e308",
            "1.7976931348623155e308",
            "5e-324",
            "-0",
            "0",
            "-0.0",
            "1e21",
            "100000000000000000000000",
            r#""\u001b[2J\u0007""#,
            r#""\ud83d\ude00""#,
            r#"{"\u006b":1}"#,
            r#"{"k":1}"#,
            r#"{"k\u0000":1}"#,
        ];
        for a in texts {
            for b in texts {
                let tree: Value = serde_json::from_str(b).unwrap();
                agrees(a, &tree);
            }
        }
    }

    #[test]
    fn a_repeated_key_is_read_as_a_tree_reads_it() {
        // The tree keeps the last of a repeated key: {"a":2} here, not the two-member object.
        // Matched twice, `a` would count as both members of `two`.
        let two = json!({"a": 2, "b": 3});
        assert!(!agrees(r#"{"a":2,"a":2}"#, &two));
        assert!(!agrees(r#"{"a":2,"b":3,"a":1}"#, &two));
        // Where the trees are equal, a repeated key still answers no: never yes where they
        // differ, and the diff decides the rest (it finds no change here).
        assert!(!is_tree(r#"{"a":1,"a":2}"#, &json!({"a": 2})));
    }

    #[test]
    fn members_are_found_in_narrow_and_wide_objects_alike() {
        for n in [1, LINEAR_LOOKUP, LINEAR_LOOKUP + 1, 40] {
            let members = |keys: Vec<usize>| {
                let inner: Vec<String> = keys.iter().map(|i| format!("\"k{i}\":{i}")).collect();
                format!("{{{}}}", inner.join(","))
            };
            let tree: Value = serde_json::from_str(&members((0..n).collect())).unwrap();
            assert!(agrees(&members((0..n).rev().collect()), &tree), "{n}");
            let mut other: Vec<usize> = (0..n).collect();
            other[n / 2] = n;
            assert!(!agrees(&members(other), &tree), "{n}");
            let mut repeated: Vec<usize> = (0..n).collect();
            repeated.push(0);
            assert!(!is_tree(&members(repeated), &tree), "{n}");
        }
    }

    #[test]
    fn a_contract_no_tree_can_be_built_of_pins_nothing_and_refuses() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
        let mut deep_tree = json!([]);
        for _ in 0..199 {
            deep_tree = json!([deep_tree]);
        }
        for (contract, tree) in [
            (deep, json!({ "a": deep_tree })),
            (r#"{"a":1e400}"#.to_owned(), json!({ "a": f64::MAX })),
        ] {
            let tools = format!(r#"[{{"name":"t","original":"t","contract":{contract}}}]"#);
            // Taken in by the scan, as the lock's first read takes it in.
            let pinned = parse_tools(Some(whole(&tools)), "the lock").unwrap();
            assert!(!pinned.pins("t", &tree));
            let refusal = pinned.locked(0, "the lock").unwrap_err().message;
            assert!(refusal.contains("'tools' cannot be read"), "{refusal}");
        }
    }

    #[test]
    fn the_one_pass_read_takes_only_what_the_member_by_member_read_takes_alike() {
        let contract = r#"{"name":"t","inputSchema":{"type":"object"}}"#;
        let entries = [
            format!(r#"{{"name":"a","original":"b","contract":{contract}}}"#),
            format!(
                r#"{{"contract":{contract},"x":[1e400,{{"y":"\u0000"}}],"original":"b","name":"a2"}}"#
            ),
            format!(
                r#"{{"n\u0061me":"\u00e9\n","original":"\ud83d\ude00","contract":{contract}}}"#
            ),
            format!(r#"{{"name":"a","name":"c","original":"b","contract":{contract}}}"#),
            format!(r#"{{"name":"a","n\u0061me":"c","original":"b","contract":{contract}}}"#),
            format!(r#"{{"name":"a","original":"b","contract":{contract},"contract":{{}}}}"#),
            format!(r#"["a","b",{contract}]"#),
            format!(r#"{{"name":1,"original":"b","contract":{contract}}}"#),
            format!(r#"{{"name":"a","original":null,"contract":{contract}}}"#),
            r#"{"name":"a","original":"b","contract":[1]}"#.to_owned(),
            r#"{"name":"a","original":"b"}"#.to_owned(),
            r#"{"name":"a","original":"b","contract":"{}"}"#.to_owned(),
            "1e400".to_owned(),
            "{}".to_owned(),
        ];
        let mut taken = 0;
        for entry in &entries {
            let tools = format!("[{entry}]");
            let at = 0..tools.len();
            let member_by_member = read_entries(&tools, at.clone(), "the lock");
            let Some(one_pass) = read_written(&tools, at.clone()) else {
                continue;
            };
            taken += 1;
            let member_by_member = member_by_member.unwrap_or_else(|e| panic!("{entry}: {e:?}"));
            let read = |t: &[PinnedTool]| {
                t.iter()
                    .map(|t| {
                        (
                            t.name.clone(),
                            t.original.clone(),
                            tools[t.contract.clone()].to_owned(),
                        )
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(read(&one_pass), read(&member_by_member), "{entry}");
        }
        // The first three are taken in one pass; every other is left to the member-by-member
        // read, which words its refusal (or, for a repeated key, keeps the last).
        assert_eq!(taken, 3);
        let all = format!("[{}]", entries[..3].join(","));
        let pinned = parse_tools(Some(whole(&all)), "the lock").unwrap();
        assert_eq!(pinned.len(), 3);
        assert!(pinned.pins("é\n", &serde_json::from_str(contract).unwrap()));
    }
}
