//! The fund API on the KV REST store (the production client through an
//! Upstash-protocol bridge to a private redis-server): a failing, hanging or
//! refusing store answers 503 `storage_unavailable` for reads and writes, the
//! message shows no internals, nothing is half-written, and a retry of a write
//! that did land behind a failure answers 200 unchanged. The public page
//! answers an HTML 503 in the same cases.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use freedom_shared::adapters::KvClient;
use freedom_shared::adapters::KvLedgerStore;
use freedom_shared::config::WriteToken;
use freedom_shared::ports::LedgerStore;
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::{Fault, UpstashBridge};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

const TOKEN: &str = "test-token-0123456789abcdef";
const KV_TOKEN: &str = "kv-token-never-shown";

async fn app() -> (RedisServer, UpstashBridge, Router) {
    let server = RedisServer::start().unwrap();
    let bridge = UpstashBridge::start(&server.url(), KV_TOKEN).await.unwrap();
    let client = KvClient::with_timeout(&bridge.kv_config("ff:"), Duration::from_millis(300));
    let state = fund::AppState::new(
        Arc::new(KvLedgerStore::new(client, "ff:")),
        WriteToken::new(TOKEN),
    );
    (server, bridge, fund::app(state))
}

async fn send(router: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

fn post(record: &Value) -> Request<Body> {
    Request::post("/api/freedom-fund")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(record.to_string()))
        .unwrap()
}

fn get(query: &str) -> Request<Body> {
    Request::get(format!("/api/freedom-fund?{query}"))
        .body(Body::empty())
        .unwrap()
}

fn snapshot(id: &str, day: u32) -> Value {
    json!({
        "id": id, "type": "snapshot", "visibility": "public", "mode": "live",
        "strategyId": "core", "strategyName": "Core",
        "asOf": format!("2026-05-{day:02}T16:00:00Z"),
        "source": {"name": "broker", "url": "https://example.com/statement"},
        "currency": "USD", "equity": 1000 + day, "flowSincePrevious": 0
    })
}

fn assert_unavailable(status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "storage_unavailable");
    let text = body.to_string();
    for internal in [KV_TOKEN, "KV", "500", "redis", "127.0.0.1"] {
        assert!(!text.contains(internal), "{internal} leaked: {text}");
    }
}

#[tokio::test]
async fn a_failing_store_is_503_for_reads_and_writes_and_stores_nothing() {
    let (_server, bridge, router) = app().await;
    assert_eq!(
        send(&router, post(&snapshot("a", 4))).await.0,
        StatusCode::CREATED
    );

    for fault in [Fault::FailBefore, Fault::Hang] {
        bridge.inject(fault);
        let (status, body) = send(&router, post(&snapshot("b", 5))).await;
        assert_unavailable(status, &body);
        for view in ["view=ledger", "period=21"] {
            bridge.inject(fault);
            let (status, body) = send(&router, get(view)).await;
            assert_unavailable(status, &body);
        }
        bridge.inject(fault);
        let response = router
            .clone()
            .oneshot(Request::get("/").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/html; charset=utf-8"
        );
        assert_eq!(response.headers()[header::RETRY_AFTER], "5");
        let page = response.into_body().collect().await.unwrap().to_bytes();
        let page = String::from_utf8_lossy(&page);
        assert!(page.contains("Temporarily unavailable") && !page.contains(KV_TOKEN));
    }
    let (status, ledger) = send(&router, get("view=ledger")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ledger["head"]["size"], 1, "{ledger}");
}

#[tokio::test]
async fn a_retry_after_an_applied_write_that_failed_is_200_unchanged() {
    let (_server, bridge, router) = app().await;
    assert_eq!(
        send(&router, post(&snapshot("a", 4))).await.0,
        StatusCode::CREATED
    );
    bridge.inject(Fault::FailAfter);
    let (status, body) = send(&router, post(&snapshot("b", 5))).await;
    assert_unavailable(status, &body);
    let (status, body) = send(&router, post(&snapshot("b", 5))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, ledger) = send(&router, get("view=ledger")).await;
    assert_eq!(ledger["head"]["size"], 2, "one leaf, not two: {ledger}");
}

/// What the service cannot read (a record that is not JSON, a key of the
/// wrong type) is a fault no retry mends: `500 internal_error`, with no
/// `Retry-After` and nothing internal in the body; the page says so in HTML.
#[tokio::test]
async fn stored_data_the_service_cannot_read_is_500_not_503() {
    let (_server, bridge, router) = app().await;
    assert_eq!(
        send(&router, post(&snapshot("a", 4))).await.0,
        StatusCode::CREATED
    );
    let mut redis = bridge.redis();
    let record: String = redis::cmd("GET")
        .arg("ff:rec:1")
        .query_async(&mut redis)
        .await
        .unwrap();
    let broken = format!("{}{{not json", &record[..64]);
    let damages: [(&str, Vec<&str>); 2] = [
        (
            "a record that is not JSON",
            vec!["SET", "ff:rec:1", &broken],
        ),
        // HMGET on a string answers WRONGTYPE.
        (
            "a head of the wrong type",
            vec!["SET", "ff:head", "not a hash"],
        ),
    ];
    for (what, command) in damages {
        let mut cmd = redis::cmd(command[0]);
        for arg in &command[1..] {
            cmd.arg(*arg);
        }
        let () = cmd.query_async(&mut redis).await.unwrap();
        for query in ["view=ledger", "period=21"] {
            let response = router.clone().oneshot(get(query)).await.unwrap();
            assert_eq!(
                response.status(),
                StatusCode::INTERNAL_SERVER_ERROR,
                "{what}, {query}"
            );
            assert!(response.headers().get(header::RETRY_AFTER).is_none());
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            let body: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(body["error"]["code"], "internal_error", "{what}: {body}");
            for internal in ["WRONGTYPE", "not json", "ff:", "KV", KV_TOKEN] {
                assert!(!body.to_string().contains(internal), "{internal}: {body}");
            }
        }
        let page = router
            .clone()
            .oneshot(Request::get("/").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(page.status(), StatusCode::INTERNAL_SERVER_ERROR, "{what}");
        assert!(page.headers().get(header::RETRY_AFTER).is_none());
        let () = redis::cmd("SET")
            .arg("ff:rec:1")
            .arg(&record)
            .query_async(&mut redis)
            .await
            .unwrap();
    }
}

/// As under Lambda: the signer remembers under its own KV key. A lost
/// `head` key makes appends and head reads answer 500 (never an empty
/// ledger that the next append would write over), and the log refuses to
/// sign, once in the log and once as a `log.refused_to_sign` event.
#[tokio::test]
async fn a_lost_head_key_is_a_loud_500_never_a_rewrite() {
    use freedom_shared::adapters::KvSignerMemory;
    use freedom_shared::ports::Recorded;
    use freedom_shared::service::Log;
    use freedom_shared::tlog::note::SigningKey;
    let server = RedisServer::start().unwrap();
    let bridge = UpstashBridge::start(&server.url(), KV_TOKEN).await.unwrap();
    let client = || KvClient::new(&bridge.kv_config("ff:"));
    let events = Arc::new(Recorded::default());
    let key = SigningKey::from_seed("fund.example/log", [4; 32]).unwrap();
    let store: Arc<dyn LedgerStore> = Arc::new(KvLedgerStore::new(client(), "ff:"));
    let log = Log::new(Arc::clone(&store) as _, "fund.example/log", Some(key))
        .unwrap()
        .with_memory(Arc::new(KvSignerMemory::new(client(), "ff:")))
        .with_new_log(true)
        .with_events(events.clone());
    let state = fund::AppState::new(store, WriteToken::new(TOKEN)).with_log(log);
    let router = fund::app(state);
    let mut redis = bridge.redis();
    let mut head_at_one: Vec<u8> = Vec::new();
    for day in 1..=3 {
        assert_eq!(
            send(&router, post(&snapshot(&format!("s{day}"), day)))
                .await
                .0,
            StatusCode::CREATED
        );
        if day == 1 {
            head_at_one = redis::cmd("DUMP")
                .arg("ff:head")
                .query_async(&mut redis)
                .await
                .unwrap();
        }
    }
    let checkpoint = router
        .clone()
        .oneshot(Request::get("/log/checkpoint").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(checkpoint.status(), StatusCode::OK);

    let _: () = redis::cmd("DEL")
        .arg("ff:head")
        .query_async(&mut redis)
        .await
        .unwrap();
    let record_one: String = redis::cmd("GET")
        .arg("ff:rec:1")
        .query_async(&mut redis)
        .await
        .unwrap();
    for request in [
        post(&snapshot("s4", 4)),
        get("view=ledger"),
        get("view=proof&seq=1"),
    ] {
        let (status, body) = send(&router, request).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
        assert_eq!(body["error"]["code"], "internal_error");
        assert!(!body.to_string().contains("head"), "no internals: {body}");
    }
    let after: String = redis::cmd("GET")
        .arg("ff:rec:1")
        .query_async(&mut redis)
        .await
        .unwrap();
    assert_eq!(after, record_one, "record 1 is never written again");

    // The head restored from an older backup: the log refuses to sign it.
    let _: () = redis::cmd("RESTORE")
        .arg("ff:head")
        .arg(0)
        .arg(head_at_one)
        .query_async(&mut redis)
        .await
        .unwrap();
    let (status, _) = send(&router, get("view=proof&seq=1")).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    let kinds: Vec<_> = events.events().iter().map(|e| e.detail_type).collect();
    assert!(
        kinds.contains(&freedom_shared::service::REFUSED_TO_SIGN),
        "{kinds:?}"
    );
}

/// Under Lambda, a benchmark that is not a strategy id, or that names a
/// strategy with no series of its mode in the KV store's ledger, stops
/// start-up naming the variable; one the ledger holds starts.
#[tokio::test]
async fn the_lambda_start_up_refuses_a_benchmark_the_ledger_does_not_hold() {
    let (_server, bridge, router) = app().await;
    let (status, _) = send(&router, post(&snapshot("s1", 1))).await;
    assert_eq!(status, StatusCode::CREATED);
    let start = |variable: &'static str, value: &'static str| {
        let (url, token) = (bridge.url().to_owned(), bridge.token().to_owned());
        fund::lambda::app_from_env(move |name: &str| match name {
            "FF_KV_REST_API_URL" => Some(url.clone()),
            "FF_KV_REST_API_TOKEN" => Some(token.clone()),
            "FF_KV_PREFIX" => Some("ff:".to_owned()),
            _ if name == variable => Some(value.to_owned()),
            _ => None,
        })
    };
    let live = start("FF_BENCHMARK_LIVE", "nobody").await.unwrap_err();
    assert!(
        live.to_string().contains("FF_BENCHMARK_LIVE names nobody"),
        "{live}"
    );
    let paper = start("FF_BENCHMARK_PAPER", "core").await.unwrap_err();
    assert!(
        paper.to_string().contains("FF_BENCHMARK_PAPER names core"),
        "a live series is not a paper benchmark: {paper}"
    );
    let bad = start("FF_BENCHMARK_PAPER", "two words").await.unwrap_err();
    assert!(
        bad.to_string().contains("FF_BENCHMARK_PAPER must be"),
        "{bad}"
    );
    assert!(start("FF_BENCHMARK_LIVE", "core").await.is_ok());
}
