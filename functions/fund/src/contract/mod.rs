//! The interface described for clients, built from the code it describes:
//! the contract view (`?view=contract`) and the OpenAPI 3.1 document
//! (`?view=openapi`).
//!
//! - the views of `GET /api/freedom-fund` and their parameters are the
//!   routes' own tables (`crate::routes`), which the handlers validate
//!   queries with;
//! - [`operations`]: every operation with every answer it gives (errors as
//!   [`ApiError`]s, so statuses and codes come from the one mapping);
//! - the rules, limits and scanner declaration come from the common crate
//!   (`service::contract::rules`), written from the constants it enforces;
//! - [`openapi`](mod@openapi): the OpenAPI document, with the response types' schemas
//!   generated from the structs the handlers serialise.
//!
//! The OpenAPI document is built and serialised once per process; the
//! contract view once per ledger head (it names the experiments'
//! registrations). Each is served from memory, its compressed forms made
//! once per coding.

pub mod openapi;
pub mod operations;

use crate::routes::View;
use crate::routes::dashboard::PERIOD;
use crate::routes::ledger::DRY_RUN;
use freedom_shared::SCHEMA_VERSION;
use freedom_shared::config::Benchmarks;
use freedom_shared::record::{RecordKind, record_schema};
use freedom_shared::service::BODY_TIMEOUT;
use freedom_shared::service::Log;
use freedom_shared::service::{
    Registrations, contract_limits, describe_benchmarks, record_rules, scanner_rules,
};
use freedom_shared::tlog::LOG_PREFIX;
use freedom_shared::web::{ApiError, Encoded, ServerLimits};
use operations::{OPERATIONS, Operation, http_layer};
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};
use std::sync::{Arc, LazyLock};

static CONTRACT: LazyLock<Value> = LazyLock::new(build_contract);
static OPENAPI: LazyLock<Value> = LazyLock::new(openapi::openapi);
static OPENAPI_BODY: LazyLock<Arc<Encoded>> = LazyLock::new(|| json_body(openapi()));

/// The contract view.
pub fn contract() -> &'static Value {
    &CONTRACT
}

/// The OpenAPI 3.1 document.
pub fn openapi() -> &'static Value {
    &OPENAPI
}

/// The OpenAPI 3.1 document as the body it is served as, serialised once
/// and compressed at most once per coding for the process's life.
pub fn openapi_body() -> Arc<Encoded> {
    Arc::clone(&OPENAPI_BODY)
}

/// `document` serialised as a JSON body to be compressed at most once per
/// coding.
pub fn json_body(document: &Value) -> Arc<Encoded> {
    Arc::new(Encoded::new(json_bytes(document)))
}

/// `document`'s JSON bytes.
pub(crate) fn json_bytes(document: &Value) -> Vec<u8> {
    // A `Value` always serialises: its keys are strings.
    serde_json::to_vec(document).unwrap_or_default()
}

/// The contract view of a service publishing its ledger as `log` and
/// comparing each mode with `benchmarks`: the static contract with `log:
/// {origin, verifierKey, prefix, …}` (the verifier key is null when the
/// log has no signing key) and `benchmarks: {live, paper, paperDefault,
/// minSharedDailyReturns}`.
pub(crate) fn contract_with_log(log: &Log, benchmarks: &Benchmarks) -> Value {
    let mut contract = contract().clone();
    contract["benchmarks"] = describe_benchmarks(benchmarks);
    contract["log"] = json!({
        "origin": log.origin(),
        "verifierKey": log.verifier_key().map(|key| key.to_text()),
        "prefix": LOG_PREFIX,
        "checkpoint": format!("{LOG_PREFIX}/checkpoint"),
        "tiles": format!("{LOG_PREFIX}/tile/<L>/<N>[.p/<W>] and {LOG_PREFIX}/tile/entries/<N>[.p/<W>] (c2sp.org/tlog-tiles, height 8)"),
        "entries": "each entry is a big-endian uint16 length followed by the record's leaf bytes (its RFC 8785 canonical JSON)",
        "neverTwoHistories": format!("the log remembers the largest checkpoint it has signed apart from the ledger ({}; freedom-local keeps one memory beside its key file, outside the data dir, and one in the store); before signing anything of a new head it checks that head extends every checkpoint remembered (not smaller, the same root at the same size, a consistency proof from it that verifies); with no memory of what its key signed (a key from the environment on a fresh store, or the memory beside the key lost), it signs a non-empty ledger only once its witnesses say they hold no larger or other tree of the log, or once started with --new-log (FF_LOG_NEW_LOG=true); otherwise it signs nothing: checkpoint (?head=1) and proofs answer 500 internal_error, the reason is logged and a {} event published, and every other read and append goes on", log.memory(), freedom_shared::service::REFUSED_TO_SIGN),
        "witnessesRemember": format!("with a policy, the witnesses are the signer's memory of last resort: before its first signature of a non-empty head in each process, and before each new head while they have not settled it, the log asks each witness what it holds of this log (GET <url>/<hex SHA-256 of the origin>/checkpoint, else the size a 409 names to an add-checkpoint of the empty tree); a checkpoint of this log's key that the ledger does not extend is evidence: it stops the log signing anything (500 on every signing view, an error line and a {} event) and is written into the log's memories", freedom_shared::service::WITNESS_ALARM),
        "policy": log.policy().map(|policy| policy.text()),
        "recordingWindowSeconds": freedom_shared::service::RECORDING_WINDOW_SECONDS,
        "clockToleranceSeconds": freedom_shared::clock::CLOCK_TOLERANCE_SECONDS,
        "witnessTimeoutSeconds": freedom_shared::service::WITNESS_TIMEOUT_SECONDS,
        "answeredSet": "settled only when no earlier quorum can hide: a log whose first memory does not hold the head it is asked to sign (no memory, one behind its store, or one restored from a backup) signs it only once the witnesses that did not answer could not on their own meet the quorum (k of n: at least n - k + 1 answered); until then it signs nothing, names the witnesses it waits for, and asks again at every round; under 2 of 4, two answers of witnesses that never saw the log no longer settle it",
        "oneWitnessCannotStopTheLog": "a 422, a 409 without a size, a size above the head or a refusal at the size the witness holds, or in a consultation a size the log's memories contradict, from one witness, is an alarm against that witness (skipped for the round, counted as silent in a consultation; logged and published once while it keeps answering so); signing stops only on evidence, a checkpoint of the log's key read from the witness that the ledger does not extend",
        "rounds": format!("a round has the witnesses' timeout ({} s) for all its requests, counted from when it was asked for; rounds never overlap, a second waits and the running round ends by the earliest deadline of those waiting, so POST {LOG_PREFIX}/cosign answers within that timeout and a second, with the round's outcome or an error naming why; a cosignature dated outside [the round's start - clockToleranceSeconds, its end + clockToleranceSeconds] counts for the served quorum, not for time, and its witness's clockSkewSeconds is in the round's answer", freedom_shared::service::WITNESS_TIMEOUT_SECONDS),
        "witnessedTime": format!("with a policy whose quorum is not none, every checkpoint that met the quorum and is larger than the last one kept is kept with its cosignatures ({LOG_PREFIX}/witnessed/<n> answers the earliest of size at least n; 404 while none). Its quorum time is the earliest instant at which its cosignatures dated up to then meet the quorum, counting only cosignatures dated within clockToleranceSeconds of the cosigning round that asked for them (by the service's clock), and raised to the previous kept checkpoint's when earlier, so kept times never decrease with size (never earlier than its cosignatures alone allow; freedom-verify --timeline checks both); the witnessed time of record seq is the quorum time of the earliest kept checkpoint of size at least seq: the record was in the log no later than then, on the witnesses' clocks. It never changes once given. A snapshot's lag is its witnessed time minus its asOf: on time up to recordingWindowSeconds, late above (accepted and disclosed), pending before; a lag below minus clockToleranceSeconds (witnessed before its valuation by more than two honest clocks may disagree: the service's or a witness's clock is wrong) is a clock conflict, counted as clockConflict in the dashboard's recording, never on time, ending an on-time stretch as a late one does and left out of medianLagSeconds and maxLagSeconds. The ledger view's entries carry witnessed ({{at, size}}, null while pending, \"unwitnessed\" without a quorum) and snapshots lagSeconds; the dashboard's series carry recording and sinceOnTime, over the snapshots the period shows; view=proof&at=witnessed is the proof against that earliest checkpoint (with size=M, the earliest of size at least M; 503 not_witnessed while none holds the record, 404 on a log without a quorum), and as format=tlog-proof carries the consistency proof to the served checkpoint in its extra data ({})", freedom_shared::service::CONSISTENCY_EXTRA),
        "witnessing": format!("with a policy (FF_LOG_POLICY, c2sp.org/tlog-policy; also at {LOG_PREFIX}/policy), a cosigning round brings the newest checkpoint to every witness at most once a minute when the head moved (or at once: POST {LOG_PREFIX}/cosign with the write token), each with the consistency proof from the size it last cosigned; {LOG_PREFIX}/checkpoint then serves the newest checkpoint whose verified cosignatures meet the quorum (503 not_witnessed before any; ?head=1 the log-signed head), and proofs default to it and embed it; a witness that reports a fork or a bad proof raises an alarm (an error log line and a {} event) against itself, and the log signs nothing more only when the witness shows a checkpoint of the log's key that the ledger does not extend; cosignatures dated more than 10 minutes ahead of the log's clock are not kept, and the round says so with the skew (an alarm too)", freedom_shared::service::WITNESS_ALARM),
        "standards": ["c2sp.org/signed-note", "c2sp.org/tlog-checkpoint", "c2sp.org/tlog-tiles", "c2sp.org/tlog-proof", "c2sp.org/tlog-witness", "c2sp.org/tlog-cosignature", "c2sp.org/tlog-policy", "RFC 9162 §2.1.3-2.1.4"]
    });
    contract
}

/// The contract view with each paper experiment's registration as the
/// ledger has it: `registeredSeq` (null until registered) and the
/// `registeredRuleHash` its decision names, beside the `ruleHash` of the
/// rule in code.
pub(crate) fn with_registrations(mut contract: Value, registrations: &Registrations) -> Value {
    if let Some(experiments) = contract
        .pointer_mut("/scanner/paper/experiments")
        .and_then(Value::as_array_mut)
    {
        for experiment in experiments {
            let found = registrations
                .iter()
                .find(|(id, _)| experiment["id"] == *id)
                .and_then(|(_, r)| r.as_ref());
            experiment["registeredSeq"] = json!(found.map(|r| r.seq));
            experiment["registeredRuleHash"] = json!(found.map(|r| r.rule_hash.clone()));
        }
    }
    contract
}

/// `{status, code, when}` for each error (a success has no code).
fn status_entry(error: &ApiError) -> Value {
    json!({"status": error.status().as_u16(), "code": error.code(), "when": error.when()})
}

fn endpoint(operation: &Operation) -> Value {
    let mut statuses: Vec<Value> = operation
        .successes
        .iter()
        .map(|s| json!({"status": s.status, "when": s.description}))
        .collect();
    statuses.extend((operation.errors)().iter().map(status_entry));
    let mut entry = json!({
        "method": operation.method, "path": operation.path,
        "auth": if operation.bearer { "Authorization: Bearer <FF_AGENT_WRITE_TOKEN>" } else { "none" },
        "purpose": operation.summary,
        "statuses": statuses
    });
    if operation.path == "/api/freedom-fund" && operation.method == "GET" {
        entry["views"] = View::ALL
            .iter()
            .map(|view| {
                let params: serde_json::Map<String, Value> = view
                    .params()
                    .iter()
                    .map(|p| {
                        (
                            p.name.to_owned(),
                            json!({"description": p.description, "required": p.required, "schema": (p.schema)()}),
                        )
                    })
                    .collect();
                json!({"view": view.name(), "purpose": view.summary(), "parameters": params})
            })
            .collect();
    }
    if operation.path == "/" {
        entry["parameters"] = json!({PERIOD.name: (PERIOD.schema)()});
    }
    if operation.id == "appendRecord" {
        entry["body"] =
            json!("one snapshot or decision record (records), Content-Type: application/json");
        entry["parameters"] = json!({DRY_RUN.name: {"description": DRY_RUN.description, "required": DRY_RUN.required, "schema": (DRY_RUN.schema)()}});
    }
    entry
}

fn build_contract() -> Value {
    let codes = ApiError::codes();
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "service": "freedom-fund",
        "description": "A public, append-only record of a small long-only USD fund and its paper experiments. The service never trades, signs, or approves anything, and stores no private data.",
        "records": {"snapshot": record_schema(RecordKind::Snapshot), "decision": record_schema(RecordKind::Decision)},
        "endpoints": OPERATIONS.iter().map(endpoint).collect::<Vec<_>>(),
        "errors": {
            "shape": {"error": {"code": "string", "message": "string", "details": "array"}},
            "codes": codes,
            "httpLayer": {
                "note": "answers any request may get before it reaches a route, with the same error body (on the local listener; API Gateway gives its own under Lambda)",
                "statuses": http_layer().iter().map(status_entry).collect::<Vec<_>>()
            }
        },
        "rules": record_rules(),
        "limits": contract_limits(local_listener()),
        "scanner": scanner_rules()
    })
}

/// The local listener's limits, as the contract states them.
fn local_listener() -> Value {
    let listener = ServerLimits::default();
    json!({
        "requestHeadTimeoutSeconds": listener.head_timeout.as_secs(),
        "bodyTimeoutSeconds": BODY_TIMEOUT.as_secs(),
        "maxHeadBytes": listener.max_head_bytes,
        "maxUriBytes": listener.max_uri_bytes,
        "maxConnections": listener.max_connections,
        "shutdownGraceSeconds": listener.shutdown_grace.as_secs()
    })
}

/// The scanner report's JSON Schema, generated from the scanner's own
/// types ([`freedom_shared::scan::Report`]) with every subschema
/// inline, so it validates a report on its own.
pub(crate) fn scanner_report_schema() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .for_serialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<freedom_shared::scan::Report>();
    schema.remove("$schema");
    schema.remove("title");
    schema.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The contract view listed `not_found` twice while the OpenAPI
    /// document listed it once: both now publish the one list, each code
    /// once.
    #[test]
    fn the_contract_and_openapi_list_the_same_codes_each_once() {
        let listed: Vec<&str> = contract()["errors"]["codes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let documented: Vec<&str> = openapi()
            .pointer("/components/schemas/Error/properties/error/properties/code/enum")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(listed, documented);
        let unique: std::collections::BTreeSet<&&str> = listed.iter().collect();
        assert_eq!(unique.len(), listed.len(), "each code once: {listed:?}");
    }
}
