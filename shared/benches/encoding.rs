//! What compressing an answer costs, per effort: a body made once and kept
//! (Brotli quality 9, gzip 9: the dashboard per head, the page) against a
//! body made for one request (Brotli 3, gzip 2: a page of the ledger, a
//! filtered or paged dashboard, an export), on a 3.8 MB dashboard-like JSON
//! answer (the size of a full dashboard page). Prints the median of 5 and
//! the compressed size of each. Round 4's goal: one unauthenticated request
//! for a page no one else shares costs a bounded few milliseconds per
//! megabyte, not the ~60-90 ms of quality 9 (measured: 78 ms against 18 ms
//! for Brotli, 141 ms against 16 ms for gzip, on an Intel Xeon of 2 vCPUs).
//! Run: `cargo bench -p
//! freedom-shared --bench encoding --features web`.

use freedom_shared::web::{Effort, brotli_at, gzip_at};
use std::time::{Duration, Instant};

/// About 3.8 MB of dashboard-shaped JSON: strategies with series points.
fn dashboard_like() -> Vec<u8> {
    let mut out = String::from("{\"strategies\":[");
    let mut i = 0u64;
    while out.len() < 3_800_000 {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"strategyId\":\"st{i:04}\",\"strategyName\":\"Strategy number {i}\",\"mode\":\"paper\",\"series\":["
        ));
        for day in 0..40u64 {
            let equity = 1000.0 + ((i * 37 + day * 11) % 97) as f64 * 1.37;
            if day > 0 {
                out.push(',');
            }
            out.push_str(&format!(
                "{{\"asOf\":\"2026-05-{:02}T20:00:00Z\",\"equity\":{equity:.2},\"index\":{:.6}}}",
                day % 28 + 1,
                equity / 1000.0
            ));
        }
        out.push_str("]}");
        i += 1;
    }
    out.push_str("]}");
    out.into_bytes()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let body = dashboard_like();
    println!("body: {} bytes", body.len());
    for (name, effort) in [("kept", Effort::Kept), ("once", Effort::Once)] {
        for (coding, compress) in [
            ("br", brotli_at as fn(&[u8], Effort) -> bytes::Bytes),
            ("gzip", gzip_at),
        ] {
            let mut size = 0;
            let times: Vec<Duration> = (0..5)
                .map(|_| {
                    let start = Instant::now();
                    size = compress(&body, effort).len();
                    start.elapsed()
                })
                .collect();
            println!(
                "{name:>4} {coding:>4}: {:>7.1} ms, {size} bytes",
                median(times).as_secs_f64() * 1000.0
            );
        }
    }
}
