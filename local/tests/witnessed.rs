//! The log witnessed through freedom-local: three witnesses (two
//! `freedom-witness`, W2 with an ML-DSA-44 key, and one written from the
//! specification alone in the test kit) under a 2-of-3 policy, each able
//! to go down and come back.

mod support;

use freedom_shared::tlog::checkpoint::Checkpoint;
use freedom_shared::tlog::cosignature::{Algorithm, CosignerKey};
use freedom_shared::tlog::note::SigningKey;
use freedom_shared::tlog::policy::Policy;
use freedom_testkit::spec_witness::SpecWitness;
use freedom_testkit::stoppable::Stoppable;
use freedom_verify::monitor::Monitor;
use freedom_verify::{Failure, Service, verify_log, verify_proof_file};
use freedom_witness::{TrustedLogs, Witness, WitnessState};
use serde_json::Value;
use std::path::Path;
use support::{TOKEN, record};

const ORIGIN: &str = "witnessed.example/log";

fn log_key() -> SigningKey {
    SigningKey::from_seed(ORIGIN, [21; 32]).unwrap()
}

/// A `freedom-witness` in process, its state in `dir`: W2's key is
/// ML-DSA-44, the others' Ed25519.
fn freedom_witness(seed: u8, dir: &Path) -> (axum::Router, String) {
    let algorithm = if seed == 2 {
        Algorithm::MlDsa44
    } else {
        Algorithm::Ed25519
    };
    let key =
        CosignerKey::from_seed_of(algorithm, &format!("w{seed}.example"), [seed; 32]).unwrap();
    let vkey = key.witness_key().to_text();
    let logs = TrustedLogs::parse(&format!("log {}\n", log_key().verifier().to_text())).unwrap();
    let state = WitnessState::open(&dir.join("witness.sqlite3")).unwrap();
    (freedom_witness::app(Witness::new(key, logs, state)), vkey)
}

async fn cosign(base: &str) -> Value {
    let answer = reqwest::Client::new()
        .post(format!("{base}/log/cosign"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    answer.json().await.unwrap()
}

async fn append(base: &str, i: usize) {
    let answer = reqwest::Client::new()
        .post(format!("{base}/api/freedom-fund"))
        .bearer_auth(TOKEN)
        .json(&record(i))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
}

/// The served checkpoint's size and its signature lines.
async fn served(base: &str, query: &str) -> (u16, Option<(u64, Vec<String>)>) {
    let answer = reqwest::get(format!("{base}/log/checkpoint{query}"))
        .await
        .unwrap();
    let status = answer.status().as_u16();
    if status != 200 {
        return (status, None);
    }
    let note = answer.text().await.unwrap();
    let checkpoint = Checkpoint::open(&note, &log_key().verifier()).unwrap();
    let lines = note[note.find("\n\n").unwrap() + 2..]
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap().to_owned())
        .collect();
    (status, Some((checkpoint.size, lines)))
}

fn outcomes(round: &Value) -> Vec<String> {
    round["witnesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["outcome"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_of_three_policy_through_freedom_local() {
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    let (app1, key1) = freedom_witness(1, dirs[1].path());
    let (app2, key2) = freedom_witness(2, dirs[2].path());
    let mut w1 = Stoppable::start(app1);
    let w2 = Stoppable::start(app2);
    let mut w3 = SpecWitness::start("w3.example", [3; 32], &log_key().verifier().to_text()).await;
    let policy = format!(
        "log {}\nwitness W1 {key1} {}\nwitness W2 {key2} {}\nwitness W3 {} {}\ngroup G 2 W1 W2 W3\nquorum G\n",
        log_key().verifier().to_text(),
        w1.url(),
        w2.url(),
        w3.vkey(),
        w3.url()
    );
    let private = log_key().to_private_text();
    // The policy from a file (--policy-file, as FF_LOG_POLICY_FILE).
    let policy_dir = tempfile::tempdir().unwrap();
    let policy_file = policy_dir.path().join("policy.txt");
    std::fs::write(&policy_file, &policy).unwrap();
    let env = [("FF_LOG_SIGNING_KEY", private.as_str())];
    let args = [
        "--cosign-interval-secs",
        "3600",
        "--policy-file",
        policy_file.to_str().unwrap(),
    ];
    let (server, _) = support::start_with_args(dirs[0].path(), &env, &args);
    let base = server.base.clone();

    // Before any round: 503 not_witnessed, the head still available.
    let before = reqwest::get(format!("{base}/log/checkpoint"))
        .await
        .unwrap();
    assert_eq!(before.status(), 503);
    assert_eq!(before.headers()["retry-after"], "60");
    assert_eq!(served(&base, "?head=1").await.0, 200);
    // Refused inputs: a head other than 1, an unknown parameter, a round
    // without the write token.
    for query in ["?head=2", "?head=1&x=1", "?size=3"] {
        let refused = reqwest::get(format!("{base}/log/checkpoint{query}"))
            .await
            .unwrap();
        assert_eq!(refused.status(), 400, "{query}");
    }
    let anonymous = reqwest::Client::new()
        .post(format!("{base}/log/cosign"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(
        served(&base, "").await.0 == 503,
        "a refused round ran nothing"
    );
    let policy_served = reqwest::get(format!("{base}/log/policy")).await.unwrap();
    assert_eq!(policy_served.text().await.unwrap(), policy);

    // One round after an append reaches the quorum: every witness cosigns.
    append(&base, 1).await;
    let page = reqwest::get(format!("{base}/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("No checkpoint has met the policy"));
    let page_times_before = page.matches("<time datetime=").count();
    let round = cosign(&base).await;
    assert_eq!(round["quorumMet"], true, "{round}");
    assert_eq!(outcomes(&round), ["cosigned", "cosigned", "cosigned"]);
    let (_, witnessed) = served(&base, "").await;
    let (size, lines) = witnessed.unwrap();
    assert_eq!(size, 1);
    assert_eq!(
        lines,
        [ORIGIN, "w1.example", "w2.example", "w3.example"],
        "the log's line first"
    );
    let verified = verify(&base, &policy).await.unwrap();
    assert!(
        verified.contains("witnessed by W1, W2, W3 (quorum met)"),
        "{verified}"
    );
    // A monitor with the policy (W2's cosignatures are ML-DSA-44): all
    // holds, and each witness's monitoring endpoint agrees (gossip).
    let monitor_state = tempfile::tempdir().unwrap();
    let monitor = Monitor {
        service: Service::new(&base).unwrap(),
        key: log_key().verifier(),
        policy: Some((Policy::parse(&policy).unwrap(), policy.clone())),
        state: monitor_state.path().to_owned(),
        feed: None,
    };
    let first = monitor.pass().await.unwrap();
    assert!(
        first.alarms.is_empty() && first.unreachable.is_none(),
        "{first:?}"
    );
    assert_eq!((first.size, first.verified), (1, 1));
    // The page names the witnesses, their keys and when each cosigned.
    let page = reqwest::get(format!("{base}/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("The served checkpoint (size 1) is cosigned by 3 of 3 witnesses"),
        "the page shows the cosignatures"
    );
    for key in [&key1, &key2, &w3.vkey()] {
        assert!(page.contains(key.as_str()), "the page lists {key}");
    }
    assert_eq!(
        page.matches("<time datetime=").count() - page_times_before,
        3
    );
    let again = cosign(&base).await;
    assert_eq!(
        again["asked"], false,
        "the head did not move: no witness asked"
    );
    assert_eq!(outcomes(&again), ["held", "held", "held"]);

    // One witness down: the quorum still holds.
    w3.stop();
    append(&base, 2).await;
    let round = cosign(&base).await;
    assert_eq!(round["quorumMet"], true, "{round}");
    assert_eq!(outcomes(&round), ["cosigned", "cosigned", "skipped"]);
    assert_eq!(served(&base, "").await.1.unwrap().0, 2);
    // The monitor's next pass reads the new entry only.
    let next = monitor.pass().await.unwrap();
    assert!(next.alarms.is_empty(), "{next:?}");
    assert_eq!((next.size, next.verified), (2, 1));

    // Two down: the previous witnessed checkpoint is served; the head with
    // ?head=1; proofs default to the witnessed tree.
    w1.stop();
    append(&base, 3).await;
    let round = cosign(&base).await;
    assert_eq!(round["quorumMet"], false, "{round}");
    assert_eq!(round["witnessedSize"], 2);
    assert_eq!(served(&base, "").await.1.unwrap().0, 2);
    assert_eq!(served(&base, "?head=1").await.1.unwrap().0, 3);
    let proof: Value = reqwest::get(format!("{base}/api/freedom-fund?view=proof&seq=1"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(proof["treeSize"], 2);
    assert!(
        proof["checkpoint"]
            .as_str()
            .unwrap()
            .contains("\u{2014} w2.example ")
    );
    // Offline, the .tlog-proof carries the witnessed checkpoint: 2 of 3
    // passes; a policy asking all three names the group short.
    let tlog_proof = reqwest::get(format!(
        "{base}/api/freedom-fund?view=proof&seq=1&format=tlog-proof"
    ))
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    let entry = serde_json::to_vec(&record(1)).unwrap();
    let parsed = Policy::parse(&policy).unwrap();
    let offline =
        verify_proof_file(&tlog_proof, &log_key().verifier(), &entry, Some(&parsed)).unwrap();
    assert!(
        offline.0.contains("witnessed by W1, W2 (quorum met)"),
        "{}",
        offline.0
    );
    let all_three = Policy::parse(&policy.replace("group G 2 ", "group G all ")).unwrap();
    match verify_proof_file(&tlog_proof, &log_key().verifier(), &entry, Some(&all_three)) {
        Err(Failure::Discrepancy(line)) => {
            assert!(
                line.contains("verified by W1, W2; short: G (2 of 3 needed)"),
                "{line}"
            )
        }
        other => panic!("a checkpoint short of the quorum must fail: {other:?}"),
    }
    let online = verify(&base, &policy.replace("group G 2 ", "group G all ")).await;
    assert!(matches!(online, Err(Failure::Discrepancy(_))), "{online:?}");

    // A witness back with empty state is brought up by the 409 size hint.
    w3.restart(true).await;
    let (app1, _) = freedom_witness(1, dirs[1].path());
    w1.restart(app1).await;
    let round = cosign(&base).await;
    assert_eq!(round["quorumMet"], true, "{round}");
    // W2 cosigned this head last round, but short of the quorum nothing was
    // kept: it is asked again (same size, same root: cosigned again).
    assert_eq!(outcomes(&round), ["cosigned", "cosigned", "cosigned"]);
    assert_eq!(w3.latest().unwrap().size, 3);
    assert_eq!(served(&base, "").await.1.unwrap().0, 3);

    // A fork under the same key (another data dir, no memory of what the
    // key signed): before signing it asks the witnesses what they hold of
    // the log, finds a tree its ledger does not extend, and signs nothing,
    // so no witness ever sees the fork; reads and appends go on.
    let fork_dir = tempfile::tempdir().unwrap();
    let (fork, _) = support::start_with_args(fork_dir.path(), &env, &args);
    for i in 10..14 {
        append(&fork.base, i).await;
    }
    let refused = reqwest::Client::new()
        .post(format!("{}/log/cosign", fork.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 500, "the fork signs nothing");
    assert!(fork.logged("refuses to sign"));
    // Whichever witness answers first shows it: each holds the tree of 3.
    assert!(fork.logged("holds a checkpoint of 3 records signed by this log's key"));
    for query in ["?head=1", ""] {
        assert_ne!(served(&fork.base, query).await.0, 200, "{query}");
    }
    assert_eq!(
        w3.latest().unwrap().size,
        3,
        "no witness was shown the fork"
    );
    assert_eq!(
        served(&base, "").await.1.unwrap().0,
        3,
        "the log itself is unaffected"
    );
    drop(w2);
}

/// freedom-verify's online check of `base` under `policy`.
async fn verify(base: &str, policy: &str) -> Result<String, Failure> {
    let service = Service::new(base)?;
    let policy = Policy::parse(policy).unwrap();
    verify_log(&service, &log_key().verifier(), None, Some(&policy))
        .await
        .map(|v| v.0)
}

/// A snapshot of its own series valued `ago` before now.
fn valued_ago(id: &str, ago: chrono::Duration) -> Value {
    let as_of = (chrono::Utc::now() - ago).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    serde_json::json!({
        "id": id, "type": "snapshot", "visibility": "public", "mode": "paper",
        "strategyId": id, "strategyName": "Witnessed time",
        "asOf": as_of, "source": {"name": "test", "url": "https://example.com/t"},
        "currency": "USD", "equity": 1000, "flowSincePrevious": 0
    })
}

/// Each entry's `witnessed` and `lagSeconds` in the ledger view, by id.
async fn witnessed_entries(base: &str) -> Vec<(String, Value, Option<i64>)> {
    let ledger = support::ledger(base).await;
    ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["record"]["id"].as_str().unwrap().to_owned(),
                e["witnessed"].clone(),
                e["lagSeconds"].as_i64(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_record_carries_its_witnessed_time_and_a_backfilled_one_is_late() {
    let dirs: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    // Three freedom-witness, each its own state.
    let (app1, key1) = freedom_witness(1, dirs[1].path());
    let (app2, key2) = freedom_witness(2, dirs[2].path());
    let (app3, key3) = freedom_witness(3, dirs[3].path());
    let w1 = Stoppable::start(app1);
    let w2 = Stoppable::start(app2);
    let w3 = Stoppable::start(app3);
    let policy_text = format!(
        "log {}\nwitness W1 {key1} {}\nwitness W2 {key2} {}\nwitness W3 {key3} {}\ngroup G 2 W1 W2 W3\nquorum G\n",
        log_key().verifier().to_text(),
        w1.url(),
        w2.url(),
        w3.url()
    );
    let policy = Policy::parse(&policy_text).unwrap();
    let private = log_key().to_private_text();
    let env = [
        ("FF_LOG_SIGNING_KEY", private.as_str()),
        ("FF_LOG_POLICY", policy_text.as_str()),
    ];
    let args = ["--cosign-interval-secs", "3600"];
    let (server, _) = support::start_with_args(dirs[0].path(), &env, &args);
    let base = server.base.clone();

    let none = reqwest::get(format!("{base}/log/witnessed/1"))
        .await
        .unwrap();
    assert_eq!(none.status(), 404, "nothing is witnessed before a round");
    let client = reqwest::Client::new();
    for (id, ago) in [
        ("on-time", chrono::Duration::seconds(60)),
        ("backfilled", chrono::Duration::days(3)),
    ] {
        let answer = client
            .post(format!("{base}/api/freedom-fund"))
            .bearer_auth(TOKEN)
            .json(&valued_ago(id, ago))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 201, "a late record is accepted");
    }
    let pending = witnessed_entries(&base).await;
    assert!(
        pending
            .iter()
            .all(|(_, w, lag)| w.is_null() && lag.is_none()),
        "pending before the round: {pending:?}"
    );
    let round = cosign(&base).await;
    assert_eq!(round["quorumMet"], true, "{round}");

    // The witnessed time, computed from the cosignature timestamps alone.
    let note = reqwest::get(format!("{base}/log/witnessed/1"))
        .await
        .unwrap();
    assert_eq!(note.status(), 200);
    assert!(
        note.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    let note = note.text().await.unwrap();
    let checkpoint = Checkpoint::open(&note, &log_key().verifier()).unwrap();
    assert_eq!(checkpoint.size, 2);
    let again = reqwest::get(format!("{base}/log/witnessed/2"))
        .await
        .unwrap();
    assert_eq!(
        again.text().await.unwrap(),
        note,
        "the earliest of size ≥ 2"
    );
    // Refused: sizes beyond what is witnessed, not a canonical decimal, or
    // past u64 are no such checkpoint; a query is a bad request. The
    // history is unchanged after every one.
    for (path, status) in [
        ("/log/witnessed/3", 404),
        ("/log/witnessed/0", 404),
        ("/log/witnessed/01", 404),
        ("/log/witnessed/-1", 404),
        ("/log/witnessed/abc", 404),
        ("/log/witnessed/99999999999999999999999", 404),
        ("/log/witnessed/1?x=1", 400),
    ] {
        let refused = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(refused.status(), status, "{path}");
    }
    let still = reqwest::get(format!("{base}/log/witnessed/1"))
        .await
        .unwrap();
    assert_eq!(still.text().await.unwrap(), note);
    let split = note.find("\n\n").unwrap() + 1;
    let (text, lines) = note.split_at(split);
    let mut times = Vec::new();
    for (index, witness) in policy.witnesses().iter().enumerate() {
        for line in lines.lines().skip(2) {
            let mut parts = line.trim_start_matches('\u{2014}').trim().splitn(2, ' ');
            let (name, encoded) = (parts.next().unwrap(), parts.next().unwrap());
            if let Ok(Some(cosignature)) = witness.key.verify_line(text, name, encoded) {
                times.push((index, cosignature.time));
            }
        }
    }
    let quorum_time = policy
        .quorum_time(&times)
        .expect("a quorum of cosignatures");
    let expected_at = chrono::DateTime::from_timestamp(quorum_time as i64, 0)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let witnessed = witnessed_entries(&base).await;
    for (id, w, lag) in &witnessed {
        assert_eq!(w["at"], expected_at.as_str(), "{id}");
        assert_eq!(w["size"], 2, "{id}");
        let lag = lag.expect("a witnessed snapshot has a lag");
        match id.as_str() {
            "on-time" => assert!((0..600).contains(&lag), "minutes: {lag}"),
            _ => assert!(
                (3 * 86_400..3 * 86_400 + 600).contains(&lag),
                "about three days: {lag}"
            ),
        }
    }
    let dashboard: Value = reqwest::get(format!("{base}/api/freedom-fund?period=all"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(dashboard["witnessing"]["state"], "witnessed");
    assert_eq!(dashboard["witnessing"]["since"], expected_at.as_str());
    for strategy in dashboard["strategies"].as_array().unwrap() {
        let recording = &strategy["recording"];
        let lag = witnessed
            .iter()
            .find(|(id, _, _)| strategy["strategyId"] == id.as_str())
            .and_then(|(_, _, lag)| *lag)
            .unwrap();
        assert_eq!(recording["maxLagSeconds"], lag, "{recording}");
        if strategy["strategyId"] == "on-time" {
            assert_eq!(
                (recording["onTime"].as_u64(), recording["late"].as_u64()),
                (Some(1), Some(0))
            );
            assert!(recording["onTimeSince"].is_string());
            assert_eq!(strategy["sinceOnTime"]["start"], recording["onTimeSince"]);
        } else {
            assert_eq!(
                (recording["onTime"].as_u64(), recording["late"].as_u64()),
                (Some(0), Some(1))
            );
            assert!(recording["onTimeSince"].is_null());
        }
    }
    let page = reqwest::get(format!("{base}/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("Recorded as it happened since"),
        "the on-time line"
    );
    assert!(page.contains("logged late, up to 3 days"), "the late line");
    assert!(page.contains("late: 3 days"), "the ledger table marks it");
    assert!(
        page.contains("id=\"late-note\""),
        "the chart says why a stretch is lighter"
    );
    assert!(page.contains("class=\"curve late "), "and draws it lighter");

    // The proof against the witnessed checkpoint verifies alone.
    let file = reqwest::get(format!(
        "{base}/api/freedom-fund?view=proof&seq=2&format=tlog-proof&at=witnessed"
    ))
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    let proof = freedom_shared::tlog::proof::TlogProof::parse(&file).unwrap();
    assert_eq!(proof.checkpoint, note, "the earliest witnessed checkpoint");
    let backfilled = valued_ago_of(&witnessed_record(&base, "backfilled").await);
    let line = verify_proof_file(&file, &log_key().verifier(), &backfilled, Some(&policy))
        .unwrap()
        .0;
    assert!(
        line.contains(&format!(
            "in the log by {expected_at}, 3 days after its valuation, on the word of"
        )),
        "{line}"
    );
    let service = Service::new(&base).unwrap();
    let timeline = freedom_verify::verify_timeline(&service, &log_key().verifier(), &policy)
        .await
        .unwrap()
        .0;
    assert!(
        timeline.contains("2 series' recording recomputed"),
        "{timeline}"
    );
    let json: Value = reqwest::get(format!(
        "{base}/api/freedom-fund?view=proof&seq=1&at=witnessed&size=2"
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(json["checkpoint"], note.as_str(), "JSON, from size 2 on");
    for (bad, status) in [("&at=now", 400), ("&at=witnessed&size=3", 404)] {
        let refused = reqwest::get(format!(
            "{base}/api/freedom-fund?view=proof&seq=2&format=tlog-proof{bad}"
        ))
        .await
        .unwrap();
        assert_eq!(refused.status(), status, "{bad}");
    }

    // A kill -9 and a restart: every witnessed time stays as given.
    drop(server);
    let (server, _) = support::start_with_args(dirs[0].path(), &env, &args);
    assert_eq!(witnessed_entries(&server.base).await, witnessed);
    drop((w1, w2, w3));
}

/// The record `id` as the ledger view holds it.
async fn witnessed_record(base: &str, id: &str) -> Value {
    let ledger = support::ledger(base).await;
    ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["record"]["id"] == id)
        .unwrap()["record"]
        .clone()
}

/// A record's JSON bytes, as a reader saves them for `freedom-verify proof`.
fn valued_ago_of(record: &Value) -> Vec<u8> {
    serde_json::to_vec(record).unwrap()
}
