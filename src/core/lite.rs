//! A light JSON tree over a message's own text, for the hot path of a call's result.
//!
//! `serde_json::Value` with `preserve_order` builds an `IndexMap` (a hash table, a SipHash
//! per key, an owned `String` per key and per string) for every object: for a 10 KB
//! structured result that is most of what the reading thread spends per call. A `Tree` is one
//! `Vec` of slots in document order (a container's slot says how many members it has and
//! where its slots end), borrows its strings from the text wherever they carry no escape, and
//! is validated as it is (`LiteJson` is its representation for the `jsonschema` crate), so the
//! result can be handed on as the server's own text, never re-serialized. One allocation per
//! tree, not one per object: a tree of nested `Vec`s spent twice as long being built (and
//! dropped) as serde_json spends reading the text.
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

/// A parsed text: its slots in document order, the root first.
#[derive(Debug)]
pub(crate) struct Tree<'a> {
    slots: Vec<Slot<'a>>,
}

/// One value of a tree. A container's members follow it (an object's as a key's slot, then
/// its value's), and `end` is the index just past its last slot, so a reader steps over it
/// whole.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Slot<'a> {
    Null,
    Bool(bool),
    Number(Num),
    Str(Cow<'a, str>),
    Array { len: u32, end: u32 },
    Object { len: u32, end: u32 },
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
pub(crate) fn parse(text: &str, max_depth: usize) -> Option<Tree<'_>> {
    let mut de = serde_json::Deserializer::from_str(text);
    // About one slot per 5-10 bytes of typical JSON (a small call input has 3 in 16 bytes);
    // a huge text grows the rest as it goes.
    let mut slots = Vec::with_capacity((text.len() / 8 + 4).min(64 * 1024));
    Seed {
        depth: max_depth,
        slots: &mut slots,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    Some(Tree { slots })
}

impl<'a> Tree<'a> {
    /// The value the text is.
    pub(crate) fn root(&self) -> Lite<'_> {
        Lite {
            slots: &self.slots,
            at: 0,
        }
    }
}

/// One value of a tree, as its readers and the validator see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lite<'a> {
    slots: &'a [Slot<'a>],
    at: usize,
}

impl<'a> Lite<'a> {
    fn slot(self) -> &'a Slot<'a> {
        &self.slots[self.at]
    }

    /// The same value as serde_json reads it: for the cold paths (an invalid result's issues,
    /// content that is not all text).
    pub(crate) fn to_value(self) -> Value {
        match self.slot() {
            Slot::Null => Value::Null,
            Slot::Bool(b) => Value::Bool(*b),
            Slot::Number(n) => Value::Number(n.number()),
            Slot::Str(s) => Value::String(s.clone().into_owned()),
            Slot::Array { .. } => Value::Array(self.items().map(|v| v.to_value()).collect()),
            Slot::Object { .. } => Value::Object(
                self.members()
                    .map(|(k, v)| (k.to_owned(), v.to_value()))
                    .collect(),
            ),
        }
    }

    /// The member `key` of an object.
    pub(crate) fn get(self, key: &str) -> Option<Lite<'a>> {
        self.members().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub(crate) fn as_str(self) -> Option<&'a str> {
        match self.slot() {
            Slot::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn is_array(self) -> bool {
        matches!(self.slot(), Slot::Array { .. })
    }

    /// An array's items (none for anything else).
    pub(crate) fn items(self) -> Items<'a> {
        let left = match self.slot() {
            Slot::Array { len, .. } => *len,
            _ => 0,
        };
        Items {
            slots: self.slots,
            at: self.at + 1,
            left,
        }
    }

    /// An object's members, in order (none for anything else).
    fn members(self) -> Members<'a> {
        let left = match self.slot() {
            Slot::Object { len, .. } => *len,
            _ => 0,
        };
        Members {
            slots: self.slots,
            at: self.at + 1,
            left,
        }
    }
}

/// The index just past the value at `at`.
fn past(slots: &[Slot<'_>], at: usize) -> usize {
    match slots[at] {
        Slot::Array { end, .. } | Slot::Object { end, .. } => end as usize,
        _ => at + 1,
    }
}

/// An array's items in order; the default has none.
#[derive(Clone, Default)]
pub(crate) struct Items<'a> {
    slots: &'a [Slot<'a>],
    at: usize,
    left: u32,
}

impl<'a> Iterator for Items<'a> {
    type Item = Lite<'a>;

    fn next(&mut self) -> Option<Lite<'a>> {
        self.left = self.left.checked_sub(1)?;
        let item = Lite {
            slots: self.slots,
            at: self.at,
        };
        self.at = past(self.slots, self.at);
        Some(item)
    }
}

pub(crate) struct Members<'a> {
    slots: &'a [Slot<'a>],
    at: usize,
    left: u32,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, Lite<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        self.left = self.left.checked_sub(1)?;
        let key = match &self.slots[self.at] {
            Slot::Str(k) => &**k,
            // Unreachable: the builder writes a key's slot before each member's value.
            _ => "",
        };
        let value = Lite {
            slots: self.slots,
            at: self.at + 1,
        };
        self.at = past(self.slots, self.at + 1);
        Some((key, value))
    }
}

/// Builds a value's slots onto the tree.
struct Seed<'t, 'a> {
    /// Arrays and objects this value may still open.
    depth: usize,
    slots: &'t mut Vec<Slot<'a>>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, 'de> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.slots.push(Slot::Null);
        Ok(())
    }

    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.slots.push(Slot::Bool(b));
        Ok(())
    }

    fn visit_u64<E>(self, u: u64) -> Result<(), E> {
        self.slots.push(Slot::Number(Num::U(u)));
        Ok(())
    }

    fn visit_i64<E>(self, i: i64) -> Result<(), E> {
        self.slots.push(Slot::Number(Num::I(i)));
        Ok(())
    }

    fn visit_f64<E>(self, f: f64) -> Result<(), E> {
        self.slots.push(Slot::Number(Num::F(f)));
        Ok(())
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<(), E> {
        self.slots.push(Slot::Str(Cow::Borrowed(s)));
        Ok(())
    }

    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.slots.push(Slot::Str(Cow::Owned(s.to_owned())));
        Ok(())
    }

    fn visit_string<E>(self, s: String) -> Result<(), E> {
        self.slots.push(Slot::Str(Cow::Owned(s)));
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let depth = inner::<A::Error>(self.depth)?;
        let at = self.slots.len();
        self.slots.push(Slot::Array { len: 0, end: 0 });
        let mut len = 0u32;
        while seq
            .next_element_seed(Seed {
                depth,
                slots: &mut *self.slots,
            })?
            .is_some()
        {
            len = len.checked_add(1).ok_or_else(too_big)?;
        }
        let end = u32::try_from(self.slots.len()).map_err(|_| too_big())?;
        self.slots[at] = Slot::Array { len, end };
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let depth = inner::<A::Error>(self.depth)?;
        let at = self.slots.len();
        self.slots.push(Slot::Object { len: 0, end: 0 });
        let mut len = 0u32;
        while map
            .next_key_seed(Key {
                slots: &mut *self.slots,
            })?
            .is_some()
        {
            map.next_value_seed(Seed {
                depth,
                slots: &mut *self.slots,
            })?;
            len = len.checked_add(1).ok_or_else(too_big)?;
        }
        let end = u32::try_from(self.slots.len()).map_err(|_| too_big())?;
        self.slots[at] = Slot::Object { len, end };
        let object = Lite {
            slots: self.slots,
            at,
        };
        if repeats_a_key(object.members().map(|(k, _)| k), len as usize) {
            return Err(A::Error::custom("an object repeats a key"));
        }
        Ok(())
    }
}

fn inner<E: serde::de::Error>(depth: usize) -> Result<usize, E> {
    depth
        .checked_sub(1)
        .ok_or_else(|| E::custom("nested too deeply"))
}

/// Past what a slot's index holds (more than 4 billion values: never a real message).
fn too_big<E: serde::de::Error>() -> E {
    E::custom("too many values")
}

/// Whether two of `len` keys are the same: pairwise for a few, sorted beyond (a result of
/// 150,000 distinct keys would otherwise cost 10^10 comparisons on the reading thread).
fn repeats_a_key<'k>(keys: impl Iterator<Item = &'k str>, len: usize) -> bool {
    const FEW: usize = 16;
    if len <= FEW {
        let mut seen = [""; FEW];
        for (i, key) in keys.enumerate().take(FEW) {
            if seen[..i].contains(&key) {
                return true;
            }
            seen[i] = key;
        }
        return false;
    }
    let mut keys: Vec<&str> = keys.collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
}

/// An object key's slot, borrowed from the text when it has no escape.
struct Key<'t, 'a> {
    slots: &'t mut Vec<Slot<'a>>,
}

impl<'de> DeserializeSeed<'de> for Key<'_, 'de> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let key = KeyText.deserialize(d)?;
        self.slots.push(Slot::Str(key));
        Ok(())
    }
}

/// An object key, borrowed from the text when it has no escape.
struct KeyText;

impl<'de> DeserializeSeed<'de> for KeyText {
    type Value = Cow<'de, str>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyText {
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
                while let Some(key) = map.next_key_seed(KeyText)? {
                    members.push((key, map.next_value()?));
                }
                if repeats_a_key(members.iter().map(|(k, _)| &**k), members.len()) {
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
    type Node<'a> = Lite<'a>;
    type PreparedKey = Box<str>;
    type StringBuffer = Vec<Slot<'static>>;
    // Lookups scan an object's members; most objects a result carries are small.
    const KEYS_PER_LOOKUP: usize = 8;

    fn prepare_key(key: &str) -> Box<str> {
        key.into()
    }

    fn with_string_node<T>(
        buffer: &mut Vec<Slot<'static>>,
        string: &str,
        f: impl FnOnce(Self::Node<'_>) -> T,
    ) -> T {
        buffer.clear();
        buffer.push(Slot::Str(Cow::Owned(string.to_owned())));
        f(Lite {
            slots: buffer,
            at: 0,
        })
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

impl<'a> Node<'a, LiteJson> for Lite<'a> {
    type Object = LiteObject<'a>;
    type Array = LiteArray<'a>;
    type Number = Num;

    fn as_object(&self) -> Option<LiteObject<'a>> {
        match self.slot() {
            Slot::Object { len, .. } => Some(LiteObject(*self, *len as usize)),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<LiteArray<'a>> {
        match self.slot() {
            Slot::Array { len, .. } => Some(LiteArray(*self, *len as usize)),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        self.as_str().map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<Num> {
        match self.slot() {
            Slot::Number(n) => Some(*n),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self.slot() {
            Slot::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self.slot(), Slot::Null)
    }

    fn json_type(&self) -> JsonType {
        match self.slot() {
            Slot::Null => JsonType::Null,
            Slot::Bool(_) => JsonType::Boolean,
            Slot::Number(_) => JsonType::Number,
            Slot::Str(_) => JsonType::String,
            Slot::Array { .. } => JsonType::Array,
            Slot::Object { .. } => JsonType::Object,
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(Lite::to_value(*self))
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(
            std::ptr::from_ref::<Slot<'a>>(self.slot()) as usize,
        ))
    }
}

/// An object node and its number of members.
#[derive(Clone, Copy)]
pub(crate) struct LiteObject<'a>(Lite<'a>, usize);

impl<'a> Object<'a, LiteJson> for LiteObject<'a> {
    type Node = Lite<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        self.1
    }

    fn get(&self, key: &Box<str>) -> Option<Lite<'a>> {
        self.0.get(key)
    }

    fn members(&self) -> Members<'a> {
        self.0.members()
    }
}

/// An array node and its number of items.
#[derive(Clone, Copy)]
pub(crate) struct LiteArray<'a>(Lite<'a>, usize);

impl<'a> Array<'a, LiteJson> for LiteArray<'a> {
    type Node = Lite<'a>;
    type ElementsIter = Items<'a>;

    fn len(&self) -> usize {
        self.1
    }

    fn elements(&self) -> Items<'a> {
        self.0.items()
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
            tree.root().to_value(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        // Strings without an escape are borrowed from the text.
        assert!(matches!(tree.slots[1], Slot::Str(Cow::Borrowed("s"))));
        assert!(matches!(tree.slots[2], Slot::Str(Cow::Owned(_))));
        // Each container's slots end where its next sibling's begin.
        let o = tree.root().get("o").unwrap();
        assert_eq!(o.get("k").unwrap().to_value(), serde_json::json!({}));
        assert_eq!(past(&tree.slots, o.at), tree.slots.len());
        let n: Vec<Value> = tree
            .root()
            .get("n")
            .unwrap()
            .items()
            .map(|v| v.to_value())
            .collect();
        assert_eq!(n.len(), 6);
        assert_eq!(
            tree.root().get("b").unwrap().to_value(),
            serde_json::json!([true, false, null])
        );
    }

    /// Members and items are stepped over whole, however deep the values between them nest,
    /// and an empty container has none.
    #[test]
    fn walks_nested_values_as_value_does() {
        for text in [
            r#"[[],{},[[1,[2]],{"a":{"b":[3]}}],"x",{"k":[{},[]]},4]"#,
            r#"{"a":[1,{"b":2}],"c":{"d":{"e":[[],[[]]]}},"f":null}"#,
            r#"[]"#,
            r#"{}"#,
            r#""s""#,
        ] {
            let tree = parse(text, 128).unwrap();
            assert_eq!(
                tree.root().to_value(),
                serde_json::from_str::<Value>(text).unwrap(),
                "{text}"
            );
        }
        let tree = parse(r#"{"a":[1,{"b":2}],"c":3}"#, 128).unwrap();
        assert_eq!(
            tree.root().get("c").unwrap().to_value(),
            serde_json::json!(3)
        );
        assert!(tree.root().get("b").is_none());
        assert_eq!(tree.root().get("a").unwrap().items().count(), 2);
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
        // The repeat is found among the keys of its own object, not a nested one's.
        assert!(parse(r#"{"a":{"a":1},"b":[{"a":2}]}"#, 128).is_some());
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
        jsonschema::json::conformance::assert_conformance::<LiteJson>(&tree.root());
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
            assert_eq!(lite.is_valid(tree.root()), value.is_valid(&v), "{text}");
        }
    }
}
