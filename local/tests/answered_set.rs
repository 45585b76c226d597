//! The log's round-5 custody rules through freedom-local, on the embedded
//! store and on the KV store: a log that lost its memory signs only once
//! the witnesses that did not answer could not on their own have met the
//! quorum (under 1-of-2 and 2-of-4, where two disjoint quorums exist), and
//! a witness's clock counts for the served quorum, never for time.

mod support;

use freedom_shared::tlog::note::SigningKey;
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::spec_witness::SpecWitness;
use freedom_testkit::upstash_bridge::UpstashBridge;
use serde_json::Value;
use support::{Running, TOKEN, record};

const ORIGIN: &str = "answered.example/log";

fn log_key() -> SigningKey {
    SigningKey::from_seed(ORIGIN, [31; 32]).unwrap()
}

/// Where a run keeps its ledger.
enum Store {
    /// The embedded store in the run's data dir.
    Embedded,
    /// The KV store behind the bridge, under a prefix of the run's own.
    Kv(UpstashBridge),
}

impl Store {
    /// The environment a run with its files in `home` needs, its key from
    /// the environment (so a fresh `home` has no memory of what it signed).
    fn env(&self, prefix: &str, policy_file: &std::path::Path) -> Vec<(String, String)> {
        let mut env = vec![
            ("FF_LOG_SIGNING_KEY".to_owned(), log_key().to_private_text()),
            (
                "FF_LOG_POLICY_FILE".to_owned(),
                policy_file.to_string_lossy().into_owned(),
            ),
        ];
        if let Store::Kv(bridge) = self {
            env.extend([
                ("FF_KV_REST_API_URL".to_owned(), bridge.url().to_owned()),
                ("FF_KV_REST_API_TOKEN".to_owned(), "kv-token".to_owned()),
                ("FF_KV_PREFIX".to_owned(), prefix.to_owned()),
            ]);
        }
        env
    }
}

fn start(home: &std::path::Path, env: &[(String, String)], extra: &[&str]) -> Running {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut args = vec!["--cosign-interval-secs", "3600"];
    args.extend_from_slice(extra);
    support::start_with_args(home, &env, &args).0
}

async fn post(base: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .bearer_auth(TOKEN);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

async fn append(base: &str, i: usize) {
    let (status, body) = post(base, "/api/freedom-fund", Some(record(i))).await;
    assert_eq!(status, 201, "{body}");
}

async fn status_of(base: &str, path: &str) -> u16 {
    reqwest::get(format!("{base}{path}"))
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// `k` of the witnesses W1..Wn cosign a tree of 3; the store and every
/// memory of what the key signed are lost (a fresh data dir or KV prefix,
/// the key from the environment); the process starts again while the
/// witnesses that cosigned are down and the others (which never saw the
/// log) answer. It signs nothing (their silence could hide a quorum), says
/// which witnesses it waits for, and no witness is shown the other
/// history; once those witnesses are back, what they show stops it for
/// good.
async fn a_minority_never_settles_a_log_that_lost_its_memory(store: Store, n: usize, k: usize) {
    let vkey = log_key().verifier().to_text();
    let mut witnesses = Vec::new();
    for i in 1..=n {
        witnesses
            .push(SpecWitness::start(&format!("w{i}.example"), [40 + i as u8; 32], &vkey).await);
    }
    let names: Vec<String> = (1..=n).map(|i| format!("W{i}")).collect();
    let mut policy = format!("log {vkey}\n");
    for (name, witness) in names.iter().zip(&witnesses) {
        policy.push_str(&format!(
            "witness {name} {} {}\n",
            witness.vkey(),
            witness.url()
        ));
    }
    policy.push_str(&format!("group G {k} {}\nquorum G\n", names.join(" ")));
    let files = tempfile::tempdir().unwrap();
    let policy_file = files.path().join("policy.txt");
    std::fs::write(&policy_file, &policy).unwrap();

    // The first life: a new log (its operator's word), cosigned by W1..Wk
    // alone while the others are down.
    let first = tempfile::tempdir().unwrap();
    let server = start(
        first.path(),
        &store.env("one:", &policy_file),
        &["--new-log"],
    );
    for witness in &mut witnesses[k..] {
        witness.stop();
    }
    for i in 0..3 {
        append(&server.base, i).await;
    }
    let (status, round) = post(&server.base, "/log/cosign", None).await;
    assert_eq!(
        (status, &round["quorumMet"]),
        (200, &Value::Bool(true)),
        "{round}"
    );
    for (i, witness) in witnesses.iter().enumerate() {
        assert_eq!(witness.latest().map(|l| l.size), (i < k).then_some(3));
    }
    support::stop(server);

    // The store and the memories lost; the witnesses that cosigned down,
    // the others up.
    for witness in &mut witnesses[..k] {
        witness.stop();
    }
    for witness in &mut witnesses[k..] {
        witness.restart(false).await;
    }
    let second = tempfile::tempdir().unwrap();
    let forked = start(second.path(), &store.env("two:", &policy_file), &[]);
    for i in 10..13 {
        append(&forked.base, i).await;
    }
    let (status, _) = post(&forked.base, "/log/cosign", None).await;
    assert_eq!(status, 500, "the other history is not signed");
    assert_eq!(status_of(&forked.base, "/log/checkpoint?head=1").await, 500);
    assert!(forked.logged("could on their own hold a larger or other tree"));
    let waited_for = names[..k].join(", ");
    assert!(
        forked.logged(&format!("({waited_for})")),
        "it names the witnesses it waits for: {waited_for}"
    );
    for witness in &witnesses[k..] {
        assert_eq!(
            witness.latest().map_or(0, |l| l.size),
            0,
            "no witness saw the fork (the empty tree, which every history shares, is how the log asks what a witness holds)"
        );
    }
    assert_eq!(
        status_of(&forked.base, "/api/freedom-fund?view=ledger").await,
        200
    );

    // The witnesses that cosigned come back: what they show stops it.
    for witness in &mut witnesses[..k] {
        witness.restart(false).await;
    }
    let (status, _) = post(&forked.base, "/log/cosign", None).await;
    assert_eq!(status, 500);
    assert!(forked.logged("holds a checkpoint of 3 records signed by this log's key"));
    for witness in &witnesses[k..] {
        assert_eq!(
            witness.latest().map_or(0, |l| l.size),
            0,
            "no witness saw the fork (the empty tree, which every history shares, is how the log asks what a witness holds)"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_of_two_on_the_embedded_store() {
    a_minority_never_settles_a_log_that_lost_its_memory(Store::Embedded, 2, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_of_four_on_the_embedded_store() {
    a_minority_never_settles_a_log_that_lost_its_memory(Store::Embedded, 4, 2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_of_two_and_two_of_four_on_the_kv_store() {
    for (n, k) in [(2, 1), (4, 2)] {
        let redis = RedisServer::start().unwrap();
        let bridge = UpstashBridge::start(&redis.url(), "kv-token")
            .await
            .unwrap();
        a_minority_never_settles_a_log_that_lost_its_memory(Store::Kv(bridge), n, k).await;
    }
}

/// A witness whose clock is hours off still counts for the served
/// checkpoint's quorum (its signature is valid), never for when the
/// records were in the log: the round names it with `clockSkewSeconds`,
/// and the records wait for a round whose cosignatures are dated within
/// it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skewed_witness_counts_for_the_quorum_not_for_time() {
    let vkey = log_key().verifier().to_text();
    let witness = SpecWitness::start("w1.example", [51; 32], &vkey).await;
    let files = tempfile::tempdir().unwrap();
    let policy_file = files.path().join("policy.txt");
    std::fs::write(
        &policy_file,
        format!(
            "log {vkey}\nwitness W1 {} {}\nquorum W1\n",
            witness.vkey(),
            witness.url()
        ),
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let server = start(
        home.path(),
        &Store::Embedded.env("", &policy_file),
        &["--new-log"],
    );
    witness.set_clock_offset(-3 * 3_600);
    append(&server.base, 1).await;
    let (status, round) = post(&server.base, "/log/cosign", None).await;
    assert_eq!(status, 200, "{round}");
    assert_eq!(round["quorumMet"], true, "the quorum is met: {round}");
    let skew = round["witnesses"][0]["clockSkewSeconds"].as_i64().unwrap();
    assert!((-10_860..=-10_740).contains(&skew), "{round}");
    assert!(server.logged("dated outside the round"));
    assert_eq!(status_of(&server.base, "/log/checkpoint").await, 200);
    let ledger = support::ledger(&server.base).await;
    assert_eq!(
        ledger["entries"][0]["witnessed"],
        Value::Null,
        "no time from a clock three hours slow: {ledger}"
    );

    witness.set_clock_offset(0);
    append(&server.base, 2).await;
    let (_, round) = post(&server.base, "/log/cosign", None).await;
    assert_eq!(
        round["witnesses"][0]["clockSkewSeconds"],
        Value::Null,
        "{round}"
    );
    let ledger = support::ledger(&server.base).await;
    let now = chrono::Utc::now().timestamp();
    for entry in ledger["entries"].as_array().unwrap() {
        let at = entry["witnessed"]["at"].as_str().unwrap();
        let at = chrono::DateTime::parse_from_rfc3339(at)
            .unwrap()
            .timestamp();
        assert!((now - 120..=now + 60).contains(&at), "{entry}");
    }
}
