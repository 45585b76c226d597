//! The contract view (`?view=contract`) and the OpenAPI 3.1 document
//! (`?view=openapi`): the interface described for clients, built from the
//! same constants the code enforces.

use freedom_shared::dashboard::{DEFAULT_PERIOD, PERIODS};
use freedom_shared::json::MAX_NESTING;
use freedom_shared::ledger::{BODY_TIMEOUT, DEFAULT_PAGE_LIMIT, MAX_BODY_BYTES, MAX_PAGE_LIMIT};
use freedom_shared::ports::ledger_store::MAX_PAGE_BYTES;
use freedom_shared::record::schema::{decision_schema, snapshot_schema};
use freedom_shared::record::{
    FUTURE_TOLERANCE_SECONDS, MAX_ID_CHARS, MAX_NAME_CHARS, MAX_POSITIONS, MAX_TEXT_CHARS,
    MAX_URL_CHARS,
};
use freedom_shared::web::ServerLimits;
use freedom_shared::{SCANNER_MODE, SCANNER_VERSION, SCHEMA_VERSION};
use serde_json::{Value, json};

/// The append statuses: (status, code, when).
const WRITE_STATUSES: &[(u16, &str, &str)] = &[
    (
        201,
        "",
        "appended; body {status: created, seq, leafHash, head, record}",
    ),
    (
        200,
        "",
        "same id, identical content (after canonicalisation): nothing new is stored; body {status: unchanged, ...}",
    ),
    (
        400,
        "malformed_json",
        "the body is not JSON (RFC 8259, UTF-8), or nests arrays and objects deeper than 64 levels",
    ),
    (400, "invalid_query", "POST takes no query parameters"),
    (
        401,
        "unauthorized",
        "missing or wrong bearer token, another scheme, or a token in the URL (WWW-Authenticate: Bearer)",
    ),
    (409, "id_conflict", "the id exists with different content"),
    (
        409,
        "duplicate_snapshot",
        "a snapshot exists for the same strategy, mode and instant",
    ),
    (
        409,
        "out_of_order",
        "the snapshot is older than the latest of its strategy and mode",
    ),
    (
        408,
        "request_timeout",
        "the body did not arrive within 30 s (the connection is closed)",
    ),
    (413, "payload_too_large", "the body is over 64 KiB"),
    (
        415,
        "unsupported_media_type",
        "Content-Type is not application/json (a charset=utf-8 parameter is allowed)",
    ),
    (
        422,
        "validation_failed",
        "fields break the rules; details list each field path and rule (at most 100; a last more_issues entry counts the rest)",
    ),
    (
        422,
        "sensitive_content",
        "fields carry credentials or private identifiers; details name the field and rule, never the value",
    ),
    (
        503,
        "writes_disabled",
        "the service has no write token configured",
    ),
    (
        503,
        "storage_unavailable",
        "the store is not configured or failing; nothing was stored",
    ),
];

const READ_STATUSES: &[(u16, &str, &str)] = &[
    (200, "", "the view"),
    (
        304,
        "",
        "If-None-Match matched the ETag (the ledger's root hash); dashboard and ledger only",
    ),
    (
        400,
        "invalid_query",
        "an unknown, repeated or invalid query parameter (e.g. a period not in 21, 63, 126, 252)",
    ),
    (
        503,
        "storage_unavailable",
        "the store is not configured or failing",
    ),
];

/// What the HTTP layer answers by itself, before any route.
const HTTP_LAYER_STATUSES: &[(u16, &str, &str)] = &[
    (
        400,
        "bad_request",
        "the request is not HTTP/1.1 (a broken request line or header)",
    ),
    (
        408,
        "request_timeout",
        "the request head did not arrive within the head timeout after the connection was ready",
    ),
    (414, "uri_too_long", "the URL is longer than 8 KiB"),
    (
        431,
        "header_fields_too_large",
        "the request head is larger than 32 KiB",
    ),
];

fn statuses(list: &[(u16, &str, &str)]) -> Vec<Value> {
    list.iter()
        .map(|(status, code, when)| {
            if code.is_empty() {
                json!({"status": status, "when": when})
            } else {
                json!({"status": status, "code": code, "when": when})
            }
        })
        .collect()
}

/// The sensitive-content rules, as the guard names them.
const SENSITIVE_RULES: &[&str] = &[
    "private_key",
    "seed_phrase",
    "aws_key",
    "api_key",
    "jwt",
    "bearer_token",
    "write_token",
    "url_credentials",
    "url_secret_parameter",
    "card_number",
    "iban",
    "email",
];

/// The contract view.
pub fn contract() -> Value {
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "service": "freedom-fund",
        "description": "A public, append-only record of a small long-only USD fund and its paper experiments. The service never trades, signs, or approves anything, and stores no private data.",
        "records": {"snapshot": snapshot_schema(), "decision": decision_schema()},
        "endpoints": [
            {"method": "GET", "path": "/", "auth": "none",
             "query": {"period": {"allowed": PERIODS, "default": DEFAULT_PERIOD, "unit": "tradingDays"}},
             "purpose": "the public page: the dashboard as server-rendered HTML (no scripts), ETag = root hash",
             "statuses": {"200": "text/html", "304": "If-None-Match matched the root", "400": "bad period (HTML)", "503": "store unavailable (HTML)"}},
            {"method": "GET", "path": "/api/freedom-fund", "auth": "none",
             "query": {"period": {"allowed": PERIODS, "default": DEFAULT_PERIOD, "unit": "tradingDays"}},
             "purpose": "the dashboard for the period", "statuses": statuses(READ_STATUSES)},
            {"method": "GET", "path": "/api/freedom-fund", "auth": "none",
             "query": {"view": "ledger", "limit": {"default": DEFAULT_PAGE_LIMIT, "max": MAX_PAGE_LIMIT},
                       "before": "a seq: entries with a smaller seq (the `next` cursor)",
                       "strategyId": "filter", "type": "filter: snapshot | decision", "mode": "filter: live | paper"},
             "purpose": format!("the ledger, newest first: {{schemaVersion, head, entries: [{{seq, leafHash, record}}], next}}; a page also stops early once its body would pass {MAX_PAGE_BYTES} bytes (limit is a maximum; follow next)"),
             "statuses": statuses(READ_STATUSES)},
            {"method": "GET", "path": "/api/freedom-fund", "auth": "none", "query": {"view": "contract"},
             "purpose": "this document", "statuses": statuses(&READ_STATUSES[..1])},
            {"method": "GET", "path": "/api/freedom-fund", "auth": "none", "query": {"view": "openapi"},
             "purpose": "OpenAPI 3.1 description of the whole interface", "statuses": statuses(&READ_STATUSES[..1])},
            {"method": "POST", "path": "/api/freedom-fund", "auth": "Authorization: Bearer <FF_AGENT_WRITE_TOKEN>",
             "body": "one snapshot or decision record, Content-Type: application/json",
             "purpose": "append a record (append-only: never updated or removed)", "statuses": statuses(WRITE_STATUSES)},
            {"method": "GET", "path": "/api/freedom-scanner", "auth": "none",
             "purpose": "the latest scanner report; never triggers a run"},
            {"method": "POST", "path": "/api/freedom-scanner", "auth": "Authorization: Bearer <FF_AGENT_WRITE_TOKEN>",
             "purpose": "run the scanner once (public data, paper experiments only); 409 scanner_busy while a run holds the lock"}
        ],
        "errors": {
            "shape": {"error": {"code": "string", "message": "string", "details": "array"}},
            "codes": ["bad_request", "malformed_json", "invalid_query", "unauthorized", "not_found", "method_not_allowed",
                      "request_timeout", "id_conflict", "duplicate_snapshot", "out_of_order", "scanner_busy", "payload_too_large",
                      "uri_too_long", "header_fields_too_large", "unsupported_media_type", "validation_failed",
                      "sensitive_content", "writes_disabled", "storage_unavailable"],
            "httpLayer": {
                "note": "answers any request may get before it reaches a route, with the same error body (on the local listener; API Gateway gives its own under Lambda)",
                "statuses": statuses(HTTP_LAYER_STATUSES)
            }
        },
        "rules": {
            "identifiers": format!("id and strategyId: 1 to {MAX_ID_CHARS} characters of A-Z a-z 0-9 . _ : -"),
            "unknownFields": "refused: a public record carries nothing the contract does not name; duplicate keys are refused too",
            "numbers": "JSON numbers only (never strings, NaN or Infinity), exact decimals; a number must keep its exact value as an IEEE double (at most 15 significant digits) and stay below 1e15 in magnitude. equity, cash, cost, mark >= 0; quantity > 0 (long-only); flowSincePrevious any sign",
            "timestamps": format!("asOf is RFC 3339 with an explicit offset (Z or ±HH:MM), years 1970 to 2200, seconds 00 to 59 (a leap second :60 is refused); kept as written, compared as an instant. It may be at most {} minutes later than the service's clock (422 validation_failed, rule future_timestamp), so one mistyped year can never freeze a strategy or move the dashboard's window", FUTURE_TOLERANCE_SECONDS / 60),
            "reconciliation": {"tolerance": 0.02, "formula": "when positions is present, cash is required and |equity - (cash + sum(quantity * mark))| <= 0.02, computed in exact decimals; without positions, cash (when given) is part of equity: cash <= equity + 0.02 (rule cash_exceeds_equity)"},
            "text": "text fields carry no control characters (C0, C1; prose may hold line breaks and tabs) and no bidirectional embedding, override or isolate controls (U+202A-U+202E, U+2066-U+2069), rule control_character; source.url is an absolute http(s) URL of printable ASCII (no spaces or controls; percent-encode anything else), stored exactly as sent",
            "json": format!("bodies are RFC 8259 JSON in UTF-8, nested at most {MAX_NESTING} levels deep (400 malformed_json beyond)"),
            "baseline": "the first snapshot of a strategy establishes its baseline; it cannot establish a return",
            "ordering": "snapshots of one (strategyId, mode) are appended in increasing asOf: the same instant is duplicate_snapshot, an older one out_of_order; the id is checked first, so replaying an old record answers 200 unchanged; decisions may come in any order",
            "idempotency": "the same id with identical content (equal after RFC 8785 canonicalisation: key order, white space and number spelling such as 100 vs 100.00 do not matter) answers 200 unchanged and stores nothing; different content is 409 id_conflict",
            "comparisons": "use the same valuation timestamps across strategies for fair comparisons",
            "sensitiveContent": {"status": 422, "code": "sensitive_content", "rules": SENSITIVE_RULES,
                                 "note": "credentials, keys, seed phrases, the write token, URLs with credentials or secret parameters, card and bank account numbers and e-mail addresses are refused; the error names the field and rule, never the value"},
            "merkleLog": {
                "standard": "RFC 9162 section 2.1 (Certificate Transparency v2) Merkle Tree Hash",
                "leaf": "leaf bytes = RFC 8785 canonical JSON of the record as returned in `record`; leaf hash = SHA-256(0x00 || leaf bytes)",
                "node": "SHA-256(0x01 || left || right), the left subtree holding the largest power of two below n leaves",
                "emptyRoot": "SHA-256(\"\")",
                "seq": "records are numbered 1, 2, 3, ...; leaf index = seq - 1",
                "head": "{size, rootHash}: the Merkle Tree Hash of all size leaves; lowercase hex",
                "etag": "dashboard and ledger responses carry ETag: \"<rootHash>\" and answer 304 to a matching If-None-Match"
            },
            "periods": {"allowed": PERIODS, "default": DEFAULT_PERIOD, "unit": "trading days (Monday to Friday by UTC date; holidays are not removed)"},
            "dashboard": {
                "window": "ends at the fund's latest snapshot (end); its start steps back from end one calendar day at a time, counting steps that land on a weekday, until period are counted",
                "baseline": "per (strategyId, mode): the last snapshot at or before the start, or its first snapshot if it began inside the window; the window's snapshots are those after the baseline up to end",
                "intervalReturn": "r_i = (E_i - F_i) / E_(i-1) - 1, with F_i = flowSincePrevious (flows land at interval end); from zero equity: 0 if nothing was gained, else undefined (return metrics null)",
                "twr": "prod(1 + r_i) - 1",
                "pnl": "E_end - E_baseline - sum(F), exact decimals",
                "netFlows": "sum(F) over the window",
                "maxDrawdown": "most negative growthIndex / runningPeak - 1, the index being 1 at the baseline (a first-interval fall counts); 0 if it never fell",
                "dailyReturns": "interval returns chained within each UTC date (the date of the interval's ending snapshot)",
                "volatility": "sample standard deviation (n - 1) of daily returns * sqrt(252); null with fewer than 2 days",
                "sharpe": "mean(daily) / sampleStd(daily) * sqrt(252), risk-free 0; null with fewer than 2 days or zero deviation",
                "sortino": "mean(daily) / sqrt(mean over all days of min(r, 0)^2) * sqrt(252); null with fewer than 2 days or no downside",
                "annualizedReturn": "(1 + twr)^(252 / span) - 1 only when the strategy's span in the window is at least 252 trading days; otherwise null",
                "nulls": "a metric that cannot be computed is null, never 0 or NaN; a baseline-only strategy has baselineOnly true and null returns",
                "stale": "the strategy's latest snapshot is more than one trading day older than the fund's latest",
                "comparison": "a series is one (strategyId, mode). sharedTimestamps counts the instants in the window every series has; the reference times are the instants in the window used by at least half of the series; misaligned lists the series ({strategyId, mode}) that miss more than half of the reference times within their own span (baseline to latest snapshot); comparison.strategies[].twr is measured between the first and last shared instants",
                "positions": "latest positions with value = quantity * mark and weight = value / equity (cashWeight = cash / equity)",
                "decisions": "decisions with asOf after the window's start, including those after the latest snapshot, newest first, at most 200",
                "caching": "the same head always gives byte-identical JSON; ETag is the root hash"
            },
            "never": "the service executes no orders, approves nothing, signs nothing, copies no wallet, and holds no broker credentials"
        },
        "limits": {
            "maxBodyBytes": MAX_BODY_BYTES,
            "maxJsonNesting": MAX_NESTING,
            "futureTimestampToleranceSeconds": FUTURE_TOLERANCE_SECONDS,
            "ledgerPage": {"default": DEFAULT_PAGE_LIMIT, "max": MAX_PAGE_LIMIT, "maxBytes": MAX_PAGE_BYTES},
            "localListener": {
                "requestHeadTimeoutSeconds": ServerLimits::default().head_timeout.as_secs(),
                "bodyTimeoutSeconds": BODY_TIMEOUT.as_secs(),
                "maxHeadBytes": ServerLimits::default().max_head_bytes,
                "maxUriBytes": ServerLimits::default().max_uri_bytes,
                "maxConnections": ServerLimits::default().max_connections,
                "shutdownGraceSeconds": ServerLimits::default().shutdown_grace.as_secs()
            },
            "idLength": MAX_ID_CHARS,
            "nameLength": MAX_NAME_CHARS,
            "textLength": MAX_TEXT_CHARS,
            "urlLength": MAX_URL_CHARS,
            "positions": MAX_POSITIONS,
            "reconciliationTolerance": 0.02,
            "dashboardPeriods": PERIODS,
            "scannerSchedule": "every 15 minutes",
            "scannerConcurrency": "one run at a time (lock); others answer 409 scanner_busy",
            "observationDedupMinutes": 10
        },
        "scanner": {
            "version": SCANNER_VERSION, "mode": SCANNER_MODE, "path": "/api/freedom-scanner",
            "checks": freedom_shared::scan::checks::CHECK_NAMES,
            "minLiquidityUsd": freedom_shared::record::decimal_json(freedom_shared::scan::MIN_LIQUIDITY_USD),
            "eligible": "true exactly when every check passes; a check is unknown when its provider did not answer",
            "dedup": "a token's observations closer than 10 minutes are one; experiments advance at most once per 10 minutes",
            "bounds": {"historyPerToken": freedom_shared::scan::HISTORY_PER_TOKEN, "events": freedom_shared::scan::MAX_EVENTS, "tradesPerBook": freedom_shared::scan::TRADES_PER_BOOK},
            "riskCacheHours": freedom_shared::scan::RISK_CACHE_TTL.num_hours(),
            "paper": freedom_shared::scan::experiments::declaration()
        }
    })
}

/// The scanner report's named parts (DESIGN.md "Scanner"), as JSON Schema.
fn scanner_report_schema() -> Value {
    let object = |required: &[&str]| json!({"type": "object", "required": required});
    json!({
        "type": "object",
        "required": ["version", "mode", "status", "reportAt", "observedAt", "universe", "links", "books", "history", "events", "wallets"],
        "properties": {
            "version": {"const": SCANNER_VERSION},
            "mode": {"const": SCANNER_MODE},
            "status": {"enum": ["ok", "degraded", null], "description": "null before the first run"},
            "reportAt": {"type": ["string", "null"], "format": "date-time"},
            "observedAt": {"type": ["string", "null"], "format": "date-time"},
            "universe": {"type": "array", "items": {
                "type": "object",
                "required": ["mint", "symbol", "priceUsd", "liquidityUsd", "eligible", "checks"],
                "properties": {
                    "mint": {"type": "string"}, "symbol": {"type": "string"},
                    "priceUsd": {"type": ["number", "null"]}, "liquidityUsd": {"type": ["number", "null"]},
                    "eligible": {"type": "boolean", "description": "true exactly when every check passes"},
                    "checks": {"type": "array", "items": {
                        "type": "object", "required": ["name", "status", "detail"],
                        "properties": {
                            "name": {"enum": freedom_shared::scan::checks::CHECK_NAMES},
                            "status": {"enum": ["pass", "fail", "unknown"]},
                            "detail": {"type": "string"}
                        }
                    }}
                }
            }},
            "links": {"type": "object", "additionalProperties": {"type": "array", "items": object(&["provider", "url"])}},
            "books": {"type": "array", "items": object(&["experimentId", "cash", "equity", "positions", "trades"])},
            "history": {"type": "object", "additionalProperties": {"type": "array", "items": object(&["observedAt", "priceUsd"])}},
            "events": {"type": "array", "items": object(&["at", "kind", "message"])},
            "wallets": {"type": "array", "items": object(&["address"])}
        }
    })
}

fn error_response(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn json_response(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": schema}}})
}

/// The OpenAPI 3.1 document of the whole interface.
pub fn openapi() -> Value {
    let etag_header = json!({"ETag": {"description": "\"<rootHash>\" of the ledger head", "schema": {"type": "string"}}});
    let mut snapshot = snapshot_schema();
    let mut decision = decision_schema();
    for schema in [&mut snapshot, &mut decision] {
        let object = schema.as_object_mut().expect("schemas are objects");
        object.remove("$schema");
        object.remove("$id");
    }
    let string_param = |name: &str, description: &str, schema: Value| json!({"name": name, "in": "query", "required": false, "description": description, "schema": schema});
    let series_key = json!({"type": "object", "required": ["strategyId", "mode"],
        "properties": {"strategyId": {"type": "string"}, "mode": {"enum": ["live", "paper"]}}});
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Freedom Fund",
            "version": format!("{SCHEMA_VERSION}.0.0"),
            "description": "Public, append-only fund record (snapshots and decisions in a verifiable Merkle log) and a paper-only market scanner. Nothing here trades, signs or approves anything."
        },
        "servers": [{"url": "/"}],
        "paths": {
            "/": {
                "get": {
                    "operationId": "readPage",
                    "summary": "The public page: the dashboard as server-rendered HTML",
                    "parameters": [
                        string_param("period", "dashboard period in trading days", json!({"type": "integer", "enum": PERIODS, "default": DEFAULT_PERIOD}))
                    ],
                    "responses": {
                        "200": {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}},
                        "304": {"description": "If-None-Match matched the root hash"},
                        "400": {"description": "a bad period", "content": {"text/html": {"schema": {"type": "string"}}}},
                        "503": {"description": "the store is unavailable", "content": {"text/html": {"schema": {"type": "string"}}}}
                    }
                }
            },
            "/api/freedom-fund": {
                "get": {
                    "operationId": "readFund",
                    "summary": "Dashboard (default), ledger, contract or OpenAPI view",
                    "parameters": [
                        string_param("view", "omit for the dashboard", json!({"enum": ["ledger", "contract", "openapi"]})),
                        string_param("period", "dashboard period in trading days", json!({"type": "integer", "enum": PERIODS, "default": DEFAULT_PERIOD})),
                        string_param("limit", "ledger page size", json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LIMIT, "default": DEFAULT_PAGE_LIMIT})),
                        string_param("before", "ledger cursor: entries with a smaller seq", json!({"type": "integer", "minimum": 1})),
                        string_param("strategyId", "ledger filter", json!({"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"})),
                        string_param("type", "ledger filter", json!({"enum": ["snapshot", "decision"]})),
                        string_param("mode", "ledger filter", json!({"enum": ["live", "paper"]})),
                        {"name": "If-None-Match", "in": "header", "required": false, "schema": {"type": "string"}}
                    ],
                    "responses": {
                        "200": {
                            "description": "the requested view",
                            "headers": etag_header,
                            "content": {"application/json": {"schema": {"oneOf": [
                                {"$ref": "#/components/schemas/Dashboard"},
                                {"$ref": "#/components/schemas/LedgerView"},
                                {"type": "object", "description": "contract view or OpenAPI document"}
                            ]}}}
                        },
                        "304": {"description": "not modified (ETag matched)", "headers": etag_header},
                        "400": error_response("invalid_query, or bad_request from the HTTP layer"),
                        "408": error_response("request_timeout (HTTP layer)"),
                        "414": error_response("uri_too_long (HTTP layer)"),
                        "431": error_response("header_fields_too_large (HTTP layer)"),
                        "503": error_response("storage_unavailable")
                    }
                },
                "post": {
                    "operationId": "appendRecord",
                    "summary": "Append one snapshot or decision (append-only, idempotent by id)",
                    "security": [{"bearer": []}],
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"oneOf": [
                        {"$ref": "#/components/schemas/Snapshot"}, {"$ref": "#/components/schemas/Decision"}
                    ]}}}},
                    "responses": {
                        "201": json_response("appended", json!({"$ref": "#/components/schemas/AppendReceipt"})),
                        "200": json_response("identical record already stored; nothing changed", json!({"$ref": "#/components/schemas/AppendReceipt"})),
                        "400": error_response("malformed_json or invalid_query"),
                        "401": error_response("unauthorized"),
                        "408": error_response("request_timeout: the body did not arrive in time"),
                        "409": error_response("id_conflict, duplicate_snapshot or out_of_order"),
                        "413": error_response("payload_too_large"),
                        "414": error_response("uri_too_long (HTTP layer)"),
                        "431": error_response("header_fields_too_large (HTTP layer)"),
                        "415": error_response("unsupported_media_type"),
                        "422": error_response("validation_failed or sensitive_content"),
                        "503": error_response("writes_disabled or storage_unavailable")
                    }
                }
            },
            "/api/freedom-scanner": {
                "get": {
                    "operationId": "readScanner",
                    "summary": "The latest scanner report (never triggers a run)",
                    "responses": {
                        "200": json_response("the report (every part empty before the first run)", json!({"$ref": "#/components/schemas/ScannerReport"})),
                        "400": error_response("invalid_query"),
                        "503": error_response("storage_unavailable")
                    }
                },
                "post": {
                    "operationId": "runScanner",
                    "summary": "Run the scanner once: public data, paper experiments only",
                    "security": [{"bearer": []}],
                    "responses": {
                        "200": json_response("the new report", json!({"$ref": "#/components/schemas/ScannerReport"})),
                        "400": error_response("invalid_query"),
                        "401": error_response("unauthorized"),
                        "409": error_response("scanner_busy"),
                        "503": error_response("writes_disabled or storage_unavailable")
                    }
                }
            }
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "FF_AGENT_WRITE_TOKEN"}},
            "schemas": {
                "Snapshot": snapshot,
                "Decision": decision,
                "Head": {"type": "object", "required": ["size", "rootHash"], "properties": {
                    "size": {"type": "integer", "minimum": 0},
                    "rootHash": {"type": "string", "pattern": "^[0-9a-f]{64}$"}}},
                "LedgerEntry": {"type": "object", "required": ["seq", "leafHash", "record"], "properties": {
                    "seq": {"type": "integer", "minimum": 1},
                    "leafHash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    "record": {"oneOf": [{"$ref": "#/components/schemas/Snapshot"}, {"$ref": "#/components/schemas/Decision"}]}}},
                "LedgerView": {"type": "object", "required": ["schemaVersion", "head", "entries", "next"], "properties": {
                    "schemaVersion": {"const": SCHEMA_VERSION},
                    "head": {"$ref": "#/components/schemas/Head"},
                    "entries": {"type": "array", "items": {"$ref": "#/components/schemas/LedgerEntry"}},
                    "next": {"type": ["integer", "null"]}}},
                "AppendReceipt": {"type": "object", "required": ["status", "seq", "leafHash", "head", "record"], "properties": {
                    "status": {"enum": ["created", "unchanged"]},
                    "seq": {"type": "integer", "minimum": 1},
                    "leafHash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    "head": {"$ref": "#/components/schemas/Head"},
                    "record": {"type": "object"}}},
                "Metrics": {"type": "object", "required": ["twr", "annualizedReturn", "pnl", "netFlows", "maxDrawdown", "volatility", "sharpe", "sortino", "intervals"],
                    "properties": {
                        "twr": {"type": ["number", "null"]}, "annualizedReturn": {"type": ["number", "null"]},
                        "pnl": {"type": ["number", "null"]}, "netFlows": {"type": ["number", "null"]},
                        "maxDrawdown": {"type": ["number", "null"], "maximum": 0}, "volatility": {"type": ["number", "null"]},
                        "sharpe": {"type": ["number", "null"]}, "sortino": {"type": ["number", "null"]},
                        "intervals": {"type": "integer", "minimum": 0}}},
                "DashboardStrategy": {"type": "object", "required": ["strategyId", "strategyName", "mode", "baseline", "latest", "metrics", "series", "stale"],
                    "properties": {
                        "strategyId": {"type": "string"}, "strategyName": {"type": "string"}, "mode": {"enum": ["live", "paper"]},
                        "baseline": {"type": "object"}, "latest": {"type": "object"},
                        "metrics": {"$ref": "#/components/schemas/Metrics"},
                        "series": {"type": "array", "items": {"type": "object", "properties": {
                            "asOf": {"type": "string"}, "equity": {"type": "number"}, "index": {"type": ["number", "null"]}}}},
                        "stale": {"type": "boolean"}, "baselineOnly": {"type": "boolean"}}},
                "Dashboard": {"type": "object", "required": ["schemaVersion", "period", "unit", "window", "head", "strategies", "comparison", "decisions"], "properties": {
                    "schemaVersion": {"const": SCHEMA_VERSION},
                    "period": {"type": "integer", "enum": PERIODS},
                    "unit": {"const": "tradingDays"},
                    "window": {"type": "object", "properties": {
                        "start": {"type": ["string", "null"]}, "end": {"type": ["string", "null"]}}},
                    "head": {"$ref": "#/components/schemas/Head"},
                    "strategies": {"type": "array", "items": {"$ref": "#/components/schemas/DashboardStrategy"}},
                    "comparison": {"type": "object", "required": ["sharedTimestamps", "misaligned"], "properties": {
                        "sharedTimestamps": {"type": "integer", "minimum": 0},
                        "misaligned": {"type": "array", "items": series_key},
                        "strategies": {"type": "array", "items": {"type": "object"}}}},
                    "decisions": {"type": "array", "items": {"type": "object", "required": ["seq", "record"], "properties": {
                        "seq": {"type": "integer", "minimum": 1}, "record": {"$ref": "#/components/schemas/Decision"}}}}}},
                "ScannerReport": scanner_report_schema(),
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {
                    "type": "object", "required": ["code", "message", "details"], "properties": {
                        "code": {"type": "string"}, "message": {"type": "string"}, "details": {"type": "array"}}}}}
            }
        }
    })
}
