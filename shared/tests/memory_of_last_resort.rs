//! The signer's memories and, with a policy, its witnesses keep the log
//! from ever signing a second tree with its key: a log with no memory signs
//! nothing non-empty until the operator or the witnesses say so; every
//! memory must be extended; a store restored with its memory from an older
//! snapshot is caught by what a witness holds, which is then remembered;
//! and a witness that reveals another tree during a round (`409` or `422`)
//! stops the log signing. The witness is the test kit's, written from the
//! specification alone, reached over HTTP like any witness.

use freedom_shared::adapters::HttpWitnesses;
use freedom_shared::adapters::{KvClient, KvLedgerStore, KvSignerMemory};
use freedom_shared::adapters::{SqliteLedgerStore, SqliteSignerMemory};
use freedom_shared::ports::InProcessWitnesses;
use freedom_shared::ports::Recorded;
use freedom_shared::ports::conformance::{decision, snapshot};
use freedom_shared::ports::{AppendOutcome, Candidate, LedgerStore};
use freedom_shared::ports::{InProcess, SignerMemory};
use freedom_shared::service::{CustodyStatus, Log, LogError, REFUSED_TO_SIGN, WITNESS_ALARM};
use freedom_shared::tlog::note::SigningKey;
use freedom_shared::tlog::policy::Policy;
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::spec_witness::SpecWitness;
use freedom_testkit::upstash_bridge::{UpstashBridge, dump_all, restore_all};
use redis::AsyncCommands;
use std::sync::Arc;

const ORIGIN: &str = "remember.example/log";
const TOKEN: &str = "bridge-token-for-tests";

fn key() -> SigningKey {
    SigningKey::from_seed(ORIGIN, [33; 32]).unwrap()
}

/// Record `n` on branch `branch` (records of two branches differ).
fn record(branch: &str, n: i64) -> Candidate {
    if n % 3 == 2 {
        decision(&format!("{branch}-d{n}"), branch, n)
    } else {
        snapshot(&format!("{branch}-s{n}"), branch, "live", n, 1000 + n)
    }
}

async fn append(store: &dyn LedgerStore, branch: &str, range: std::ops::Range<i64>) {
    for n in range {
        assert!(matches!(
            store.append(record(branch, n)).await.unwrap(),
            AppendOutcome::Created { .. }
        ));
    }
}

fn refused<T: std::fmt::Debug>(result: Result<T, LogError>) -> String {
    match result {
        Err(LogError::RefusedToSign(reason)) => reason,
        other => panic!("the log should refuse to sign, got {other:?}"),
    }
}

fn log(store: Arc<dyn LedgerStore>, memories: Vec<Arc<dyn SignerMemory>>) -> Log {
    Log::new(store, ORIGIN, Some(key()))
        .unwrap()
        .with_memories(memories)
}

fn one_witness_policy(witness: &SpecWitness) -> Policy {
    Policy::parse(&format!(
        "log {}\nwitness W1 {} {}\nquorum W1\n",
        key().verifier().to_text(),
        witness.vkey(),
        witness.url()
    ))
    .unwrap()
}

/// A log on `store` remembering in `memory`, witnessed by `witness` alone,
/// reporting to `events`.
fn witnessed_log(
    store: Arc<dyn LedgerStore>,
    memory: Arc<dyn SignerMemory>,
    witnesses: Arc<InProcessWitnesses>,
    witness: &SpecWitness,
    events: Arc<Recorded>,
) -> Log {
    log(store, vec![memory]).with_events(events).with_witnesses(
        one_witness_policy(witness),
        witnesses,
        Arc::new(HttpWitnesses),
    )
}

#[tokio::test]
async fn with_no_memory_the_log_signs_the_empty_tree_and_nothing_more_until_told_new_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
    let memory = Arc::new(InProcess::default());
    let unsure = log(store.clone(), vec![memory.clone()]);
    assert!(matches!(
        unsure.custody_status().await.unwrap(),
        CustodyStatus::Forgotten { new_log: false, .. }
    ));
    assert_eq!(unsure.checkpoint().await.unwrap().head.size, 0);
    assert_eq!(
        memory.recall().await.unwrap(),
        None,
        "the empty tree is never remembered"
    );
    append(store.as_ref(), "a", 0..3).await;
    let reason = refused(unsure.checkpoint().await);
    assert!(reason.contains("--new-log"), "{reason}");
    refused(unsure.inclusion(1, None).await);

    let told = log(store.clone(), vec![memory.clone()]).with_new_log(true);
    assert_eq!(told.checkpoint().await.unwrap().head.size, 3);
    assert!(
        memory
            .recall()
            .await
            .unwrap()
            .unwrap()
            .starts_with(&format!("{ORIGIN}\n3\n"))
    );
    let restarted = log(store.clone(), vec![memory]);
    assert!(matches!(
        restarted.custody_status().await.unwrap(),
        CustodyStatus::Remembers { size: 3, .. }
    ));
    append(store.as_ref(), "a", 3..5).await;
    assert_eq!(restarted.checkpoint().await.unwrap().head.size, 5);
}

/// The memory that travels with the key (first) and the store's copy: a
/// store restored with its copy is refused by the key's; the key's lost
/// while the store's remains is a log that cannot say what it signed; the
/// store's lost is written again once the ledger is proved to extend the
/// key's.
#[tokio::test]
async fn every_memory_must_be_extended_and_a_lost_first_one_needs_word() {
    let dir = tempfile::tempdir().unwrap();
    let (data, backup) = (dir.path().join("data"), dir.path().join("backup"));
    let with_key = Arc::new(InProcess::default());
    let memories =
        |data: &std::path::Path, with_key: &Arc<InProcess>| -> Vec<Arc<dyn SignerMemory>> {
            vec![
                with_key.clone(),
                Arc::new(SqliteSignerMemory::open(data).unwrap()),
            ]
        };
    {
        let store = Arc::new(SqliteLedgerStore::open(&data).unwrap());
        append(store.as_ref(), "a", 0..3).await;
        let first = log(store.clone(), memories(&data, &with_key)).with_new_log(true);
        assert_eq!(first.checkpoint().await.unwrap().head.size, 3);
    }
    copy_dir(&data, &backup);
    {
        let store = Arc::new(SqliteLedgerStore::open(&data).unwrap());
        append(store.as_ref(), "a", 3..6).await;
        let grown = log(store.clone(), memories(&data, &with_key));
        assert_eq!(grown.checkpoint().await.unwrap().head.size, 6);
    }
    // The whole data dir (ledger and the store's memory) restored, grown
    // into another history: the key's memory refuses it.
    std::fs::remove_dir_all(&data).unwrap();
    copy_dir(&backup, &data);
    let store = Arc::new(SqliteLedgerStore::open(&data).unwrap());
    append(store.as_ref(), "b", 3..6).await;
    let restored = log(store.clone(), memories(&data, &with_key));
    let reason = refused(restored.checkpoint().await);
    assert!(reason.contains("another"), "{reason}");

    // The key's memory lost, the restored store's copy left: nothing says
    // what the key signed, so nothing non-empty is signed until told.
    let forgot = log(
        store.clone(),
        memories(&data, &Arc::new(InProcess::default())),
    );
    assert!(matches!(
        forgot.custody_status().await.unwrap(),
        CustodyStatus::Forgotten { other: 3, .. }
    ));
    let reason = refused(forgot.checkpoint().await);
    assert!(reason.contains("--new-log"), "{reason}");

    // The store's copy lost (a new store file) under an intact key memory:
    // the ledger proved to extend it is signed and the copy written again.
    let fresh = dir.path().join("fresh");
    copy_dir(&backup, &fresh);
    std::fs::remove_file(fresh.join("ledger.sqlite3")).ok();
    let key_memory = Arc::new(InProcess::default());
    let store = Arc::new(SqliteLedgerStore::open(&fresh).unwrap());
    append(store.as_ref(), "a", 0..4).await;
    let new_key_log = log(store.clone(), vec![key_memory.clone()]).with_new_log(true);
    assert_eq!(new_key_log.checkpoint().await.unwrap().head.size, 4);
    append(store.as_ref(), "a", 4..5).await;
    let healed = log(
        store.clone(),
        vec![
            key_memory,
            Arc::new(SqliteSignerMemory::open(&fresh).unwrap()),
        ],
    );
    assert_eq!(healed.checkpoint().await.unwrap().head.size, 5);
    let store_copy = SqliteSignerMemory::open(&fresh).unwrap();
    assert!(
        store_copy
            .recall()
            .await
            .unwrap()
            .unwrap()
            .starts_with(&format!("{ORIGIN}\n5\n"))
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Finding 2 under Lambda: its memory is a KV key, so a Redis restored from
/// a snapshot brings back an older memory with the older ledger. The
/// witness holds what the log signed since: a new instance asks it before
/// signing, refuses the other history grown on the restored store, and
/// remembers the witness's checkpoint, so the refusal outlives the witness.
/// With a witness that serves its checkpoint, and with one that only
/// names a size (`409`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restored_from_a_snapshot_is_caught_by_what_the_witness_holds() {
    for monitoring in [true, false] {
        let server = RedisServer::start().unwrap();
        let bridge = UpstashBridge::start(&server.url(), TOKEN).await.unwrap();
        let store = || -> Arc<dyn LedgerStore> {
            Arc::new(KvLedgerStore::new(
                KvClient::new(&bridge.kv_config("ff:")),
                "ff:",
            ))
        };
        let memory = || -> Arc<dyn SignerMemory> {
            Arc::new(KvSignerMemory::new(
                KvClient::new(&bridge.kv_config("ff:")),
                "ff:",
            ))
        };
        let witness = SpecWitness::start("w1.example", [7; 32], &key().verifier().to_text()).await;
        witness.serve_monitoring(monitoring);
        let sizes = Arc::new(InProcessWitnesses::default());
        let events = Arc::new(Recorded::default());

        // A new deployment: no memory, and the witness holds nothing of the
        // log, which settles it.
        let first = witnessed_log(store(), memory(), sizes.clone(), &witness, events.clone());
        append(store().as_ref(), "a", 0..2).await;
        assert!(first.cosign(false).await.unwrap().quorum_met);
        let mut redis = bridge.redis();
        let snapshot = dump_all(&mut redis).await;
        append(store().as_ref(), "a", 2..4).await;
        assert!(first.cosign(false).await.unwrap().quorum_met);
        assert_eq!(witness.latest().unwrap().size, 4);

        // Restored, grown into another history, served by a new instance.
        restore_all(&mut redis, &snapshot).await;
        append(store().as_ref(), "b", 2..4).await;
        let events = Arc::new(Recorded::default());
        let restarted = witnessed_log(store(), memory(), sizes.clone(), &witness, events.clone());
        let reason = refused(restarted.checkpoint().await);
        assert!(reason.contains("W1"), "{reason}");
        refused(restarted.inclusion(1, None).await);
        assert!(restarted.cosign(false).await.is_err());
        assert_eq!(witness.latest().unwrap().size, 4, "no fork reached it");
        let kinds: Vec<_> = events.events().iter().map(|e| e.detail_type).collect();
        assert!(kinds.contains(&WITNESS_ALARM), "{kinds:?}");
        assert!(kinds.contains(&REFUSED_TO_SIGN), "{kinds:?}");

        if monitoring {
            // The witness's checkpoint is now the memory: with the witness
            // gone, the refusal stays.
            let remembered: String = redis.get("ff:log:signed").await.unwrap();
            assert!(remembered.starts_with(&format!("{ORIGIN}\n4\n")));
            let mut gone = witness;
            gone.stop();
            let later = witnessed_log(
                store(),
                memory(),
                sizes,
                &gone,
                Arc::new(Recorded::default()),
            );
            refused(later.checkpoint().await);
        }
    }
}

/// Finding 2, during a round: another process with the same key (told it
/// is a new log, so nothing stopped it at start) signed a head of the same
/// size as the tree the witness holds; the witness refuses it (`422`, or
/// `409` in the specification's wording before 2026-07), which is an alarm
/// and stops that process signing anything more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_witness_that_reveals_another_tree_during_a_round_stops_the_log_signing() {
    for same_size_409 in [false, true] {
        let witness = SpecWitness::start("w1.example", [8; 32], &key().verifier().to_text()).await;
        witness.answer_same_size_fork_with_409(same_size_409);
        let (one, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let store_a = Arc::new(SqliteLedgerStore::open(one.path()).unwrap());
        let store_b = Arc::new(SqliteLedgerStore::open(other.path()).unwrap());
        let events = Arc::new(Recorded::default());
        let a = witnessed_log(
            store_a.clone(),
            Arc::new(InProcess::default()),
            Arc::new(InProcessWitnesses::default()),
            &witness,
            Arc::new(Recorded::default()),
        )
        .with_new_log(true);
        let b = witnessed_log(
            store_b.clone(),
            Arc::new(InProcess::default()),
            Arc::new(InProcessWitnesses::default()),
            &witness,
            events.clone(),
        )
        .with_new_log(true);
        append(store_b.as_ref(), "b", 0..1).await;
        assert_eq!(b.checkpoint().await.unwrap().head.size, 1, "b starts first");
        append(store_a.as_ref(), "a", 0..2).await;
        assert!(a.cosign(false).await.unwrap().quorum_met);
        append(store_b.as_ref(), "b", 1..2).await;
        let round = b.cosign(false).await.unwrap();
        assert_eq!(round.witnesses[0].outcome, "alarm", "{round:?}");
        assert!(!round.quorum_met);
        let reason = refused(b.checkpoint().await);
        assert!(reason.contains("signs nothing more"), "{reason}");
        refused(b.consistency(1, None).await);
        let kinds: Vec<_> = events.events().iter().map(|e| e.detail_type).collect();
        assert!(kinds.contains(&WITNESS_ALARM), "{kinds:?}");
        assert_eq!(a.checkpoint().await.unwrap().head.size, 2, "a goes on");
    }
}

/// Finding 7: a clock ten minutes or more slow makes every cosignature look
/// dated in the future; they are not kept, and the round says so with the
/// skew (an alarm and its event), instead of dropping them silently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_witness_clock_far_ahead_of_ours_is_an_alarm_naming_the_skew() {
    let witness = SpecWitness::start("w1.example", [9; 32], &key().verifier().to_text()).await;
    witness.set_clock_offset(20 * 60);
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
    let events = Arc::new(Recorded::default());
    let skewed = witnessed_log(
        store.clone(),
        Arc::new(InProcess::default()),
        Arc::new(InProcessWitnesses::default()),
        &witness,
        events.clone(),
    )
    .with_new_log(true);
    append(store.as_ref(), "a", 0..2).await;
    let round = skewed.cosign(false).await.unwrap();
    assert!(!round.quorum_met);
    let outcome = &round.witnesses[0];
    assert_eq!(outcome.outcome, "alarm", "{outcome:?}");
    let detail = outcome.detail.as_deref().unwrap();
    assert!(detail.contains("ahead of this clock"), "{detail}");
    assert!(detail.contains("s ahead"), "{detail}");
    assert_eq!(events.events()[0].detail_type, WITNESS_ALARM);
    assert_eq!(
        skewed.checkpoint().await.unwrap().head.size,
        2,
        "a clock out of step stops no signing"
    );
}
