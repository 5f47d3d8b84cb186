//! A light JSON tree over a message's own text, for the hot path of a call's result.
//!
//! `serde_json::Value` with `preserve_order` builds an `IndexMap` (a hash table, a SipHash
//! per key, an owned `String` per key and per string) for every object: for a 10 KB
//! structured result that is most of what the reading thread spends per call. A `Lite` tree
//! borrows its strings from the text wherever they carry no escape, keeps an object's members
//! in one `Vec`, and is validated as it is (`LiteJson` is its representation for the
//! `jsonschema` crate), so the result can be handed on as the server's own text, never
//! re-serialized.
//!
//! It is built by serde_json's own parser (same strings, same numbers, same errors), and
//! refuses what it could not answer exactly as `Value` would: an object that repeats a key
//! (`Value` keeps the last one), and nesting past the depth the caller allows. A refusal sends
//! the caller back to the `Value` path, which then decides.

use jsonschema::json::{Array, Json, JsonNumber, Node, NodeIdentity, Object};
use jsonschema::JsonType;
use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum Lite<'a> {
    #[default]
    Null,
    Bool(bool),
    Number(Num),
    Str(Cow<'a, str>),
    Array(Vec<Lite<'a>>),
    Object(Vec<(Cow<'a, str>, Lite<'a>)>),
}

/// A number as serde_json reads it (and as `Value` would hold it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    fn number(self) -> Number {
        match self {
            Num::U(u) => u.into(),
            Num::I(i) => i.into(),
            // serde_json never reads a non-finite number; 0 is unreachable.
            Num::F(f) => Number::from_f64(f).unwrap_or_else(|| 0.into()),
        }
    }
}

/// `text` as a tree, or `None` when it is not JSON, repeats a key in an object, or nests more
/// than `max_depth` arrays and objects.
pub(crate) fn parse(text: &str, max_depth: usize) -> Option<Lite<'_>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let tree = Seed { depth: max_depth }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(tree)
}

impl Lite<'_> {
    /// The same value as serde_json reads it: for the cold paths (an invalid result's issues,
    /// content that is not all text).
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Lite::Null => Value::Null,
            Lite::Bool(b) => Value::Bool(*b),
            Lite::Number(n) => Value::Number(n.number()),
            Lite::Str(s) => Value::String(s.clone().into_owned()),
            Lite::Array(items) => Value::Array(items.iter().map(Lite::to_value).collect()),
            Lite::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone().into_owned(), v.to_value()))
                    .collect(),
            ),
        }
    }

    /// The member `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Self> {
        match self {
            Lite::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Lite::Str(s) => Some(s),
            _ => None,
        }
    }
}

struct Seed {
    /// Arrays and objects this value may still open.
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Lite<'de>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Lite<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed {
    type Value = Lite<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Lite<'de>, E> {
        Ok(Lite::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Lite<'de>, E> {
        Ok(Lite::Bool(b))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Lite<'de>, E> {
        Ok(Lite::Number(Num::U(u)))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Lite<'de>, E> {
        Ok(Lite::Number(Num::I(i)))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Lite<'de>, E> {
        Ok(Lite::Number(Num::F(f)))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Lite<'de>, E> {
        Ok(Lite::Str(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Lite<'de>, E> {
        Ok(Lite::Str(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Lite<'de>, E> {
        Ok(Lite::Str(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lite<'de>, A::Error> {
        let depth = self.inner::<A::Error>()?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(Seed { depth })? {
            items.push(item);
        }
        Ok(Lite::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lite<'de>, A::Error> {
        let depth = self.inner::<A::Error>()?;
        let mut members: Vec<(Cow<'de, str>, Lite<'de>)> = Vec::new();
        while let Some(key) = map.next_key_seed(Key)? {
            let value = map.next_value_seed(Seed { depth })?;
            members.push((key, value));
        }
        if repeats_a_key(&members) {
            return Err(A::Error::custom("an object repeats a key"));
        }
        Ok(Lite::Object(members))
    }
}

impl Seed {
    fn inner<E: serde::de::Error>(self) -> Result<usize, E> {
        self.depth
            .checked_sub(1)
            .ok_or_else(|| E::custom("nested too deeply"))
    }
}

/// Whether two members share a key: pairwise for a few, sorted beyond (a result of 150,000
/// distinct keys would otherwise cost 10^10 comparisons on the reading thread).
fn repeats_a_key<V>(members: &[(Cow<'_, str>, V)]) -> bool {
    if members.len() <= 16 {
        return members
            .iter()
            .enumerate()
            .any(|(i, (k, _))| members[..i].iter().any(|(seen, _)| seen == k));
    }
    let mut keys: Vec<&str> = members.iter().map(|(k, _)| &**k).collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
}

/// An object key, borrowed from the text when it has no escape.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s))
    }
}

/// An object whose members' values are left as text, in order: a reply's `result` as the
/// router reads it (one pass over the frame), each part then parsed only if it is needed.
/// Reading fails for anything but an object, and for an object that repeats a key.
#[derive(Debug)]
pub(crate) struct RawObject<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> RawObject<'a> {
    /// The text of member `key`; `None` when it is absent or `null`.
    pub(crate) fn get(&self, key: &str) -> Option<&'a str> {
        let (_, v) = self.0.iter().find(|(k, _)| k == key)?;
        Some(v.get()).filter(|t| *t != "null")
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for RawObject<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawObject<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject<'de>, A::Error> {
                let mut members: Vec<(Cow<'de, str>, &'de RawValue)> = Vec::new();
                while let Some(key) = map.next_key_seed(Key)? {
                    members.push((key, map.next_value()?));
                }
                if repeats_a_key(&members) {
                    return Err(A::Error::custom("an object repeats a key"));
                }
                Ok(RawObject(members))
            }
        }
        d.deserialize_map(V)
    }
}

/// `Lite` as a representation the `jsonschema` crate validates in place.
pub(crate) struct LiteJson;

impl Json for LiteJson {
    type Node<'a> = &'a Lite<'a>;
    type PreparedKey = Box<str>;
    type StringBuffer = Lite<'static>;
    // Lookups scan an object's members; most objects a result carries are small.
    const KEYS_PER_LOOKUP: usize = 8;

    fn prepare_key(key: &str) -> Box<str> {
        key.into()
    }

    fn with_string_node<T>(
        buffer: &mut Lite<'static>,
        string: &str,
        f: impl FnOnce(Self::Node<'_>) -> T,
    ) -> T {
        *buffer = Lite::Str(Cow::Owned(string.to_owned()));
        f(buffer)
    }
}

impl JsonNumber for Num {
    fn as_u64(&self) -> Option<u64> {
        self.number().as_u64()
    }

    fn as_i64(&self) -> Option<i64> {
        self.number().as_i64()
    }

    fn as_f64(&self) -> Option<f64> {
        self.number().as_f64()
    }

    fn as_str(&self) -> Cow<'_, str> {
        Cow::Owned(self.number().to_string())
    }

    fn to_number(&self) -> Cow<'_, Number> {
        Cow::Owned(self.number())
    }
}

impl<'a> Node<'a, LiteJson> for &'a Lite<'a> {
    type Object = &'a [(Cow<'a, str>, Lite<'a>)];
    type Array = &'a [Lite<'a>];
    type Number = Num;

    fn as_object(&self) -> Option<Self::Object> {
        match self {
            Lite::Object(members) => Some(members),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<Self::Array> {
        match self {
            Lite::Array(items) => Some(items),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            Lite::Str(s) => Some(Cow::Borrowed(&**s)),
            _ => None,
        }
    }

    fn as_number(&self) -> Option<Num> {
        match self {
            Lite::Number(n) => Some(*n),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self {
            Lite::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Lite::Null)
    }

    fn json_type(&self) -> JsonType {
        match self {
            Lite::Null => JsonType::Null,
            Lite::Bool(_) => JsonType::Boolean,
            Lite::Number(_) => JsonType::Number,
            Lite::Str(_) => JsonType::String,
            Lite::Array(_) => JsonType::Array,
            Lite::Object(_) => JsonType::Object,
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(Lite::to_value(self))
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(
            std::ptr::from_ref::<Lite<'a>>(*self) as usize
        ))
    }
}

impl<'a> Object<'a, LiteJson> for &'a [(Cow<'a, str>, Lite<'a>)] {
    type Node = &'a Lite<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }

    fn get(&self, key: &Box<str>) -> Option<&'a Lite<'a>> {
        self.iter().find(|(k, _)| **k == **key).map(|(_, v)| v)
    }

    fn members(&self) -> Members<'a> {
        Members(self.iter())
    }
}

pub(crate) struct Members<'a>(std::slice::Iter<'a, (Cow<'a, str>, Lite<'a>)>);

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a Lite<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&**k, v))
    }
}

impl<'a> Array<'a, LiteJson> for &'a [Lite<'a>] {
    type Node = &'a Lite<'a>;
    type ElementsIter = std::slice::Iter<'a, Lite<'a>>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }

    fn elements(&self) -> Self::ElementsIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_value_reads() {
        let text = r#"{"s":"h\u00e9llo \"q\"","n":[0,-1,1.5,18446744073709551615,1e300,-0],"b":[true,false,null],"o":{"k":{}}}"#;
        let tree = parse(text, 128).unwrap();
        assert_eq!(
            tree.to_value(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        // Strings without an escape are borrowed from the text.
        let Lite::Object(members) = &tree else {
            panic!()
        };
        assert!(matches!(members[0].0, Cow::Borrowed(_)));
        assert!(matches!(members[0].1, Lite::Str(Cow::Owned(_))));
    }

    /// A result object of 200,000 distinct keys reads (the check is sorted, not pairwise), and
    /// one repeat among them is still refused, in the envelope and in a tree alike.
    #[test]
    fn wide_objects_are_checked_for_repeats_without_comparing_every_pair() {
        let wide = |repeat: bool| {
            let mut text = String::from("{");
            for i in 0..200_000 {
                text.push_str(&format!("\"k{i}\":{i},"));
            }
            text.push_str(if repeat { "\"k7\":0}" } else { "\"end\":0}" });
            text
        };
        let distinct = wide(false);
        let raw: RawObject = serde_json::from_str(&distinct).unwrap();
        assert_eq!(raw.get("k199999"), Some("199999"));
        assert!(parse(&distinct, 128).is_some());
        let repeated = wide(true);
        assert!(serde_json::from_str::<RawObject>(&repeated).is_err());
        assert!(parse(&repeated, 128).is_none());
    }

    #[test]
    fn refuses_what_value_would_read_differently_or_not_at_all() {
        assert!(parse(r#"{"a":1,"a":2}"#, 128).is_none());
        let wide = (0..40)
            .map(|i| format!("\"k{i}\":{i}"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(parse(&format!("{{{wide},\"k7\":0}}"), 128).is_none());
        assert!(parse(&format!("{{{wide}}}"), 128).is_some());
        assert!(parse("[[[1]]]", 3).is_some());
        assert!(parse("[[[1]]]", 2).is_none());
        assert!(parse("1e400", 128).is_none());
        assert!(parse("[1] x", 128).is_none());
        assert!(
            parse("\"\\ud800\"", 128).is_none()
                == serde_json::from_str::<Value>("\"\\ud800\"").is_err()
        );
    }

    #[test]
    fn conforms_to_the_validator_contract() {
        let text = jsonschema::json::conformance::document().to_string();
        let tree = parse(&text, 128).unwrap();
        jsonschema::json::conformance::assert_conformance::<LiteJson>(&&tree);
    }

    #[test]
    fn validates_as_the_value_validator_does() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "object",
                "properties": {"id": {"type": "integer"}, "name": {"type": "string", "minLength": 2}},
                "required": ["id", "name"]}}},
            "required": ["items"]
        });
        let lite = jsonschema::options_for::<LiteJson>()
            .build(&schema)
            .unwrap();
        let value = jsonschema::validator_for(&schema).unwrap();
        for text in [
            r#"{"items":[{"id":1,"name":"ab"}]}"#,
            r#"{"items":[{"id":1.0,"name":"ab"}]}"#,
            r#"{"items":[{"id":1.5,"name":"ab"}]}"#,
            r#"{"items":[{"id":1,"name":"a"}]}"#,
            r#"{"items":[{"name":"ab"}]}"#,
            r#"{"items":{}}"#,
            r#"[]"#,
        ] {
            let tree = parse(text, 128).unwrap();
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(lite.is_valid(&tree), value.is_valid(&v), "{text}");
        }
    }
}
