//! The `fund` binary driven through the Lambda Runtime API (a fake one in
//! the test): it polls for an invocation, answers with API Gateway's
//! response object, and without a KV store answers 503.

use freedom_testkit::lambda_runtime_api::FakeRuntimeApi;
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::UpstashBridge;
use serde_json::Value;
use std::process::{Child, Command, Stdio};

fn event(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../events")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn spawn(runtime: &FakeRuntimeApi, extra: &[(&str, &str)]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fund"));
    for (url, token) in freedom_shared::config::KV_PAIRS {
        command.env_remove(url).env_remove(token);
    }
    command
        .envs(runtime.env("fund"))
        .envs(extra.iter().copied())
        .env("AWS_LAMBDA_LOG_LEVEL", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the fund binary runs")
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn without_kv_the_binary_answers_every_invocation_503() {
    let mut runtime = FakeRuntimeApi::start().await.unwrap();
    let _fund = Killed(spawn(&runtime, &[]));
    let id = runtime.invoke(event("fund-get-dashboard.json"));
    let answer = runtime.answer().await;
    assert_eq!(
        (answer.request_id.as_str(), answer.kind),
        (id.as_str(), "response")
    );
    assert_eq!(answer.body["statusCode"], 503, "{}", answer.body);
    let body: Value = serde_json::from_str(answer.body["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "storage_unavailable");
}

#[tokio::test]
async fn with_kv_the_binary_appends_and_reads_through_the_runtime_api() {
    let redis = RedisServer::start().unwrap();
    let bridge = UpstashBridge::start(&redis.url(), "kv-token")
        .await
        .unwrap();
    let mut runtime = FakeRuntimeApi::start().await.unwrap();
    let _fund = Killed(spawn(
        &runtime,
        &[
            ("FF_KV_REST_API_URL", bridge.url()),
            ("FF_KV_REST_API_TOKEN", "kv-token"),
            ("FF_AGENT_WRITE_TOKEN", "local-dev-write-token"),
        ],
    ));
    runtime.invoke(event("fund-post-snapshot.json"));
    let created = runtime.answer().await;
    assert_eq!(created.body["statusCode"], 201, "{}", created.body);
    runtime.invoke(event("fund-get-ledger.json"));
    let ledger = runtime.answer().await;
    assert_eq!(ledger.body["statusCode"], 200);
    let body: Value = serde_json::from_str(ledger.body["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["head"]["size"], 1);
    runtime.invoke(event("fund-get-page.json"));
    let page = runtime.answer().await;
    assert_eq!(page.body["statusCode"], 200);
    assert!(
        page.body["headers"]["content-type"]
            .as_str()
            .unwrap()
            .starts_with("text/html")
    );
    // The same page asked for compressed: brotli, base64-encoded for API
    // Gateway, decoding to the same bytes.
    runtime.invoke(event("fund-get-page-compressed.json"));
    let compressed = runtime.answer().await;
    assert_eq!(compressed.body["statusCode"], 200);
    assert_eq!(
        compressed.body["isBase64Encoded"], true,
        "{}",
        compressed.body
    );
    assert_eq!(compressed.body["headers"]["content-encoding"], "br");
    assert_eq!(compressed.body["headers"]["vary"], "accept-encoding");
    let bytes = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        compressed.body["body"].as_str().unwrap(),
    )
    .unwrap();
    let mut html = String::new();
    std::io::Read::read_to_string(&mut brotli::Decompressor::new(&bytes[..], 4096), &mut html)
        .unwrap();
    assert_eq!(html, page.body["body"].as_str().unwrap());
}

#[test]
fn outside_lambda_the_binary_says_to_run_freedom_local() {
    let (succeeded, stderr) =
        freedom_testkit::lambda_runtime_api::start_outside_lambda(env!("CARGO_BIN_EXE_fund"));
    assert!(!succeeded);
    assert!(
        stderr.starts_with("fund: AWS_LAMBDA_RUNTIME_API is not set")
            && stderr.contains("freedom-local"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one sentence: {stderr}");
}

/// A KV store behind the bridge, a witness written from the specification,
/// and the fund's environment: the store, a write token, the log's key
/// (from `key_seed`) and a policy naming that witness alone.
struct WitnessedFund {
    _redis: RedisServer,
    bridge: UpstashBridge,
    witness: freedom_testkit::spec_witness::SpecWitness,
    env: Vec<(&'static str, String)>,
}

impl WitnessedFund {
    async fn start(key_seed: u8, witness_seed: u8) -> WitnessedFund {
        use freedom_shared::tlog::note::SigningKey;
        let redis = RedisServer::start().unwrap();
        let bridge = UpstashBridge::start(&redis.url(), "kv-token")
            .await
            .unwrap();
        let log_key = SigningKey::from_seed("fund.example.com/log", [key_seed; 32]).unwrap();
        let witness = freedom_testkit::spec_witness::SpecWitness::start(
            "w1.example",
            [witness_seed; 32],
            &log_key.verifier().to_text(),
        )
        .await;
        let env = vec![
            ("FF_KV_REST_API_URL", bridge.url().to_owned()),
            ("FF_KV_REST_API_TOKEN", "kv-token".to_owned()),
            ("FF_AGENT_WRITE_TOKEN", "local-dev-write-token".to_owned()),
            ("FF_LOG_SIGNING_KEY", log_key.to_private_text()),
            (
                "FF_LOG_POLICY",
                format!(
                    "witness W1 {} {}\nquorum W1\n",
                    witness.vkey(),
                    witness.url()
                ),
            ),
        ];
        WitnessedFund {
            _redis: redis,
            bridge,
            witness,
            env,
        }
    }

    /// The environment as `spawn` takes it.
    fn env(&self) -> Vec<(&str, &str)> {
        self.env.iter().map(|(k, v)| (*k, v.as_str())).collect()
    }
}

/// An answer's HTTP status (0 for an error or a scheduled round's answer).
fn status(answer: &freedom_testkit::lambda_runtime_api::Answer) -> u64 {
    answer.body["statusCode"].as_u64().unwrap_or_default()
}

/// The once-a-minute EventBridge rule (`events/fund-scheduled-cosign.json`)
/// runs a cosigning round: after an append, the witness cosigns and the
/// quorum is met; the next minute, with the head unmoved, no witness is
/// asked; without a policy the event does nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduled_event_runs_a_cosigning_round() {
    let fund = WitnessedFund::start(4, 5).await;
    let (bridge, witness) = (&fund.bridge, &fund.witness);
    let mut runtime = FakeRuntimeApi::start().await.unwrap();
    let _fund = Killed(spawn(&runtime, &fund.env()));
    runtime.invoke(event("fund-post-snapshot.json"));
    assert_eq!(runtime.answer().await.body["statusCode"], 201);
    runtime.invoke(event("fund-scheduled-cosign.json"));
    let round = runtime.answer().await;
    assert_eq!(round.kind, "response", "{}", round.body);
    assert_eq!(round.body["quorumMet"], true, "{}", round.body);
    assert_eq!(round.body["witnessedSize"], 1);
    assert_eq!(witness.latest().unwrap().size, 1);
    runtime.invoke(event("fund-scheduled-cosign.json"));
    let idle = runtime.answer().await;
    assert_eq!(idle.body["asked"], false, "{}", idle.body);

    let mut plain = FakeRuntimeApi::start().await.unwrap();
    let _other = Killed(spawn(
        &plain,
        &[
            ("FF_KV_REST_API_URL", bridge.url()),
            ("FF_KV_REST_API_TOKEN", "kv-token"),
            ("FF_KV_PREFIX", "other:"),
        ],
    ));
    plain.invoke(event("fund-scheduled-cosign.json"));
    assert_eq!(plain.answer().await.body["cosign"], "no witness policy");
}

/// A new instance (a cold start, a new deployment) runs one cosigning
/// round as it starts: with the witness up, `/log/checkpoint` is witnessed
/// at once, not after the next minute's rule (it answered `503
/// not_witnessed` until then when no round had run yet).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_instance_cosigns_as_it_starts() {
    let fund = WitnessedFund::start(6, 7).await;
    {
        let mut runtime = FakeRuntimeApi::start().await.unwrap();
        let _first = Killed(spawn(&runtime, &fund.env()));
        runtime.invoke(event("fund-post-snapshot.json"));
        assert_eq!(runtime.answer().await.body["statusCode"], 201);
    }
    let mut runtime = FakeRuntimeApi::start().await.unwrap();
    let _second = Killed(spawn(&runtime, &fund.env()));
    runtime.invoke(get_path("/log/checkpoint", ""));
    let answer = runtime.answer().await;
    assert_eq!(status(&answer), 200, "{}", answer.body);
    let note = answer.body["body"].as_str().unwrap();
    assert!(
        note.contains("\n— w1.example "),
        "cosigned by the witness: {note}"
    );
    assert_eq!(
        fund.witness.latest().unwrap().size,
        1,
        "the tree of the one snapshot"
    );
}

/// `fund-post-decision.json` with the record's id `id`.
fn post_decision(id: &str) -> Value {
    let mut event = event("fund-post-decision.json");
    let mut record: Value = serde_json::from_str(event["body"].as_str().unwrap()).unwrap();
    record["id"] = id.into();
    event["body"] = record.to_string().into();
    event
}

/// `fund-get-ledger.json` asking for `path` instead.
fn get_path(path: &str, query: &str) -> Value {
    let mut event = event("fund-get-ledger.json");
    event["rawPath"] = path.into();
    event["routeKey"] = format!("GET {path}").into();
    event["requestContext"]["http"]["path"] = path.into();
    event["rawQueryString"] = query.into();
    event["queryStringParameters"] = serde_json::Map::from_iter(
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(k, v)| (k.to_owned(), Value::from(v))),
    )
    .into();
    event
}

/// Finding 2 under the Lambda: its only memory is a KV key, restored with
/// the ledger when Redis is restored from a snapshot. A new instance asks
/// the witness what it holds before it signs, and refuses the other
/// history grown on the restored store: the checkpoint of the head, proofs
/// and the scheduled round answer refusals, appends and reads go on, and
/// no fork reaches the witness.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restored_from_a_snapshot_is_never_signed_past_what_the_witness_holds() {
    let fund = WitnessedFund::start(6, 7).await;
    let (bridge, witness, env) = (&fund.bridge, &fund.witness, fund.env());
    let mut runtime = FakeRuntimeApi::start().await.unwrap();
    let mut connection = bridge.redis();
    let snapshot = {
        let _first = Killed(spawn(&runtime, &env));
        for id in ["a1", "a2"] {
            runtime.invoke(post_decision(id));
            assert_eq!(status(&runtime.answer().await), 201);
        }
        runtime.invoke(event("fund-scheduled-cosign.json"));
        assert_eq!(runtime.answer().await.body["quorumMet"], true);
        let snapshot = freedom_testkit::upstash_bridge::dump_all(&mut connection).await;
        for id in ["a3", "a4"] {
            runtime.invoke(post_decision(id));
            assert_eq!(status(&runtime.answer().await), 201);
        }
        runtime.invoke(event("fund-scheduled-cosign.json"));
        assert_eq!(runtime.answer().await.body["quorumMet"], true);
        snapshot
    };
    assert_eq!(witness.latest().unwrap().size, 4);

    freedom_testkit::upstash_bridge::restore_all(&mut connection, &snapshot).await;
    let _second = Killed(spawn(&runtime, &env));
    for id in ["b3", "b4"] {
        runtime.invoke(post_decision(id));
        assert_eq!(status(&runtime.answer().await), 201, "appends go on");
    }
    for (path, query) in [
        ("/log/checkpoint", "head=1"),
        ("/api/freedom-fund", "view=proof&seq=1&size=4"),
    ] {
        runtime.invoke(get_path(path, query));
        let answer = runtime.answer().await;
        assert_eq!(status(&answer), 500, "{path}?{query}: {}", answer.body);
    }
    runtime.invoke(event("fund-scheduled-cosign.json"));
    assert_eq!(
        runtime.answer().await.kind,
        "error",
        "the round signs nothing"
    );
    runtime.invoke(event("fund-get-ledger.json"));
    assert_eq!(status(&runtime.answer().await), 200, "reads go on");
    assert_eq!(
        witness.latest().unwrap().size,
        4,
        "no fork reached the witness"
    );
}

/// Finding 1 under the Lambda: a key from the environment on a store with no
/// memory of what it signed (a new deployment, a flushed database) signs
/// nothing non-empty without a policy until `FF_LOG_NEW_LOG=true` says this
/// key signed nothing else; reads and appends go on meanwhile, and once the
/// memory holds a checkpoint the variable changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_deployment_without_witnesses_signs_once_told_it_is_a_new_log() {
    use freedom_shared::tlog::note::SigningKey;
    let redis = RedisServer::start().unwrap();
    let bridge = UpstashBridge::start(&redis.url(), "kv-token")
        .await
        .unwrap();
    let private = SigningKey::from_seed("fund.example.com/log", [8; 32])
        .unwrap()
        .to_private_text();
    let env = |new_log: &'static str| {
        vec![
            ("FF_KV_REST_API_URL", bridge.url().to_owned()),
            ("FF_KV_REST_API_TOKEN", "kv-token".to_owned()),
            ("FF_AGENT_WRITE_TOKEN", "local-dev-write-token".to_owned()),
            ("FF_LOG_SIGNING_KEY", private.clone()),
            ("FF_LOG_NEW_LOG", new_log.to_owned()),
        ]
    };
    let mut runtime = FakeRuntimeApi::start().await.unwrap();
    {
        let env = env("false");
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let _unsure = Killed(spawn(&runtime, &env));
        runtime.invoke(post_decision("first"));
        assert_eq!(status(&runtime.answer().await), 201);
        runtime.invoke(get_path("/log/checkpoint", "head=1"));
        assert_eq!(
            status(&runtime.answer().await),
            500,
            "not told: signs nothing"
        );
        runtime.invoke(event("fund-get-ledger.json"));
        assert_eq!(status(&runtime.answer().await), 200, "reads go on");
    }
    for new_log in ["true", "true", "false"] {
        let env = env(new_log);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let _instance = Killed(spawn(&runtime, &env));
        runtime.invoke(get_path("/log/checkpoint", "head=1"));
        let answer = runtime.answer().await;
        assert_eq!(
            status(&answer),
            200,
            "FF_LOG_NEW_LOG={new_log}: {}",
            answer.body
        );
    }
}

/// Settled only when no earlier quorum can hide, under the Lambda, whose
/// only memory is in the store: under `group G k W1..Wn`, W1..Wk alone
/// cosign the first deployment's tree; a second deployment on a new prefix
/// (the store and its memory lost) with W1..Wk down and the others (which
/// never saw the log) up signs nothing, since the silent could hide a
/// quorum, and no witness is shown the other history; once W1..Wk are
/// back, what they hold stops the log for good.
async fn a_minority_never_settles_a_lost_store_under_the_lambda(n: usize, k: usize) {
    use freedom_shared::tlog::note::SigningKey;
    use freedom_testkit::spec_witness::SpecWitness;
    let redis = RedisServer::start().unwrap();
    let bridge = UpstashBridge::start(&redis.url(), "kv-token")
        .await
        .unwrap();
    let key = SigningKey::from_seed("fund.example.com/log", [12; 32]).unwrap();
    let vkey = key.verifier().to_text();
    let mut witnesses = Vec::new();
    for i in 1..=n {
        witnesses
            .push(SpecWitness::start(&format!("w{i}.example"), [12 + i as u8; 32], &vkey).await);
    }
    let names: Vec<String> = (1..=n).map(|i| format!("W{i}")).collect();
    let mut policy = String::new();
    for (name, witness) in names.iter().zip(&witnesses) {
        policy.push_str(&format!(
            "witness {name} {} {}\n",
            witness.vkey(),
            witness.url()
        ));
    }
    policy.push_str(&format!("group G {k} {}\nquorum G\n", names.join(" ")));
    let env = |prefix: &str, new_log: &str| {
        vec![
            ("FF_KV_REST_API_URL", bridge.url().to_owned()),
            ("FF_KV_REST_API_TOKEN", "kv-token".to_owned()),
            ("FF_KV_PREFIX", prefix.to_owned()),
            ("FF_AGENT_WRITE_TOKEN", "local-dev-write-token".to_owned()),
            ("FF_LOG_SIGNING_KEY", key.to_private_text()),
            ("FF_LOG_POLICY", policy.clone()),
            ("FF_LOG_NEW_LOG", new_log.to_owned()),
        ]
    };
    let held = |witnesses: &[SpecWitness]| -> Vec<u64> {
        witnesses
            .iter()
            .map(|w| w.latest().map_or(0, |l| l.size))
            .collect()
    };
    let mut runtime = FakeRuntimeApi::start().await.unwrap();
    for witness in &mut witnesses[k..] {
        witness.stop();
    }
    {
        let env = env("one:", "true");
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let _first = Killed(spawn(&runtime, &env));
        for id in ["a1", "a2"] {
            runtime.invoke(post_decision(id));
            assert_eq!(status(&runtime.answer().await), 201);
        }
        runtime.invoke(event("fund-scheduled-cosign.json"));
        let round = runtime.answer().await;
        assert_eq!(round.body["quorumMet"], true, "{}", round.body);
    }
    assert!(held(&witnesses[..k]).iter().all(|size| *size == 2));

    for witness in &mut witnesses[..k] {
        witness.stop();
    }
    for witness in &mut witnesses[k..] {
        witness.restart(false).await;
    }
    let env = env("two:", "false");
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let _second = Killed(spawn(&runtime, &env));
    for id in ["b1", "b2"] {
        runtime.invoke(post_decision(id));
        assert_eq!(status(&runtime.answer().await), 201, "appends go on");
    }
    runtime.invoke(event("fund-scheduled-cosign.json"));
    assert_eq!(
        runtime.answer().await.kind,
        "error",
        "the round signs nothing"
    );
    runtime.invoke(get_path("/log/checkpoint", "head=1"));
    assert_eq!(status(&runtime.answer().await), 500);
    assert!(
        held(&witnesses[k..]).iter().all(|size| *size == 0),
        "the others were never shown the other history"
    );

    for witness in &mut witnesses[..k] {
        witness.restart(false).await;
    }
    runtime.invoke(event("fund-scheduled-cosign.json"));
    assert_eq!(
        runtime.answer().await.kind,
        "error",
        "what they hold stops it"
    );
    runtime.invoke(get_path("/log/checkpoint", "head=1"));
    assert_eq!(status(&runtime.answer().await), 500);
    assert!(held(&witnesses[k..]).iter().all(|size| *size == 0));
    assert!(held(&witnesses[..k]).iter().all(|size| *size == 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_one_of_two_a_minority_never_settles_a_lost_store() {
    a_minority_never_settles_a_lost_store_under_the_lambda(2, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_two_of_four_a_minority_never_settles_a_lost_store() {
    a_minority_never_settles_a_lost_store_under_the_lambda(4, 2).await;
}
