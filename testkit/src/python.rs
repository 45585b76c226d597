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
