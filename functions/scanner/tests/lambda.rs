//! The scanner under Lambda: the scheduled event and the HTTP events of
//! `events/` through its one dispatch, and the binary driven through the
//! Lambda Runtime API (a fake one in the test).

use freedom_shared::adapters::Stores;
use freedom_shared::config::ScannerConfig;
use freedom_shared::config::WriteToken;
use freedom_shared::scan::EXPERIMENTS;
use freedom_testkit::lambda_runtime_api::FakeRuntimeApi;
use freedom_testkit::provider_standin::{ProviderStandIn, fixture_tokens};
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::UpstashBridge;
use lambda_http::{Context, LambdaEvent};
use scanner::lambda::{LambdaApp, is_scheduled};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

fn event(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../events")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn invocation(payload: Value) -> LambdaEvent<Value> {
    LambdaEvent::new(payload, Context::default())
}

async fn app(stand_in: &ProviderStandIn, stores: &Stores) -> LambdaApp {
    let env = stand_in.env();
    let config =
        ScannerConfig::from_env(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
            .unwrap();
    LambdaApp::new(scanner::compose::scanner(
        config,
        stores,
        WriteToken::new("local-dev-write-token"),
    ))
}

#[tokio::test]
async fn the_schedule_and_http_events_share_one_dispatch() {
    let stand_in = ProviderStandIn::start(fixture_tokens()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let stores = Stores::open(None, dir.path()).unwrap();
    let app = app(&stand_in, &stores).await;
    assert!(is_scheduled(&event("scanner-scheduled.json")));
    assert!(!is_scheduled(&event("scanner-get.json")));

    let empty = app
        .handle(invocation(event("scanner-get.json")))
        .await
        .unwrap();
    assert_eq!(empty["statusCode"], 200);
    let body: Value = serde_json::from_str(empty["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["universe"], Value::Array(vec![]));

    let scheduled = app
        .handle(invocation(event("scanner-scheduled.json")))
        .await
        .unwrap();
    assert_eq!(
        (scheduled["run"].as_str(), scheduled["status"].as_str()),
        (Some("finished"), Some("ok")),
        "{scheduled}"
    );

    let posted = app
        .handle(invocation(event("scanner-post-run.json")))
        .await
        .unwrap();
    assert_eq!(posted["statusCode"], 200, "{posted}");
    let latest = app
        .handle(invocation(event("scanner-get.json")))
        .await
        .unwrap();
    let report: Value = serde_json::from_str(latest["body"].as_str().unwrap()).unwrap();
    assert_eq!(report["status"], "ok");
    assert_eq!(report["books"].as_array().unwrap().len(), EXPERIMENTS.len());

    // While another run holds the lock: the schedule skips, a POST is 409.
    let held = stores
        .scan
        .acquire(Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    let skipped = app
        .handle(invocation(event("scanner-scheduled.json")))
        .await
        .unwrap();
    assert_eq!(skipped["run"], "skipped");
    let busy = app
        .handle(invocation(event("scanner-post-run.json")))
        .await
        .unwrap();
    assert_eq!(busy["statusCode"], 409);
    stores.scan.release(&held).await.unwrap();

    let nonsense = app
        .handle(invocation(serde_json::json!({"hello": "world"})))
        .await;
    assert!(nonsense.is_err());
}

#[tokio::test]
async fn without_a_kv_store_http_is_503_and_the_schedule_fails() {
    let app = LambdaApp::from_env(|_| None).await.unwrap();
    let answer = app
        .handle(invocation(event("scanner-get.json")))
        .await
        .unwrap();
    assert_eq!(answer["statusCode"], 503);
    assert!(
        app.handle(invocation(event("scanner-scheduled.json")))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn the_binary_runs_the_schedule_through_the_runtime_api() {
    let stand_in = ProviderStandIn::start(fixture_tokens()).await.unwrap();
    let redis = RedisServer::start().unwrap();
    let bridge = UpstashBridge::start(&redis.url(), "kv-token")
        .await
        .unwrap();
    let mut runtime = FakeRuntimeApi::start().await.unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_scanner"));
    for (url, token) in freedom_shared::config::KV_PAIRS {
        command.env_remove(url).env_remove(token);
    }
    let mut child = command
        .envs(runtime.env("scanner"))
        .envs(stand_in.env())
        .env("FF_KV_REST_API_URL", bridge.url())
        .env("FF_KV_REST_API_TOKEN", "kv-token")
        .env("AWS_LAMBDA_LOG_LEVEL", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    runtime.invoke(event("scanner-scheduled.json"));
    let answer = runtime.answer().await;
    runtime.invoke(event("scanner-get.json"));
    let report = runtime.answer().await;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(answer.kind, "response", "{:?}", answer.body);
    assert_eq!(answer.body["run"], "finished");
    let body: Value = serde_json::from_str(report.body["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["universe"].as_array().unwrap().len(), 4);
}

#[test]
fn outside_lambda_the_binary_says_to_run_freedom_local() {
    let (succeeded, stderr) =
        freedom_testkit::lambda_runtime_api::start_outside_lambda(env!("CARGO_BIN_EXE_scanner"));
    assert!(!succeeded);
    assert!(
        stderr.starts_with("scanner: AWS_LAMBDA_RUNTIME_API is not set")
            && stderr.contains("freedom-local"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one sentence: {stderr}");
}
