//! JSON Schema (2020-12) of the two record kinds, for the contract view and
//! the OpenAPI document. The parser in [`super`] is the authority; these
//! schemas describe the same rules for clients (reconciliation and the
//! sensitive-content guard cannot be expressed in JSON Schema and are stated
//! in the contract's rules).

use super::{MAX_ID_CHARS, MAX_NAME_CHARS, MAX_POSITIONS, MAX_TEXT_CHARS, MAX_URL_CHARS};
use serde_json::{Value, json};

const ID_PATTERN: &str = "^[A-Za-z0-9._:-]{1,128}$";
const TIMESTAMP_PATTERN: &str =
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:[0-5]\d(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$";
/// One line: no control characters, no bidirectional embedding, override or
/// isolate controls (ECMA-262 syntax, as JSON Schema's `pattern` reads it).
const LINE_PATTERN: &str = r"^[^\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$";
/// Prose: the same, but line breaks and tabs are allowed.
const PROSE_PATTERN: &str =
    r"^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$";
/// An absolute http(s) URL in printable ASCII.
const URL_PATTERN: &str = r"^https?://[!-~]+$";

fn common_properties() -> serde_json::Map<String, Value> {
    let name = json!({"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS, "pattern": LINE_PATTERN});
    let props = json!({
        "id": {"type": "string", "pattern": ID_PATTERN, "maxLength": MAX_ID_CHARS,
               "description": "Stable identifier, the idempotency key."},
        "visibility": {"const": "public"},
        "mode": {"enum": ["live", "paper"]},
        "strategyId": {"type": "string", "pattern": ID_PATTERN, "maxLength": MAX_ID_CHARS},
        "strategyName": name,
        "asOf": {"type": "string", "format": "date-time", "pattern": TIMESTAMP_PATTERN,
                 "description": "RFC 3339 with an explicit offset; compared as an instant; at most 5 minutes later than the service's clock."},
        "source": {
            "type": "object", "additionalProperties": false, "required": ["name", "url"],
            "properties": {
                "name": name,
                "url": {"type": "string", "format": "uri", "pattern": URL_PATTERN, "maxLength": MAX_URL_CHARS}
            }
        }
    });
    match props {
        Value::Object(map) => map,
        _ => unreachable!("a JSON object literal"),
    }
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

/// The snapshot record's schema.
pub fn snapshot_schema() -> Value {
    let mut props = common_properties();
    let amount =
        |description: &str| json!({"type": "number", "minimum": 0, "description": description});
    props.insert("type".into(), json!({"const": "snapshot"}));
    props.insert("currency".into(), json!({"const": "USD"}));
    props.insert(
        "equity".into(),
        amount("Total account value, fees included."),
    );
    props.insert(
        "flowSincePrevious".into(),
        json!({"type": "number", "description": "Net flow at interval end: deposit positive, withdrawal negative."}),
    );
    props.insert("cash".into(), amount("Required when positions is present."));
    props.insert(
        "positions".into(),
        json!({
            "type": "array", "maxItems": MAX_POSITIONS,
            "items": {
                "type": "object", "additionalProperties": false,
                "required": ["symbol", "quantity", "cost", "mark"],
                "properties": {
                    "symbol": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS, "pattern": LINE_PATTERN},
                    "quantity": {"type": "number", "exclusiveMinimum": 0, "description": "Long-only: greater than zero."},
                    "cost": {"type": "number", "minimum": 0},
                    "mark": {"type": "number", "minimum": 0}
                }
            }
        }),
    );
    let mut required: Vec<&str> = COMMON_REQUIRED.to_vec();
    required.extend(["currency", "equity", "flowSincePrevious"]);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
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
pub fn decision_schema() -> Value {
    let mut props = common_properties();
    let text = json!({"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS, "pattern": PROSE_PATTERN});
    props.insert("type".into(), json!({"const": "decision"}));
    props.insert(
        "action".into(),
        json!({"enum": ["hold", "research", "propose", "reject", "outcome"]}),
    );
    for name in ["summary", "thesis", "counterEvidence", "nextCheck"] {
        props.insert(name.into(), text.clone());
    }
    let mut required: Vec<&str> = COMMON_REQUIRED.to_vec();
    required.extend(["action", "summary"]);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:freedom-fund:record:decision:1",
        "title": "Decision",
        "description": "An action with a summary. The service executes and approves nothing.",
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": props
    })
}
