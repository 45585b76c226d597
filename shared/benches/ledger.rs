//! Benchmarks of the write path's parts.
//!
//! - `record/parse+guard`: a snapshot with 20 positions from bytes to a
//!   typed record, every rule and the sensitive-content guard included;
//! - `record/canonical+leaf_hash`: RFC 8785 text and its leaf hash;
//! - `embedded/append`: one durable append (WAL, synchronous = FULL) on a
//!   ledger that grows as the benchmark runs;
//! - `embedded/page_100`: a 100-entry ledger page from a 10 000-record ledger.
//!
//! Run: `cargo bench -p freedom-shared --bench ledger`.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::ports::{Candidate, PageQuery};
use freedom_shared::ports::{LedgerAppend, LedgerPages};
use freedom_shared::record::Guard;
use freedom_shared::record::Record;
use serde_json::json;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

fn snapshot_body(id: u64) -> Vec<u8> {
    let positions: Vec<_> = (0..20)
        .map(|i| json!({"symbol": format!("SYM{i}"), "quantity": 10 + i, "cost": 1000.5, "mark": 101.25}))
        .collect();
    let invested: f64 = (0..20).map(|i| (10 + i) as f64 * 101.25).sum();
    json!({
        "id": format!("bench-{id}"), "type": "snapshot", "visibility": "public", "mode": "live",
        "strategyId": "bench", "strategyName": "Benchmark strategy",
        "asOf": "2026-05-04T16:00:00Z", "source": {"name": "bench", "url": "https://example.com/bench"},
        "currency": "USD", "equity": invested + 5000.25, "flowSincePrevious": 0, "cash": 5000.25,
        "positions": positions
    })
    .to_string()
    .into_bytes()
}

fn decision(id: u64) -> Candidate {
    let body = json!({
        "id": format!("d-{id}"), "type": "decision", "visibility": "public", "mode": "paper",
        "strategyId": "bench", "strategyName": "Benchmark", "asOf": "2026-05-04T16:00:00Z",
        "source": {"name": "bench", "url": "https://example.com/bench"},
        "action": "hold", "summary": "Hold the benchmark position; nothing changed since the last check."
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

fn records(c: &mut Criterion) {
    let guard = Guard::new(Some("bench-write-token-0123456789"));
    let now = chrono::Utc::now();
    let body = snapshot_body(1);
    c.bench_function("record/parse+guard", |b| {
        b.iter(|| Record::parse(black_box(&body), &guard, now).unwrap())
    });
    let record = Record::parse(&body, &guard, now).unwrap();
    c.bench_function("record/canonical+leaf_hash", |b| {
        b.iter(|| Candidate::new(black_box(&record)))
    });
}

fn embedded(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    let next = AtomicU64::new(0);
    c.bench_function("embedded/append", |b| {
        b.to_async(&runtime).iter_batched(
            || decision(next.fetch_add(1, Ordering::Relaxed)),
            |candidate| async { store.append(candidate).await.unwrap() },
            BatchSize::SmallInput,
        )
    });

    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    runtime.block_on(async {
        for id in 0..10_000 {
            store.append(decision(id)).await.unwrap();
        }
    });
    let query = PageQuery {
        before: Some(5_000),
        limit: 100,
        strategy_id: None,
        kind: None,
        mode: None,
    };
    c.bench_function("embedded/page_100", |b| {
        b.to_async(&runtime)
            .iter(|| async { store.page(&query).await.unwrap() })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = records, embedded
}
criterion_main!(benches);
