//! The OpenAPI 3.1 document of the whole interface, assembled from the
//! operations table ([`super::operations`]), the views and their parameters
//! ([`crate::routes`]), the record schemas the parser's constants generate,
//! and the response types' own schemas (schemars, from the very structs the
//! handlers serialise).

use super::operations::{Body, OPERATIONS, Operation, http_layer};
use crate::routes::dashboard::PERIOD;
use crate::routes::ledger::{AppendBody, DRY_RUN, LedgerView};
use crate::routes::log::{ConsistencyView, ProofView};
use crate::routes::{Param, View};
use freedom_shared::SCHEMA_VERSION;
use freedom_shared::record::{COMPONENTS, RecordKind, record_schema};
use freedom_shared::service::Dashboard;
use freedom_shared::web::ApiError;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

fn reference(name: &str) -> Value {
    json!({"$ref": format!("{COMPONENTS}/{name}")})
}

/// A record schema as a component (the dialect and id belong to the
/// standalone schema the contract view publishes).
fn component(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("$id");
    }
    schema
}

/// The error body, with every code the service answers.
fn error_schema() -> Value {
    let codes = ApiError::codes();
    json!({
        "type": "object", "required": ["error"], "additionalProperties": false,
        "properties": {"error": {
            "type": "object", "required": ["code", "message", "details"], "additionalProperties": false,
            "properties": {
                "code": {"enum": codes, "description": "stable; see the contract view's statuses"},
                "message": {"type": "string", "description": "plain words, never a secret or an internal"},
                "details": {"type": "array", "items": {"type": "object"},
                            "description": "field issues ({field, rule, message}), parameters ({parameter, message} or {allowed}), or the seq a conflict names ({existingSeq}, or {latestSeq, latestAsOf})"}
            }
        }}
    })
}

/// The query of `GET /api/freedom-fund`: one form-exploded object whose
/// branches are the views, each with exactly its parameters.
fn fund_query() -> Value {
    let branches: Vec<Value> = View::ALL
        .iter()
        .map(|view| {
            let mut properties = Map::new();
            let mut required = Vec::new();
            if let Some(name) = view.name() {
                properties.insert("view".into(), json!({"const": name}));
                required.push("view");
            }
            for param in view.params() {
                let mut schema = (param.schema)();
                if let Some(object) = schema.as_object_mut() {
                    object.insert("description".into(), json!(param.description));
                }
                properties.insert(param.name.into(), schema);
                if param.required {
                    required.push(param.name);
                }
            }
            json!({
                "title": format!("{:?}", view),
                "description": view.summary(),
                "type": "object", "additionalProperties": false,
                "properties": properties, "required": required
            })
        })
        .collect();
    json!({
        "name": "query", "in": "query", "required": false, "style": "form", "explode": true,
        "description": "the view and its parameters: no view for the dashboard, or view=ledger, contract, openapi, proof, consistency or series; each view accepts only its own parameters",
        "schema": {"oneOf": branches}
    })
}

/// The query of `GET /api/freedom-scanner`: nothing (the report), or
/// `view=evidence` with the `sha256` of the bytes asked for.
fn scanner_query() -> Value {
    json!({
        "name": "query", "in": "query", "required": false, "style": "form", "explode": true,
        "description": "nothing for the report; view=evidence&sha256=<64 lowercase hex> for the bytes kept under that hash",
        "schema": {"oneOf": [
            {"title": "Report", "type": "object", "additionalProperties": false, "properties": {}},
            {"title": "Evidence", "type": "object", "additionalProperties": false,
             "required": ["view", "sha256"],
             "properties": {
                 "view": {"const": "evidence"},
                 "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "minLength": 64, "maxLength": 64,
                            "description": "the SHA-256 of the bytes (a provenance entry's bodySha256, or a paper snapshot's #report=sha256:<hex>)"}
             }}
        ]}
    })
}

fn query_param(param: &Param) -> Value {
    json!({"name": param.name, "in": "query", "required": param.required,
           "description": param.description, "schema": (param.schema)()})
}

fn success_content(body: Body) -> Option<Value> {
    let schema = match body {
        Body::Empty => return None,
        Body::Html => return Some(json!({"text/html": {"schema": {"type": "string"}}})),
        Body::Json(name) => reference(name),
        Body::FundView => {
            let json_views = json!({"oneOf": [
                reference("Dashboard"), reference("LedgerView"),
                reference("ContractView"), reference("OpenApiDocument"),
                reference("ProofView"), reference("ConsistencyView"),
                reference("SeriesExport")
            ]});
            return Some(json!({
                "application/json": {"schema": json_views},
                "text/plain": {"schema": {"type": "string",
                    "description": "view=proof&format=tlog-proof: a c2sp.org/tlog-proof file"}},
                "text/csv": {"schema": {"type": "string",
                    "description": format!("view=series&format=csv: RFC 4180, CRLF line ends, header {}", freedom_shared::service::CSV_HEADER)}}
            }));
        }
        Body::Atom => {
            return Some(json!({"application/atom+xml": {"schema": {"type": "string",
                "description": "an Atom 1.0 feed (RFC 4287)"}}}));
        }
        Body::Checkpoint => {
            return Some(json!({"text/plain": {"schema": {"type": "string",
                "description": "<origin>\\n<size>\\n<base64 root>\\n\\n— <key name> <base64(key ID || Ed25519 signature)>\\n, then one line per witness cosignature: — <witness name> <base64(key ID || 8-byte time || Ed25519 signature)>\\n"}}}));
        }
        Body::Policy => {
            return Some(json!({"text/plain": {"schema": {"type": "string",
                "description": "log <vkey> [<url>] / witness <name> <vkey> [<url>] / group <name> all|any|<k> <member>... / quorum <name>|none lines"}}}));
        }
        Body::ScannerView => {
            return Some(json!({
                "application/json": {"schema": reference("ScannerReport")},
                "application/octet-stream": {"schema": {"type": "string",
                    "contentMediaType": "application/octet-stream",
                    "description": "view=evidence: the exact bytes whose SHA-256 is the sha256 asked for"}}
            }));
        }
        Body::Tile => {
            return Some(
                json!({"application/octet-stream": {"schema": {"type": "string",
                "contentMediaType": "application/octet-stream"}}}),
            );
        }
    };
    Some(json!({"application/json": {"schema": schema}}))
}

/// The responses of one operation: its successes, and its errors grouped by
/// status (the HTTP layer's included), each with the headers it carries.
fn responses(operation: &Operation) -> Value {
    let mut responses = Map::new();
    for success in operation.successes {
        let mut response = json!({"description": success.description});
        if let Some(content) = success_content(success.body) {
            response["content"] = content;
        }
        if success.etag {
            response["headers"] = json!({"ETag": {
                "description": "\"<rootHash>\" of the ledger head the answer was read at (a proof's: the hash of its bytes, as the proof depends on the witnessed checkpoint too); quoted, with -br or -gz appended for a compressed answer",
                "schema": {"type": "string"}
            }});
        }
        if success.body == Body::FundView {
            response["headers"]["Link"] = json!({
                "description": "view=series: `<url>; rel=\"next\"` while more rows remain",
                "schema": {"type": "string"}
            });
        }
        responses.insert(success.status.to_string(), response);
    }
    // Per status: the errors, and whether each comes as the page's HTML
    // (the page's own failures) or as the JSON error body (every other
    // answer, and the HTTP layer's whatever the path).
    let mut by_status: BTreeMap<u16, Vec<(ApiError, bool)>> = BTreeMap::new();
    let own = (operation.errors)()
        .into_iter()
        .map(|e| (e, operation.html_errors));
    let layer = http_layer().into_iter().map(|e| (e, false));
    for (error, html) in own.chain(layer) {
        by_status
            .entry(error.status().as_u16())
            .or_default()
            .push((error, html));
    }
    for (status, errors) in by_status {
        let mut lines: Vec<String> = errors
            .iter()
            .map(|(e, _)| format!("{}: {}", e.code(), e.when()))
            .collect();
        lines.dedup();
        let mut content = Map::new();
        if errors.iter().any(|(_, html)| *html) {
            content.insert("text/html".into(), json!({"schema": {"type": "string"}}));
        }
        if errors.iter().any(|(_, html)| !*html) {
            content.insert(
                "application/json".into(),
                json!({"schema": reference("Error")}),
            );
        }
        let mut response = json!({"description": lines.join("; "), "content": content});
        let mut headers = Map::new();
        if errors
            .iter()
            .any(|(e, _)| matches!(e, ApiError::Unauthorized { .. }))
        {
            headers.insert("WWW-Authenticate".into(), json!({
                "required": true,
                "description": "Bearer realm=\"freedom-fund\" (with error=\"invalid_token\" when a token was sent)",
                "schema": {"type": "string"}
            }));
        }
        if errors
            .iter()
            .any(|(e, _)| matches!(e, ApiError::StorageUnavailable(_)))
        {
            headers.insert("Retry-After".into(), json!({
                "description": "seconds; sent with storage_unavailable (a store that is down, slow or busy), not with writes_disabled",
                "schema": {"type": "string"}
            }));
        }
        if !headers.is_empty() {
            response["headers"] = Value::Object(headers);
        }
        responses.insert(status.to_string(), response);
    }
    Value::Object(responses)
}

fn parameters(operation: &Operation) -> Vec<Value> {
    let mut parameters = match (operation.method, operation.path) {
        ("GET", "/api/freedom-fund") => vec![fund_query()],
        ("GET", "/") => vec![query_param(&PERIOD)],
        ("POST", "/api/freedom-fund") => vec![query_param(&DRY_RUN)],
        ("GET", "/api/freedom-scanner") => vec![scanner_query()],
        ("GET", "/log/checkpoint") => vec![json!({
            "name": "head", "in": "query", "required": false,
            "description": "1: the log-signed checkpoint of the current head, witnessed or not",
            "schema": {"type": "string", "enum": ["1"]}
        })],
        ("GET", "/log/tile/{tile}") => vec![json!({
            "name": "tile", "in": "path", "required": true,
            "description": "the tile's path after tile/ (it holds slashes): <L>/<N>[.p/<W>] or entries/<N>[.p/<W>], N as x001/x234/067",
            "schema": {"type": "string", "pattern": freedom_shared::tlog::tiles::PATH_PATTERN},
            "examples": {
                "hashes": {"summary": "the first hash tile (full once the log has 256 records)", "value": "0/000"},
                "entries": {"summary": "the first entry bundle (full once the log has 256 records)", "value": "entries/000"}
            }
        })],
        ("GET", "/log/witnessed/{size}") => vec![json!({
            "name": "size", "in": "path", "required": true,
            "description": "a record's seq or a tree size n: the answer is the earliest witnessed checkpoint of size at least n",
            "schema": {"type": "string", "pattern": "^[1-9][0-9]{0,19}$"}
        })],
        _ => Vec::new(),
    };
    if operation.successes.iter().any(|s| s.etag) {
        parameters.push(json!({
            "name": "If-None-Match", "in": "header", "required": false,
            "description": "an ETag seen before: 304 while the ledger's head has not moved",
            "schema": {"type": "string"}
        }));
    }
    parameters
}

/// A snapshot as a writer sends it (docs/api.md's example).
fn example_snapshot() -> Value {
    json!({
        "id": "core-2026-05-04", "type": "snapshot", "visibility": "public", "mode": "live",
        "strategyId": "core", "strategyName": "Core portfolio", "asOf": "2026-05-04T16:00:00-04:00",
        "source": {"name": "broker statement", "url": "https://example.com/statements/2026-05-04"},
        "currency": "USD", "equity": 10250.5, "flowSincePrevious": 0, "cash": 250.5,
        "positions": [{"symbol": "VTI", "quantity": 20, "cost": 4000, "mark": 250},
                      {"symbol": "BND", "quantity": 70, "cost": 5200, "mark": 71.4286}]
    })
}

/// A decision as a writer sends it (docs/api.md's example).
fn example_decision() -> Value {
    json!({
        "id": "core-dec-1", "type": "decision", "visibility": "public", "mode": "live",
        "strategyId": "core", "strategyName": "Core portfolio", "asOf": "2026-05-04T16:05:00-04:00",
        "source": {"name": "agent", "url": "https://example.com/agent"},
        "action": "hold", "summary": "Allocation within bands; nothing to do.", "nextCheck": "2026-05-11"
    })
}

/// The OpenAPI 3.1 document of the whole interface. (Long: the document's
/// components, each generated or declared once, in one place.)
pub fn openapi() -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.definitions_path = "/components/schemas".into())
        .for_serialize()
        .into_generator();
    generator.subschema_for::<Dashboard>();
    generator.subschema_for::<LedgerView>();
    generator.subschema_for::<AppendBody>();
    generator.subschema_for::<ProofView>();
    generator.subschema_for::<ConsistencyView>();
    generator.subschema_for::<freedom_shared::service::CosignRound>();
    let series_row = generator.subschema_for::<freedom_shared::service::SeriesRow>();
    let head = generator.subschema_for::<freedom_shared::merkle::Head>();
    let mut schemas = generator.take_definitions(true);
    schemas.insert(
        "Snapshot".into(),
        component(record_schema(RecordKind::Snapshot)),
    );
    schemas.insert(
        "Decision".into(),
        component(record_schema(RecordKind::Decision)),
    );
    schemas.insert("ScannerReport".into(), super::scanner_report_schema());
    schemas.insert("Error".into(), error_schema());
    schemas.insert(
        "SeriesExport".into(),
        json!({"type": "object", "required": ["schemaVersion", "strategyId", "mode", "head", "rows", "next"],
               "additionalProperties": false,
               "description": "view=series&format=json: one page of a series' snapshots in time order",
               "properties": {
                   "schemaVersion": {"const": SCHEMA_VERSION},
                   "strategyId": {"type": "string"},
                   "mode": {"enum": ["live", "paper"]},
                   "head": head,
                   "rows": {"type": "array", "items": series_row},
                   "next": {"type": ["integer", "null"], "minimum": 1,
                            "description": "`after` for the next page; null on the last"}
               }}),
    );
    schemas.insert(
        "ContractView".into(),
        json!({"type": "object", "required": ["schemaVersion", "service", "records", "endpoints", "rules", "limits"],
               "properties": {"schemaVersion": {"const": SCHEMA_VERSION}, "service": {"const": "freedom-fund"}}}),
    );
    schemas.insert(
        "OpenApiDocument".into(),
        json!({"type": "object", "required": ["openapi", "info", "paths"],
               "properties": {"openapi": {"const": "3.1.0"}}}),
    );

    let mut paths = Map::new();
    for operation in OPERATIONS {
        let mut entry = json!({
            "operationId": operation.id,
            "summary": operation.summary,
            "parameters": parameters(operation),
            "responses": responses(operation)
        });
        if operation.bearer {
            entry["security"] = json!([{"bearer": []}]);
        }
        if operation.id == "appendRecord" {
            entry["requestBody"] = json!({"required": true, "content": {"application/json": {
                "schema": {"oneOf": [reference("Snapshot"), reference("Decision")]},
                "examples": {
                    "snapshot": {"summary": "a valuation with positions", "value": example_snapshot()},
                    "decision": {"summary": "a decision", "value": example_decision()}
                }
            }}});
        }
        let path = paths.entry(operation.path).or_insert_with(|| json!({}));
        path[operation.method.to_ascii_lowercase()] = entry;
    }
    json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "Freedom Fund",
            "version": format!("{SCHEMA_VERSION}.0.0"),
            "description": "Public, append-only fund record (snapshots and decisions in a verifiable Merkle log) and a paper-only market scanner. Nothing here trades, signs or approves anything."
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "FF_AGENT_WRITE_TOKEN"}},
            "schemas": schemas
        }
    })
}
