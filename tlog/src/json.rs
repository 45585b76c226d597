//! JSON as the record parser needs it: exact, honest about duplicates, and
//! bounded.
//!
//! `serde_json::Value` keeps the last of two equal keys and turns numbers into
//! `f64`; a public record must refuse the first and keep the exact decimal text
//! of the second. [`parse_exact`] reads a body into [`ExactJson`], a tree whose
//! objects keep every key in order (duplicates included) and whose numbers keep
//! the text the client wrote.
//!
//! It reads the body in one pass with an explicit stack, so neither parsing
//! nor refusing costs more than linear time or any call depth: a body nested
//! deeper than [`MAX_NESTING`] is refused as malformed the moment the limit
//! is crossed. (serde_json keeps number text only with its crate-wide
//! `arbitrary_precision` feature, which would change every other user of
//! serde_json in the workspace; string escapes are still decoded by
//! serde_json, and the tests hold this reader to serde_json's verdict on
//! what is JSON.)

use std::fmt;

/// Deepest nesting of arrays and objects a body may have. A record needs 3
/// (record, `positions`, a position); anything near this limit is an attack
/// or a mistake, never a record.
pub const MAX_NESTING: usize = 64;

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
    /// Whether some object in the tree names a key twice (`serde_json`
    /// would keep the last silently; a provider's answer that does is read
    /// as malformed). Walks with an explicit stack.
    pub fn repeats_a_key(&self) -> bool {
        let mut stack = vec![self];
        while let Some(value) = stack.pop() {
            match value {
                ExactJson::Array(items) => stack.extend(items),
                ExactJson::Object(members) => {
                    let mut keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
                    keys.sort_unstable();
                    if keys.windows(2).any(|pair| pair[0] == pair[1]) {
                        return true;
                    }
                    stack.extend(members.iter().map(|(_, v)| v));
                }
                _ => {}
            }
        }
        false
    }

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

/// Why a body is not JSON: the kind of error and where, never the input.
#[derive(Debug, thiserror::Error)]
#[error("the body is not valid JSON: {0}")]
pub struct MalformedJson(String);

/// Reads `bytes` as one JSON document (RFC 8259, UTF-8) into an
/// [`ExactJson`] tree, refusing nesting deeper than [`MAX_NESTING`].
pub fn parse_exact(bytes: &[u8]) -> Result<ExactJson, MalformedJson> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        MalformedJson(format!(
            "invalid UTF-8 {}",
            Position::of(bytes, e.valid_up_to())
        ))
    })?;
    Reader { bytes, text, at: 0 }.document()
}

/// A line and column (both from 1) of a byte offset, for error messages.
struct Position {
    line: usize,
    column: usize,
}

impl Position {
    fn of(bytes: &[u8], offset: usize) -> Position {
        let before = &bytes[..offset.min(bytes.len())];
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        Position {
            line: before.iter().filter(|b| **b == b'\n').count() + 1,
            column: offset - line_start + 1,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at line {} column {}", self.line, self.column)
    }
}

/// A container being read, innermost last on the stack.
enum Open {
    Array(Vec<ExactJson>),
    /// Members so far and the key of the member whose value is being read.
    Object(Vec<(String, ExactJson)>, String),
}

struct Reader<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> MalformedJson {
        MalformedJson(format!("{what} {}", Position::of(self.bytes, self.at)))
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Consumes `byte` after optional white space, or fails.
    fn expect(&mut self, byte: u8, what: &str) -> Result<(), MalformedJson> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    /// The whole document: one value and nothing after it. (Long: the
    /// parser's loop with an explicit stack, so no depth of nesting can
    /// overflow the thread's stack.)
    fn document(mut self) -> Result<ExactJson, MalformedJson> {
        let mut stack: Vec<Open> = Vec::new();
        'value: loop {
            // Read one value; a container opens a frame and reads its first value.
            self.skip_whitespace();
            let mut value = match self.peek() {
                Some(open @ (b'[' | b'{')) => {
                    if stack.len() == MAX_NESTING {
                        return Err(
                            self.error(&format!("nesting deeper than {MAX_NESTING} levels"))
                        );
                    }
                    self.at += 1;
                    self.skip_whitespace();
                    if open == b'[' {
                        if self.peek() == Some(b']') {
                            self.at += 1;
                            ExactJson::Array(Vec::new())
                        } else {
                            stack.push(Open::Array(Vec::new()));
                            continue 'value;
                        }
                    } else if self.peek() == Some(b'}') {
                        self.at += 1;
                        ExactJson::Object(Vec::new())
                    } else {
                        let key = self.member_key()?;
                        stack.push(Open::Object(Vec::new(), key));
                        continue 'value;
                    }
                }
                Some(b'"') => ExactJson::String(self.string()?),
                Some(b't') => self.literal("true", ExactJson::Bool(true))?,
                Some(b'f') => self.literal("false", ExactJson::Bool(false))?,
                Some(b'n') => self.literal("null", ExactJson::Null)?,
                Some(b'-' | b'0'..=b'9') => ExactJson::Number(self.number()?),
                Some(_) => return Err(self.error("syntax error")),
                None => return Err(self.error("unexpected end of input")),
            };
            // Hand the value to the enclosing containers, closing those that end.
            loop {
                self.skip_whitespace();
                match stack.last_mut() {
                    None => {
                        return if self.at == self.bytes.len() {
                            Ok(value)
                        } else {
                            Err(self.error("trailing characters"))
                        };
                    }
                    Some(Open::Array(items)) => {
                        items.push(value);
                        match self.peek() {
                            Some(b',') => {
                                self.at += 1;
                                continue 'value;
                            }
                            Some(b']') => self.at += 1,
                            _ => return Err(self.error("expected `,` or `]`")),
                        }
                    }
                    Some(Open::Object(members, key)) => {
                        members.push((std::mem::take(key), value));
                        match self.peek() {
                            Some(b',') => {
                                self.at += 1;
                                *key = self.member_key()?;
                                continue 'value;
                            }
                            Some(b'}') => self.at += 1,
                            _ => return Err(self.error("expected `,` or `}`")),
                        }
                    }
                }
                value = match stack.pop() {
                    Some(Open::Array(items)) => ExactJson::Array(items),
                    Some(Open::Object(members, _)) => ExactJson::Object(members),
                    // The frame just closed was on the stack.
                    None => return Err(self.error("syntax error")),
                };
            }
        }
    }

    /// A member's key and the `:` after it.
    fn member_key(&mut self) -> Result<String, MalformedJson> {
        self.skip_whitespace();
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a member name in double quotes"));
        }
        let key = self.string()?;
        self.expect(b':', "expected `:` after a member name")?;
        Ok(key)
    }

    fn literal(&mut self, word: &str, value: ExactJson) -> Result<ExactJson, MalformedJson> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("syntax error"))
        }
    }

    /// A string from its opening quote: raw control characters are refused,
    /// escapes are decoded by serde_json (which refuses bad ones, including
    /// lone surrogates).
    fn string(&mut self) -> Result<String, MalformedJson> {
        let start = self.at;
        self.at += 1;
        let mut escaped = false;
        loop {
            match self.peek() {
                None => return Err(self.error("unexpected end of input in a string")),
                Some(b'"') => break,
                Some(b'\\') => {
                    escaped = true;
                    // The escaped byte is ASCII in every valid escape; a
                    // multi-byte one is refused by the decoder below.
                    self.at += 2;
                }
                Some(0x00..=0x1f) => return Err(self.error("control character in a string")),
                Some(_) => self.at += 1,
            }
        }
        self.at += 1;
        let raw = self
            .text
            .get(start..self.at)
            .ok_or_else(|| self.error("invalid escape in a string"))?;
        if escaped {
            serde_json::from_str(raw).map_err(|_| {
                self.at = start;
                self.error("invalid escape in a string")
            })
        } else {
            Ok(raw[1..raw.len() - 1].to_owned())
        }
    }

    /// A number as RFC 8259 writes it: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Result<String, MalformedJson> {
        let start = self.at;
        let digits = |reader: &mut Reader<'_>| {
            let from = reader.at;
            while matches!(reader.peek(), Some(b'0'..=b'9')) {
                reader.at += 1;
            }
            reader.at - from
        };
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return Err(self.error("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("invalid number"));
            }
        }
        Ok(self.text[start..self.at].to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::json_tree;
    use proptest::prelude::*;
    use serde_json::Value;

    /// The tree as serde_json would read it (the last of duplicate keys wins).
    fn as_value(tree: &ExactJson) -> Value {
        match tree {
            ExactJson::Null => Value::Null,
            ExactJson::Bool(b) => Value::Bool(*b),
            ExactJson::Number(text) => serde_json::from_str(text).expect("a JSON number"),
            ExactJson::String(s) => Value::String(s.clone()),
            ExactJson::Array(items) => Value::Array(items.iter().map(as_value).collect()),
            ExactJson::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), as_value(v)))
                    .collect(),
            ),
        }
    }

    /// This reader and serde_json agree on whether `bytes` is JSON and, if
    /// it is, on its value. serde_json also refuses numbers beyond f64's
    /// range, which this reader keeps as text for the record rules to judge.
    fn agrees_with_serde_json(bytes: &[u8]) -> Result<(), TestCaseError> {
        let ours = parse_exact(bytes);
        match serde_json::from_slice::<Value>(bytes) {
            Ok(theirs) => {
                let tree = ours.map_err(|e| TestCaseError::fail(format!("refused: {e}")))?;
                prop_assert_eq!(as_value(&tree), theirs);
            }
            Err(e) if e.to_string().contains("number out of range") => {}
            Err(e) => prop_assert!(ours.is_err(), "accepted what serde_json refuses: {}", e),
        }
        Ok(())
    }

    /// JSON tokens, well-formed and broken, for sequences that are often
    /// nearly documents.
    const TOKENS: &[&str] = &[
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        " ",
        "\n",
        "\"a\"",
        "\"\\u00e9\\n\"",
        "\"\\ud800\"",
        "\"\\x\"",
        "\"\u{1}\"",
        "\"",
        "0",
        "01",
        "-0",
        "-",
        "1.5",
        "1.",
        ".5",
        "1e5",
        "1E+2",
        "1e",
        "2e-",
        "true",
        "tru",
        "false",
        "null",
        "nul",
        "NaN",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn arbitrary_bytes_are_judged_as_serde_json_judges_them(
            bytes in prop::collection::vec(any::<u8>(), 0..256)
        ) {
            agrees_with_serde_json(&bytes)?;
        }

        #[test]
        fn token_sequences_are_judged_as_serde_json_judges_them(
            tokens in prop::collection::vec(prop::sample::select(TOKENS.to_vec()), 0..14)
        ) {
            agrees_with_serde_json(tokens.concat().as_bytes())?;
        }

        #[test]
        fn one_byte_changes_to_valid_documents_are_judged_as_serde_json_judges_them(
            tree in json_tree(),
            at in any::<prop::sample::Index>(),
            byte in prop::sample::select(b"[]{}:,\"\\0123456789.eE+-tfn \x01\xff".to_vec()),
            change in 0..3u8,
        ) {
            let mut bytes = serde_json::to_vec(&tree).unwrap();
            let i = at.index(bytes.len());
            match change {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => { bytes.remove(i); }
            }
            agrees_with_serde_json(&bytes)?;
        }

        #[test]
        fn every_json_document_reads_back_to_its_value(tree in json_tree(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&tree).unwrap()
            } else {
                serde_json::to_string(&tree).unwrap()
            };
            agrees_with_serde_json(text.as_bytes())?;
        }
    }

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
    fn deep_nesting_inside_a_valid_document_is_refused_not_a_crash() {
        let depth = 5_000;
        let body = format!(
            r#"{{"id": "a", "thesis": {}1{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let error = parse_exact(body.as_bytes()).unwrap_err().to_string();
        assert!(error.contains("nesting"), "{error}");
    }

    #[test]
    fn nesting_up_to_the_limit_is_read_and_one_more_level_is_refused() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(parse_exact(nested(MAX_NESTING).as_bytes()).is_ok());
        let error = parse_exact(nested(MAX_NESTING + 1).as_bytes()).unwrap_err();
        assert!(
            error.to_string().contains("nesting deeper than 64"),
            "{error}"
        );
    }

    #[test]
    fn nesting_past_the_limit_is_malformed_not_a_crash() {
        let deep = "[".repeat(100_000);
        assert!(parse_exact(deep.as_bytes()).is_err());
    }
}
