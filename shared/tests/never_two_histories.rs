//! Never two histories: a lost, restored, emptied, flushed or replaced store
//! never makes the log sign a second history with the same key, and never
//! turns an append into a rewrite of an acknowledged record.
//!
//! The KV cases run the production client through the Upstash bridge
//! against a private `redis-server`; the SQLite cases use real database
//! files in a temporary data dir.

use freedom_shared::adapters::{KvClient, KvLedgerStore, KvSignerMemory};
use freedom_shared::adapters::{SignedFile, SqliteLedgerStore};
use freedom_shared::merkle::{Digest, Head, root_of};
use freedom_shared::ports::Recorded;
use freedom_shared::ports::conformance::{self, decision, snapshot};
use freedom_shared::ports::{AppendOutcome, Candidate, LedgerStore, StoreError};
use freedom_shared::ports::{HeadReads, LedgerAppend, LedgerPages};
use freedom_shared::ports::{InProcess, SignerMemory};
use freedom_shared::service::{Log, LogError, REFUSED_TO_SIGN};
use freedom_shared::tlog::note::SigningKey;
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::UpstashBridge;
use proptest::prelude::*;
use redis::AsyncCommands;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const TOKEN: &str = "bridge-token-for-tests";
const ORIGIN: &str = "fund.example/log";

async fn bridge() -> (RedisServer, UpstashBridge) {
    let server = RedisServer::start().expect("redis-server starts");
    let bridge = UpstashBridge::start(&server.url(), TOKEN)
        .await
        .expect("bridge starts");
    (server, bridge)
}

fn kv_store(bridge: &UpstashBridge, prefix: &str) -> KvLedgerStore {
    KvLedgerStore::new(KvClient::new(&bridge.kv_config(prefix)), prefix)
}

fn key() -> SigningKey {
    SigningKey::from_seed(ORIGIN, [9; 32]).unwrap()
}

/// A log on `store` remembering in `memory`, told it is a new log (which
/// matters only while `memory` holds nothing).
fn log_with(
    store: Arc<dyn LedgerStore>,
    memory: Arc<dyn SignerMemory>,
    events: Arc<Recorded>,
) -> Log {
    Log::new(store, ORIGIN, Some(key()))
        .unwrap()
        .with_memory(memory)
        .with_new_log(true)
        .with_events(events)
}

/// Record `n` of a ledger mixing two strategies' snapshots in both modes
/// and decisions, so every kind of index key exists.
fn record(n: i64) -> Candidate {
    // Each series gets one record in four: a day each, in order.
    let day = n / 4;
    match n % 4 {
        0 => snapshot(&format!("a{n}"), "a", "live", day, 1000 + n % 7),
        1 => snapshot(&format!("b{n}"), "b", "paper", day, 2000 + n % 5),
        2 => decision(&format!("d{n}"), "a", day),
        _ => snapshot(&format!("c{n}"), "a", "paper", day, 500 + n % 3),
    }
}

async fn append_all(store: &dyn LedgerStore, range: std::ops::Range<i64>) {
    for n in range {
        assert!(matches!(
            store.append(record(n)).await.unwrap(),
            AppendOutcome::Created { .. }
        ));
    }
}

fn refused(result: Result<impl std::fmt::Debug, LogError>) -> String {
    match result {
        Err(LogError::RefusedToSign(reason)) => reason,
        other => panic!("the log should refuse to sign, got {other:?}"),
    }
}

/// Every key under `prefix` with its `DUMP`.
async fn dump(
    redis: &mut redis::aio::MultiplexedConnection,
    prefix: &str,
) -> Vec<(String, Vec<u8>)> {
    let mut keys: Vec<String> = redis.keys(format!("{prefix}*")).await.unwrap();
    keys.sort();
    let mut out = Vec::new();
    for key in keys {
        let bytes: Vec<u8> = redis::cmd("DUMP")
            .arg(&key)
            .query_async(redis)
            .await
            .unwrap();
        out.push((key[prefix.len()..].to_owned(), bytes));
    }
    out
}

async fn restore(
    redis: &mut redis::aio::MultiplexedConnection,
    prefix: &str,
    keys: &[(String, Vec<u8>)],
) {
    for (suffix, bytes) in keys {
        let _: () = redis::cmd("RESTORE")
            .arg(format!("{prefix}{suffix}"))
            .arg(0)
            .arg(bytes)
            .query_async(redis)
            .await
            .unwrap();
    }
}

/// The records as stored, by seq (leaf hash and canonical text).
async fn records(
    redis: &mut redis::aio::MultiplexedConnection,
    prefix: &str,
) -> BTreeMap<u64, String> {
    let keys: Vec<String> = redis.keys(format!("{prefix}rec:*")).await.unwrap();
    let mut out = BTreeMap::new();
    for key in keys {
        let seq: u64 = key[prefix.len() + 4..].parse().unwrap();
        out.insert(seq, redis.get(&key).await.unwrap());
    }
    out
}

/// Whether the stored records 1..=size hash to a tree whose root is the
/// stored head's: the head matches the leaves it claims.
async fn head_matches_leaves(store: &KvLedgerStore, stored: &BTreeMap<u64, String>) -> bool {
    let Ok(head) = store.head().await else {
        return true; // a damaged head reads as an error, never as another tree
    };
    let leaves: Option<Vec<Digest>> = (1..=head.size)
        .map(|seq| stored.get(&seq).and_then(|r| Digest::from_hex(&r[..64])))
        .collect();
    leaves.is_none_or(|leaves| root_of(&leaves) == head.root_hash)
}

/// With any one of the ledger's keys lost, appends by a new process and by
/// one that has the old head cached either refuse (and write nothing) or
/// extend the tree; no acknowledged record changes, and the log, which
/// signed the full ledger first, signs nothing that does not extend it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_any_one_kv_key_never_rewrites_or_forks_the_log() {
    let (_server, bridge) = bridge().await;
    let mut redis = bridge.redis();
    let base = kv_store(&bridge, "base:");
    append_all(&base, 0..300).await;
    let original = dump(&mut redis, "base:").await;
    let acknowledged = records(&mut redis, "base:").await;
    let signed_head = base.head().await.unwrap();
    assert!(
        original.iter().any(|(k, _)| k == "tile:1:0"),
        "the ledger has a level-1 tile"
    );

    for (case, (lost, _)) in original.iter().enumerate() {
        let prefix = format!("case{case}:");
        restore(&mut redis, &prefix, &original).await;
        let warm = kv_store(&bridge, &prefix);
        // The warm process caches the head it last saw.
        warm.head().await.unwrap();
        let memory = Arc::new(InProcess::default());
        let events = Arc::new(Recorded::default());
        let log = log_with(
            Arc::new(kv_store(&bridge, &prefix)),
            memory.clone(),
            events.clone(),
        );
        assert_eq!(log.checkpoint().await.unwrap().head, signed_head);
        let _: () = redis.del(format!("{prefix}{lost}")).await.unwrap();

        let cold = kv_store(&bridge, &prefix);
        for (n, store) in [(300, &cold), (301, &warm), (302, &cold), (5, &warm)] {
            let _ = store.append(record(n)).await;
        }
        let _ = warm
            .append(snapshot("fresh-series", "z", "live", 100, 10))
            .await;

        let now = records(&mut redis, &prefix).await;
        for (seq, text) in &acknowledged {
            if format!("rec:{seq}") != *lost {
                assert_eq!(
                    now.get(seq),
                    Some(text),
                    "losing {lost} changed record {seq}"
                );
            }
        }
        assert!(
            head_matches_leaves(&cold, &now).await,
            "losing {lost}: head and leaves disagree"
        );
        match log.checkpoint().await {
            Ok(signed) => {
                let mut leaves: Vec<Digest> = (1..=signed_head.size)
                    .map(|seq| Digest::from_hex(&acknowledged[&seq][..64]).unwrap())
                    .collect();
                leaves.extend(
                    (signed_head.size + 1..=signed.head.size)
                        .map(|seq| Digest::from_hex(&now[&seq][..64]).unwrap()),
                );
                assert_eq!(
                    root_of(&leaves),
                    signed.head.root_hash,
                    "losing {lost}: the log signed a tree that does not extend the one it signed"
                );
            }
            Err(LogError::RefusedToSign(_)) => {
                let published = events.events();
                assert_eq!(published.len(), 1, "losing {lost}: one event");
                assert_eq!(published[0].detail_type, REFUSED_TO_SIGN);
            }
            Err(LogError::Store(StoreError::Corrupt(_))) => {}
            Err(other) => panic!("losing {lost}: {other:?}"),
        }
        if lost == "head" {
            assert!(
                matches!(cold.append(record(303)).await, Err(StoreError::Corrupt(_))),
                "an append without the head is refused as damage"
            );
            assert!(matches!(cold.head().await, Err(StoreError::Corrupt(_))));
        }
        let keys: Vec<String> = redis.keys(format!("{prefix}*")).await.unwrap();
        let _: () = redis.del(keys).await.unwrap();
    }
}

/// Random keys deleted between appends: no acknowledged record ever
/// changes, and every checkpoint the log signs extends the ones before.
#[test]
fn random_key_loss_between_appends_never_changes_an_acknowledged_record() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (server, bridge) = runtime.block_on(bridge());
    let cases = AtomicUsize::new(0);
    let config = ProptestConfig {
        cases: 24,
        ..ProptestConfig::default()
    };
    proptest!(config, |(steps in proptest::collection::vec((0u8..4, 0usize..10_000), 1..60))| {
        let prefix = format!("p{}:", cases.fetch_add(1, Ordering::SeqCst));
        runtime.block_on(async {
            let mut redis = bridge.redis();
            let store = kv_store(&bridge, &prefix);
            let log = log_with(
                Arc::new(kv_store(&bridge, &prefix)),
                Arc::new(InProcess::default()),
                Arc::new(Recorded::default()),
            );
            let mut acknowledged: BTreeMap<u64, String> = BTreeMap::new();
            let mut deleted: Vec<String> = Vec::new();
            let mut signed: BTreeMap<u64, Digest> = BTreeMap::new();
            let mut largest_signed = 0;
            for (n, (action, pick)) in steps.iter().enumerate() {
                if *action == 0 {
                    let mut keys: Vec<String> = redis.keys(format!("{prefix}*")).await.unwrap();
                    keys.sort();
                    if !keys.is_empty() {
                        let key = keys[pick % keys.len()].clone();
                        let _: () = redis.del(&key).await.unwrap();
                        deleted.push(key);
                    }
                    // Every key gone: the store is empty and cannot know it
                    // held a ledger. Its records start again; what protects
                    // the log then is the signer's memory (checked below
                    // across the loss: nothing smaller or different signed).
                    if keys.len() <= 1 {
                        acknowledged.clear();
                        deleted.clear();
                    }
                } else if let Ok(AppendOutcome::Created { entry, .. }) =
                    store.append(record(n as i64)).await
                {
                    let text = format!("{}{}", entry.leaf_hash, entry.canonical);
                    let before = acknowledged.insert(entry.seq, text);
                    assert!(before.is_none(), "seq {} was acknowledged twice after {deleted:?}", entry.seq);
                }
                if let Ok(checkpoint) = log.checkpoint().await {
                    let head = checkpoint.head;
                    assert!(head.size >= largest_signed, "the log signed a smaller tree");
                    largest_signed = head.size;
                    assert_eq!(*signed.entry(head.size).or_insert(head.root_hash), head.root_hash);
                }
                for (seq, text) in &acknowledged {
                    let key = format!("{prefix}rec:{seq}");
                    let now: Option<String> = redis.get(&key).await.unwrap();
                    assert!(
                        now.as_ref() == Some(text) || (now.is_none() && deleted.contains(&key)),
                        "record {seq} changed after {deleted:?}"
                    );
                }
            }
        });
    });
    drop(server);
}

/// The KV memory of the signer, and the file memory, pass the suite.
#[tokio::test]
async fn both_signer_memories_pass_the_suite() {
    let (_server, bridge) = bridge().await;
    let next = AtomicUsize::new(0);
    conformance::run_signer_memory(|| {
        let prefix = format!("memory{}:", next.fetch_add(1, Ordering::SeqCst));
        let memory = || KvSignerMemory::new(KvClient::new(&bridge.kv_config(&prefix)), &prefix);
        let pair = (memory(), memory());
        async move { pair }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("log-signing.key");
    conformance::run_signer_memory(|| {
        let pair = (SignedFile::beside(&key_file), SignedFile::beside(&key_file));
        async move { pair }
    })
    .await;
    assert!(dir.path().join("log-signing.key.signed").is_file());
}

/// freedom-local's memory is a file outside the store: a flushed Redis or
/// a new prefix with the same key makes the log refuse to sign the new,
/// shorter or different history, while appends and reads go on.
#[tokio::test]
async fn a_flushed_kv_store_or_a_new_prefix_is_refused_by_the_file_memory() {
    let (_server, bridge) = bridge().await;
    let dir = tempfile::tempdir().unwrap();
    let memory: Arc<dyn SignerMemory> = Arc::new(SignedFile::beside(&dir.path().join("k")));
    let events = Arc::new(Recorded::default());
    let first = kv_store(&bridge, "ff:");
    append_all(&first, 0..20).await;
    let log = log_with(
        Arc::new(kv_store(&bridge, "ff:")),
        Arc::clone(&memory),
        events.clone(),
    );
    assert_eq!(log.checkpoint().await.unwrap().head.size, 20);

    // A restarted process (a new log on the same memory) after a new prefix.
    let moved = kv_store(&bridge, "new:");
    append_all(&moved, 40..65).await;
    let restarted = log_with(
        Arc::new(kv_store(&bridge, "new:")),
        Arc::clone(&memory),
        events.clone(),
    );
    let reason = refused(restarted.checkpoint().await);
    assert!(reason.contains("20"), "{reason}");
    refused(restarted.inclusion(1, None).await);
    refused(restarted.consistency(1, None).await);
    assert!(
        moved.page(&conformance::all(5)).await.is_ok(),
        "reads go on"
    );

    // A flushed database, then a shorter history.
    let _: () = redis::cmd("FLUSHALL")
        .query_async(&mut bridge.redis())
        .await
        .unwrap();
    let flushed = kv_store(&bridge, "ff:");
    append_all(&flushed, 100..103).await;
    refused(
        log_with(
            Arc::new(kv_store(&bridge, "ff:")),
            Arc::clone(&memory),
            events.clone(),
        )
        .checkpoint()
        .await,
    );
    let kinds: Vec<_> = events.events().iter().map(|e| e.detail_type).collect();
    assert_eq!(kinds, [REFUSED_TO_SIGN, REFUSED_TO_SIGN]);
}

/// Under Lambda the memory is a KV key of its own: losing any ledger key
/// leaves it, and losing it alone only makes the log remember again.
#[tokio::test]
async fn the_lambda_memory_survives_a_lost_head_and_is_remembered_again() {
    let (_server, bridge) = bridge().await;
    let store = kv_store(&bridge, "ff:");
    append_all(&store, 0..10).await;
    let memory = || -> Arc<dyn SignerMemory> {
        Arc::new(KvSignerMemory::new(
            KvClient::new(&bridge.kv_config("ff:")),
            "ff:",
        ))
    };
    let log = log_with(
        Arc::new(kv_store(&bridge, "ff:")),
        memory(),
        Arc::new(Recorded::default()),
    );
    assert_eq!(log.checkpoint().await.unwrap().head.size, 10);
    let mut redis = bridge.redis();
    let _: () = redis.del("ff:log:signed").await.unwrap();
    let again = log_with(
        Arc::new(kv_store(&bridge, "ff:")),
        memory(),
        Arc::new(Recorded::default()),
    );
    assert_eq!(again.checkpoint().await.unwrap().head.size, 10);
    let remembered: String = redis.get("ff:log:signed").await.unwrap();
    assert!(remembered.starts_with("fund.example/log\n10\n"));
}

fn copy_ledger(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for name in ["ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm"] {
        let _ = std::fs::remove_file(to.join(name));
        if from.join(name).exists() {
            std::fs::copy(from.join(name), to.join(name)).unwrap();
        }
    }
}

/// SQLite: a ledger file restored from an older backup starts (appends
/// work) but the log refuses to sign it, before and after it grows past
/// the remembered size into another history.
#[tokio::test]
async fn a_restored_older_sqlite_ledger_is_never_signed() {
    let dir = tempfile::tempdir().unwrap();
    let (data, backup) = (dir.path().join("data"), dir.path().join("backup"));
    let memory: Arc<dyn SignerMemory> = Arc::new(SignedFile::beside(&data.join("log-signing.key")));
    {
        let store = SqliteLedgerStore::open(&data).unwrap();
        append_all(&store, 0..3).await;
    }
    copy_ledger(&data, &backup);
    {
        let store = SqliteLedgerStore::open(&data).unwrap();
        append_all(&store, 3..6).await;
        let log = log_with(
            Arc::new(store.clone()),
            Arc::clone(&memory),
            Arc::new(Recorded::default()),
        );
        assert_eq!(log.checkpoint().await.unwrap().head.size, 6);
    }
    copy_ledger(&backup, &data);
    let store = SqliteLedgerStore::open(&data).unwrap();
    let events = Arc::new(Recorded::default());
    let log = log_with(Arc::new(store.clone()), Arc::clone(&memory), events.clone());
    refused(log.checkpoint().await);
    refused(log.inclusion(1, Some(2)).await);
    append_all(&store, 10..12).await;
    refused(log.checkpoint().await);
    append_all(&store, 12..14).await;
    assert_eq!(store.head().await.unwrap().size, 7);
    let reason = refused(log.checkpoint().await);
    assert!(reason.contains("another history"), "{reason}");
    assert_eq!(events.events().len(), 3, "one event per refused head");
    assert!(store.page(&conformance::all(10)).await.is_ok());
}

/// The remembered checkpoint must be the log's own: a memory holding
/// anything else makes it refuse rather than forget.
#[tokio::test]
async fn a_memory_the_key_did_not_sign_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    append_all(&store, 0..2).await;
    let memory = Arc::new(InProcess::default());
    let other = SigningKey::from_seed(ORIGIN, [1; 32]).unwrap();
    let forged = other.sign(&format!("{ORIGIN}\n1\n{}\n", "A".repeat(43) + "="));
    assert!(memory.remember(None, &forged).await.unwrap());
    let log = log_with(
        Arc::new(store.clone()),
        memory,
        Arc::new(Recorded::default()),
    );
    let reason = refused(log.checkpoint().await);
    assert!(reason.contains("did not sign"), "{reason}");
    assert_eq!(Head::empty().size, 0);
}
