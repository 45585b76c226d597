//! Benchmarks of the KV REST store through the production client, an
//! Upstash-protocol bridge and a private local `redis-server`, with the round
//! trips of each operation counted at the bridge.
//!
//! - `kv/append_warm`: one append by a process that wrote the previous one
//!   (its cached head is current): the append script alone;
//! - `kv/append_cold`: one append by a process that has not seen the head
//!   (a fresh function instance): read the head, then the script;
//! - `kv/page_100`: a 100-entry page of a 10 000-record ledger;
//! - `kv/page_100_filtered`: the same, filtered by strategy.
//!
//! Run: `cargo bench -p freedom-shared --bench kv` (needs `redis-server`).
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use freedom_shared::adapters::KvClient;
use freedom_shared::adapters::KvLedgerStore;
use freedom_shared::ports::{Candidate, PageQuery};
use freedom_shared::ports::{LedgerAppend, LedgerPages};
use freedom_shared::record::Guard;
use freedom_shared::record::{Record, StrategyId};
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::UpstashBridge;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};

fn decision(id: u64) -> Candidate {
    let strategy = format!("bench-{}", id % 10);
    let body = json!({
        "id": format!("d-{id}"), "type": "decision", "visibility": "public", "mode": "paper",
        "strategyId": strategy, "strategyName": "Benchmark", "asOf": "2026-05-04T16:00:00Z",
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

fn page(strategy: Option<&str>) -> PageQuery {
    PageQuery {
        before: None,
        limit: 100,
        strategy_id: strategy.map(|s| StrategyId::parse(s).unwrap()),
        kind: None,
        mode: None,
    }
}

fn kv(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = RedisServer::start().expect("redis-server");
    let bridge = runtime
        .block_on(UpstashBridge::start(&server.url(), "bench-token"))
        .unwrap();
    let config = bridge.kv_config("bench:");
    let new_store = || KvLedgerStore::new(KvClient::new(&config), "bench:");
    let store = new_store();
    let next = AtomicU64::new(0);
    runtime.block_on(async {
        for _ in 0..10_000 {
            store
                .append(decision(next.fetch_add(1, Ordering::Relaxed)))
                .await
                .unwrap();
        }
    });

    // Round trips per operation, counted at the bridge.
    let count = |work: &dyn Fn()| {
        let before = bridge.requests();
        work();
        bridge.requests() - before
    };
    let warm = count(&|| {
        runtime
            .block_on(store.append(decision(next.fetch_add(1, Ordering::Relaxed))))
            .unwrap();
    });
    let cold = count(&|| {
        runtime
            .block_on(new_store().append(decision(next.fetch_add(1, Ordering::Relaxed))))
            .unwrap();
    });
    let paged = count(&|| {
        runtime.block_on(store.page(&page(None))).unwrap();
    });
    let filtered = count(&|| {
        runtime
            .block_on(store.page(&page(Some("bench-3"))))
            .unwrap();
    });
    println!(
        "round trips: append warm {warm}, append cold {cold}, page_100 {paged}, page_100_filtered {filtered}"
    );

    c.bench_function("kv/append_warm", |b| {
        b.to_async(&runtime).iter_batched(
            || decision(next.fetch_add(1, Ordering::Relaxed)),
            |candidate| async { store.append(candidate).await.unwrap() },
            BatchSize::SmallInput,
        )
    });
    c.bench_function("kv/append_cold", |b| {
        b.to_async(&runtime).iter_batched(
            || (new_store(), decision(next.fetch_add(1, Ordering::Relaxed))),
            |(fresh, candidate)| async move { fresh.append(candidate).await.unwrap() },
            BatchSize::SmallInput,
        )
    });
    let query = page(None);
    c.bench_function("kv/page_100", |b| {
        b.to_async(&runtime)
            .iter(|| async { store.page(&query).await.unwrap() })
    });
    let query = page(Some("bench-3"));
    c.bench_function("kv/page_100_filtered", |b| {
        b.to_async(&runtime)
            .iter(|| async { store.page(&query).await.unwrap() })
    });
}

criterion_group!(benches, kv);
criterion_main!(benches);
