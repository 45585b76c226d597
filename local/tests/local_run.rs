//! `freedom-local` as a user runs it: a real process on a real port.
//!
//! - every acknowledged append survives `kill -9`, and after a restart the
//!   root still re-derives (checked here and by the independent Python
//!   verifier in `scripts/verify-ledger.py`);
//! - SIGTERM shuts it down cleanly;
//! - KV variables without the KV adapter stop start-up with a clear message.

use freedom_shared::canonical::canonical_json;
use freedom_shared::merkle::{leaf_hash, root_of};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const TOKEN: &str = "local-test-token-0123456789";

struct Running {
    child: Child,
    base: String,
}

/// Starts `freedom-local` on a free port and waits for its "listening" line.
fn start(data_dir: &Path) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_freedom-local"))
        .args(["--addr", "127.0.0.1:0", "--no-schedule", "--data-dir"])
        .arg(data_dir)
        .env("FF_AGENT_WRITE_TOKEN", TOKEN)
        .env("RUST_LOG", "info")
        .env_remove("FF_KV_REST_API_URL")
        .env_remove("KV_REST_API_URL")
        .env_remove("UPSTASH_REDIS_REST_URL")
        .stderr(Stdio::piped())
        .spawn()
        .expect("freedom-local starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("freedom-local logs before exiting")
            .unwrap();
        if line.contains("freedom-local listening") {
            let at = line
                .find("addr=")
                .expect("the listening line names the address")
                + 5;
            break line[at..].split_whitespace().next().unwrap().to_owned();
        }
    };
    // Keep draining the log so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Running {
        child,
        base: format!("http://{addr}"),
    }
}

fn record(i: usize) -> Value {
    json!({
        "id": format!("rec-{i}"), "type": "snapshot", "visibility": "public", "mode": "paper",
        "strategyId": format!("strategy-{i}"), "strategyName": "Crash test",
        "asOf": "2026-05-04T16:00:00Z", "source": {"name": "test", "url": "https://example.com/t"},
        "currency": "USD", "equity": 1000 + i, "flowSincePrevious": 0
    })
}

async fn ledger(base: &str) -> Value {
    reqwest::get(format!("{base}/api/freedom-fund?view=ledger&limit=1000"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn acknowledged_appends_survive_kill_9_and_the_root_re_derives() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path());
    let client = reqwest::Client::new();
    let posts: Vec<_> = (0..40)
        .map(|i| {
            let client = client.clone();
            let url = format!("{}/api/freedom-fund", server.base);
            tokio::spawn(async move {
                let response = client
                    .post(url)
                    .bearer_auth(TOKEN)
                    .json(&record(i))
                    .send()
                    .await
                    .unwrap();
                (i, response.status().as_u16())
            })
        })
        .collect();
    let mut acknowledged = Vec::new();
    for post in posts {
        let (i, status) = post.await.unwrap();
        assert_eq!(status, 201);
        acknowledged.push(format!("rec-{i}"));
    }

    server.child.kill().unwrap(); // SIGKILL: no chance to flush anything.
    server.child.wait().unwrap();

    let server = start(dir.path());
    let page = ledger(&server.base).await;
    let entries = page["entries"].as_array().unwrap();
    let ids: Vec<&str> = entries
        .iter()
        .map(|e| e["record"]["id"].as_str().unwrap())
        .collect();
    for id in &acknowledged {
        assert!(
            ids.contains(&id.as_str()),
            "{id} was acknowledged but is missing after kill -9"
        );
    }
    let leaves: Vec<_> = entries
        .iter()
        .rev()
        .map(|e| leaf_hash(canonical_json(&e["record"]).as_bytes()))
        .collect();
    assert_eq!(page["head"]["rootHash"], root_of(&leaves).to_hex());

    let verifier = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/verify-ledger.py"))
        .arg(&server.base)
        .output()
        .expect("python3 runs the verifier");
    assert!(
        verifier.status.success(),
        "{}",
        String::from_utf8_lossy(&verifier.stdout)
    );
    assert!(String::from_utf8_lossy(&verifier.stdout).starts_with("OK 40 records"));
    stop(server);
}

fn stop(mut server: Running) {
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = server.child.wait().unwrap();
    assert!(
        exit.success(),
        "freedom-local exits cleanly on SIGTERM: {exit:?}"
    );
}

#[tokio::test]
async fn sigterm_shuts_down_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let answer: Value = reqwest::get(format!("{}/api/freedom-scanner", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["version"], "scanner-1.0");
    stop(server);
}

#[test]
fn kv_variables_without_the_adapter_stop_start_up_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_freedom-local"))
        .args(["--addr", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .env("FF_KV_REST_API_URL", "https://kv.example")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("FF_KV_REST_API_TOKEN"), "{stderr}");
}
