//! Every fund event in `events/` (API Gateway HTTP API payload 2.0, as `sam
//! local invoke -e` sends them) parsed with `lambda_http::request::from_str`
//! and answered by the router, in order; and the router Lambda uses when no
//! KV store is configured.

use axum::Router;
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::config::WriteToken;
use http_body_util::BodyExt;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use tower::ServiceExt;

fn event(name: &str) -> lambda_http::Request {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../events")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    lambda_http::request::from_str(&text)
        .unwrap_or_else(|e| panic!("{name} is not an HTTP API event: {e}"))
}

async fn replay(router: &Router, name: &str) -> (u16, String, String) {
    let response = router.clone().oneshot(event(name)).await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        content_type,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap()
}

#[tokio::test]
async fn every_fund_event_is_answered_as_expected() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    // The events carry this token, as a developer's local deployment would.
    let router = fund::app(fund::AppState::new(
        Arc::new(store),
        WriteToken::new("local-dev-write-token"),
    ));

    let (status, _, body) = replay(&router, "fund-post-snapshot.json").await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(json(&body)["status"], "created");
    let (status, _, body) = replay(&router, "fund-post-snapshot.json").await;
    assert_eq!(
        (status, json(&body)["status"].as_str()),
        (200, Some("unchanged")),
        "a replay is idempotent"
    );
    let (status, _, body) = replay(&router, "fund-post-decision.json").await;
    assert_eq!(status, 201, "{body}");
    let (status, _, body) = replay(&router, "fund-post-refused.json").await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(json(&body)["error"]["code"], "validation_failed");

    let (status, _, body) = replay(&router, "fund-get-ledger.json").await;
    assert_eq!(status, 200);
    assert_eq!(
        json(&body)["head"]["size"],
        2,
        "the refused write stored nothing"
    );
    let (status, _, body) = replay(&router, "fund-get-dashboard.json").await;
    assert_eq!(status, 200);
    let dashboard = json(&body);
    assert_eq!(dashboard["period"], 21);
    assert_eq!(dashboard["strategies"][0]["strategyId"], "core");
    assert_eq!(dashboard["decisions"].as_array().unwrap().len(), 1);
    let (status, _, body) = replay(&router, "fund-get-contract.json").await;
    assert_eq!(
        (status, json(&body)["schemaVersion"].as_u64()),
        (200, Some(1))
    );
    let (status, content_type, body) = replay(&router, "fund-get-page.json").await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, "text/html; charset=utf-8")
    );
    assert!(body.contains("Hold the core allocation into the May close"));
}

#[tokio::test]
async fn without_a_kv_store_lambda_answers_503_to_everything() {
    let router = freedom_shared::web::store_not_configured_app();
    for name in [
        "fund-get-dashboard.json",
        "fund-get-page.json",
        "fund-post-snapshot.json",
    ] {
        let (status, _, body) = replay(&router, name).await;
        assert_eq!(status, 503, "{name}");
        let body = json(&body);
        assert_eq!(body["error"]["code"], "storage_unavailable");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no store is configured")
        );
    }
    let app = fund::lambda::app_from_env(|_| None).await.unwrap();
    assert_eq!(replay(&app, "fund-get-ledger.json").await.0, 503);
    let half = fund::lambda::app_from_env(|name| {
        (name == "FF_KV_REST_API_URL").then(|| "https://kv.example".to_owned())
    })
    .await;
    assert!(half.is_err(), "half a KV pair stops start-up");
}
