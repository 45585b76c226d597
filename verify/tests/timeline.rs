//! `--timeline`: every series' recording recomputed from the log and its
//! witnessed checkpoints; a dashboard that misstates it fails, naming the
//! series, and so does a witnessed history whose kept times decrease with
//! size or precede what the checkpoints' own cosignatures allow.

use axum::body::Body;
use axum::http::{Request, Response, header};
use freedom_shared::adapters::{HttpWitnesses, SqliteLedgerStore, SqliteWitnessMemory};
use freedom_shared::config::WriteToken;
use freedom_shared::service::Log;
use freedom_shared::tlog::note::SigningKey;
use freedom_shared::tlog::policy::Policy;
use freedom_testkit::spec_witness::SpecWitness;
use freedom_verify::{Failure, Service, verify_timeline};
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

const ORIGIN: &str = "timeline.example/log";
const TOKEN: &str = "timeline-test-token-0123456789";

/// A snapshot of series `id` valued `ago` before now (after it, when
/// negative).
fn snapshot(id: &str, ago: chrono::Duration) -> Value {
    let as_of = (chrono::Utc::now() - ago).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    json!({
        "id": id, "type": "snapshot", "visibility": "public", "mode": "paper",
        "strategyId": id, "strategyName": "Timeline", "asOf": as_of,
        "source": {"name": "test", "url": "https://example.com/t"},
        "currency": "USD", "equity": 1000, "flowSincePrevious": 0
    })
}

/// Serves `router` on a free loopback port.
async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    base
}

/// Rewrites the since-inception dashboard: one more late valuation for
/// the series `on-time` than the log shows.
async fn misstate(request: Request<Body>, next: axum::middleware::Next) -> Response<Body> {
    let since_inception = request
        .uri()
        .query()
        .is_some_and(|q| q.contains("period=all"));
    let response = next.run(request).await;
    if !since_inception {
        return response;
    }
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let mut dashboard: Value = serde_json::from_slice(&bytes).unwrap();
    for strategy in dashboard["strategies"].as_array_mut().unwrap() {
        if strategy["strategyId"] == "on-time" {
            strategy["recording"]["late"] = json!(1);
        }
    }
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(dashboard.to_string()))
        .unwrap()
}

/// A fund witnessed by one witness (a quorum of it), on its own store.
struct Witnessed {
    key: SigningKey,
    policy: Policy,
    state: fund::AppState,
    router: axum::Router,
    _witness: SpecWitness,
    _dir: tempfile::TempDir,
}

impl Witnessed {
    async fn start() -> Witnessed {
        let key = SigningKey::from_seed(ORIGIN, [4; 32]).unwrap();
        let witness = SpecWitness::start("w.example", [5; 32], &key.verifier().to_text()).await;
        let policy_text = format!("witness W {} {}\nquorum W\n", witness.vkey(), witness.url());
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
        let log = Log::new(Arc::clone(&store) as _, ORIGIN, Some(key.clone()))
            .unwrap()
            .with_new_log(true)
            .with_witnesses(
                Policy::parse(&policy_text).unwrap(),
                Arc::new(SqliteWitnessMemory::open(dir.path()).unwrap()),
                Arc::new(HttpWitnesses),
            );
        let state = fund::AppState::new(store, WriteToken::new(TOKEN)).with_log(log);
        Witnessed {
            policy: Policy::parse(&policy_text).unwrap(),
            router: fund::app(state.clone()),
            state,
            key,
            _witness: witness,
            _dir: dir,
        }
    }

    /// Appends a snapshot of series `id` valued `ago` before now.
    async fn append(&self, id: &str, ago: chrono::Duration) {
        let request = Request::post("/api/freedom-fund")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(snapshot(id, ago).to_string()))
            .unwrap();
        let answer = self.router.clone().oneshot(request).await.unwrap();
        assert_eq!(answer.status(), 201);
    }

    /// A cosigning round, which must meet the quorum.
    async fn cosign(&self) {
        assert!(self.state.log.cosign(false).await.unwrap().quorum_met);
    }

    /// `--timeline` against the service at `base`.
    async fn timeline(&self, base: &str) -> Result<String, Failure> {
        verify_timeline(
            &Service::new(base).unwrap(),
            &self.key.verifier(),
            &self.policy,
        )
        .await
        .map(|verified| verified.0)
    }
}

/// Serves `router` with every ledger page's entries passed through
/// `change` (the ledger view is where each record's kept time is read).
async fn serve_ledger_changed(router: axum::Router, change: fn(&mut Value)) -> String {
    serve(router.layer(axum::middleware::from_fn(
        move |request: Request<Body>, next: axum::middleware::Next| async move {
            let ledger = request
                .uri()
                .query()
                .is_some_and(|q| q.contains("view=ledger"));
            let response = next.run(request).await;
            if !ledger {
                return response;
            }
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            let mut page: Value = serde_json::from_slice(&bytes).unwrap();
            for entry in page["entries"].as_array_mut().unwrap() {
                change(entry);
            }
            Response::builder()
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(page.to_string()))
                .unwrap()
        },
    )))
    .await
}

/// An entry's `witnessed.at` moved by `seconds`.
fn moved(at: &Value, seconds: i64) -> Value {
    let at = chrono::DateTime::parse_from_rfc3339(at.as_str().unwrap()).unwrap()
        + chrono::Duration::seconds(seconds);
    json!(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// A discrepancy's line; anything else fails the test.
fn discrepancy(result: Result<String, Failure>) -> String {
    match result {
        Err(Failure::Discrepancy(line)) => line,
        other => panic!("expected a discrepancy, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeline_agrees_with_the_log_and_a_misstated_one_fails() {
    let fund = Witnessed::start().await;
    // "ahead" is valued four minutes after now: witnessed before its
    // valuation by more than the clocks' tolerance, a clock conflict.
    for (id, ago) in [
        ("on-time", chrono::Duration::seconds(30)),
        ("backfilled", chrono::Duration::days(2)),
        ("ahead", chrono::Duration::seconds(-240)),
    ] {
        fund.append(id, ago).await;
    }
    fund.cosign().await;
    let router = fund.router.clone();

    let honest = serve(router.clone()).await;
    let line = fund.timeline(&honest).await.unwrap();
    assert!(
        line.contains("3 series' recording recomputed from 3 records and 1 witnessed checkpoints"),
        "{line}"
    );
    let answer = router
        .clone()
        .oneshot(
            Request::get("/api/freedom-fund?period=all")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let bytes = axum::body::to_bytes(answer.into_body(), usize::MAX)
        .await
        .unwrap();
    let dashboard: Value = serde_json::from_slice(&bytes).unwrap();
    let ahead = dashboard["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["strategyId"] == "ahead")
        .unwrap();
    assert_eq!(ahead["recording"]["clockConflict"], 1, "{ahead}");
    assert_eq!(ahead["recording"]["onTime"], 0, "{ahead}");

    let misstating = serve(router.layer(axum::middleware::from_fn(misstate))).await;
    let line = discrepancy(fund.timeline(&misstating).await);
    assert!(line.contains("recording of on-time (paper)"), "{line}");
}

/// Two witnessed checkpoints (sizes 1 and 2), one record each.
async fn two_checkpoints() -> Witnessed {
    let fund = Witnessed::start().await;
    fund.append("first", chrono::Duration::seconds(30)).await;
    fund.cosign().await;
    fund.append("second", chrono::Duration::seconds(20)).await;
    fund.cosign().await;
    let honest = serve(fund.router.clone()).await;
    let line = fund.timeline(&honest).await.unwrap();
    assert!(line.contains("2 witnessed checkpoints"), "{line}");
    fund
}

/// A kept time that decreases with size is refused, naming both sizes:
/// here the service dates the checkpoint of size 1 ten minutes after the
/// one of size 2 (still after its own cosignatures).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_times_that_decrease_with_size_fail() {
    let fund = two_checkpoints().await;
    let base = serve_ledger_changed(fund.router.clone(), |entry| {
        if entry["seq"] == 1 {
            entry["witnessed"]["at"] = moved(&entry["witnessed"]["at"], 600);
        }
    })
    .await;
    let line = discrepancy(fund.timeline(&base).await);
    assert!(line.contains("size 1"), "{line}");
    assert!(line.contains("size 2"), "{line}");
    assert!(line.contains("decrease"), "{line}");
}

/// A kept time earlier than the quorum time the checkpoint's own
/// cosignatures allow is refused, naming the checkpoint's size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_time_before_its_cosignatures_allow_fails() {
    let fund = two_checkpoints().await;
    let base = serve_ledger_changed(fund.router.clone(), |entry| {
        if entry["seq"] == 1 {
            entry["witnessed"]["at"] = moved(&entry["witnessed"]["at"], -3_600);
        }
    })
    .await;
    let line = discrepancy(fund.timeline(&base).await);
    assert!(line.contains("size 1"), "{line}");
    assert!(
        line.contains("earlier than its cosignatures allow"),
        "{line}"
    );
}
