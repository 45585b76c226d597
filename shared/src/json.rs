//! JSON as the record parser needs it: exact, and honest about duplicates.
//!
//! `serde_json::Value` keeps the last of two equal keys and turns numbers into
//! `f64`; a public record must refuse the first and keep the exact decimal text
//! of the second. [`parse_exact`] reads a body into [`ExactJson`], a tree whose
//! objects keep every key in order (duplicates included) and whose numbers keep
//! the text the client wrote. Syntax checking and the nesting limit are
//! `serde_json`'s own; this module only changes what is kept.

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// A JSON value with object members in document order and numbers as written.
#[derive(Debug, Clone, PartialEq)]
pub enum ExactJson {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as the exact text of the document (e.g. `"100.00"`, `"1e2"`).
    Number(String),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<ExactJson>),
    /// An object: every member in document order, duplicate keys included.
    Object(Vec<(String, ExactJson)>),
}

impl ExactJson {
    /// The JSON type's name, for error messages that must not echo values.
    pub fn type_name(&self) -> &'static str {
        match self {
            ExactJson::Null => "null",
            ExactJson::Bool(_) => "boolean",
            ExactJson::Number(_) => "number",
            ExactJson::String(_) => "string",
            ExactJson::Array(_) => "array",
            ExactJson::Object(_) => "object",
        }
    }
}

/// Why a body is not JSON. The message is serde_json's position-only text.
#[derive(Debug, thiserror::Error)]
#[error("the body is not valid JSON: {0}")]
pub struct MalformedJson(String);

/// Reads `bytes` as one JSON document into an [`ExactJson`] tree.
///
/// Syntax (including trailing garbage and nesting deeper than serde_json's
/// limit of 128) is checked by serde_json before the tree is built.
pub fn parse_exact(bytes: &[u8]) -> Result<ExactJson, MalformedJson> {
    // First pass: syntax and depth, with serde_json's own limits and messages.
    serde_json::from_slice::<de::IgnoredAny>(bytes)
        .map_err(|e| MalformedJson(position_only(&e)))?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = ExactSeed
        .deserialize(&mut de)
        .map_err(|e| MalformedJson(position_only(&e)))?;
    de.end().map_err(|e| MalformedJson(position_only(&e)))?;
    Ok(value)
}

/// serde_json's messages can quote the offending input; keep only the kind
/// of error and its position so nothing the client sent is echoed.
fn position_only(error: &serde_json::Error) -> String {
    let kind = match error.classify() {
        serde_json::error::Category::Io => "read error",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "unexpected value",
        serde_json::error::Category::Eof => "unexpected end of input",
    };
    format!("{kind} at line {} column {}", error.line(), error.column())
}

/// Builds one [`ExactJson`] node. Numbers are captured through `RawValue`,
/// which hands over the exact text; everything else is visited directly.
struct ExactSeed;

impl<'de> DeserializeSeed<'de> for ExactSeed {
    type Value = ExactJson;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<ExactJson, D::Error> {
        let raw = <&RawValue>::deserialize(deserializer)?;
        node_from_raw(raw.get()).map_err(de::Error::custom)
    }
}

fn node_from_raw(text: &str) -> Result<ExactJson, serde_json::Error> {
    match text.as_bytes().first() {
        Some(b'{') | Some(b'[') => {
            let mut de = serde_json::Deserializer::from_str(text);
            de.deserialize_any(ContainerVisitor)
        }
        Some(b'"') => serde_json::from_str(text).map(ExactJson::String),
        Some(b't') | Some(b'f') => serde_json::from_str(text).map(ExactJson::Bool),
        Some(b'n') => Ok(ExactJson::Null),
        _ => Ok(ExactJson::Number(text.to_owned())),
    }
}

struct ContainerVisitor;

impl<'de> Visitor<'de> for ContainerVisitor {
    type Value = ExactJson;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object or array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ExactJson, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ExactSeed)? {
            items.push(item);
        }
        Ok(ExactJson::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ExactJson, A::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(ExactSeed)?;
            members.push((key, value));
        }
        Ok(ExactJson::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_exact_text() {
        let v = parse_exact(br#"{"a": 100.00, "b": [1e2, -0.1]}"#).unwrap();
        assert_eq!(
            v,
            ExactJson::Object(vec![
                ("a".into(), ExactJson::Number("100.00".into())),
                (
                    "b".into(),
                    ExactJson::Array(vec![
                        ExactJson::Number("1e2".into()),
                        ExactJson::Number("-0.1".into())
                    ])
                ),
            ])
        );
    }

    #[test]
    fn duplicate_keys_are_kept_for_the_parser_to_refuse() {
        let v = parse_exact(br#"{"id": "a", "id": "b"}"#).unwrap();
        let ExactJson::Object(members) = v else {
            panic!("not an object")
        };
        assert_eq!(members.len(), 2);
    }

    #[test]
    fn strings_are_unescaped_and_literals_typed() {
        let v = parse_exact(br#"["a\"\u00e9", true, false, null]"#).unwrap();
        assert_eq!(
            v,
            ExactJson::Array(vec![
                ExactJson::String("a\"é".into()),
                ExactJson::Bool(true),
                ExactJson::Bool(false),
                ExactJson::Null
            ])
        );
    }

    #[test]
    fn malformed_input_is_refused_without_echo() {
        for body in [
            &b"{"[..],
            b"{\"a\":1}x",
            b"NaN",
            b"{\"a\": Infinity}",
            b"",
            b"\xff",
        ] {
            let err = parse_exact(body).unwrap_err().to_string();
            assert!(!err.contains("Infinity"), "{err}");
        }
    }

    #[test]
    fn nesting_past_the_limit_is_malformed_not_a_crash() {
        let deep = "[".repeat(100_000);
        assert!(parse_exact(deep.as_bytes()).is_err());
    }
}
