//! Black-box tests of the fund router through `tower::ServiceExt::oneshot`:
//! every status and error code of the write path, the ledger view with its
//! cursor, filters and ETag, the dashboard's period rules, and the contract
//! and OpenAPI views (the latter checked by a real OpenAPI validator).

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::canonical::canonical_json;
use freedom_shared::config::WriteToken;
use freedom_shared::merkle::{Digest, leaf_hash, root_of};
use freedom_testkit::python::check as python_check;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

const TOKEN: &str = "test-token-0123456789abcdef";
const PATH: &str = "/api/freedom-fund";

struct TestApp {
    router: Router,
    _dir: tempfile::TempDir,
}

fn spawn_app_with_token(token: Option<&str>) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    let state = fund::AppState::new(Arc::new(store), token.and_then(WriteToken::new));
    TestApp {
        router: fund::app(state),
        _dir: dir,
    }
}

fn spawn_app() -> TestApp {
    spawn_app_with_token(Some(TOKEN))
}

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Value,
}

impl Answer {
    fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
}

impl TestApp {
    async fn send(&self, request: Request<Body>) -> Answer {
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("every answer is JSON")
        };
        Answer {
            status,
            headers,
            body,
        }
    }

    async fn post_raw(&self, body: impl Into<Body>) -> Answer {
        self.send(
            Request::post(PATH)
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(body.into())
                .unwrap(),
        )
        .await
    }

    async fn post(&self, record: &Value) -> Answer {
        self.post_raw(record.to_string()).await
    }

    /// The append's dry run (`?dryRun=1`) of `body`.
    async fn dry_run(&self, body: impl Into<Body>) -> Answer {
        self.send(
            Request::post(format!("{PATH}?dryRun=1"))
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(body.into())
                .unwrap(),
        )
        .await
    }

    async fn get(&self, query: &str) -> Answer {
        self.send(
            Request::get(format!("{PATH}{query}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await
    }
}

fn snapshot(id: &str, strategy: &str, as_of: &str, equity: f64) -> Value {
    json!({
        "id": id, "type": "snapshot", "visibility": "public", "mode": "live",
        "strategyId": strategy, "strategyName": format!("Strategy {strategy}"), "asOf": as_of,
        "source": {"name": "broker", "url": "https://example.com/statement"},
        "currency": "USD", "equity": equity, "flowSincePrevious": 0
    })
}

fn decision(id: &str) -> Value {
    json!({
        "id": id, "type": "decision", "visibility": "public", "mode": "paper",
        "strategyId": "momentum", "strategyName": "Momentum", "asOf": "2026-05-04T16:05:00Z",
        "source": {"name": "agent", "url": "https://example.com/agent"},
        "action": "propose", "summary": "Add to the leaders.", "nextCheck": "2026-05-11"
    })
}

async fn ledger_size(app: &TestApp) -> u64 {
    app.get("?view=ledger").await.body["head"]["size"]
        .as_u64()
        .unwrap()
}

#[tokio::test]
async fn a_valid_snapshot_is_created_with_its_leaf_and_head() {
    let app = spawn_app();
    let answer = app
        .post(&snapshot("s1", "core", "2026-05-04T16:00:00Z", 1000.0))
        .await;
    assert_eq!(answer.status, StatusCode::CREATED);
    assert_eq!(answer.body["status"], "created");
    assert_eq!(answer.body["seq"], 1);
    let canonical = canonical_json(&answer.body["record"]);
    let leaf = leaf_hash(canonical.as_bytes()).to_hex();
    assert_eq!(answer.body["leafHash"], leaf);
    assert_eq!(answer.body["head"], json!({"size": 1, "rootHash": leaf}));
    let answer = app.post(&decision("d1")).await;
    assert_eq!(
        (answer.status, answer.body["seq"].as_u64()),
        (StatusCode::CREATED, Some(2))
    );
}

#[tokio::test]
async fn replays_with_reordered_keys_and_other_number_spellings_are_unchanged() {
    let app = spawn_app();
    let first = app
        .post(&snapshot("s1", "core", "2026-05-04T16:00:00Z", 100.0))
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    let reordered = r#"{"flowSincePrevious":0.00,"equity":100.00,"currency":"USD",
        "source":{"url":"https://example.com/statement","name":"broker"},"asOf":"2026-05-04T16:00:00Z",
        "strategyName":"Strategy core","strategyId":"core","mode":"live","visibility":"public","type":"snapshot","id":"s1"}"#;
    let replay = app.post_raw(reordered).await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(replay.body["status"], "unchanged");
    assert_eq!(replay.body["seq"], 1);
    assert_eq!(replay.body["leafHash"], first.body["leafHash"]);
    assert_eq!(ledger_size(&app).await, 1);
}

#[tokio::test]
async fn conflicts_duplicates_and_out_of_order_snapshots_are_409_and_store_nothing() {
    let app = spawn_app();
    app.post(&snapshot("s1", "core", "2026-05-04T16:00:00Z", 100.0))
        .await;
    app.post(&snapshot("s2", "core", "2026-05-05T16:00:00Z", 101.0))
        .await;

    let conflict = app
        .post(&snapshot("s1", "core", "2026-05-04T16:00:00Z", 999.0))
        .await;
    assert_eq!(
        (conflict.status, conflict.code()),
        (StatusCode::CONFLICT, "id_conflict")
    );
    // Same instant written with another offset is the same slot.
    let duplicate = app
        .post(&snapshot("s3", "core", "2026-05-05T12:00:00-04:00", 101.0))
        .await;
    assert_eq!(
        (duplicate.status, duplicate.code()),
        (StatusCode::CONFLICT, "duplicate_snapshot")
    );
    let older = app
        .post(&snapshot("s4", "core", "2026-05-04T18:00:00Z", 101.0))
        .await;
    assert_eq!(
        (older.status, older.code()),
        (StatusCode::CONFLICT, "out_of_order")
    );
    // The refusal names the latest snapshot's asOf, so the writer knows
    // what to send after.
    assert_eq!(
        older.body["error"]["details"],
        serde_json::json!([{"latestSeq": 2, "latestAsOf": "2026-05-05T16:00:00Z"}])
    );
    assert!(
        older.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2026-05-05T16:00:00Z"),
        "{}",
        older.body
    );
    // The old record replayed is still unchanged (id first).
    let replay = app
        .post(&snapshot("s1", "core", "2026-05-04T16:00:00Z", 100.0))
        .await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(ledger_size(&app).await, 2);
}

/// A dry run answers exactly what the append would (status and body; a
/// receipt says `"dryRun": true`), and the ledger's head does not move.
#[tokio::test]
async fn a_dry_run_answers_what_the_append_would_and_appends_nothing() {
    let app = spawn_app();
    let head = |answer: &Answer| answer.body["head"].clone();
    let first = snapshot("s1", "core", "2026-05-04T16:00:00Z", 100.0);
    let dry = app.dry_run(first.to_string()).await;
    assert_eq!(dry.status, StatusCode::CREATED);
    assert_eq!(dry.body["dryRun"], true);
    assert_eq!(ledger_size(&app).await, 0, "nothing appended");
    let real = app.post(&first).await;
    assert_eq!(real.status, StatusCode::CREATED);
    assert_eq!(real.body.get("dryRun"), None, "only a dry run says so");
    let mut predicted = dry.body.clone();
    predicted.as_object_mut().unwrap().remove("dryRun");
    assert_eq!(predicted, real.body, "the dry run predicted the receipt");
    app.post(&snapshot("s2", "core", "2026-05-05T16:00:00Z", 101.0))
        .await;
    let size = ledger_size(&app).await;

    let cases: Vec<(String, StatusCode)> = vec![
        (first.to_string(), StatusCode::OK),
        (
            snapshot("s1", "core", "2026-05-04T16:00:00Z", 999.0).to_string(),
            StatusCode::CONFLICT,
        ),
        (
            snapshot("s4", "core", "2026-05-04T18:00:00Z", 101.0).to_string(),
            StatusCode::CONFLICT,
        ),
        (
            snapshot("s5", "core", "2026-05-06T16:00:00Z", -5.0).to_string(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        ("{".to_owned(), StatusCode::BAD_REQUEST),
    ];
    for (body, status) in cases {
        let dry = app.dry_run(body.clone()).await;
        assert_eq!(ledger_size(&app).await, size, "a dry run moves no head");
        let real = app.post_raw(body.clone()).await;
        assert_eq!((dry.status, real.status), (status, status), "{body}");
        if status.is_success() {
            assert_eq!(dry.body["dryRun"], true);
            assert_eq!(head(&dry), head(&real));
        } else {
            assert_eq!(dry.body, real.body, "{body}");
        }
    }
    assert_eq!(ledger_size(&app).await, size);

    for query in [
        "?dryRun=0",
        "?dryRun=true",
        "?dryRun=1&dryRun=1",
        "?other=1",
    ] {
        let answer = app
            .send(
                Request::post(format!("{PATH}{query}"))
                    .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from(first.to_string()))
                    .unwrap(),
            )
            .await;
        assert_eq!(
            (answer.status, answer.code()),
            (StatusCode::BAD_REQUEST, "invalid_query"),
            "{query}"
        );
    }
}

#[tokio::test]
async fn auth_failures_are_401_with_a_bearer_challenge() {
    let app = spawn_app();
    let body = snapshot("s1", "core", "2026-05-04T16:00:00Z", 100.0).to_string();
    let attempts: Vec<Request<Body>> = vec![
        Request::post(PATH)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.clone()))
            .unwrap(),
        Request::post(PATH)
            .header(header::AUTHORIZATION, "Bearer wrong-token")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.clone()))
            .unwrap(),
        Request::post(PATH)
            .header(header::AUTHORIZATION, format!("Basic {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.clone()))
            .unwrap(),
        Request::post(PATH)
            .header(header::AUTHORIZATION, "Bearer ")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.clone()))
            .unwrap(),
        Request::post(format!("{PATH}?token={TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.clone()))
            .unwrap(),
        Request::post(format!("{PATH}?access_token={TOKEN}"))
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.clone()))
            .unwrap(),
    ];
    for request in attempts {
        let answer = app.send(request).await;
        assert_eq!(
            (answer.status, answer.code()),
            (StatusCode::UNAUTHORIZED, "unauthorized")
        );
        assert!(
            answer.headers[header::WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .starts_with("Bearer")
        );
        assert!(
            !answer.body.to_string().contains(TOKEN),
            "the token is never echoed"
        );
    }
    assert_eq!(ledger_size(&app).await, 0);
}

#[tokio::test]
async fn the_scheme_is_case_insensitive() {
    let app = spawn_app();
    let answer = app
        .send(
            Request::post(PATH)
                .header(header::AUTHORIZATION, format!("bearer {TOKEN}"))
                .header(header::CONTENT_TYPE, "application/json; charset=UTF-8")
                .body(Body::from(decision("d1").to_string()))
                .unwrap(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::CREATED);
}

#[tokio::test]
async fn writes_without_a_configured_token_are_503_writes_disabled() {
    let app = spawn_app_with_token(None);
    let answer = app.post(&decision("d1")).await;
    assert_eq!(
        (answer.status, answer.code()),
        (StatusCode::SERVICE_UNAVAILABLE, "writes_disabled")
    );
    // The message names what turns writes on.
    assert!(
        answer.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("FF_AGENT_WRITE_TOKEN"),
        "{}",
        answer.body
    );
}

#[tokio::test]
async fn only_json_content_is_accepted() {
    let app = spawn_app();
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("application/json; charset=latin1"),
    ] {
        let mut request =
            Request::post(PATH).header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
        if let Some(value) = content_type {
            request = request.header(header::CONTENT_TYPE, value);
        }
        let answer = app
            .send(
                request
                    .body(Body::from(decision("d1").to_string()))
                    .unwrap(),
            )
            .await;
        assert_eq!(
            (answer.status, answer.code()),
            (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
            "{content_type:?}"
        );
    }
}

/// A body with a `Content-Encoding` is refused, not read as plain JSON
/// (it used to be), and nothing is stored.
#[tokio::test]
async fn an_encoded_body_is_415_and_stores_nothing() {
    let app = spawn_app();
    for encoding in ["gzip", "br", "deflate", "identity, gzip"] {
        let answer = app
            .send(
                Request::post(PATH)
                    .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                    .header(header::CONTENT_TYPE, "application/json")
                    .header(header::CONTENT_ENCODING, encoding)
                    .body(Body::from(decision("encoded").to_string()))
                    .unwrap(),
            )
            .await;
        assert_eq!(
            (answer.status, answer.code()),
            (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
            "{encoding}"
        );
    }
    assert_eq!(ledger_size(&app).await, 0);
}

#[tokio::test]
async fn bodies_over_64_kib_are_413() {
    let app = spawn_app();
    let mut record = decision("big");
    record["summary"] = json!("x".repeat(70 * 1024));
    let answer = app.post(&record).await;
    assert_eq!(
        (answer.status, answer.code()),
        (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
    );
    // A streamed body with no Content-Length is cut off at the limit too.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..80).map(|_| Ok(vec![b' '; 1024])).collect();
    let stream = Body::from_stream(futures_util::stream::iter(chunks));
    let answer = app.post_raw(stream).await;
    assert_eq!(answer.code(), "payload_too_large");
    assert_eq!(ledger_size(&app).await, 0);
}

#[tokio::test]
async fn malformed_json_is_400_and_invalid_records_are_422_with_details() {
    let app = spawn_app();
    let answer = app.post_raw("{\"id\": ").await;
    assert_eq!(
        (answer.status, answer.code()),
        (StatusCode::BAD_REQUEST, "malformed_json")
    );
    let answer = app.post_raw("{\"a\":1} trailing").await;
    assert_eq!(answer.code(), "malformed_json");

    let mut record = snapshot("s1", "core", "2026-05-04T16:00:00", -5.0);
    record["equity"] = json!("100");
    record["extra"] = json!(true);
    let answer = app.post(&record).await;
    assert_eq!(
        (answer.status, answer.code()),
        (StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    );
    let fields: Vec<(&str, &str)> = answer.body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["field"].as_str().unwrap(), d["rule"].as_str().unwrap()))
        .collect();
    assert!(fields.contains(&("asOf", "timestamp")), "{fields:?}");
    assert!(fields.contains(&("equity", "type")), "{fields:?}");
    assert!(fields.contains(&("extra", "unknown_field")), "{fields:?}");
    assert_eq!(ledger_size(&app).await, 0);
}

#[tokio::test]
async fn duplicate_keys_are_refused() {
    let app = spawn_app();
    let body =
        decision("d1")
            .to_string()
            .replacen("\"id\":\"d1\"", "\"id\":\"d1\",\"id\":\"d2\"", 1);
    let answer = app.post_raw(body).await;
    assert_eq!(
        (answer.status, answer.code()),
        (StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    );
    assert_eq!(answer.body["error"]["details"][0]["rule"], "duplicate_key");
}

/// A log entry's length is a `u16`: a record whose canonical form is
/// longer could never be bundled into the log's entry tiles, so the tile
/// (and every proof through it) would fail for good. Numbers are written
/// in full in the canonical form (`1e14` is `100000000000000`), so a body
/// well under 64 KiB can grow past it; such a record is refused.
#[tokio::test]
async fn a_record_whose_canonical_form_outgrows_a_log_entry_is_refused() {
    let app = spawn_app();
    let mut record = snapshot("s1", "core", "2026-05-04T16:00:00Z", 1.0);
    let positions: Vec<Value> = (0..1000)
        .map(|i| json!({"symbol": format!("S{i}"), "quantity": 1, "cost": 1, "mark": 1}))
        .collect();
    record["positions"] = json!(positions);
    record["cash"] = json!(0);
    record["equity"] = json!(1e10);
    let body = record
        .to_string()
        .replace("\"cost\":1,", "\"cost\":1e-7,")
        .replace("\"mark\":1,", "\"mark\":1e-7,")
        .replace("\"quantity\":1,", "\"quantity\":1e14,");
    assert!(body.len() < 64 * 1024, "the body fits the size limit");
    let answer = app.post_raw(body).await;
    assert_eq!(
        (answer.status, answer.code()),
        (StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    );
    assert_eq!(answer.body["error"]["details"][0]["rule"], "entry_size");
    assert_eq!(ledger_size(&app).await, 0);
}

#[tokio::test]
async fn secrets_are_422_sensitive_content_and_never_echoed() {
    let app = spawn_app();
    let secrets = [
        (
            "summary",
            "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
            "seed_phrase",
        ),
        ("thesis", "use AKIAIOSFODNN7EXAMPLE", "aws_key"),
        ("summary", TOKEN, "write_token"),
        ("counterEvidence", "mail bob@example.org", "email"),
        ("nextCheck", "card 4111111111111111", "card_number"),
    ];
    for (field, secret, rule) in secrets {
        let mut record = decision("d1");
        record[field] = json!(secret);
        let answer = app.post(&record).await;
        assert_eq!(
            (answer.status, answer.code()),
            (StatusCode::UNPROCESSABLE_ENTITY, "sensitive_content"),
            "{rule}"
        );
        assert_eq!(answer.body["error"]["details"][0]["field"], field);
        assert_eq!(answer.body["error"]["details"][0]["rule"], rule);
        assert!(!answer.body.to_string().contains(secret), "echoed {rule}");
    }
    let mut record = snapshot("s1", "core", "2026-05-04T16:00:00Z", 1.0);
    record["source"]["url"] = json!("https://user:hunter2@example.com/x");
    let answer = app.post(&record).await;
    assert_eq!(answer.body["error"]["details"][0]["field"], "source.url");
    assert_eq!(ledger_size(&app).await, 0);
}

#[tokio::test]
async fn post_takes_no_query_parameters() {
    let app = spawn_app();
    let answer = app
        .send(
            Request::post(format!("{PATH}?view=ledger"))
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(decision("d1").to_string()))
                .unwrap(),
        )
        .await;
    assert_eq!(
        (answer.status, answer.code()),
        (StatusCode::BAD_REQUEST, "invalid_query")
    );
}

#[tokio::test]
async fn forty_concurrent_posts_store_exactly_what_the_rules_allow() {
    let app = Arc::new(spawn_app());
    async fn burst(app: &Arc<TestApp>, records: Vec<Value>) -> Vec<Answer> {
        let tasks: Vec<_> = records
            .into_iter()
            .map(|record| {
                let app = Arc::clone(app);
                tokio::spawn(async move { app.post(&record).await })
            })
            .collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.unwrap());
        }
        answers
    }
    let count = |answers: &[Answer], status: StatusCode, code: &str| {
        answers
            .iter()
            .filter(|a| a.status == status && (code.is_empty() || a.code() == code))
            .count()
    };

    let same = burst(
        &app,
        (0..40)
            .map(|_| snapshot("same", "a", "2026-05-04T16:00:00Z", 100.0))
            .collect(),
    )
    .await;
    assert_eq!(
        (
            count(&same, StatusCode::CREATED, ""),
            count(&same, StatusCode::OK, "")
        ),
        (1, 39)
    );

    let conflicting = burst(
        &app,
        (0..40)
            .map(|i| snapshot("contested", "b", "2026-05-04T16:00:00Z", 100.0 + i as f64))
            .collect(),
    )
    .await;
    assert_eq!(count(&conflicting, StatusCode::CREATED, ""), 1);
    assert_eq!(count(&conflicting, StatusCode::CONFLICT, "id_conflict"), 39);

    let slot = burst(
        &app,
        (0..40)
            .map(|i| snapshot(&format!("slot{i}"), "c", "2026-05-04T16:00:00Z", 100.0))
            .collect(),
    )
    .await;
    assert_eq!(count(&slot, StatusCode::CREATED, ""), 1);
    assert_eq!(count(&slot, StatusCode::CONFLICT, "duplicate_snapshot"), 39);

    assert_eq!(ledger_size(&app).await, 3);
}

#[tokio::test]
async fn the_ledger_pages_newest_first_and_its_root_re_derives_from_the_records() {
    let app = spawn_app();
    for day in 1..=9 {
        app.post(&snapshot(
            &format!("s{day}"),
            if day % 2 == 0 { "even" } else { "odd" },
            &format!("2026-05-0{day}T16:00:00Z"),
            100.0 + day as f64,
        ))
        .await;
    }
    app.post(&decision("d1")).await;

    let page = app.get("?view=ledger&limit=4").await;
    assert_eq!(page.status, StatusCode::OK);
    let seqs: Vec<u64> = page.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, vec![10, 9, 8, 7]);
    assert_eq!(page.body["next"], 7);
    let rest = app.get("?view=ledger&limit=100&before=7").await;
    assert_eq!(rest.body["entries"].as_array().unwrap().len(), 6);
    assert_eq!(rest.body["next"], Value::Null);

    // Re-derive every leaf from the record (RFC 8785) and the root (RFC 9162).
    let all = app.get("?view=ledger&limit=1000").await;
    let mut leaves: Vec<Digest> = Vec::new();
    for entry in all.body["entries"].as_array().unwrap().iter().rev() {
        let leaf = leaf_hash(canonical_json(&entry["record"]).as_bytes());
        assert_eq!(entry["leafHash"], leaf.to_hex());
        leaves.push(leaf);
    }
    assert_eq!(all.body["head"]["rootHash"], root_of(&leaves).to_hex());
    assert_eq!(all.body["schemaVersion"], 1);

    let evens = app.get("?view=ledger&strategyId=even").await;
    assert_eq!(evens.body["entries"].as_array().unwrap().len(), 4);
    let decisions = app.get("?view=ledger&type=decision&mode=paper").await;
    assert_eq!(decisions.body["entries"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_ledger_and_dashboard_carry_the_root_as_etag_and_answer_304() {
    let app = spawn_app();
    app.post(&decision("d1")).await;
    let page = app.get("?view=ledger").await;
    let etag = page.headers[header::ETAG].to_str().unwrap().to_owned();
    assert_eq!(
        etag,
        format!("\"{}\"", page.body["head"]["rootHash"].as_str().unwrap())
    );
    for query in ["?view=ledger", "", "?period=21"] {
        let answer = app
            .send(
                Request::get(format!("{PATH}{query}"))
                    .header(header::IF_NONE_MATCH, &etag)
                    .body(Body::empty())
                    .unwrap(),
            )
            .await;
        assert_eq!(answer.status, StatusCode::NOT_MODIFIED, "{query}");
        assert_eq!(answer.headers[header::ETAG], etag.as_str());
    }
    app.post(&decision("d2")).await;
    let answer = app
        .send(
            Request::get(format!("{PATH}?view=ledger"))
                .header(header::IF_NONE_MATCH, &etag)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test]
async fn bad_queries_are_400_invalid_query() {
    let app = spawn_app();
    for query in [
        "?view=nope",
        "?period=30",
        "?period=abc",
        "?period=21&period=63",
        "?view=ledger&limit=0",
        "?view=ledger&limit=1001",
        "?view=ledger&limit=ten",
        "?view=ledger&before=0",
        "?view=ledger&type=trade",
        "?view=ledger&mode=real",
        "?view=ledger&strategyId=a%20b",
        "?view=ledger&period=21",
        "?view=contract&limit=3",
        "?foo=bar",
    ] {
        let answer = app.get(query).await;
        assert_eq!(
            (answer.status, answer.code()),
            (StatusCode::BAD_REQUEST, "invalid_query"),
            "{query}"
        );
    }
}

#[tokio::test]
async fn the_dashboard_answers_each_period_and_defaults_to_63() {
    let app = spawn_app();
    app.post(&snapshot("s1", "core", "2026-05-29T20:00:00Z", 1000.0))
        .await;
    app.post(&snapshot("p1", "alt", "2026-05-28T20:00:00Z", 500.0))
        .await;
    let default = app.get("").await;
    assert_eq!(default.status, StatusCode::OK);
    assert_eq!(
        (
            default.body["period"].as_u64(),
            default.body["unit"].as_str()
        ),
        (Some(63), Some("tradingDays"))
    );
    assert_eq!(default.body["window"]["end"], "2026-05-29T20:00:00Z");
    assert_eq!(default.body["strategies"].as_array().unwrap().len(), 2);
    assert_eq!(default.body["strategies"][1]["latest"]["equity"], 1000);
    for period in [21, 63, 126, 252] {
        let answer = app.get(&format!("?period={period}")).await;
        assert_eq!(answer.body["period"], period);
    }
    let month = app.get("?period=21").await;
    assert_eq!(month.body["window"]["start"], "2026-04-30T20:00:00Z");
}

#[tokio::test]
async fn unknown_paths_and_methods_answer_json_errors() {
    let app = spawn_app();
    let answer = app
        .send(Request::get("/nope").body(Body::empty()).unwrap())
        .await;
    assert_eq!(
        (answer.status, answer.code()),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let answer = app
        .send(Request::delete(PATH).body(Body::empty()).unwrap())
        .await;
    assert_eq!(
        (answer.status, answer.code()),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
    );
}

#[tokio::test]
async fn the_contract_view_states_the_interface() {
    let app = spawn_app();
    let contract = app.get("?view=contract").await;
    assert_eq!(contract.status, StatusCode::OK);
    assert_eq!(contract.body["schemaVersion"], 1);
    assert_eq!(contract.body["scanner"]["version"], "scanner-1.0");
    assert_eq!(contract.body["rules"]["reconciliation"]["tolerance"], 0.02);
    assert_eq!(
        contract.body["limits"]["dashboardPeriods"],
        json!([21, 63, 126, 252])
    );
    assert_eq!(
        contract.body["records"]["snapshot"]["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let codes = contract.body["errors"]["codes"].as_array().unwrap();
    for code in [
        "id_conflict",
        "duplicate_snapshot",
        "out_of_order",
        "sensitive_content",
        "writes_disabled",
    ] {
        assert!(codes.contains(&json!(code)), "{code}");
    }
}

#[tokio::test]
async fn the_openapi_document_validates() {
    let app = spawn_app();
    let document = app.get("?view=openapi").await;
    assert_eq!(document.body["openapi"], "3.1.0");
    python_check(
        "import json, sys\nfrom openapi_spec_validator import validate\nvalidate(json.load(sys.stdin))",
        &document.body,
    );
}

#[tokio::test]
async fn the_record_schemas_accept_valid_records_and_refuse_broken_ones() {
    let app = spawn_app();
    let contract = app.get("?view=contract").await;
    let cases = json!({
        "snapshot": contract.body["records"]["snapshot"],
        "decision": contract.body["records"]["decision"],
        "valid": [["snapshot", snapshot("s1", "core", "2026-05-04T16:00:00Z", 1.0)], ["decision", decision("d1")]],
        "invalid": [
            ["snapshot", {"id": "x"}],
            ["decision", {"type": "decision"}],
        ]
    });
    python_check(
        "import json, sys\nfrom jsonschema import Draft202012Validator as V\nc = json.load(sys.stdin)\n\
         for kind in ('snapshot', 'decision'): V.check_schema(c[kind])\n\
         for kind, r in c['valid']: V(c[kind]).validate(r)\n\
         for kind, r in c['invalid']: assert not V(c[kind]).is_valid(r), r",
        &cases,
    );
}
