//! Dashboard latency against history size.
//!
//! Ledgers of 1 000, 100 000 and 1 000 000 snapshots over 50 strategies, on
//! the embedded store. Each strategy's last 20 snapshots are weekday closes
//! in May 2026 (what a 63-day window shows); the rest of its history is
//! hourly before 2026, outside the window. So the window's content is the
//! same in all three ledgers and only the history grows: a dashboard whose
//! cost follows the window costs the same on all three.
//!
//! - `dashboard/cold/N`: period 63 computed from the store (cache miss);
//! - `dashboard/cold_8_at_once/N`: eight concurrent readers of period 63 at
//!   a head nobody has read (one computation shared; goal within 1.5× of
//!   `cold`);
//! - `dashboard/warm/N`: the same head again (answered from memory after
//!   the one read that tells the head);
//! - `dashboard/all_cold/N`: `period=all` computed from the store, with the
//!   since-inception roll-ups in place (what every request after the first
//!   finds): each series' roll-up and its open month (the goal is within
//!   1.5× of period 63);
//! - `dashboard/all_first/N`: `period=all` on a ledger without roll-ups:
//!   every snapshot of every series is folded and the roll-ups stored (once
//!   per ledger, and again only if the roll-up format changes).
//!
//! Every reader compares the paper series with `strategy-00` as their
//! benchmark, so the figures' statistics, deflation and benchmark
//! comparison are part of every measurement.
//!
//! Ledgers are built once into `$CARGO_TARGET_DIR/bench-ledgers/` (the
//! 1 M ledger takes a few minutes) and reused, by the `tlog` bench too.
//! Run: `cargo bench -p freedom-shared --bench dashboard`.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

mod support;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use freedom_shared::config::Benchmarks;
use freedom_shared::ports::SeriesReads;
use freedom_shared::record::StrategyId;
use freedom_shared::service::{Dashboards, Period};
use std::sync::Arc;
use support::bench_ledger;

/// A reader with nothing in memory, comparing with `strategy-00`.
fn reader(store: Arc<dyn SeriesReads>) -> Dashboards {
    Dashboards::new(store).with_benchmarks(Benchmarks {
        live: None,
        paper: StrategyId::parse("strategy-00"),
    })
}

fn dashboards(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let period = Period::parse(Some("63")).unwrap();
    let all = Period::All;
    let mut group = c.benchmark_group("dashboard");
    group.sample_size(30);
    for total in support::ledger_sizes() {
        let store = Arc::new(bench_ledger(&runtime, total));
        group.bench_function(BenchmarkId::new("cold", total), |b| {
            b.to_async(&runtime).iter(|| async {
                let fresh = reader(store.clone());
                fresh.get(period).await.unwrap()
            })
        });
        // Eight readers arriving together at a head nobody has read: they
        // share one computation (the goal is within 1.5x of one reader).
        group.bench_function(BenchmarkId::new("cold_8_at_once", total), |b| {
            b.to_async(&runtime).iter(|| async {
                let fresh = reader(store.clone());
                let readers = (0..8).map(|_| fresh.get(period));
                futures_util::future::join_all(readers).await
            })
        });
        let warm = reader(store.clone());
        runtime.block_on(warm.get(period)).unwrap();
        group.bench_function(BenchmarkId::new("warm", total), |b| {
            b.to_async(&runtime)
                .iter(|| async { warm.get(period).await.unwrap() })
        });
        // The first reader stores the roll-ups; every later one uses them.
        runtime.block_on(reader(store.clone()).get(all)).unwrap();
        group.bench_function(BenchmarkId::new("all_cold", total), |b| {
            b.to_async(&runtime).iter(|| async {
                let fresh = reader(store.clone());
                fresh.get(all).await.unwrap()
            })
        });
    }
    group.finish();
    // Without roll-ups, since inception folds every snapshot: few samples,
    // or the 1 M ledger would take an hour.
    let mut group = c.benchmark_group("dashboard");
    group.sample_size(10);
    for total in support::ledger_sizes() {
        let store = Arc::new(bench_ledger(&runtime, total));
        group.bench_function(BenchmarkId::new("all_first", total), |b| {
            b.iter_custom(|iterations| {
                let mut spent = std::time::Duration::ZERO;
                for _ in 0..iterations {
                    support::forget_rollups(total);
                    let started = std::time::Instant::now();
                    runtime.block_on(reader(store.clone()).get(all)).unwrap();
                    spent += started.elapsed();
                }
                spent
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = dashboards
}
criterion_main!(benches);
