//! `freedom-verify monitor` against a fund service on a loopback port: a
//! healthy log passes and a second pass reads only the new entries; each
//! alarm is raised by the log that earns it (a rollback, a fork at one
//! size and a fork the log cannot prove, a checkpoint under another key,
//! entries that do not hash to the root, records that break the rules, a
//! checkpoint short of the quorum, a served checkpoint that stops following
//! the head, a log that stops answering), and every evidence file is
//! confirmed by an independent checker (`scripts/check-monitor-evidence.py`,
//! Python's `cryptography` and the RFCs, none of this project's code). An
//! alarm never advances the state, so a monitor that crashes after raising
//! it, or loses its alarms, raises it again.

mod support;

use freedom_shared::ports::Candidate;
use freedom_shared::ports::conformance::{candidate, decision, snapshot};
use freedom_shared::record::{RecordId, StrategyId};
use freedom_shared::tlog::cosignature::CosignerKey;
use freedom_shared::tlog::policy::Policy;
use freedom_verify::Service;
use freedom_verify::monitor::{AlarmKind, Monitor, Pass};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use support::*;

const T0: u64 = 1_800_000_000;

fn monitor(base: &str, state: &Path, policy: Option<(Policy, String)>) -> Monitor {
    Monitor {
        service: Service::new(base).unwrap(),
        key: key(1).verifier(),
        policy,
        state: state.to_owned(),
        feed: Some(state.join("alarms.atom")),
    }
}

async fn pass(base: &str, state: &Path, now: u64) -> Pass {
    monitor(base, state, None).pass_at(now).await.unwrap()
}

fn kinds(pass: &Pass) -> Vec<AlarmKind> {
    pass.alarms.iter().map(|(kind, _)| *kind).collect()
}

/// Runs the independent checker on `files`; every claim must hold.
fn confirmed(files: &[PathBuf]) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/check-monitor-evidence.py"
    );
    let output = std::process::Command::new("python3")
        .arg(script)
        .args(files)
        .output()
        .expect("python3 runs (scripts/test installs cryptography)");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert_eq!(text.matches("CONFIRMED").count(), files.len(), "{text}");
}

/// The independent checker refuses `file` with its members `a` and `b`
/// swapped (a claim the evidence does not support).
fn refused_swapped(file: &Path, a: &str, b: &str, dir: &Path) {
    let mut document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let first = document[a].take();
    document[a] = document[b].take();
    document[b] = first;
    let forged = dir.join("forged.json");
    std::fs::write(&forged, document.to_string()).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/check-monitor-evidence.py"
    );
    let output = std::process::Command::new("python3")
        .arg(script)
        .arg(&forged)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
}

fn files(pass: &Pass) -> Vec<PathBuf> {
    pass.alarms.iter().map(|(_, file)| file.clone()).collect()
}

#[tokio::test]
async fn a_healthy_log_passes_and_the_next_pass_reads_only_the_new_entries() {
    let state = tempfile::tempdir().unwrap();
    let log = serve(records("d", 300), key(1), None).await;
    let first = pass(&log.base, state.path(), T0).await;
    assert_eq!(
        (first.size, first.verified, first.alarms.len()),
        (300, 300, 0)
    );
    assert_eq!(first.unreachable, None);
    let again = pass(&log.base, state.path(), T0 + 60).await;
    assert_eq!((again.size, again.verified), (300, 0));
    let longer = serve(records("d", 310), key(1), None).await;
    let next = pass(&longer.base, state.path(), T0 + 120).await;
    assert_eq!((next.size, next.verified, next.alarms.len()), (310, 10, 0));
}

#[tokio::test]
async fn a_rollback_and_forks_are_raised_and_never_kept() {
    let state = tempfile::tempdir().unwrap();
    let log = serve(records("d", 310), key(1), None).await;
    pass(&log.base, state.path(), T0).await;
    // What the state trusts (the clock of the last answer aside).
    let trusted = || {
        let state: serde_json::Value =
            serde_json::from_slice(&std::fs::read(state.path().join("state.json")).unwrap())
                .unwrap();
        ["checkpoint", "size", "edge", "rulesFile"].map(|member| state[member].clone())
    };
    let kept = trusted();

    let shorter = serve(records("d", 300), key(1), None).await;
    let rollback = pass(&shorter.base, state.path(), T0 + 60).await;
    assert_eq!(kinds(&rollback), [AlarmKind::Rollback]);
    assert_eq!(rollback.size, 310, "the rolled-back tree is not kept");
    // Found again on the next pass, as the same evidence file; a monitor
    // that crashed before writing it, or lost it, writes it again.
    let again = pass(&shorter.base, state.path(), T0 + 120).await;
    assert_eq!(files(&again), files(&rollback));
    std::fs::remove_dir_all(state.path().join("alarms")).unwrap();
    let rewritten = pass(&shorter.base, state.path(), T0 + 150).await;
    assert_eq!(files(&rewritten), files(&rollback));
    assert!(files(&rollback)[0].exists());

    let other = serve(records("e", 310), key(1), None).await;
    let fork = pass(&other.base, state.path(), T0 + 180).await;
    assert_eq!(kinds(&fork), [AlarmKind::Fork]);
    let longer_other = serve(records("e", 320), key(1), None).await;
    let unproven = pass(&longer_other.base, state.path(), T0 + 240).await;
    assert_eq!(kinds(&unproven), [AlarmKind::Fork]);
    assert!(trusted() == kept, "no alarm's checkpoint was kept");
    confirmed(&[files(&rollback), files(&fork), files(&unproven)].concat());
    let scratch = tempfile::tempdir().unwrap();
    refused_swapped(&files(&rollback)[0], "kept", "served", scratch.path());
}

#[tokio::test]
async fn a_bad_signature_and_entries_that_do_not_hash_to_the_root_are_raised() {
    let state = tempfile::tempdir().unwrap();
    let stranger = serve(records("d", 10), key(2), None).await;
    let bad = pass(&stranger.base, state.path(), T0).await;
    assert_eq!(kinds(&bad), [AlarmKind::BadSignature]);

    let tampered = serve(
        records("d", 300),
        key(1),
        Some(Tamper {
            path_and_query_prefix: "/log/tile/entries/001",
            exact: false,
            change: Arc::new(|mut bytes: Vec<u8>| {
                bytes[30] ^= 1;
                bytes
            }),
        }),
    )
    .await;
    let mismatch = pass(&tampered.base, state.path(), T0 + 60).await;
    assert_eq!(kinds(&mismatch), [AlarmKind::DataMismatch]);
    assert_eq!(mismatch.size, 0);
    confirmed(&[files(&bad), files(&mismatch)].concat());
}

/// `candidate` as the store sees another strategy (`strategy`) or id
/// (`id`), so the store keeps a record its rules would refuse.
fn disguised(mut candidate: Candidate, strategy: Option<&str>, id: Option<&str>) -> Candidate {
    if let Some(strategy) = strategy {
        candidate.strategy_id = StrategyId::parse(strategy).unwrap();
    }
    if let Some(id) = id {
        candidate.id = RecordId::parse(id).unwrap();
    }
    candidate
}

fn registration(id: &str, strategy: &str, hash: char, day: i64) -> Candidate {
    candidate(json!({
        "id": id, "type": "decision", "visibility": "public", "mode": "paper",
        "strategyId": strategy, "strategyName": "Experiment",
        "asOf": format!("2026-05-{:02}T12:00:00Z", day + 1),
        "source": {"name": "suite", "url": "https://example.com/suite"},
        "action": "research", "summary": "Pre-registered rule.",
        "thesis": format!("The rule.\nruleHash: sha256:{}", hash.to_string().repeat(64)),
    }))
}

#[tokio::test]
async fn records_that_break_the_rules_are_raised_with_both_records_proven() {
    let state = tempfile::tempdir().unwrap();
    let mut log = vec![
        registration("x-registration", "x", 'a', 0),
        snapshot("x1", "x", "paper", 1, 100),
        // A second snapshot of x (paper) on day 1, stored as another's.
        disguised(
            snapshot("x2", "x", "paper", 1, 101),
            Some("elsewhere"),
            None,
        ),
        // The id x1 again, stored under another id.
        disguised(decision("x1", "y", 2), None, Some("not-x1")),
        // x registered again under another rule, after its snapshots.
        registration("x-registration-2", "x", 'b', 3),
    ];
    log.extend(records("d", 5));
    let served = serve(log, key(1), None).await;
    let found = pass(&served.base, state.path(), T0).await;
    assert_eq!(
        kinds(&found),
        [
            AlarmKind::RuleBroken,
            AlarmKind::RuleBroken,
            AlarmKind::RuleBroken
        ],
        "{found:?}"
    );
    assert_eq!(found.size, 10, "the log itself is consistent: kept");
    let summaries: Vec<String> = files(&found)
        .iter()
        .map(|f| {
            let document: serde_json::Value =
                serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
            document["summary"].as_str().unwrap().to_owned()
        })
        .collect();
    assert!(
        summaries[0].contains("a second snapshot of x (paper)"),
        "{summaries:?}"
    );
    assert!(
        summaries[1].contains("the id \"x1\" was used before"),
        "{summaries:?}"
    );
    assert!(
        summaries[2].contains("after its first paper snapshot"),
        "{summaries:?}"
    );
    confirmed(&files(&found));
}

/// A policy of the log and one witness W1 at `url` (whose key never
/// cosigned anything here), with the quorum `quorum`.
fn one_witness(url: &str, quorum: &str) -> (Policy, String) {
    let witness = CosignerKey::from_seed("w1.example", [5; 32]).unwrap();
    let text = format!(
        "log {}\nwitness W1 {} {url}\nquorum {quorum}\n",
        key(1).verifier().to_text(),
        witness.witness_key().to_text()
    );
    (Policy::parse(&text).unwrap(), text)
}

#[tokio::test]
async fn a_checkpoint_short_of_the_quorum_is_raised() {
    let state = tempfile::tempdir().unwrap();
    let log = serve(records("d", 20), key(1), None).await;
    let found = monitor(
        &log.base,
        state.path(),
        Some(one_witness("http://127.0.0.1:1", "W1")),
    )
    .pass_at(T0)
    .await
    .unwrap();
    assert_eq!(kinds(&found), [AlarmKind::LostQuorum]);
    assert_eq!(found.size, 0);
    confirmed(&files(&found));
}

#[tokio::test]
async fn a_served_checkpoint_behind_the_head_for_an_hour_is_stale() {
    let state = tempfile::tempdir().unwrap();
    let old = serve(records("d", 300), key(1), None).await;
    let old_note = reqwest::get(format!("{}log/checkpoint", old.base))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
        .to_vec();
    let lagging = serve(
        records("d", 310),
        key(1),
        Some(Tamper {
            path_and_query_prefix: "/log/checkpoint",
            exact: true,
            change: Arc::new(move |_| old_note.clone()),
        }),
    )
    .await;
    let first = pass(&lagging.base, state.path(), T0).await;
    assert!(first.alarms.is_empty(), "{first:?}");
    assert!(
        pass(&lagging.base, state.path(), T0 + 1800)
            .await
            .alarms
            .is_empty()
    );
    let stale = pass(&lagging.base, state.path(), T0 + 3600).await;
    assert_eq!(kinds(&stale), [AlarmKind::Stale]);
    assert!(
        pass(&lagging.base, state.path(), T0 + 7200)
            .await
            .alarms
            .is_empty(),
        "raised once"
    );
    confirmed(&files(&stale));
}

#[tokio::test]
async fn a_log_that_stops_answering_for_an_hour_is_unavailable() {
    let state = tempfile::tempdir().unwrap();
    let closed = "http://127.0.0.1:1/";
    let first = pass(closed, state.path(), T0).await;
    assert!(first.alarms.is_empty() && first.unreachable.is_some());
    let later = pass(closed, state.path(), T0 + 3600).await;
    assert_eq!(kinds(&later), [AlarmKind::Unavailable]);
    assert!(
        pass(closed, state.path(), T0 + 7200)
            .await
            .alarms
            .is_empty()
    );
    confirmed(&files(&later));
    // A log that answers without a checkpoint (503) is as unavailable.
    let refusing = axum::Router::new().route(
        "/log/checkpoint",
        axum::routing::get(|| async { (axum::http::StatusCode::SERVICE_UNAVAILABLE, "later") }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, refusing).await });
    let other_state = tempfile::tempdir().unwrap();
    assert!(pass(&base, other_state.path(), T0).await.alarms.is_empty());
    let refused = pass(&base, other_state.path(), T0 + 3600).await;
    assert_eq!(kinds(&refused), [AlarmKind::Unavailable]);
    // The feed lists the alarm, and parses.
    freedom_testkit::python::check(
        "import feedparser, json, sys\nd = json.load(sys.stdin)\nf = feedparser.parse(d['path'])\nassert not f.bozo, f.bozo_exception\nassert len(f.entries) == 1 and f.entries[0].title.startswith('unavailable'), f.entries",
        &json!({"path": state.path().join("alarms.atom")}),
    );
}

/// The command line's exit codes: 0 when all holds, 1 on an alarm, 2 when
/// the log cannot be reached.
#[tokio::test]
async fn once_exits_0_1_or_2() {
    let state = tempfile::tempdir().unwrap();
    let log = serve(records("d", 30), key(1), None).await;
    let shorter = serve(records("d", 20), key(1), None).await;
    let run = |base: String| {
        let state = state.path().to_owned();
        async move {
            tokio::task::spawn_blocking(move || {
                std::process::Command::new(env!("CARGO_BIN_EXE_freedom-verify"))
                    .args([
                        "monitor",
                        &base,
                        "--key",
                        &key(1).verifier().to_text(),
                        "--once",
                        "--state",
                    ])
                    .arg(&state)
                    .output()
                    .unwrap()
            })
            .await
            .unwrap()
        }
    };
    let ok = run(log.base.clone()).await;
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    assert!(String::from_utf8_lossy(&ok.stdout).starts_with("OK size 30: 30 new entries"));
    let alarm = run(shorter.base.clone()).await;
    assert_eq!(alarm.status.code(), Some(1), "{alarm:?}");
    assert!(String::from_utf8_lossy(&alarm.stdout).starts_with("ALARM rollback: evidence "));
    let silent = run("http://127.0.0.1:1/".into()).await;
    assert_eq!(silent.status.code(), Some(2), "{silent:?}");
}

/// Gossip through the witnesses: a witness whose latest cosigned
/// checkpoint (its monitoring endpoint) is of another history of the same
/// log is a fork, whatever the log serves the monitor.
#[tokio::test]
async fn a_witness_holding_another_history_shows_a_fork() {
    let state = tempfile::tempdir().unwrap();
    let log = serve(records("d", 20), key(1), None).await;
    let other = serve(records("e", 20), key(1), None).await;
    let other_note = reqwest::get(format!("{}log/checkpoint", other.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let hash = freedom_shared::tlog::witness::origin_hash(ORIGIN);
    let witness_endpoint = axum::Router::new().route(
        &format!("/{hash}/checkpoint"),
        axum::routing::get(move || async move { other_note }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, witness_endpoint).await });
    let found = monitor(&log.base, state.path(), Some(one_witness(&url, "none")))
        .pass_at(T0)
        .await
        .unwrap();
    assert_eq!(kinds(&found), [AlarmKind::Fork], "{found:?}");
    confirmed(&files(&found));
    // Every pass compares notes, also one with nothing new.
    let again = monitor(&log.base, state.path(), Some(one_witness(&url, "none")))
        .pass_at(T0 + 60)
        .await
        .unwrap();
    assert_eq!((again.verified, kinds(&again)), (0, vec![AlarmKind::Fork]));
}

/// A log that streams an endless checkpoint is not read past
/// `MAX_BODY_BYTES`: the pass says it could not read it, and holds no more
/// than that in memory.
#[tokio::test]
async fn an_answer_past_the_body_limit_is_not_read() {
    let state = tempfile::tempdir().unwrap();
    let flooding = axum::Router::new().route(
        "/log/checkpoint",
        axum::routing::get(|| async { vec![b'x'; freedom_verify::MAX_BODY_BYTES + 1] }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, flooding).await });
    let flooded = pass(&base, state.path(), T0).await;
    assert!(flooded.alarms.is_empty());
    assert!(
        flooded
            .unreachable
            .as_deref()
            .is_some_and(|why| why.contains("more than 33554432 bytes")),
        "{flooded:?}"
    );
}
