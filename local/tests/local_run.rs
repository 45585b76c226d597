//! `freedom-local` as a user runs it: a real process on a real port.
//!
//! - every acknowledged append survives `kill -9`, and after a restart the
//!   root still re-derives (checked here and by the independent Python
//!   verifier in `scripts/verify-ledger.py`);
//! - SIGTERM shuts it down cleanly;
//! - with the KV variables set it uses the KV REST store and says so: two
//!   processes on fresh data dirs share one ledger; a half pair stops start-up
//!   naming the missing variable.

use freedom_shared::canonical::canonical_json;
use freedom_shared::merkle::{leaf_hash, root_of};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

mod support;

use support::{TOKEN, ledger, local_command, record, start, start_with, start_with_args, stop};

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
                let status = response.status().as_u16();
                (i, status, response.text().await.unwrap_or_default())
            })
        })
        .collect();
    let mut acknowledged = Vec::new();
    for post in posts {
        let (i, status, body) = post.await.unwrap();
        assert_eq!(status, 201, "rec-{i}: {body}");
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

/// A client that sent half a request must not keep the process alive
/// after SIGTERM (it used to, forever).
#[tokio::test]
async fn sigterm_ends_the_process_even_with_a_half_sent_request_open() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let (mut server, _) = start_with_args(dir.path(), &[], &["--shutdown-grace-secs", "1"]);
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut half_sent = tokio::net::TcpStream::connect(&addr).await.unwrap();
    half_sent
        .write_all(b"POST /api/freedom-fund HTTP/1.1\r\nhost: x\r\ncontent-le")
        .await
        .unwrap();
    // The server has the connection once a full request on another one is
    // answered after it (connections are accepted in order).
    let answer = reqwest::get(format!("{}/api/freedom-scanner", server.base))
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // Bounded by the grace period (1 s here); a hang fails the test.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let exit = loop {
        if let Some(exit) = server.child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "freedom-local is still running 30 s after SIGTERM"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(exit.success(), "{exit:?}");
    drop(half_sent);
}

/// Start-up refusals: one line naming the variable, not a Debug form.
#[test]
fn configuration_mistakes_stop_start_up_with_a_sentence_naming_the_variable() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "FF_LOG_POLICY",
            "# witnesses\nwitness W1 w1.example+00000000+AAAA\nquorum W1\n",
            "FF_LOG_POLICY line 2: witness W1's key",
        ),
        (
            "FF_LOG_POLICY",
            "quorum W9\n",
            "FF_LOG_POLICY line 1: W9 is not a witness or group defined on an earlier line",
        ),
        (
            "FF_AGENT_WRITE_TOKEN",
            "x",
            "FF_AGENT_WRITE_TOKEN must be at least 16 characters",
        ),
        (
            "FF_AGENT_WRITE_TOKEN",
            " padded-token-0123456789 ",
            "FF_AGENT_WRITE_TOKEN must be visible ASCII, with no white space",
        ),
        (
            "FF_SCANNER_UNIVERSE",
            "So11111111111111111111111111111111111111112,So11111111111111111111111111111111111111112",
            "FF_SCANNER_UNIVERSE lists the same mint twice (entries 1 and 2)",
        ),
    ];
    for (variable, value, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let output = local_command()
            .args(["--addr", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path().join("data"))
            .env("FF_AGENT_WRITE_TOKEN", TOKEN)
            .env(variable, value)
            .env("RUST_LOG", "off")
            .output()
            .unwrap();
        assert!(
            !output.status.success(),
            "{variable}={value:?} must stop start-up"
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{stderr}");
        assert!(stderr.starts_with("freedom-local: "), "{stderr}");
        assert!(
            !stderr.contains("Error: ") && !stderr.contains(" { "),
            "no Debug form: {stderr}"
        );
        if variable == "FF_AGENT_WRITE_TOKEN" {
            assert!(!stderr.contains(value.trim()), "never the token: {stderr}");
        }
    }
}

#[test]
fn a_half_kv_pair_stops_start_up_naming_the_missing_variable() {
    let dir = tempfile::tempdir().unwrap();
    let output = local_command()
        .args(["--addr", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .env("FF_KV_REST_API_URL", "https://kv.example")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("FF_KV_REST_API_TOKEN"), "{stderr}");
}

/// A port another process holds stops start-up with a sentence naming the
/// address and the option that changes it.
#[test]
fn a_taken_port_names_the_address_and_the_option() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let output = local_command()
        .args(["--addr", &addr, "--data-dir"])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&addr) && stderr.contains("--addr"),
        "{stderr}"
    );
}

/// Without the `eventbridge` feature a named bus stops start-up: events
/// are never dropped unseen.
#[cfg(not(feature = "eventbridge"))]
#[test]
fn a_named_event_bus_without_the_adapter_stops_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let output = local_command()
        .args(["--addr", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path().join("data"))
        .env("FF_EVENT_BUS_NAME", "some-bus")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(
            "freedom-local: FF_EVENT_BUS_NAME is set but this build has no EventBridge adapter"
        ),
        "{stderr}"
    );
}

// Multi-threaded: the bridge keeps answering while the test waits on a
// process that is starting (start-up reads the signer's memory in the store).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_kv_variables_two_processes_on_fresh_data_dirs_share_one_ledger() {
    let redis = freedom_testkit::redis_server::RedisServer::start().unwrap();
    let kv_token = "kv-bridge-secret-value";
    let bridge = freedom_testkit::upstash_bridge::UpstashBridge::start(&redis.url(), kv_token)
        .await
        .unwrap();
    // The older variable names, to exercise the precedence end to end.
    let env = [
        ("KV_REST_API_URL", bridge.url()),
        ("KV_REST_API_TOKEN", kv_token),
    ];
    let (first_dir, second_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (first, listening) = start_with(first_dir.path(), &env);
    assert!(listening.contains("KV REST store"), "{listening}");
    assert!(listening.contains("KV_REST_API_URL"), "{listening}");
    assert!(!listening.contains(kv_token), "the token is never logged");
    let (second, _) = start_with(second_dir.path(), &env);

    let client = reqwest::Client::new();
    for i in 0..3 {
        let response = client
            .post(format!("{}/api/freedom-fund", first.base))
            .bearer_auth(TOKEN)
            .json(&record(i))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
    }
    let seen = ledger(&second.base).await;
    assert_eq!(seen["head"]["size"], 3, "{seen}");
    assert_eq!(seen, ledger(&first.base).await);
    // Nothing went to either data dir.
    for dir in [&first_dir, &second_dir] {
        assert!(
            !support::data_dir(dir.path())
                .join("ledger.sqlite3")
                .exists()
        );
    }
    let mut connection = bridge.redis();
    let size: String = redis::cmd("HGET")
        .arg("ff:head")
        .arg("size")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(size, "3");
    stop(first);
    stop(second);
}

#[tokio::test]
async fn the_scanner_runs_against_the_provider_stand_in_and_its_books_reach_the_page() {
    let stand_in = freedom_testkit::provider_standin::ProviderStandIn::start(
        freedom_testkit::provider_standin::fixture_tokens(),
    )
    .await
    .unwrap();
    let env = stand_in.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = start_with(dir.path(), &env);
    let openapi: Value = reqwest::get(format!("{}/api/freedom-fund?view=openapi", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let schema = &openapi["components"]["schemas"]["ScannerReport"];
    let empty: Value = reqwest::get(format!("{}/api/freedom-scanner", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    freedom_testkit::python::assert_matches_schema(schema, &empty);
    let client = reqwest::Client::new();
    let response = client
        .post(format!("{}/api/freedom-scanner", server.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let report_text = response.text().await.unwrap();
    let report: Value = serde_json::from_str(&report_text).unwrap();
    assert_eq!(report["status"], "ok", "{report}");
    freedom_testkit::python::assert_matches_schema(schema, &report);
    // Provenance: every answer's hash is the hash of bytes the stand-in
    // sent, and those bytes are served back by hash.
    let evidence = |hash: String| {
        let url = format!(
            "{}/api/freedom-scanner?view=evidence&sha256={hash}",
            server.base
        );
        async move {
            let response = reqwest::get(url).await.unwrap();
            assert_eq!(response.status(), 200);
            response.bytes().await.unwrap().to_vec()
        }
    };
    let sent = stand_in.sent_bodies();
    let provenance = report["provenance"].as_array().unwrap();
    assert!(!provenance.is_empty());
    for entry in provenance {
        let hash = entry["bodySha256"].as_str().unwrap().to_owned();
        assert!(sent.contains(&hash), "{entry}");
        let bytes = evidence(hash.clone()).await;
        assert_eq!(freedom_shared::scan::sha256_hex(&bytes), hash);
    }
    // The ledger: each experiment's registration precedes its first
    // snapshot, which names this very report.
    let ledger: Value = reqwest::get(format!(
        "{}/api/freedom-fund?view=ledger&limit=1000",
        server.base
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let entries = ledger["entries"].as_array().unwrap();
    let report_hash = freedom_shared::scan::sha256_hex(report_text.as_bytes());
    assert_eq!(evidence(report_hash.clone()).await, report_text.as_bytes());
    let contract: Value = reqwest::get(format!("{}/api/freedom-fund?view=contract", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for experiment in contract["scanner"]["paper"]["experiments"]
        .as_array()
        .unwrap()
    {
        let id = experiment["id"].as_str().unwrap();
        let seq_of = |kind: &str| {
            entries
                .iter()
                .filter(|e| e["record"]["strategyId"] == id && e["record"]["type"] == kind)
                .map(|e| e["seq"].as_u64().unwrap())
                .min()
                .unwrap()
        };
        let (registered, first_snapshot) = (seq_of("decision"), seq_of("snapshot"));
        assert!(registered < first_snapshot, "{id}");
        assert_eq!(experiment["registeredSeq"], registered, "{experiment}");
        assert_eq!(experiment["registeredRuleHash"], experiment["ruleHash"]);
        let snapshot = entries.iter().find(|e| e["seq"] == first_snapshot).unwrap();
        assert_eq!(
            snapshot["record"]["source"]["url"],
            format!("https://dexscreener.com/solana#report=sha256:{report_hash}")
        );
    }
    // The cost model's parameters, and the experiments it retired.
    let paper = &contract["scanner"]["paper"];
    let cost = &paper["costModel"];
    assert_eq!(
        (
            cost["swapFeeRate"].as_f64(),
            cost["networkFeeUsd"].as_f64(),
            cost["maxReserveShare"].as_f64(),
            cost["mev"].as_str(),
        ),
        (Some(0.0025), Some(0.02), Some(0.02), Some("not modelled")),
        "{cost}"
    );
    let retired: Vec<&str> = paper["retired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    for version in ["v1", "v2"] {
        assert!(retired.contains(&format!("scanner-equal-weight-{version}").as_str()));
    }
    assert!(
        report["experiments"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["costModel"]["pricing"] == "constant-product")
    );
    let page = page_text(&server.base).await;
    assert!(page.contains("Scanner equal weight of eligible tokens (paper)"));
    let status = scanner_status(&page);
    assert!(status.contains("succeeded."), "{status}");
    assert_eq!(report["lastOkAt"], report["reportAt"], "{report}");
    stop(server);
}

/// The public page at `base`.
async fn page_text(base: &str) -> String {
    reqwest::get(format!("{base}/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// What `page` says of the scanner's last run.
fn scanner_status(page: &str) -> &str {
    let status = &page[page
        .find("id=\"scanner-status\"")
        .expect("the scanner's status")..];
    &status[..status.find("</p>").unwrap()]
}

/// Offline, the page says beside the experiments that the scanner is
/// failing, why, and that no run has succeeded; the ledger stays empty.
#[tokio::test]
async fn with_the_providers_unreachable_the_page_says_the_scanner_is_failing_and_why() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("FF_DEXSCREENER_URL", closed.as_str()),
        ("FF_RUGCHECK_URL", closed.as_str()),
        ("FF_SOLANA_RPC_URL", closed.as_str()),
    ];
    let (server, _) = start_with(dir.path(), &env);
    let report: Value = reqwest::Client::new()
        .post(format!("{}/api/freedom-scanner", server.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(report["status"], "degraded", "{report}");
    assert_eq!(report["lastOkAt"], Value::Null, "{report}");
    let page = page_text(&server.base).await;
    let status = scanner_status(&page);
    assert!(
        status.contains("was degraded") && status.contains("FF_DEXSCREENER_URL"),
        "the page says the scanner is failing and what to check: {status}"
    );
    assert!(status.contains("Last succeeded: never."), "{status}");
    let ledger: Value = reqwest::get(format!("{}/api/freedom-fund?view=ledger", server.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ledger["entries"], serde_json::json!([]), "nothing written");
    stop(server);
}

/// Built with the `eventbridge` feature (scripts/test builds it so).
#[cfg(feature = "eventbridge")]
#[tokio::test]
async fn appends_runs_and_paper_trades_are_published_to_eventbridge() {
    let moto = freedom_testkit::moto::MotoServer::start();
    let queue = moto.sink("ff-local-bus");
    let stand_in = freedom_testkit::provider_standin::ProviderStandIn::start(
        freedom_testkit::provider_standin::fixture_tokens(),
    )
    .await
    .unwrap();
    let mut env = stand_in.env();
    env.extend(moto.env("ff-local-bus"));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = start_with(dir.path(), &env);
    let client = reqwest::Client::new();
    let appended = client
        .post(format!("{}/api/freedom-fund", server.base))
        .bearer_auth(TOKEN)
        .json(&record(1))
        .send()
        .await
        .unwrap();
    assert_eq!(appended.status(), 201);
    let run = client
        .post(format!("{}/api/freedom-scanner", server.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(run.status(), 200);
    stop(server);

    let events = moto.drain(&queue);
    let of = |kind: &str| {
        events
            .iter()
            .filter(|e| e["detail-type"] == kind)
            .collect::<Vec<_>>()
    };
    let appended = of("RecordAppended");
    // The record, then each of the scanner's experiments registered (a
    // decision naming its rule's hash) before its first paper snapshot.
    let experiments = freedom_shared::scan::EXPERIMENTS.len();
    assert_eq!(appended.len(), 1 + 2 * experiments, "{events:?}");
    let registrations = appended
        .iter()
        .filter(|e| {
            e["detail"]["type"] == "decision"
                && e["detail"]["id"]
                    .as_str()
                    .is_some_and(|id| id.ends_with("-registration"))
        })
        .count();
    assert_eq!(registrations, experiments, "{events:?}");
    assert_eq!(
        appended
            .iter()
            .filter(|e| e["detail"]["type"] == "snapshot" && e["detail"]["id"] != "rec-1")
            .count(),
        experiments,
        "one paper snapshot per experiment"
    );
    assert!(
        appended
            .iter()
            .any(|e| e["detail"]["id"] == "rec-1" && e["detail"]["seq"] == 1)
    );
    assert_eq!(of("ScannerRunCompleted").len(), 1);
    let trades = of("PaperTrade");
    let bought: Vec<(&str, &str)> = trades
        .iter()
        .map(|t| {
            (
                t["detail"]["experimentId"].as_str().unwrap(),
                t["detail"]["symbol"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        bought,
        [
            ("scanner-equal-weight-v3", "FDELTA"),
            ("scanner-momentum-top3-v3", "FDELTA"),
            ("scanner-hold-sol-v3", "SOL"),
        ],
        "equal weight and momentum each buy the one eligible token, the benchmark SOL"
    );
    assert!(trades.iter().all(|t| t["detail"]["paper"] == true));
}
