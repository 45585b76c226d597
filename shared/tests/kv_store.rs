//! The KV REST store end to end: the production client, through an
//! Upstash-protocol bridge, against a real `redis-server` started for these
//! tests on a free loopback port.

use freedom_shared::adapters::KvLedgerStore;
use freedom_shared::adapters::KvScanStore;
use freedom_shared::adapters::KvWitnessMemory;
use freedom_shared::adapters::{Command, KvClient, KvError};
use freedom_shared::merkle::{Head, root_of};
use freedom_shared::ports::ScanStore;
use freedom_shared::ports::conformance::{self, decision, snapshot};
use freedom_shared::ports::{AppendOutcome, PageQuery, StoreError};
use freedom_shared::ports::{HeadReads, LedgerAppend, LedgerPages, SeriesReads, TileReads};
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::{Fault, UpstashBridge};
use redis::AsyncCommands;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const TOKEN: &str = "bridge-token-for-tests";

async fn bridge() -> (RedisServer, UpstashBridge) {
    let server = RedisServer::start().expect("redis-server starts");
    let bridge = UpstashBridge::start(&server.url(), TOKEN)
        .await
        .expect("bridge starts");
    (server, bridge)
}

fn store(bridge: &UpstashBridge, prefix: &str) -> KvLedgerStore {
    let client = KvClient::new(&bridge.kv_config(prefix));
    KvLedgerStore::new(client, prefix)
}

fn quick_store(bridge: &UpstashBridge, prefix: &str) -> KvLedgerStore {
    let client = KvClient::with_timeout(&bridge.kv_config(prefix), Duration::from_millis(300));
    KvLedgerStore::new(client, prefix)
}

async fn assert_consistent(store: &KvLedgerStore, size: u64) {
    let page = store.page(&conformance::all(1000)).await.unwrap();
    assert_eq!(page.head.size, size);
    assert_eq!(page.entries.len() as u64, size);
    let mut leaves: Vec<_> = page.entries.iter().map(|e| e.leaf_hash).collect();
    leaves.reverse();
    assert_eq!(page.head.root_hash, root_of(&leaves));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_kv_store_passes_the_conformance_suite() {
    let (_server, bridge) = bridge().await;
    let next = AtomicUsize::new(0);
    conformance::run(|| {
        // A fresh prefix is a fresh, empty store on the same server.
        let prefix = format!("suite{}:", next.fetch_add(1, Ordering::SeqCst));
        let store = store(&bridge, &prefix);
        async move { store }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_kv_scanner_store_passes_the_lock_suite() {
    let (_server, bridge) = bridge().await;
    let next = AtomicUsize::new(0);
    conformance::run_scanner(|| {
        let prefix = format!("lock{}:", next.fetch_add(1, Ordering::SeqCst));
        let client = KvClient::new(&bridge.kv_config(&prefix));
        async move { KvScanStore::new(client, prefix) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_kv_witness_memory_passes_its_suite() {
    let (_server, bridge) = bridge().await;
    let next = AtomicUsize::new(0);
    conformance::run_witness_memory(|| {
        let prefix = format!("wit{}:", next.fetch_add(1, Ordering::SeqCst));
        let config = bridge.kv_config(&prefix);
        async move {
            (
                KvWitnessMemory::new(KvClient::new(&config), &prefix),
                KvWitnessMemory::new(KvClient::new(&config), &prefix),
            )
        }
    })
    .await;
}

/// Evidence lives under the prefix with a Redis expiry of its time to keep
/// (seven days for the scanner), as base64, and bytes that do not hash to
/// their name are never served.
#[tokio::test]
async fn evidence_is_kept_with_an_expiry_and_checked_on_read() {
    let (_server, bridge) = bridge().await;
    let store = KvScanStore::new(KvClient::new(&bridge.kv_config("ff:")), "ff:");
    let body = bytes::Bytes::from_static(b"[1,2,3]");
    let hash = freedom_shared::scan::sha256_hex(&body);
    let week = freedom_shared::scan::EVIDENCE_TTL;
    store
        .keep_evidence(&[(hash.clone(), body.clone())], week)
        .await
        .unwrap();
    let mut redis = bridge.redis();
    let key = format!("ff:scanner:evidence:{hash}");
    let ttl: i64 = redis::cmd("TTL")
        .arg(&key)
        .query_async(&mut redis)
        .await
        .unwrap();
    assert!(ttl > 0 && ttl <= week.as_secs() as i64, "{ttl}");
    assert_eq!(store.evidence(&hash).await.unwrap(), Some(body.to_vec()));
    let _: () = redis.set(&key, "W1swXQ==").await.unwrap(); // "[[0]": another body
    assert!(matches!(
        store.evidence(&hash).await,
        Err(StoreError::Corrupt(_))
    ));
}

#[tokio::test]
async fn records_live_in_redis_under_the_prefix_and_a_second_store_sees_them() {
    let (_server, bridge) = bridge().await;
    let first = store(&bridge, "ff:");
    first
        .append(snapshot("a", "s", "live", 0, 100))
        .await
        .unwrap();
    first.append(decision("b", "s", 0)).await.unwrap();
    let mut redis = bridge.redis();
    let mut keys: Vec<String> = redis.keys("*").await.unwrap();
    keys.sort();
    assert!(keys.iter().all(|k| k.starts_with("ff:")), "{keys:?}");
    assert!(keys.contains(&"ff:head".to_owned()) && keys.contains(&"ff:rec:2".to_owned()));

    // Another process (another client, nothing cached) reads the same ledger.
    let second = store(&bridge, "ff:");
    assert_eq!(second.head().await.unwrap(), first.head().await.unwrap());
    let (entry, head) = match second.append(decision("c", "s", 1)).await.unwrap() {
        AppendOutcome::Created { entry, head } => (entry, head),
        other => panic!("{other:?}"),
    };
    assert_eq!((entry.seq, head.size), (3, 3));
    // The first store's cached head is now stale: its next append still lands
    // at 4 with the right root.
    first.append(decision("d", "s", 2)).await.unwrap();
    assert_consistent(&second, 4).await;
    // Another prefix is another ledger.
    assert_eq!(
        store(&bridge, "other:").head().await.unwrap(),
        Head::empty()
    );
}

/// Since inception on the KV store: the first reader after months close
/// stores the roll-ups (one more round trip), later readers use them (two
/// round trips, as for any period), and the answer is the same as a
/// recomputation without them.
#[tokio::test]
async fn since_inception_keeps_roll_ups_in_one_more_round_trip_and_answers_the_same() {
    let (_server, bridge) = bridge().await;
    let writer = store(&bridge, "ff:");
    // 70 days from 5 January: January and February close, March is open.
    for day in 0..70 {
        for strategy in ["s", "t"] {
            let equity = 1000 + (day * 7 + i64::from(strategy == "t") * 3) % 50;
            writer
                .append(snapshot(
                    &format!("{strategy}{day}"),
                    strategy,
                    "paper",
                    day,
                    equity,
                ))
                .await
                .unwrap();
        }
    }
    let all = freedom_shared::service::Period::All;
    let reader = Arc::new(store(&bridge, "ff:"));
    let since_inception = |expected_round_trips: u64, why: &'static str| {
        let reader = Arc::clone(&reader);
        let bridge = &bridge;
        async move {
            let before = bridge.requests();
            let dashboard = freedom_shared::service::Dashboards::new(reader)
                .get(all)
                .await
                .unwrap();
            assert_eq!(bridge.requests() - before, expected_round_trips, "{why}");
            dashboard.json
        }
    };
    let first = since_inception(3, "the first reader stores the roll-ups").await;
    let mut redis = bridge.redis();
    let mut rollups: Vec<String> = redis.keys("ff:rollup:*").await.unwrap();
    rollups.sort();
    assert_eq!(rollups, ["ff:rollup:paper:s", "ff:rollup:paper:t"]);
    assert_eq!(since_inception(2, "a later reader uses them").await, first);
    let _: () = redis.del(&rollups).await.unwrap();
    assert_eq!(
        since_inception(3, "without them, all is recomputed").await,
        first
    );
}

#[tokio::test]
async fn appends_take_two_round_trips_cold_one_warm_and_reads_one() {
    let (_server, bridge) = bridge().await;
    let warm = store(&bridge, "ff:");
    for day in 0..5 {
        warm.append(snapshot(&format!("s{day}"), "s", "paper", day, 100 + day))
            .await
            .unwrap();
    }
    // A process that has never seen the head: read it, then the script.
    let fresh = Arc::new(store(&bridge, "ff:"));
    let before = bridge.requests();
    fresh.append(decision("d1", "s", 5)).await.unwrap();
    assert_eq!(bridge.requests() - before, 2, "cold append");
    // With the head it wrote last: the script alone.
    let before = bridge.requests();
    fresh.append(decision("d2", "s", 6)).await.unwrap();
    assert_eq!(bridge.requests() - before, 1, "warm append");
    // Replays and refusals are also one script call.
    let before = bridge.requests();
    let replay = fresh.append(decision("d2", "s", 6)).await.unwrap();
    assert!(matches!(replay, AppendOutcome::Unchanged { .. }));
    assert_eq!(bridge.requests() - before, 1, "replay");

    let reads: [(&str, u64); 4] = [
        ("page", 1),
        ("filtered page", 1),
        ("latest", 1),
        ("window", 1),
    ];
    for (what, limit) in reads {
        let before = bridge.requests();
        match what {
            "page" => {
                fresh.page(&conformance::all(3)).await.unwrap();
            }
            "filtered page" => {
                let query = PageQuery {
                    strategy_id: Some(freedom_shared::record::StrategyId::parse("s").unwrap()),
                    ..conformance::all(3)
                };
                assert_eq!(fresh.page(&query).await.unwrap().entries.len(), 3);
            }
            "latest" => {
                let latest = fresh.latest_snapshots().await.unwrap();
                assert_eq!(latest.first.unwrap().seq, 1, "the first record comes along");
            }
            _ => {
                let strategies = vec![
                    (
                        freedom_shared::record::StrategyId::parse("s").unwrap(),
                        freedom_shared::record::Mode::Paper,
                    ),
                    (
                        freedom_shared::record::StrategyId::parse("t").unwrap(),
                        freedom_shared::record::Mode::Live,
                    ),
                ];
                let window = fresh
                    .window(
                        &strategies,
                        conformance::day_nanos(1),
                        conformance::day_nanos(9),
                        10,
                    )
                    .await
                    .unwrap();
                assert_eq!(window.series[0].len(), 4);
                assert_eq!(window.decisions.len(), 2);
            }
        }
        assert!(bridge.requests() - before <= limit, "{what}");
    }
    // A cold dashboard (a new process): the latest snapshots with the head
    // and the first record, then the window; every period the same.
    for period in ["21", "all"] {
        let dashboards = freedom_shared::service::Dashboards::new(fresh.clone());
        let before = bridge.requests();
        let dashboard = dashboards
            .get(freedom_shared::service::Period::parse(Some(period)).unwrap())
            .await
            .unwrap();
        assert_eq!(
            bridge.requests() - before,
            2,
            "cold dashboard, period {period}"
        );
        assert!(dashboard.view.inception.is_some());
    }
}

#[tokio::test]
async fn a_retry_after_a_failed_but_applied_write_is_unchanged() {
    let (_server, bridge) = bridge().await;
    let store = store(&bridge, "ff:");
    store.append(decision("first", "s", 0)).await.unwrap();
    bridge.inject(Fault::FailAfter);
    let record = snapshot("second", "s", "live", 1, 100);
    let failed = store.append(record.clone()).await;
    assert!(
        matches!(failed, Err(StoreError::Unavailable { .. })),
        "{failed:?}"
    );
    match store.append(record).await.unwrap() {
        AppendOutcome::Unchanged { entry, head } => {
            assert_eq!((entry.seq, head.size), (2, 2));
        }
        other => panic!("the retry must be unchanged, got {other:?}"),
    }
    store.append(decision("third", "s", 2)).await.unwrap();
    assert_consistent(&store, 3).await;
}

#[tokio::test]
async fn a_failed_or_hanging_store_is_unavailable_and_nothing_is_half_written() {
    let (_server, bridge) = bridge().await;
    let store = quick_store(&bridge, "ff:");
    store.append(decision("first", "s", 0)).await.unwrap();
    let head = store.head().await.unwrap();

    for fault in [Fault::FailBefore, Fault::Hang] {
        bridge.inject(fault);
        let result = store.append(snapshot("refused", "s", "live", 1, 100)).await;
        assert!(
            matches!(result, Err(StoreError::Unavailable { .. })),
            "{fault:?}: {result:?}"
        );
        assert_eq!(store.head().await.unwrap(), head, "{fault:?}");
        bridge.inject(fault);
        let read = store.page(&conformance::all(10)).await;
        assert!(
            matches!(read, Err(StoreError::Unavailable { .. })),
            "{fault:?}: {read:?}"
        );
        bridge.inject(fault);
        assert!(store.latest_snapshots().await.is_err());
    }
    let mut redis = bridge.redis();
    let ids: Vec<String> = redis.hkeys("ff:ids").await.unwrap();
    assert_eq!(ids, vec!["first".to_owned()]);
    // The store works again once the bridge does.
    store
        .append(snapshot("after", "s", "live", 1, 100))
        .await
        .unwrap();
    assert_consistent(&store, 2).await;
}

#[tokio::test]
async fn scripts_are_reloaded_after_the_server_forgets_them() {
    let (_server, bridge) = bridge().await;
    let store = store(&bridge, "ff:");
    store.append(decision("a", "s", 0)).await.unwrap();
    store.append(decision("b", "s", 1)).await.unwrap();
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut bridge.redis())
        .await
        .unwrap();
    let before = bridge.requests();
    store.append(decision("c", "s", 2)).await.unwrap();
    assert_eq!(
        bridge.requests() - before,
        2,
        "EVALSHA, NOSCRIPT, then EVAL"
    );
    assert_consistent(&store, 3).await;
}

#[tokio::test]
async fn fifty_concurrent_appends_through_separate_clients_stay_consistent() {
    let (_server, bridge) = bridge().await;
    // Each task is its own client, as separate function instances would be.
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let store = store(&bridge, "ff:");
            tokio::spawn(async move { store.append(decision(&format!("d{i}"), "s", i)).await })
        })
        .collect();
    for task in tasks {
        assert!(matches!(
            task.await.unwrap().unwrap(),
            AppendOutcome::Created { .. }
        ));
    }
    assert_consistent(&store(&bridge, "ff:"), 50).await;
}

#[tokio::test]
async fn a_bad_token_or_a_bad_command_is_an_error_without_the_token() {
    let (_server, bridge) = bridge().await;
    let mut config = bridge.kv_config("ff:");
    config = freedom_shared::config::kv_config(|name| match name {
        "FF_KV_REST_API_URL" => Some(config.url.clone()),
        "FF_KV_REST_API_TOKEN" => Some("wrong-token-value".into()),
        _ => None,
    })
    .unwrap()
    .unwrap();
    let client = KvClient::new(&config);
    let error = client.command(&Command::new("PING")).await.unwrap_err();
    assert!(matches!(error, KvError::Unauthorized), "{error:?}");
    let store_error = StoreError::from(error);
    assert!(!store_error.to_string().contains("wrong-token-value"));

    let client = KvClient::new(&bridge.kv_config("ff:"));
    assert_eq!(
        client.command(&Command::new("PING")).await.unwrap(),
        serde_json::json!("PONG")
    );
    let error = client
        .command(&Command::new("NOSUCHCOMMAND"))
        .await
        .unwrap_err();
    assert!(matches!(error, KvError::Command(_)), "{error:?}");
    let items = client
        .pipeline(&[
            Command::new("SET").arg("k").arg("v"),
            Command::new("INCR").arg("k"),
            Command::new("GET").arg("k"),
        ])
        .await
        .unwrap();
    assert_eq!(items[0], Ok(serde_json::json!("OK")));
    assert!(items[1].is_err());
    assert_eq!(items[2], Ok(serde_json::json!("v")));
}

#[tokio::test]
async fn an_expired_kv_lock_passes_on_and_fences_out_its_old_holder() {
    let (_server, bridge) = bridge().await;
    let client = KvClient::new(&bridge.kv_config("ff:"));
    let store = Arc::new(KvScanStore::new(client, "ff:"));
    let stale = store
        .acquire(Duration::from_millis(100))
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .acquire(Duration::from_secs(60))
            .await
            .unwrap()
            .is_none()
    );
    // Redis expires the key on its own clock; wait for that by polling the
    // lock itself (each attempt is an immediate answer), with a deadline.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let fresh = loop {
        if let Some(token) = store.acquire(Duration::from_secs(60)).await.unwrap() {
            break token;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lock never expired"
        );
        tokio::task::yield_now().await;
    };
    conformance::assert_stale_holder_is_fenced_out(store.as_ref(), &stale, &fresh).await;
}

/// A ledger written before tiles were kept: its head has no `tiles` field
/// and no tile keys exist.
async fn forget_the_tiles(server: &RedisServer, prefix: &str) {
    let mut redis = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let keys: Vec<String> = redis.keys(format!("{prefix}tile:*")).await.unwrap();
    assert!(!keys.is_empty());
    let _: () = redis.del(keys).await.unwrap();
    let _: () = redis.hdel(format!("{prefix}head"), "tiles").await.unwrap();
}

#[tokio::test]
async fn a_ledger_without_tiles_gets_them_built_once_then_appends_keep_them() {
    let (server, bridge) = bridge().await;
    let store = store(&bridge, "old:");
    for i in 0..300 {
        store
            .append(decision(&format!("d{i}"), "s", i))
            .await
            .unwrap();
    }
    forget_the_tiles(&server, "old:").await;
    // Appends while the tiles are missing leave them alone...
    store.append(decision("late", "s", 0)).await.unwrap();
    // ...and the first read that needs them builds them from the leaves.
    conformance::assert_tiles_match_the_leaves(&store).await;
    store.append(decision("after", "s", 0)).await.unwrap();
    conformance::assert_tiles_match_the_leaves(&store).await;
    assert_consistent(&store, 302).await;
}

#[tokio::test]
async fn tiles_take_one_round_trip_and_a_proof_two() {
    use freedom_shared::service::Log;
    use freedom_shared::tlog::note::SigningKey;
    use freedom_shared::tlog::tiles::TilePath;
    let (_server, bridge) = bridge().await;
    let store = store(&bridge, "ff:");
    for i in 0..300 {
        store
            .append(decision(&format!("d{i}"), "s", i))
            .await
            .unwrap();
    }
    let key = SigningKey::from_seed("example.com/log", [1; 32]).unwrap();
    let store = Arc::new(store);
    let log = Log::new(store.clone(), "example.com/log", Some(key)).unwrap();
    // Warm the scripts: a first call of a script loads it.
    log.inclusion(1, None).await.unwrap();
    let before = bridge.requests();
    store.append(decision("warm", "s", 0)).await.unwrap();
    assert_eq!(bridge.requests() - before, 1, "an append with tiles");
    for path in ["0/001.p/45", "1/000.p/1", "entries/000"] {
        let before = bridge.requests();
        log.tile(&TilePath::parse(path).unwrap()).await.unwrap();
        assert_eq!(bridge.requests() - before, 1, "tile {path}");
    }
    for (seq, size) in [(1, None), (300, None), (5, Some(257))] {
        let before = bridge.requests();
        log.inclusion(seq, size).await.unwrap();
        assert_eq!(bridge.requests() - before, 2, "proof of {seq}");
    }
    let before = bridge.requests();
    log.consistency(17, None).await.unwrap();
    assert_eq!(bridge.requests() - before, 2, "consistency");
}

/// Eight readers arriving together after a new head share one dashboard
/// computation: each reads the head (with the latest snapshots), and the
/// window is read once, not eight times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_cold_dashboards_share_one_computation() {
    let (_server, bridge) = bridge().await;
    let writer = store(&bridge, "ff:");
    for day in 0..30 {
        for strategy in ["s", "t", "u"] {
            writer
                .append(snapshot(
                    &format!("{strategy}{day}"),
                    strategy,
                    "live",
                    day,
                    100 + day,
                ))
                .await
                .unwrap();
        }
    }
    let reader = Arc::new(store(&bridge, "ff:"));
    let dashboards = Arc::new(freedom_shared::service::Dashboards::new(reader.clone()));
    // Warm the scripts and the connection, then move the head.
    dashboards
        .get(freedom_shared::service::Period::All)
        .await
        .unwrap();
    writer.append(decision("new-head", "s", 31)).await.unwrap();
    let before = bridge.requests();
    let readers: Vec<_> = (0..8)
        .map(|_| {
            let dashboards = Arc::clone(&dashboards);
            tokio::spawn(async move {
                dashboards
                    .get(freedom_shared::service::Period::TradingDays(63))
                    .await
                    .unwrap()
                    .json
            })
        })
        .collect();
    let mut answers = Vec::new();
    for reader in readers {
        answers.push(reader.await.unwrap());
    }
    assert!(answers.windows(2).all(|pair| pair[0] == pair[1]));
    assert_eq!(
        bridge.requests() - before,
        8 + 1,
        "eight head reads, one window"
    );
}

/// Round 4: a hash tile lost from Redis was never rebuilt (every proof
/// needing it, and the next append extending it, failed for good), and a
/// record altered in Redis was served unchecked against its leaf hash. A
/// lost tile is now rebuilt from the leaves (proofs, the tile and appends
/// work again, and agree with a log of the same records); an altered
/// record is refused wherever it would be served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_tile_is_rebuilt_and_an_altered_record_is_never_served() {
    use freedom_shared::service::Log;
    use freedom_shared::tlog::note::SigningKey;
    use freedom_shared::tlog::tiles::TilePath;
    let (_server, bridge) = bridge().await;
    let store = Arc::new(store(&bridge, "ff:"));
    for n in 0..300 {
        store
            .append(decision(&format!("d{n}"), "s", n % 200))
            .await
            .unwrap();
    }
    let key = SigningKey::from_seed("kv.example/log", [3; 32]).unwrap();
    let log = Log::new(store.clone(), "kv.example/log", Some(key.clone())).unwrap();
    let before = log.inclusion(10, None).await.unwrap();
    let level0 = TilePath::parse("0/000").unwrap();
    let tile_before = log.tile(&level0).await.unwrap();
    let mut redis = bridge.redis();
    for lost in ["ff:tile:0:0", "ff:tile:1:0"] {
        let _: () = redis.del(lost).await.unwrap();
    }
    let fresh = Log::new(store.clone(), "kv.example/log", Some(key)).unwrap();
    assert_eq!(fresh.inclusion(10, None).await.unwrap(), before);
    assert_eq!(fresh.tile(&level0).await.unwrap(), tile_before);
    let _: () = redis.del("ff:tile:1:0").await.unwrap();
    assert!(matches!(
        store
            .append(decision("after-loss", "s", 250))
            .await
            .unwrap(),
        AppendOutcome::Created { .. }
    ));
    assert_consistent(&store, 301).await;

    // An altered record: its leaf hash prefix kept, its JSON changed.
    let stored: String = redis.get("ff:rec:5").await.unwrap();
    let altered = stored.replacen("\"s\"", "\"t\"", 1);
    assert_ne!(altered, stored);
    let _: () = redis.set("ff:rec:5", &altered).await.unwrap();
    let page = store.page(&conformance::all(1000)).await;
    assert!(matches!(page, Err(StoreError::Corrupt(_))), "{page:?}");
    let run = store.entry_run(1, 10).await;
    assert!(matches!(run, Err(StoreError::Corrupt(_))), "{run:?}");
}

/// A witness in process that cosigns whatever it is brought, dated by a
/// clock the test sets: the same rounds give the same cosignatures.
struct FixedClockWitness {
    key: freedom_shared::tlog::cosignature::CosignerKey,
    time: Arc<std::sync::atomic::AtomicU64>,
}

#[async_trait::async_trait]
impl freedom_shared::ports::WitnessClient for FixedClockWitness {
    async fn add_checkpoint(
        &self,
        _prefix: &str,
        body: &str,
        _timeout: Duration,
    ) -> Result<freedom_shared::ports::WitnessReply, String> {
        let note = &body[body.find("\n\n").ok_or("no checkpoint")? + 2..];
        let text = &note[..note.find("\n\n").ok_or("no signature")? + 1];
        Ok(freedom_shared::ports::WitnessReply {
            status: 200,
            content_type: None,
            body: self
                .key
                .cosign(text, self.time.load(Ordering::SeqCst))
                .unwrap(),
        })
    }
}

/// The witnessed history through the KV store and through SQLite: the same
/// appends and rounds give the same witnessed times, each record's fixed
/// once given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn witnessed_times_are_the_same_through_the_kv_store_and_sqlite() {
    use freedom_shared::adapters::{SqliteLedgerStore, SqliteWitnessMemory};
    use freedom_shared::ports::{LedgerStore, WitnessMemory};
    use freedom_shared::service::{Log, Recorded};
    use freedom_shared::tlog::cosignature::CosignerKey;
    use freedom_shared::tlog::note::SigningKey;
    use freedom_shared::tlog::policy::Policy;

    let (_server, bridge) = bridge().await;
    let dir = tempfile::tempdir().unwrap();
    let key = SigningKey::from_seed("same.example/log", [5; 32]).unwrap();
    let witness = CosignerKey::from_seed("w.example", [6; 32]).unwrap();
    let policy = format!(
        "witness W {} http://127.0.0.1:9\nquorum W\n",
        witness.witness_key().to_text()
    );
    let time = Arc::new(std::sync::atomic::AtomicU64::new(1_790_000_000));
    let kv_memory = Arc::new(KvWitnessMemory::new(
        KvClient::new(&bridge.kv_config("same:")),
        "same:",
    ));
    let stores: Vec<(Arc<dyn LedgerStore>, Arc<dyn WitnessMemory>)> = vec![
        (Arc::new(store(&bridge, "same:")), kv_memory),
        (
            Arc::new(SqliteLedgerStore::open(dir.path()).unwrap()),
            Arc::new(SqliteWitnessMemory::open(dir.path()).unwrap()),
        ),
    ];
    let logs: Vec<(Arc<dyn LedgerStore>, Log)> = stores
        .into_iter()
        .map(|(ledger, memory)| {
            let log = Log::new(
                Arc::clone(&ledger) as _,
                "same.example/log",
                Some(key.clone()),
            )
            .unwrap()
            .with_new_log(true)
            // The service's clock reads what the witness's does: its
            // cosignatures are dated inside the rounds that ask for them.
            .with_clock({
                let time = Arc::clone(&time);
                Arc::new(move || {
                    chrono::DateTime::from_timestamp(time.load(Ordering::SeqCst) as i64, 0).unwrap()
                })
            })
            .with_witnesses(
                Policy::parse(&policy).unwrap(),
                memory,
                Arc::new(FixedClockWitness {
                    key: witness.clone(),
                    time: Arc::clone(&time),
                }),
            );
            (ledger, log)
        })
        .collect();
    // Three rounds: after records 1-2, after 3, and one with nothing new.
    let rounds: [(&[i64], u64); 3] = [
        (&[1, 2], 1_790_000_100),
        (&[3], 1_790_000_500),
        (&[], 1_790_000_900),
    ];
    for (appends, at) in rounds {
        time.store(at, Ordering::SeqCst);
        for &i in appends {
            for (ledger, _) in &logs {
                ledger
                    .append(decision(&format!("d{i}"), "s", i))
                    .await
                    .unwrap();
            }
        }
        for (_, log) in &logs {
            assert!(log.cosign(false).await.unwrap().quorum_met);
        }
    }
    let mut answers = Vec::new();
    for (_, log) in &logs {
        let times = log.witnessed_times();
        let table = times.table(1, 4, times.top().await.unwrap()).await.unwrap();
        let recorded: Vec<Recorded> = (1..=4).map(|seq| table.of(seq)).collect();
        let notes = (
            log.witnessed_checkpoint(1).await.unwrap().unwrap().note,
            log.witnessed_checkpoint(3).await.unwrap().unwrap().note,
        );
        answers.push((recorded, notes));
    }
    assert_eq!(answers[0], answers[1], "the KV store and SQLite agree");
    let at = |recorded: Recorded| match recorded {
        Recorded::Witnessed(w) => Some((w.at, w.size)),
        _ => None,
    };
    let recorded = &answers[0].0;
    assert_eq!(
        recorded.iter().map(|r| at(*r)).collect::<Vec<_>>(),
        [
            Some((1_790_000_100, 2)),
            Some((1_790_000_100, 2)),
            Some((1_790_000_500, 3)),
            None
        ],
        "a round with nothing new keeps nothing, and record 4 was never appended"
    );
}
