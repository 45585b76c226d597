//! An honest 500: a fault of the service's own (a stored record it cannot
//! read, a panic) answers `500 internal_error` with no `Retry-After` and
//! nothing internal in the body, while a store that is down still answers
//! `503 storage_unavailable` with `Retry-After` (the KV store's own cases are
//! in `kv.rs`).

use async_trait::async_trait;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::config::WriteToken;
use freedom_shared::merkle::Head;
use freedom_shared::ports::{
    AppendOutcome, Candidate, Entry, EntryRun, HeadReads, LatestSnapshots, LedgerAppend,
    LedgerPages, Page, PageQuery, SeriesReads, StoreError, TileRead, TileReads,
};
use freedom_shared::record::{Mode, StrategyId};
use freedom_shared::tlog::tiles::TileId;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

const TOKEN: &str = "internal-errors-token-0123456789";

async fn send(router: &Router, request: Request<Body>) -> (StatusCode, header::HeaderMap, Vec<u8>) {
    let response = router.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes().to_vec();
    (parts.status, parts.headers, bytes)
}

fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

fn snapshot() -> Value {
    json!({
        "id": "core-1", "type": "snapshot", "visibility": "public", "mode": "live",
        "strategyId": "core", "strategyName": "Core", "asOf": "2026-05-04T16:00:00Z",
        "source": {"name": "broker", "url": "https://example.com/statement"},
        "currency": "USD", "equity": 1000, "flowSincePrevious": 0
    })
}

/// Asserts a JSON `500 internal_error` that shows none of `hidden`.
fn assert_internal(status: StatusCode, headers: &header::HeaderMap, body: &[u8], hidden: &[&str]) {
    let text = String::from_utf8_lossy(body);
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{text}");
    assert!(
        headers.get(header::RETRY_AFTER).is_none(),
        "no retry mends it"
    );
    let body: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(body["error"]["code"], "internal_error", "{body}");
    for secret in hidden {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}

#[tokio::test]
async fn a_stored_record_the_service_cannot_read_is_500_on_every_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
    let router = fund::app(fund::AppState::new(store, WriteToken::new(TOKEN)));
    let append = Request::post("/api/freedom-fund")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(snapshot().to_string()))
        .unwrap();
    assert_eq!(send(&router, append).await.0, StatusCode::CREATED);
    let database = rusqlite::Connection::open(dir.path().join("ledger.sqlite3")).unwrap();
    database
        .execute(
            "UPDATE records SET canonical = '{not json' WHERE seq = 1",
            [],
        )
        .unwrap();

    for uri in [
        "/api/freedom-fund?view=ledger",
        "/api/freedom-fund?period=21",
    ] {
        let (status, headers, body) = send(&router, get(uri)).await;
        assert_internal(status, &headers, &body, &["not json", "seq 1", "sqlite"]);
    }
    let (status, headers, page) = send(&router, get("/")).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(headers.get(header::RETRY_AFTER).is_none());
    assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
    assert!(String::from_utf8_lossy(&page).contains("Something went wrong on our side"));
}

/// A ledger store that panics, or answers that it is down, on every call.
struct BrokenStore {
    panics: bool,
}

impl BrokenStore {
    fn fail<T>(&self) -> Result<T, StoreError> {
        if self.panics {
            panic!("the store's code has a bug at /srv/secret/path");
        }
        Err(StoreError::unavailable_now("the test's store is down"))
    }
}

#[async_trait]
impl LedgerAppend for BrokenStore {
    async fn append(&self, _candidate: Candidate) -> Result<AppendOutcome, StoreError> {
        self.fail()
    }

    async fn check(&self, _candidate: Candidate) -> Result<AppendOutcome, StoreError> {
        self.fail()
    }
}

#[async_trait]
impl LedgerPages for BrokenStore {
    async fn page(&self, _query: &PageQuery) -> Result<Page, StoreError> {
        self.fail()
    }
}

#[async_trait]
impl SeriesReads for BrokenStore {
    async fn snapshot_series(
        &self,
        _strategy_id: &StrategyId,
        _mode: Mode,
        _start_nanos: i64,
        _end_nanos: i64,
    ) -> Result<Vec<Entry>, StoreError> {
        self.fail()
    }
    async fn latest_snapshots(&self) -> Result<LatestSnapshots, StoreError> {
        self.fail()
    }
    async fn decisions_in_range(
        &self,
        _start_nanos: i64,
        _end_nanos: i64,
        _limit: usize,
    ) -> Result<Vec<Entry>, StoreError> {
        self.fail()
    }
}

#[async_trait]
impl HeadReads for BrokenStore {
    async fn head(&self) -> Result<Head, StoreError> {
        self.fail()
    }
}

#[async_trait]
impl TileReads for BrokenStore {
    async fn tiles(&self, _ids: &[TileId]) -> Result<TileRead, StoreError> {
        self.fail()
    }
    async fn entry_run(&self, _first_seq: u64, _count: u64) -> Result<EntryRun, StoreError> {
        self.fail()
    }
}

#[tokio::test]
async fn a_panic_is_500_and_a_store_that_is_down_is_503_with_retry_after() {
    let panicking = fund::app(fund::AppState::new(
        Arc::new(BrokenStore { panics: true }),
        WriteToken::new(TOKEN),
    ));
    for uri in ["/api/freedom-fund?view=ledger", "/api/freedom-fund"] {
        let (status, headers, body) = send(&panicking, get(uri)).await;
        assert_internal(status, &headers, &body, &["/srv/secret", "bug", "panicked"]);
    }

    let down = fund::app(fund::AppState::new(
        Arc::new(BrokenStore { panics: false }),
        WriteToken::new(TOKEN),
    ));
    let (status, headers, body) = send(&down, get("/api/freedom-fund?view=ledger")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(headers[header::RETRY_AFTER], "5");
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["code"], "storage_unavailable");
}
