//! Cold start of Lambda binaries: the time from `exec` to the binary's first
//! poll of the Runtime API (`GET …/invocation/next`), which is when Lambda
//! considers its init done, and the binary's size.
//!
//! ```text
//! lambda-cold-start <hello-lambda> <fund> <scanner>
//! ```
//!
//! Each binary starts 30 times against the fake Runtime API, with the KV REST
//! variables pointing at a bridge to a private redis-server (so `fund` and
//! `scanner` take their real start-up path) and the scanner's providers at
//! the stand-in. `scripts/bench-lambda` builds the three in release and runs
//! this.

use freedom_testkit::lambda_runtime_api::FakeRuntimeApi;
use freedom_testkit::provider_standin::{ProviderStandIn, fixture_tokens};
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::UpstashBridge;
use std::process::{Command, Stdio};
use std::time::Duration;

const STARTS: usize = 30;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let binaries: Vec<String> = std::env::args().skip(1).collect();
    if binaries.len() != 3 {
        return Err("usage: lambda-cold-start <hello-lambda> <fund> <scanner>".into());
    }
    let redis = RedisServer::start()?;
    let bridge = UpstashBridge::start(&redis.url(), "bench-kv-token").await?;
    let stand_in = ProviderStandIn::start(fixture_tokens()).await?;
    let mut env: Vec<(String, String)> = stand_in.env();
    env.push(("FF_KV_REST_API_URL".into(), bridge.url().into()));
    env.push(("FF_KV_REST_API_TOKEN".into(), "bench-kv-token".into()));
    env.push((
        "FF_AGENT_WRITE_TOKEN".into(),
        "bench-write-token-0123456789".into(),
    ));
    env.push(("AWS_LAMBDA_LOG_LEVEL".into(), "error".into()));

    let mut baseline: Option<(Duration, u64)> = None;
    println!("| binary | size | cold start median | p90 | size ratio | start ratio |");
    println!("|---|---|---|---|---|---|");
    for binary in &binaries {
        let size = std::fs::metadata(binary)?.len();
        let mut times = Vec::with_capacity(STARTS);
        for _ in 0..STARTS {
            let mut runtime = FakeRuntimeApi::start().await?;
            let started = tokio::time::Instant::now();
            let mut child = Command::new(binary)
                .envs(runtime.env("bench"))
                .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            let polled = tokio::time::timeout(Duration::from_secs(10), runtime.poll()).await?;
            times.push(polled - started);
            child.kill()?;
            child.wait()?;
        }
        times.sort();
        let median = percentile(&times, 0.5);
        let (base_time, base_size) = *baseline.get_or_insert((median, size));
        let name = std::path::Path::new(binary)
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        println!(
            "| {name} | {:.1} MiB | {:.1} ms | {:.1} ms | {:.2} | {:.2} |",
            size as f64 / 1_048_576.0,
            median.as_secs_f64() * 1000.0,
            percentile(&times, 0.9).as_secs_f64() * 1000.0,
            size as f64 / base_size as f64,
            median.as_secs_f64() / base_time.as_secs_f64(),
        );
    }
    Ok(())
}
