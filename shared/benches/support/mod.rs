//! The benchmarks' ledgers: 1 000, 100 000 or 1 000 000 snapshots over 50
//! strategies on the embedded store, built once into
//! `$CARGO_TARGET_DIR/bench-ledgers/` and reused by every bench that
//! includes this module (`mod support;`).
//!
//! Each strategy's last 20 snapshots are weekday closes in May 2026 (what a
//! 63-day window shows); the rest of its history is hourly before 2026.

use chrono::{DateTime, Datelike, Duration, Utc, Weekday};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::ports::Candidate;
use freedom_shared::ports::HeadReads;
use freedom_shared::record::Guard;
use freedom_shared::record::{Record, decimal_json};
use rust_decimal::Decimal;
use serde_json::json;
use std::path::PathBuf;

const STRATEGIES: usize = 50;
const RECENT: usize = 20;

fn recent_closes() -> Vec<DateTime<Utc>> {
    let mut days = Vec::new();
    let mut at: DateTime<Utc> = "2026-05-29T20:00:00Z".parse().unwrap();
    while days.len() < RECENT {
        if !matches!(at.weekday(), Weekday::Sat | Weekday::Sun) {
            days.push(at);
        }
        at -= Duration::days(1);
    }
    days.reverse();
    days
}

fn candidate(strategy: usize, at: DateTime<Utc>, equity: Decimal) -> Candidate {
    let body = json!({
        "id": format!("s{strategy}-{}", at.timestamp()), "type": "snapshot", "visibility": "public", "mode": "paper",
        "strategyId": format!("strategy-{strategy:02}"), "strategyName": format!("Strategy {strategy}"),
        "asOf": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "source": {"name": "bench", "url": "https://example.com/bench"},
        "currency": "USD", "equity": decimal_json(equity), "flowSincePrevious": 0
    });
    Candidate::new(
        &Record::parse(
            body.to_string().as_bytes(),
            &Guard::default(),
            chrono::Utc::now(),
        )
        .expect("valid"),
    )
}

/// The ledger sizes the benches measure: 1 k, 100 k and 1 M snapshots, or
/// those `FF_BENCH_LEDGERS` lists (comma-separated, e.g. `1000,100000`).
pub fn ledger_sizes() -> Vec<usize> {
    std::env::var("FF_BENCH_LEDGERS")
        .ok()
        .map(|list| {
            list.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect()
        })
        .unwrap_or_else(|| vec![1_000, 100_000, 1_000_000])
}

/// Where the ledger of `total` snapshots is kept.
fn ledger_dir(total: usize) -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("target"));
    target.join("bench-ledgers").join(format!("ledger-{total}"))
}

/// Deletes the dashboard's since-inception roll-ups of the ledger of
/// `total` snapshots, as on a ledger no reader has asked for them yet.
#[allow(dead_code)] // Only the dashboard bench uses it.
pub fn forget_rollups(total: usize) {
    let path = ledger_dir(total).join(freedom_shared::adapters::DATABASE_FILE);
    rusqlite::Connection::open(path)
        .and_then(|db| db.execute("DELETE FROM rollups", []))
        .expect("delete the roll-ups");
}

/// Opens (building on first use) a ledger of `total` snapshots.
pub fn bench_ledger(runtime: &tokio::runtime::Runtime, total: usize) -> SqliteLedgerStore {
    let dir = ledger_dir(total);
    let store = SqliteLedgerStore::open(&dir).expect("open bench ledger");
    if runtime.block_on(store.head()).expect("head").size == total as u64 {
        return store;
    }
    drop(store);
    std::fs::remove_dir_all(&dir).ok();
    let store = SqliteLedgerStore::open(&dir).expect("create bench ledger");
    let older = total / STRATEGIES - RECENT;
    let history_end: DateTime<Utc> = "2025-12-31T23:00:00Z".parse().unwrap();
    let recent = recent_closes();
    runtime.block_on(async {
        for strategy in 0..STRATEGIES {
            let mut batch = Vec::with_capacity(total / STRATEGIES);
            let mut equity = Decimal::new(1_000_000 + strategy as i64 * 100, 2);
            let times = (0..older)
                .rev()
                .map(|h| history_end - Duration::hours(h as i64))
                .chain(recent.iter().copied());
            for (i, at) in times.enumerate() {
                let step = Decimal::new(((i * 7 + strategy) % 11) as i64 - 5, 3);
                equity = (equity * (Decimal::ONE + step)).round_dp(2);
                batch.push(candidate(strategy, at, equity));
                if batch.len() == 20_000 {
                    store
                        .append_batch(std::mem::take(&mut batch))
                        .await
                        .expect("batch");
                }
            }
            store.append_batch(batch).await.expect("batch");
        }
    });
    assert_eq!(runtime.block_on(store.head()).unwrap().size, total as u64);
    store
}

/// Opens (building on first use) a ledger holding one series,
/// `strategy-00` in paper, of `points` hourly snapshots ending in May 2026:
/// what the exports bench pages through.
#[allow(dead_code)] // Only the exports bench uses it.
pub fn series_ledger(runtime: &tokio::runtime::Runtime, points: usize) -> SqliteLedgerStore {
    let dir = ledger_dir(points).with_file_name(format!("series-{points}"));
    let store = SqliteLedgerStore::open(&dir).expect("open bench ledger");
    if runtime.block_on(store.head()).expect("head").size == points as u64 {
        return store;
    }
    drop(store);
    std::fs::remove_dir_all(&dir).ok();
    let store = SqliteLedgerStore::open(&dir).expect("create bench ledger");
    let end: DateTime<Utc> = "2026-05-29T20:00:00Z".parse().unwrap();
    runtime.block_on(async {
        let mut equity = Decimal::new(1_000_000, 2);
        let mut batch = Vec::new();
        for i in 0..points {
            let at = end - Duration::hours((points - 1 - i) as i64);
            let step = Decimal::new((i * 7 % 11) as i64 - 5, 3);
            equity = (equity * (Decimal::ONE + step)).round_dp(2);
            batch.push(candidate(0, at, equity));
            if batch.len() == 20_000 {
                store
                    .append_batch(std::mem::take(&mut batch))
                    .await
                    .expect("batch");
            }
        }
        store.append_batch(batch).await.expect("batch");
    });
    store
}
