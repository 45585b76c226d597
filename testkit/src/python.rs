//! Checks done by Python tools from PyPI (openapi-spec-validator,
//! jsonschema; `scripts/test` installs them): a snippet reads one JSON
//! document on stdin and fails the test by raising.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `script` with `document` on stdin; panics with Python's message if
/// it fails.
pub fn check(script: &str, document: &Value) {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 is needed (scripts/test installs what it needs)");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(document.to_string().as_bytes())
        .expect("python3 reads its input");
    let output = child.wait_with_output().expect("python3 finishes");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Validates `document` against the JSON Schema (2020-12) `schema`.
pub fn assert_matches_schema(schema: &Value, document: &Value) {
    check(
        "import json, sys\nfrom jsonschema import Draft202012Validator as V\nc = json.load(sys.stdin)\nV(c['schema']).validate(c['document'])",
        &serde_json::json!({"schema": schema, "document": document}),
    );
}

/// Whether each of `documents` is valid against the JSON Schema (2020-12)
/// `schema`, with format assertion on (`date-time` checked by
/// rfc3339-validator), in one Python run.
pub fn schema_verdicts(schema: &Value, documents: &[String]) -> Vec<bool> {
    let script = "import json, sys\n\
from jsonschema import Draft202012Validator as V, FormatChecker\n\
import rfc3339_validator\n\
c = json.load(sys.stdin)\n\
v = V(c['schema'], format_checker=FormatChecker(formats=['date-time']))\n\
print(json.dumps([v.is_valid(json.loads(d)) for d in c['documents']]))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 is needed (scripts/test installs what it needs)");
    let input = serde_json::json!({"schema": schema, "documents": documents});
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(input.to_string().as_bytes())
        .expect("python3 reads its input");
    let output = child.wait_with_output().expect("python3 finishes");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("a JSON list of verdicts")
}
