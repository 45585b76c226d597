//! JSON Schema (2020-12) of the two record kinds, generated from the
//! constants and predicates the parser applies (`super::text`, the
//! identifier and URL patterns, the limits), for the contract view and the
//! OpenAPI document. The schemas state a new record's rules exactly, except
//! the ones JSON Schema cannot express (`INEXPRESSIBLE`); a test in
//! `record/tests.rs` holds the parser and the schemas to the same verdict
//! on generated records.
//!
//! Patterns are searched, not anchored, wherever the engines differ: a `$`
//! in Python's `re` (which schemathesis and `jsonschema` use) also matches
//! before a final line break, so "no control characters" is stated as `not`
//! a pattern that finds one.

use super::guard::SensitiveRule;
use super::text::{URL_PATTERN, char_class, is_blank, is_forbidden_in_text, is_prose_break};
use super::{
    Action, ID_PATTERN, MAX_AMOUNT, MAX_ID_CHARS, MAX_NAME_CHARS, MAX_POSITIONS, MAX_TEXT_CHARS,
    MAX_URL_CHARS, Mode, YEARS,
};
use serde_json::{Map, Value, json};

/// The rules of a new record JSON Schema cannot state, each with why: the
/// parser applies them on top of the schema (rule names as in error
/// details).
pub(crate) const INEXPRESSIBLE: &[(&str, &str)] = &[
    (
        "precision",
        "a number must keep its exact decimal value as the IEEE double RFC 8785 prints (at most 15 significant digits): JSON Schema compares values, not spellings",
    ),
    (
        "reconciliation",
        "with positions, |equity - (cash + sum(quantity * mark))| <= 0.02 in exact decimals: arithmetic across fields",
    ),
    (
        "cash_exceeds_equity",
        "without positions, cash <= equity + 0.02: a comparison of two fields",
    ),
    (
        "future_timestamp",
        "asOf at most 5 minutes later than the service's clock: depends on the time of the request",
    ),
    (
        "sensitive_content",
        "no credentials, keys, seed phrases, card or bank numbers, e-mail addresses or the write token in any text: checksums and key pairs, not patterns",
    ),
    (
        "hidden_character",
        "no tag characters (U+E0000-U+E007F) or noncharacters beyond the Basic Multilingual Plane in any text: JSON Schema's regular expressions cannot name characters beyond it alike in every engine",
    ),
    (
        "duplicate_key",
        "no member name twice in one object: JSON Schema sees a parsed object, whose duplicates are already gone",
    ),
    (
        "format",
        "source.url must also parse as a URL with a host (WHATWG URL Standard: host syntax, port range); the schema's pattern states its scheme and characters",
    ),
    (
        "entry_size",
        "the record's RFC 8785 canonical form is at most 65535 bytes, the most a log entry holds (its length in an entry bundle is a u16); numbers count as written in full (1e14 takes 15 digits): a length of the canonical form, not of the body sent",
    ),
];

/// The JSON Schema dialect of the record schemas.
pub(crate) const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// `asOf` for a new record: RFC 3339 with an explicit offset, written in
/// [`YEARS`], seconds 00 to 59 (`format: date-time` adds calendar validity).
fn timestamp_pattern() -> String {
    let (first, last) = (*YEARS.start(), *YEARS.end());
    assert!(
        first == 1970 && last == 2200,
        "the year alternation below spells out 1970 to 2200"
    );
    concat!(
        "^(19[7-9][0-9]|20[0-9]{2}|21[0-9]{2}|2200)-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])",
        "[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?",
        "([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
    )
    .to_owned()
}

/// No character a text field may not carry (prose keeps line breaks and tabs).
fn no_forbidden(prose: bool) -> Value {
    json!({"pattern": char_class(|c| is_forbidden_in_text(c) && !(prose && is_prose_break(c)))})
}

/// A one-line string (a name, a symbol): not blank, at most `max` characters.
fn line(max: usize) -> Value {
    json!({
        "type": "string", "maxLength": max,
        "pattern": char_class(|c| !is_blank(c)),
        "not": no_forbidden(false)
    })
}

/// Free text with line breaks: not blank, at most [`MAX_TEXT_CHARS`].
fn prose() -> Value {
    json!({
        "type": "string", "maxLength": MAX_TEXT_CHARS,
        "pattern": char_class(|c| !is_blank(c)),
        "not": no_forbidden(true)
    })
}

/// The schema of an identifier (`id`, `strategyId`): `ID_PATTERN` and
/// its length, with `description`.
pub fn identifier_schema(description: &str) -> Value {
    json!({
        "type": "string", "pattern": ID_PATTERN, "minLength": 1, "maxLength": MAX_ID_CHARS,
        "not": no_forbidden(false), "description": description
    })
}

/// A JSON number within ±[`MAX_AMOUNT`], and `minimum` or `exclusiveMinimum`.
fn amount(lower: Option<(&str, i64)>, description: &str) -> Value {
    let bound = MAX_AMOUNT.to_string().parse::<f64>().unwrap_or(1e15);
    let mut schema = json!({
        "type": "number", "exclusiveMaximum": bound, "exclusiveMinimum": -bound,
        "description": description
    });
    if let (Some((keyword, value)), Some(map)) = (lower, schema.as_object_mut()) {
        map.remove("exclusiveMinimum");
        map.insert(keyword.into(), json!(value));
    }
    schema
}

fn common_properties() -> Map<String, Value> {
    let mut props = Map::new();
    props.insert(
        "id".into(),
        identifier_schema("Stable identifier, the idempotency key."),
    );
    props.insert("visibility".into(), json!({"const": "public"}));
    props.insert(
        "mode".into(),
        json!({"enum": [Mode::Live.as_str(), Mode::Paper.as_str()]}),
    );
    props.insert(
        "strategyId".into(),
        identifier_schema("The strategy, with the id format."),
    );
    props.insert("strategyName".into(), line(MAX_NAME_CHARS));
    props.insert(
        "asOf".into(),
        json!({
            "type": "string", "format": "date-time", "pattern": timestamp_pattern(),
            "not": no_forbidden(false),
            "description": "RFC 3339 with an explicit offset; compared as an instant; at most 5 minutes later than the service's clock."
        }),
    );
    props.insert(
        "source".into(),
        json!({
            "type": "object", "additionalProperties": false, "required": ["name", "url"],
            "properties": {
                "name": line(MAX_NAME_CHARS),
                "url": {"type": "string", "format": "uri", "pattern": URL_PATTERN,
                        "maxLength": MAX_URL_CHARS, "not": no_forbidden(false)}
            }
        }),
    );
    props
}

const COMMON_REQUIRED: [&str; 8] = [
    "id",
    "type",
    "visibility",
    "mode",
    "strategyId",
    "strategyName",
    "asOf",
    "source",
];

/// The JSON Schema of a record of `kind`, as the contract and the
/// OpenAPI document publish it.
pub fn record_schema(kind: super::RecordKind) -> Value {
    match kind {
        super::RecordKind::Snapshot => snapshot_schema(),
        super::RecordKind::Decision => decision_schema(),
    }
}

/// The snapshot record's schema.
pub(crate) fn snapshot_schema() -> Value {
    let mut props = common_properties();
    props.insert("type".into(), json!({"const": "snapshot"}));
    props.insert("currency".into(), json!({"const": "USD"}));
    props.insert(
        "equity".into(),
        amount(Some(("minimum", 0)), "Total account value, fees included."),
    );
    props.insert(
        "flowSincePrevious".into(),
        amount(
            None,
            "Net flow at interval end: deposit positive, withdrawal negative.",
        ),
    );
    props.insert(
        "cash".into(),
        amount(Some(("minimum", 0)), "Required when positions is present."),
    );
    props.insert(
        "positions".into(),
        json!({
            "type": "array", "maxItems": MAX_POSITIONS,
            "items": {
                "type": "object", "additionalProperties": false,
                "required": ["symbol", "quantity", "cost", "mark"],
                "properties": {
                    "symbol": line(MAX_NAME_CHARS),
                    "quantity": amount(Some(("exclusiveMinimum", 0)), "Long-only: greater than zero."),
                    "cost": amount(Some(("minimum", 0)), "Cost basis."),
                    "mark": amount(Some(("minimum", 0)), "Mark price per unit.")
                }
            }
        }),
    );
    let mut required: Vec<&str> = COMMON_REQUIRED.to_vec();
    required.extend(["currency", "equity", "flowSincePrevious"]);
    json!({
        "$schema": DIALECT,
        "$id": "urn:freedom-fund:record:snapshot:1",
        "title": "Snapshot",
        "description": "Account value at a point in time. When positions is present, cash is required and |equity - (cash + sum(quantity * mark))| <= 0.02; without positions, cash <= equity + 0.02.",
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": props,
        "dependentRequired": {"positions": ["cash"]}
    })
}

/// The decision record's schema.
pub(crate) fn decision_schema() -> Value {
    let mut props = common_properties();
    props.insert("type".into(), json!({"const": "decision"}));
    let actions: Vec<&str> = Action::ALL.iter().map(|a| a.as_str()).collect();
    props.insert("action".into(), json!({ "enum": actions }));
    for name in ["summary", "thesis", "counterEvidence", "nextCheck"] {
        props.insert(name.into(), prose());
    }
    let mut required: Vec<&str> = COMMON_REQUIRED.to_vec();
    required.extend(["action", "summary"]);
    json!({
        "$schema": DIALECT,
        "$id": "urn:freedom-fund:record:decision:1",
        "title": "Decision",
        "description": "An action with a summary. The service executes and approves nothing.",
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": props
    })
}

/// The rule names of the sensitive-content guard, as error details give them.
pub(crate) fn sensitive_rules() -> Vec<&'static str> {
    SensitiveRule::ALL.iter().map(|r| r.as_str()).collect()
}

/// Where the OpenAPI document keeps its schemas: the response types'
/// schemas refer to the records by these paths.
pub const COMPONENTS: &str = "#/components/schemas";

/// A reference to the decision record's schema (in the OpenAPI document).
#[cfg(feature = "schema")]
pub(crate) fn decision_ref(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"$ref": format!("{COMPONENTS}/Decision")})
}

/// A reference to either record's schema (in the OpenAPI document).
#[cfg(feature = "schema")]
pub fn record_ref(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"oneOf": [
        {"$ref": format!("{COMPONENTS}/Snapshot")},
        {"$ref": format!("{COMPONENTS}/Decision")}
    ]})
}
