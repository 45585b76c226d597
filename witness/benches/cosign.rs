//! Witnessing's costs, on loopback, with three `freedom-witness` in
//! process (each its own SQLite state) and the log on the embedded store:
//!
//! - `cosign/round_3_witnesses`: one cosigning round after one new record:
//!   the consistency proof from each witness's size, three add-checkpoint
//!   requests at once, each cosignature verified, the witnessed checkpoint
//!   kept (the append before each round is not timed);
//! - `append/alone`, `append/while_cosigning_every_second` and
//!   `append/while_cosigning_back_to_back`: one append (fsynced), with no
//!   round running, with a round every second beside it (60 times the
//!   schedule's rate), and with rounds back to back (each after a new
//!   record: the worst case); witnessing shares no lock with appends, so
//!   what is left is CPU shared on the machine;
//! - after timing, the witnessed history's growth: 10 000 appends with a
//!   round every second beside them, and how many checkpoints the history
//!   gained (at most one per round that saw new records);
//! - before timing, the sizes of a proof's checkpoint with and without the
//!   three cosignatures (the checkpoint alone and in a `.tlog-proof`).
//!
//! Run: `cargo bench -p freedom-witness --bench cosign`.
#![allow(missing_docs)] // The benchmark macros generate undocumented functions.

use criterion::{Criterion, criterion_group, criterion_main};
use freedom_shared::adapters::HttpWitnesses;
use freedom_shared::adapters::{SqliteLedgerStore, SqliteWitnessMemory};
use freedom_shared::ports::conformance::decision;
use freedom_shared::ports::{LedgerAppend, LedgerStore, WitnessMemory};
use freedom_shared::service::Log;
use freedom_shared::tlog::cosignature::CosignerKey;
use freedom_shared::tlog::note::SigningKey;
use freedom_shared::tlog::policy::Policy;
use freedom_shared::tlog::proof::TlogProof;
use freedom_witness::{TrustedLogs, Witness, WitnessState, app};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const ORIGIN: &str = "bench.example.com/log";

struct Setup {
    log: Arc<Log>,
    store: Arc<SqliteLedgerStore>,
    next: AtomicUsize,
    memory: Arc<SqliteWitnessMemory>,
    _dirs: Vec<tempfile::TempDir>,
}

impl Setup {
    async fn append(&self) {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        self.store
            .append(decision(&format!("d{i}"), "s", 1))
            .await
            .expect("appended");
    }
}

async fn setup() -> Setup {
    let key = SigningKey::from_seed(ORIGIN, [7; 32]).unwrap();
    let mut dirs = Vec::new();
    let mut policy = format!("log {}\n", key.verifier().to_text());
    for seed in 1..=3u8 {
        let dir = tempfile::tempdir().unwrap();
        let witness_key = CosignerKey::from_seed(&format!("w{seed}.example"), [seed; 32]).unwrap();
        let vkey = witness_key.witness_key().to_text();
        let witness = Witness::new(
            witness_key,
            TrustedLogs::parse(&format!("log {}\n", key.verifier().to_text())).unwrap(),
            WitnessState::open(&dir.path().join("witness.sqlite3")).unwrap(),
        );
        let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", socket.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(socket, app(witness)).await });
        policy.push_str(&format!("witness W{seed} {vkey} {url}\n"));
        dirs.push(dir);
    }
    policy.push_str("group G 2 W1 W2 W3\nquorum G\n");
    let data = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteLedgerStore::open(data.path()).unwrap());
    let memory = Arc::new(SqliteWitnessMemory::open(data.path()).unwrap());
    let log = Log::new(
        Arc::clone(&store) as Arc<dyn LedgerStore>,
        ORIGIN,
        Some(key),
    )
    .unwrap()
    .with_witnesses(
        Policy::parse(&policy).unwrap(),
        Arc::clone(&memory) as _,
        Arc::new(HttpWitnesses),
    );
    dirs.push(data);
    Setup {
        log: Arc::new(log),
        store,
        next: AtomicUsize::new(1),
        memory,
        _dirs: dirs,
    }
}

/// Prints the checkpoint's and a `.tlog-proof`'s sizes with and without
/// the cosignatures.
async fn print_sizes(setup: &Setup) {
    let (proof, witnessed) = setup.log.inclusion(500, None).await.unwrap();
    let plain = setup.log.checkpoint().await.unwrap().note;
    assert_eq!(
        plain.lines().nth(1),
        witnessed.lines().nth(1),
        "the same tree"
    );
    let file = |checkpoint: &str| {
        TlogProof {
            index: proof.leaf_index,
            path: proof.path.clone(),
            checkpoint: checkpoint.to_owned(),
            extra: None,
        }
        .to_text()
        .len()
    };
    eprintln!(
        "size {}: checkpoint {} bytes signed by the log alone, {} bytes with 3 cosignatures; .tlog-proof {} -> {} bytes",
        proof.tree_size,
        plain.len(),
        witnessed.len(),
        file(&plain),
        file(&witnessed)
    );
}

fn witnessing(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let setup = runtime.block_on(async {
        let setup = setup().await;
        for _ in 0..1000 {
            setup.append().await;
        }
        let round = setup.log.cosign(false).await.unwrap();
        assert!(round.quorum_met, "{round:?}");
        print_sizes(&setup).await;
        setup
    });

    let mut group = c.benchmark_group("cosign");
    group.sample_size(30);
    group.bench_function("round_3_witnesses", |b| {
        b.to_async(&runtime).iter_custom(|iterations| {
            let setup = &setup;
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    setup.append().await;
                    let start = Instant::now();
                    let round = setup.log.cosign(false).await.unwrap();
                    total += start.elapsed();
                    assert!(round.quorum_met);
                }
                total
            }
        });
    });
    group.finish();

    let mut group = c.benchmark_group("append");
    group.sample_size(30);
    group.bench_function("alone", |b| {
        b.to_async(&runtime).iter(|| setup.append());
    });
    for (name, pause) in [
        ("while_cosigning_every_second", Duration::from_secs(1)),
        ("while_cosigning_back_to_back", Duration::ZERO),
    ] {
        let rounds = {
            let _guard = runtime.enter();
            Rounds::beside(&setup.log, pause)
        };
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| setup.append());
        });
        let rounds = runtime.block_on(rounds.stop());
        eprintln!("{name}: {rounds} cosigning rounds ran beside the appends");
    }
    group.finish();
    runtime.block_on(history_growth(&setup));
}

/// Cosigning rounds run beside whatever the bench times, `pause` apart.
struct Rounds {
    stop: Arc<AtomicBool>,
    count: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Rounds {
    /// Starts them (on the current runtime).
    fn beside(log: &Arc<Log>, pause: Duration) -> Rounds {
        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicUsize::new(0));
        let task = {
            let (log, stop, count) = (Arc::clone(log), Arc::clone(&stop), Arc::clone(&count));
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let _ = log.cosign(false).await;
                    count.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(pause).await;
                }
            })
        };
        Rounds { stop, count, task }
    }

    /// Stops them after the round running; how many ran.
    async fn stop(self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.unwrap();
        self.count.load(Ordering::SeqCst)
    }
}

/// 10 000 appends with a round every second beside them: the witnessed
/// history gains at most one checkpoint per round.
async fn history_growth(setup: &Setup) {
    let kept = |memory: Arc<SqliteWitnessMemory>| async move {
        memory.history(0, usize::MAX).await.unwrap().len()
    };
    let before = kept(Arc::clone(&setup.memory)).await;
    let rounds = Rounds::beside(&setup.log, Duration::from_secs(1));
    let start = Instant::now();
    for _ in 0..10_000 {
        setup.append().await;
    }
    let took = start.elapsed();
    let rounds = rounds.stop().await;
    let gained = kept(Arc::clone(&setup.memory)).await - before;
    eprintln!(
        "history: 10000 appends in {took:.1?} with {rounds} rounds beside them; the witnessed history gained {gained} checkpoints (at most one per round)"
    );
    assert!(gained <= rounds, "{gained} entries for {rounds} rounds");
}

criterion_group!(benches, witnessing);
criterion_main!(benches);
