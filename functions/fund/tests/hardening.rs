//! What an attacker or a careless writer can send, through the router: deep
//! nesting, extreme numbers, dates in the wrong century, and records already
//! in the ledger under older rules. Every refusal is a clear 4xx that stores
//! nothing, and no sequence of records the parser accepts can break a read
//! view (property test): the ledger is append-only, so a record that broke a
//! read could never be removed.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{DateTime, Duration, Utc};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::clock::fixed_clock;
use freedom_shared::config::WriteToken;
use freedom_shared::ports::Candidate;
use freedom_shared::ports::{HeadReads, LedgerAppend};
use freedom_shared::record::Record;
use futures_util::StreamExt;
use http_body_util::BodyExt;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

const TOKEN: &str = "hardening-test-token-0123456789";

/// The service's clock in these tests.
fn now() -> DateTime<Utc> {
    "2026-06-01T12:00:00Z".parse().unwrap()
}

struct App {
    router: Router,
    store: Arc<SqliteLedgerStore>,
    _dir: tempfile::TempDir,
}

fn app() -> App {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
    let state =
        fund::AppState::new(store.clone(), WriteToken::new(TOKEN)).with_clock(fixed_clock(now()));
    App {
        router: fund::app(state),
        store,
        _dir: dir,
    }
}

impl App {
    async fn send(&self, request: Request<Body>) -> (StatusCode, Vec<u8>) {
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, body.to_vec())
    }

    async fn post(&self, body: impl Into<Body>) -> (StatusCode, Value) {
        let request = Request::post("/api/freedom-fund")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.into())
            .unwrap();
        let (status, body) = self.send(request).await;
        (status, serde_json::from_slice(&body).expect("JSON answer"))
    }

    async fn get(&self, uri: &str) -> (StatusCode, Vec<u8>) {
        self.send(Request::get(uri).body(Body::empty()).unwrap())
            .await
    }

    async fn size(&self) -> u64 {
        self.store.head().await.unwrap().size
    }

    /// Every read view answers 200 with finite numbers (serde_json reads
    /// no NaN or infinity).
    async fn every_read_view_works(&self) -> Result<(), TestCaseError> {
        for query in ["", "?period=21", "?period=63", "?period=126", "?period=252"] {
            let (status, body) = self.get(&format!("/api/freedom-fund{query}")).await;
            prop_assert_eq!(status, StatusCode::OK, "dashboard {}", query);
            // serde_json reads no NaN or infinity: parsing proves finiteness.
            let dashboard: Value = serde_json::from_slice(&body)
                .map_err(|e| TestCaseError::fail(format!("dashboard {query}: {e}")))?;
            for strategy in dashboard["strategies"].as_array().unwrap() {
                for (name, value) in strategy["metrics"].as_object().unwrap() {
                    prop_assert!(is_figure(name, value), "{} {}", name, value);
                }
            }
            let (status, html) = self.get(&format!("/{query}")).await;
            prop_assert_eq!(status, StatusCode::OK, "page {}", query);
            let html = String::from_utf8(html).unwrap();
            // The data, not the formulas' prose (which says "never NaN").
            let html = &html[..html.find("id=\"formulas\"").unwrap_or(html.len())];
            for bad in ["NaN", "inf"] {
                if let Some(at) = html.match_indices(bad).map(|(i, _)| i).find(|i| {
                    // A number printed as NaN or inf, not a word that contains it.
                    !html[i + bad.len()..].starts_with(|c: char| c.is_ascii_alphabetic())
                        && !html[..*i].ends_with(|c: char| c.is_ascii_alphabetic())
                }) {
                    let context = &html[at.saturating_sub(60)..(at + 20).min(html.len())];
                    prop_assert!(false, "page {} prints {}: {}", query, bad, context);
                }
            }
        }
        let (status, body) = self.get("/api/freedom-fund?view=ledger&limit=1000").await;
        prop_assert_eq!(status, StatusCode::OK);
        prop_assert!(serde_json::from_slice::<Value>(&body).is_ok());
        Ok(())
    }
}

fn snapshot(id: &str, strategy: &str, as_of: &str) -> Value {
    json!({
        "id": id, "type": "snapshot", "visibility": "public", "mode": "live",
        "strategyId": strategy, "strategyName": "S", "asOf": as_of,
        "source": {"name": "test", "url": "https://example.com/t"},
        "currency": "USD", "equity": 100, "flowSincePrevious": 0
    })
}

#[tokio::test]
async fn deep_nesting_in_a_valid_field_is_400_and_the_service_keeps_answering() {
    let app = app();
    let depth = 4_000;
    let body = format!(
        r#"{{"id": "deep", "type": "decision", "visibility": "public", "mode": "live",
            "strategyId": "s", "strategyName": "S", "asOf": "2026-05-01T00:00:00Z",
            "source": {{"name": "n", "url": "https://example.com"}}, "action": "hold",
            "summary": "x", "thesis": {}"x"{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let (status, answer) = app.post(body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["error"]["code"], "malformed_json");
    assert_eq!(app.size().await, 0, "nothing stored");
    let (status, _) = app.get("/api/freedom-fund").await;
    assert_eq!(status, StatusCode::OK);
}

/// A client that sends its headers and then never the whole body is
/// answered 408 once the body timeout passes (paused clock: no real wait).
#[tokio::test(start_paused = true)]
async fn a_body_that_never_finishes_is_408_and_stores_nothing() {
    let app = app();
    let stalled = futures_util::stream::once(async {
        Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b"{\"id\": "))
    })
    .chain(futures_util::stream::pending());
    let request = Request::post("/api/freedom-fund")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(stalled))
        .unwrap();
    let (status, body) = app.send(request).await;
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["code"], "request_timeout");
    assert_eq!(app.size().await, 0);
}

#[tokio::test]
async fn a_future_as_of_is_422_and_cannot_freeze_a_strategy() {
    let app = app();
    let (status, answer) = app
        .post(snapshot("typo", "core", "2199-05-01T16:00:00Z").to_string())
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer["error"]["code"], "validation_failed");
    assert_eq!(answer["error"]["details"][0]["field"], "asOf");
    assert_eq!(answer["error"]["details"][0]["rule"], "future_timestamp");
    assert_eq!(app.size().await, 0, "nothing stored");
    // Within the 5 minutes of tolerance, and later real snapshots, are fine.
    let soon = (now() + Duration::minutes(4)).to_rfc3339();
    assert_eq!(
        app.post(snapshot("soon", "core", &soon).to_string())
            .await
            .0,
        StatusCode::CREATED
    );
    let dashboard: Value = serde_json::from_slice(&app.get("/api/freedom-fund").await.1).unwrap();
    assert_eq!(
        dashboard["window"]["end"],
        (now() + Duration::minutes(4)).to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
    );
}

#[tokio::test]
async fn a_leap_second_is_refused() {
    let app = app();
    let (status, answer) = app
        .post(snapshot("leap", "core", "2016-12-31T23:59:60Z").to_string())
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer["error"]["details"][0]["rule"], "timestamp");
}

#[tokio::test]
async fn cash_far_above_a_tiny_equity_is_refused() {
    let app = app();
    let mut record = snapshot("tiny", "core", "2026-05-01T16:00:00Z");
    record["equity"] = json!(1e-14);
    record["cash"] = json!(999999999999999u64);
    let (status, answer) = app.post(record.to_string()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer["error"]["details"][0]["rule"], "cash_exceeds_equity");
    assert_eq!(app.size().await, 0);
}

/// A ledger written before the cash rule may hold exactly the record that
/// broke every dashboard read; it must read.
#[tokio::test]
async fn a_stored_record_with_cash_far_above_a_tiny_equity_does_not_break_any_view() {
    let app = app();
    let mut record = snapshot("legacy", "core", "2026-05-01T16:00:00Z");
    record["equity"] = json!(1e-14);
    record["cash"] = json!(999999999999999u64);
    let legacy = Record::from_canonical(&record.to_string()).expect("read-back accepts it");
    app.store.append(Candidate::new(&legacy)).await.unwrap();
    app.every_read_view_works().await.unwrap();
    let dashboard: Value = serde_json::from_slice(&app.get("/api/freedom-fund").await.1).unwrap();
    assert_eq!(
        dashboard["strategies"][0]["latest"]["cashWeight"],
        Value::Null
    );
}

/// Records as the store takes them (they are valid records: read back
/// with the record rules).
fn stored(records: impl Iterator<Item = String>) -> Vec<Candidate> {
    records
        .map(|text| Candidate::new(&Record::from_canonical(&text).expect("a valid record")))
        .collect()
}

/// A decision of about 64 KB: four long fields of 4-byte characters.
fn large_decision(i: usize) -> String {
    let text = "\u{1D11E}".repeat(3_990);
    json!({
        "id": format!("large-{i}"), "type": "decision", "visibility": "public", "mode": "live",
        "strategyId": "large", "strategyName": "Large", "asOf": "2026-05-01T16:00:00Z",
        "source": {"name": "test", "url": "https://example.com/t"}, "action": "research",
        "summary": text, "thesis": text, "counterEvidence": text, "nextCheck": text
    })
    .to_string()
}

#[tokio::test]
async fn a_ledger_page_of_large_records_stops_at_one_mib_and_next_continues() {
    let app = app();
    // One goes through the API (it is a record a writer can send)...
    let body = large_decision(0);
    assert!(body.len() <= 64 * 1024);
    assert_eq!(app.post(body).await.0, StatusCode::CREATED);
    // ...the rest straight into the store: this test is about reading.
    app.store
        .append_batch(stored((1..30).map(large_decision)))
        .await
        .unwrap();
    let mut seen = 0;
    let mut uri = "/api/freedom-fund?view=ledger&limit=1000".to_owned();
    loop {
        let (status, body) = app.get(&uri).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.len() <= 1024 * 1024, "a page of {} bytes", body.len());
        let page: Value = serde_json::from_slice(&body).unwrap();
        seen += page["entries"].as_array().unwrap().len();
        match page["next"].as_u64() {
            Some(next) => uri = format!("/api/freedom-fund?view=ledger&limit=1000&before={next}"),
            None => break,
        }
    }
    assert_eq!(seen, 30);
}

#[tokio::test]
async fn the_page_stays_bounded_with_thousands_of_strategies_and_large_decisions() {
    let app = app();
    app.store
        .append_batch(stored((0..40).map(large_decision)))
        .await
        .unwrap();
    let mut wide = snapshot("wide", "a-wide-book", "2026-05-01T16:00:00Z");
    wide["cash"] = json!(0);
    wide["equity"] = json!(1000);
    wide["positions"] = (0..1000)
        .map(|i| json!({"symbol": format!("P{i}"), "quantity": 1, "cost": 1, "mark": 1}))
        .collect();
    let strategies = std::iter::once(wide)
        .chain((0..2_000).map(|i| {
            snapshot(
                &format!("s{i}"),
                &format!("strategy-{i:04}"),
                "2026-05-01T16:00:00Z",
            )
        }))
        .map(|record| record.to_string());
    app.store.append_batch(stored(strategies)).await.unwrap();
    let (status, html) = app.get("/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.len() < 2 * 1024 * 1024,
        "a page of {} bytes",
        html.len()
    );
    let html = String::from_utf8(html).unwrap();
    assert!(
        html.contains("lists all 2001 strategies"),
        "the page says how many there are"
    );
    assert!(html.contains("and 975 more positions"));
    assert!(html.contains("The newest 20 are shown"));
    // The same head gives the same bytes (rendered once, then from memory).
    assert_eq!(app.get("/").await.1, html.as_bytes());
}

/// Numbers chosen to stress the arithmetic: the smallest and largest
/// magnitudes the parser accepts, and ordinary ones.
const AMOUNTS: &[&str] = &[
    "0",
    "1e-28",
    "1e-14",
    "0.01",
    "0.02",
    "1",
    "3.14",
    "1000",
    "123456.789",
    "999999999999999",
    "5e14",
];

fn amount() -> impl Strategy<Value = &'static str> {
    prop::sample::select(AMOUNTS)
}

fn flow() -> impl Strategy<Value = String> {
    (amount(), any::<bool>()).prop_map(|(a, negative)| {
        if negative && a != "0" {
            format!("-{a}")
        } else {
            a.to_owned()
        }
    })
}

/// One record as text: a snapshot (no cash, cash only, or one position) or
/// a decision, for one of four series, `step` minutes after the previous.
#[derive(Debug, Clone)]
struct Step {
    series: usize,
    minutes: i64,
    body: RecordShape,
}

#[derive(Debug, Clone)]
enum RecordShape {
    Plain {
        equity: &'static str,
        flow: String,
    },
    CashOnly {
        equity: &'static str,
        cash: &'static str,
        flow: String,
    },
    OnePosition {
        quantity: &'static str,
        mark: &'static str,
        cash: &'static str,
        flow: String,
    },
    Decision,
}

fn step() -> impl Strategy<Value = Step> {
    let shape = prop_oneof![
        3 => (amount(), flow()).prop_map(|(equity, flow)| RecordShape::Plain { equity, flow }),
        2 => (amount(), amount(), flow()).prop_map(|(equity, cash, flow)| RecordShape::CashOnly { equity, cash, flow }),
        2 => (amount(), amount(), amount(), flow()).prop_map(|(quantity, mark, cash, flow)| RecordShape::OnePosition { quantity, mark, cash, flow }),
        1 => Just(RecordShape::Decision),
    ];
    (
        0..4usize,
        prop_oneof![Just(0i64), 1..3000i64, Just(1440 * 400)],
        shape,
    )
        .prop_map(|(series, minutes, body)| Step {
            series,
            minutes,
            body,
        })
}

fn record_text(i: usize, step: &Step, at: DateTime<Utc>) -> String {
    let (strategy, mode) =
        [("a", "live"), ("a", "paper"), ("b", "live"), ("c", "paper")][step.series];
    let header = format!(
        r#""id": "r{i}", "visibility": "public", "mode": "{mode}", "strategyId": "{strategy}",
           "strategyName": "Strategy {strategy}", "asOf": "{}",
           "source": {{"name": "prop", "url": "https://example.com/p"}}"#,
        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    match &step.body {
        RecordShape::Plain { equity, flow } => format!(
            r#"{{{header}, "type": "snapshot", "currency": "USD", "equity": {equity}, "flowSincePrevious": {flow}}}"#
        ),
        RecordShape::CashOnly { equity, cash, flow } => format!(
            r#"{{{header}, "type": "snapshot", "currency": "USD", "equity": {equity}, "cash": {cash}, "flowSincePrevious": {flow}}}"#
        ),
        RecordShape::OnePosition {
            quantity,
            mark,
            cash,
            flow,
        } => {
            // Equity is cash + quantity × mark in exact decimals, when that
            // has a text the parser accepts; otherwise the record is refused.
            let total = (|| {
                let q: rust_decimal::Decimal = quantity
                    .parse()
                    .ok()
                    .or_else(|| rust_decimal::Decimal::from_scientific(quantity).ok())?;
                let m: rust_decimal::Decimal = mark
                    .parse()
                    .ok()
                    .or_else(|| rust_decimal::Decimal::from_scientific(mark).ok())?;
                let c: rust_decimal::Decimal = cash
                    .parse()
                    .ok()
                    .or_else(|| rust_decimal::Decimal::from_scientific(cash).ok())?;
                Some(c.checked_add(q.checked_mul(m)?)?.normalize().to_string())
            })()
            .unwrap_or_else(|| "0".into());
            format!(
                r#"{{{header}, "type": "snapshot", "currency": "USD", "equity": {total}, "cash": {cash}, "flowSincePrevious": {flow},
                   "positions": [{{"symbol": "X", "quantity": {quantity}, "cost": 1, "mark": {mark}}}]}}"#
            )
        }
        RecordShape::Decision => {
            format!(r#"{{{header}, "type": "decision", "action": "hold", "summary": "Hold."}}"#)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any sequence of records the parser accepts leaves every read view
    /// (each period, the ledger, the page) answering 200 with finite numbers.
    #[test]
    fn any_accepted_sequence_leaves_every_read_view_working(
        steps in prop::collection::vec(step(), 1..24)
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let app = app();
            let mut at: DateTime<Utc> = "1999-01-04T00:00:00Z".parse().unwrap();
            let mut accepted = 0;
            for (i, step) in steps.iter().enumerate() {
                at = (at + Duration::minutes(step.minutes)).min(now());
                let (status, answer) = app.post(record_text(i, step, at)).await;
                prop_assert!(
                    matches!(status.as_u16(), 201 | 409 | 422),
                    "{} {}", status, answer
                );
                if status == StatusCode::CREATED {
                    accepted += 1;
                }
            }
            prop_assert_eq!(app.size().await, accepted);
            app.every_read_view_works().await
        })?;
    }
}

/// Whether a metric is a number or null; the figures' statistics and
/// benchmark comparison an object of numbers, nulls, flags and its texts
/// (the reason a figure is withheld, the benchmark's id).
fn is_figure(name: &str, value: &Value) -> bool {
    match value {
        Value::Null | Value::Number(_) => true,
        Value::String(_) => name == "withheld" || name == "strategyId",
        Value::Bool(_) => name == "enough",
        Value::Array(items) => name == "interval95" && items.iter().all(Value::is_number),
        Value::Object(fields) => {
            matches!(name, "sharpeStats" | "benchmark")
                && fields.iter().all(|(inner, value)| is_figure(inner, value))
        }
    }
}
