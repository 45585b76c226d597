//! What the dashboard's tests through the router share: the fund app on a
//! fresh embedded store, appends and reads through it, snapshots, weekday
//! closes, and a strategy's entry in a dashboard.
#![allow(dead_code)]

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{DateTime, Datelike, Duration, Utc, Weekday};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::config::{Benchmarks, WriteToken};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

/// The write token of the app.
pub const TOKEN: &str = "dashboard-test-token-0123456789";

/// The fund app on its own store.
pub struct App {
    pub router: axum::Router,
    pub store: Arc<SqliteLedgerStore>,
    _dir: tempfile::TempDir,
}

impl App {
    /// The app with no benchmark configured.
    pub fn new() -> App {
        App::with_benchmarks(Benchmarks::default())
    }

    /// The app comparing each mode with `benchmarks`.
    pub fn with_benchmarks(benchmarks: Benchmarks) -> App {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
        let state = fund::AppState::new(Arc::clone(&store) as _, WriteToken::new(TOKEN))
            .with_benchmarks(benchmarks);
        App {
            router: fund::app(state),
            store,
            _dir: dir,
        }
    }

    /// Appends `record`, which must be created.
    pub async fn post(&self, record: Value) {
        let request = Request::post("/api/freedom-fund")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(record.to_string()))
            .unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED, "{record}");
    }

    /// The answer at `path` (the page, an API path with its query).
    pub async fn fetch(&self, path: &str) -> (StatusCode, Vec<u8>) {
        let request = Request::get(path).body(Body::empty()).unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, body.to_vec())
    }

    /// The fund API's answer to `query`.
    pub async fn get_raw(&self, query: &str) -> (StatusCode, Vec<u8>) {
        self.fetch(&format!("/api/freedom-fund{query}")).await
    }

    /// The fund API's JSON answer to `query`, which must be 200.
    pub async fn get(&self, query: &str) -> Value {
        let (status, body) = self.get_raw(query).await;
        assert_eq!(status, StatusCode::OK, "{query}");
        serde_json::from_slice(&body).unwrap()
    }
}

/// The fund app on its own store, its log witnessed by one witness (a
/// quorum of it) that dates its cosignatures by the system clock.
pub struct Witnessed {
    pub app: App,
    state: fund::AppState,
    _witness: freedom_testkit::spec_witness::SpecWitness,
}

impl Witnessed {
    /// The app, its log new and witnessed.
    pub async fn start() -> Witnessed {
        use freedom_shared::adapters::{HttpWitnesses, SqliteWitnessMemory};
        use freedom_shared::service::Log;
        use freedom_shared::tlog::note::SigningKey;
        use freedom_shared::tlog::policy::Policy;
        const ORIGIN: &str = "witnessed.example/log";
        let key = SigningKey::from_seed(ORIGIN, [14; 32]).unwrap();
        let witness = freedom_testkit::spec_witness::SpecWitness::start(
            "w.example",
            [15; 32],
            &key.verifier().to_text(),
        )
        .await;
        let policy = Policy::parse(&format!(
            "witness W {} {}\nquorum W\n",
            witness.vkey(),
            witness.url()
        ))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
        let log = Log::new(Arc::clone(&store) as _, ORIGIN, Some(key))
            .unwrap()
            .with_new_log(true)
            .with_witnesses(
                policy,
                Arc::new(SqliteWitnessMemory::open(dir.path()).unwrap()),
                Arc::new(HttpWitnesses),
            );
        let state =
            fund::AppState::new(Arc::clone(&store) as _, WriteToken::new(TOKEN)).with_log(log);
        Witnessed {
            app: App {
                router: fund::app(state.clone()),
                store,
                _dir: dir,
            },
            state,
            _witness: witness,
        }
    }

    /// A cosigning round, which must meet the quorum.
    pub async fn cosign(&self) {
        assert!(self.state.log.cosign(false).await.unwrap().quorum_met);
    }
}

/// A snapshot of `strategy` in `mode` at `at`.
pub fn snapshot(strategy: &str, mode: &str, at: DateTime<Utc>, equity: f64, flow: f64) -> Value {
    json!({
        "id": format!("{strategy}-{mode}-{}", at.format("%Y%m%dT%H%M")), "type": "snapshot", "visibility": "public",
        "mode": mode, "strategyId": strategy, "strategyName": format!("Strategy {strategy}"),
        "asOf": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "source": {"name": "test", "url": "https://example.com/t"},
        "currency": "USD", "equity": equity, "flowSincePrevious": flow
    })
}

/// Weekday closes (20:00 UTC) going back from Friday 2026-05-29, oldest first.
pub fn weekdays(count: usize) -> Vec<DateTime<Utc>> {
    let mut days = Vec::new();
    let mut at: DateTime<Utc> = "2026-05-29T20:00:00Z".parse().unwrap();
    while days.len() < count {
        if !matches!(at.weekday(), Weekday::Sat | Weekday::Sun) {
            days.push(at);
        }
        at -= Duration::days(1);
    }
    days.reverse();
    days
}

/// `id`'s entry in a dashboard.
pub fn strategy<'a>(dashboard: &'a Value, id: &str) -> &'a Value {
    dashboard["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["strategyId"] == id)
        .expect("strategy listed")
}
