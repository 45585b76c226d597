//! Series export pages against series length, and memory under concurrent
//! exports (a bench binary: it measures the process's peak RSS, which a
//! criterion harness would share).
//!
//! For one series of 1 000 and of 100 000 hourly snapshots on the embedded
//! store (ledgers built once into `$CARGO_TARGET_DIR/bench-ledgers/`):
//!
//! - `page`: the JSON page of the series' last 500 snapshots (its cursor
//!   deep in the 100 k series), the series' month ends already known for
//!   this head (what every page after a reader's first costs): the median
//!   of 50;
//! - `page_cold`: the same with nothing known (a new process): the
//!   since-inception roll-up and its open month are read first; the
//!   median of 20;
//! - then 16 concurrent clients each export the 100 000-point series whole
//!   as CSV, following `next`, waiting the `Retry-After` second when the
//!   answer is busy: the wall time and the process's peak RSS (`VmHWM`).
//!
//! The goals (docs/design.md, "A read"): a page at
//! 100 k costs at most 1.5× a page at 1 k; the 16 exports stay under
//! 200 MB of RSS. Run: `cargo bench -p freedom-shared --bench exports`.

// The 50-strategy ledgers of the other benches are not used here.
#[allow(dead_code)]
mod support;

use freedom_shared::ports::HeadReads;
use freedom_shared::record::{Mode, StrategyId};
use freedom_shared::service::{ExportError, ExportFormat, Exports, SeriesExport};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The process's peak resident set, from `/proc/self/status`, in MB.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let id = StrategyId::parse("strategy-00").unwrap();
    let mut pages = Vec::new();
    for points in [1_000usize, 100_000] {
        let store = support::series_ledger(&runtime, points);
        let head = runtime.block_on(store.head()).unwrap();
        let export = SeriesExport {
            strategy_id: &id,
            mode: Mode::Paper,
            head,
        };
        // The same rows in both series: the page of the last 500
        // snapshots (a cursor deep in the 100 k series, mid-series in the
        // 1 k one), so only the series' length differs.
        let cursor = head.size - 500;
        let store = Arc::new(store);
        let new_exports = || Exports::new(store.clone(), store.clone());
        let page = |exports: &Exports| {
            let started = Instant::now();
            let page = runtime
                .block_on(exports.series_page(&export, Some(cursor), ExportFormat::Json))
                .unwrap();
            assert!(page.next.is_none() && page.body.matches("\"seq\":").count() == 500);
            started.elapsed()
        };
        // The first reader stores the roll-up; later ones use it.
        page(&new_exports());
        let warm = new_exports();
        let warm_time = median((0..50).map(|_| page(&warm)).collect());
        let cold_time = median((0..20).map(|_| page(&new_exports())).collect());
        println!(
            "exports/page/{points}: {warm_time:.2?}   exports/page_cold/{points}: {cold_time:.2?}"
        );
        pages.push((warm_time, cold_time));
    }
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "100 k / 1 k: page {:.2}x, page_cold {:.2}x (goal <= 1.5x)",
        ratio(pages[1].0, pages[0].0),
        ratio(pages[1].1, pages[0].1)
    );

    let store = Arc::new(support::series_ledger(&runtime, 100_000));
    let exports = Arc::new(Exports::new(store.clone(), store.clone()));
    let before = peak_rss_mb();
    let started = Instant::now();
    let clients: Vec<_> = (0..16)
        .map(|_| {
            let (store, exports, id) = (Arc::clone(&store), Arc::clone(&exports), id.clone());
            runtime.spawn(async move {
                let head = store.head().await.unwrap();
                let export = SeriesExport {
                    strategy_id: &id,
                    mode: Mode::Paper,
                    head,
                };
                let (mut after, mut rows, mut busy) = (None, 0usize, 0usize);
                loop {
                    match exports.series_page(&export, after, ExportFormat::Csv).await {
                        Ok(page) => {
                            rows += page.body.lines().count() - 1;
                            match page.next {
                                Some(next) => after = Some(next),
                                None => return (rows, busy),
                            }
                        }
                        Err(ExportError::Busy) => {
                            busy += 1;
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                        Err(error) => panic!("{error}"),
                    }
                }
            })
        })
        .collect();
    let mut busy = 0;
    for client in clients {
        let (rows, refused) = runtime.block_on(client).unwrap();
        assert_eq!(rows, 100_000, "every row exported once");
        busy += refused;
    }
    println!(
        "16 concurrent whole CSV exports of 100 000 points: {:.1?}, {busy} busy answers, peak RSS {:.0} MB (before {:.0} MB; goal < 200 MB)",
        started.elapsed(),
        peak_rss_mb(),
        before
    );
}
