//! Drives a built Lambda package (`sam build`'s `bootstrap`) as Lambda does:
//! through a Runtime API (the test kit's fake), with real event files, on a
//! real store (a private redis-server behind the Upstash REST bridge).
//!
//! ```text
//! drive-bootstrap <bootstrap> <event.json>=<status> [<event.json>=<status> ...]
//! ```
//!
//! Sends the events in order and checks each HTTP answer's `statusCode`;
//! prints one line per event and exits non-zero on the first mismatch.
//! `scripts/sam-build-check` runs it on both functions after `sam build`.

use freedom_testkit::lambda_runtime_api::FakeRuntimeApi;
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::UpstashBridge;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Duration;

const KV_TOKEN: &str = "drive-bootstrap-kv-token";
const WRITE_TOKEN: &str = "local-dev-write-token";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: drive-bootstrap <bootstrap> <event.json>=<status> ...";
    let bootstrap = args.next().ok_or(usage)?;
    let checks: Vec<(String, u64)> = args
        .map(|arg| {
            let (file, status) = arg.rsplit_once('=').ok_or(usage)?;
            Ok((file.to_owned(), status.parse()?))
        })
        .collect::<Result<_, Box<dyn std::error::Error>>>()?;
    if checks.is_empty() {
        return Err(usage.into());
    }
    let redis = RedisServer::start()?;
    let bridge = UpstashBridge::start(&redis.url(), KV_TOKEN).await?;
    let mut runtime = FakeRuntimeApi::start().await?;
    let mut child = Command::new(&bootstrap)
        .envs(runtime.env("drive-bootstrap"))
        .env("FF_KV_REST_API_URL", bridge.url())
        .env("FF_KV_REST_API_TOKEN", KV_TOKEN)
        .env("FF_AGENT_WRITE_TOKEN", WRITE_TOKEN)
        .env("AWS_LAMBDA_LOG_LEVEL", "warn")
        .stdout(Stdio::null())
        .spawn()?;
    let mut outcome = Ok(());
    for (file, expected) in &checks {
        let event: Value = serde_json::from_str(&std::fs::read_to_string(file)?)?;
        runtime.invoke(event);
        let answer = match tokio::time::timeout(Duration::from_secs(30), runtime.answer()).await {
            Ok(answer) => answer,
            Err(_) => {
                outcome = Err(format!("{bootstrap}: no answer to {file} within 30 s").into());
                break;
            }
        };
        let status = answer.body["statusCode"].as_u64();
        println!(
            "{bootstrap}: {file} → {} {}",
            answer.kind,
            status.map_or("(no status)".to_owned(), |s| s.to_string())
        );
        if answer.kind != "response" || status != Some(*expected) {
            outcome = Err(format!("{file}: expected {expected}, got {}", answer.body).into());
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    outcome
}
