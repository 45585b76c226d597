//! `--timeline`: every series' recording recomputed from the log and its
//! witnessed checkpoints; a dashboard that misstates it fails, naming the
//! series.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeline_agrees_with_the_log_and_a_misstated_one_fails() {
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
    let router = fund::app(state.clone());
    for (id, ago) in [
        ("on-time", chrono::Duration::seconds(30)),
        ("backfilled", chrono::Duration::days(2)),
    ] {
        let request = Request::post("/api/freedom-fund")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(snapshot(id, ago).to_string()))
            .unwrap();
        let answer = router.clone().oneshot(request).await.unwrap();
        assert_eq!(answer.status(), 201);
    }
    assert!(state.log.cosign(false).await.unwrap().quorum_met);
    let policy = Policy::parse(&policy_text).unwrap();

    let honest = serve(router.clone()).await;
    let line = verify_timeline(&Service::new(&honest).unwrap(), &key.verifier(), &policy)
        .await
        .unwrap()
        .0;
    assert!(
        line.contains("2 series' recording recomputed from 2 records and 1 witnessed checkpoints"),
        "{line}"
    );

    let misstating = serve(router.layer(axum::middleware::from_fn(misstate))).await;
    match verify_timeline(
        &Service::new(&misstating).unwrap(),
        &key.verifier(),
        &policy,
    )
    .await
    {
        Err(Failure::Discrepancy(line)) => {
            assert!(line.contains("recording of on-time (paper)"), "{line}")
        }
        other => panic!("a misstated recording must fail: {other:?}"),
    }
}
