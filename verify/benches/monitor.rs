//! The monitor's first pass over a ledger of 1 000 000 records (the
//! benches' ledgers, `shared/benches/support`, built once into
//! `$CARGO_TARGET_DIR/bench-ledgers/`), served by the fund service on a
//! loopback port: every entry bundle fetched, every leaf hashed, the root
//! re-derived, the rules checked on every record, the state written. Then a
//! pass with nothing new (the checkpoint, the head: no proof, no entry),
//! and a pass after 1 000 more records (on a copy of the ledger).
//!
//! ```text
//! FF_BENCH_LEDGERS=1000000 cargo bench -p freedom-verify --bench monitor
//! ```
//!
//! The goal is 50 000 records a second for the first pass.
#![allow(missing_docs)]

#[path = "../../shared/benches/support/mod.rs"]
mod support;

use freedom_shared::service::Log;
use freedom_shared::tlog::note::SigningKey;
use freedom_verify::Service;
use freedom_verify::monitor::Monitor;
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let key = SigningKey::from_seed("bench.example/log", [7; 32]).unwrap();
    for total in support::ledger_sizes() {
        drop(support::bench_ledger(&runtime, total));
        // A copy, so the 1 000 records appended below leave the benches'
        // ledger as it is.
        let copy = tempfile::tempdir().unwrap();
        let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
        let original = std::path::Path::new(&target)
            .join("bench-ledgers")
            .join(format!("ledger-{total}"));
        for file in std::fs::read_dir(&original).unwrap().flatten() {
            std::fs::copy(file.path(), copy.path().join(file.file_name())).unwrap();
        }
        let sqlite = freedom_shared::adapters::SqliteLedgerStore::open(copy.path()).unwrap();
        let appender = sqlite.clone();
        let store: Arc<dyn freedom_shared::ports::LedgerStore> = Arc::new(sqlite);
        let log = Log::new(
            Arc::clone(&store) as _,
            "bench.example/log",
            Some(key.clone()),
        )
        .unwrap();
        let app = fund::app(fund::AppState::new(store, None).with_log(log));
        let base = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}/", listener.local_addr().unwrap());
            tokio::spawn(async move { axum::serve(listener, app).await });
            base
        });
        let state = tempfile::tempdir().unwrap();
        let monitor = Monitor {
            service: Service::new(&base).unwrap(),
            key: key.verifier(),
            policy: None,
            state: state.path().to_owned(),
            feed: None,
        };
        let started = Instant::now();
        let first = runtime.block_on(monitor.pass()).unwrap();
        let took = started.elapsed();
        assert!(
            first.alarms.is_empty() && first.verified == total as u64,
            "{first:?}"
        );
        let started = Instant::now();
        let again = runtime.block_on(monitor.pass()).unwrap();
        let next = started.elapsed();
        assert_eq!(again.verified, 0);
        let more: Vec<_> = (0..1_000)
            .map(|i| {
                freedom_shared::ports::conformance::decision(&format!("more-{i}"), "more", i % 100)
            })
            .collect();
        runtime.block_on(appender.append_batch(more)).unwrap();
        let started = Instant::now();
        let grown = runtime.block_on(monitor.pass()).unwrap();
        let after = started.elapsed();
        assert!(
            grown.alarms.is_empty() && grown.verified == 1_000,
            "{grown:?}"
        );
        println!(
            "{total} records: first pass {took:.2?} ({:.0} records/s), a pass with nothing new {next:.2?}, a pass after 1 000 more {after:.2?}",
            total as f64 / took.as_secs_f64()
        );
    }
}
