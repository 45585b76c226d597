//! The transparency log's proofs and checkpoints against history size.
//!
//! On the embedded store, over the same ledgers as the `dashboard` bench
//! (1 000, 100 000 and 1 000 000 records; built once into
//! `$CARGO_TARGET_DIR/bench-ledgers/`, their tiles built at open):
//!
//! - `tlog/inclusion/N`: `Log::inclusion` as the proof view calls it in a
//!   warm process: the head, the tiles the proof needs that the log's memo
//!   of subtrees does not hold (one read transaction), the audit path and
//!   root, the tie to the head and the proof's verification, the checkpoint
//!   (signed once per head, then cached); the record asked for moves
//!   through the ledger from one iteration to the next;
//! - `tlog/consistency/N`: `Log::consistency` from an older size (moving
//!   through the second half of the ledger) to the head;
//! - `checkpoint/sign_new_head`: signing a checkpoint for a head not seen
//!   before (one Ed25519 signature);
//! - `checkpoint/sign_same_head`: the same head again (the cached note).
//!
//! Before timing, it prints each proof's size (hashes, JSON path bytes,
//! `.tlog-proof` bytes), which grows as log2 of the size.
//! Run: `cargo bench -p freedom-shared --features embedded --bench tlog`.
#![allow(missing_docs)] // criterion_group! generates an undocumented function.

mod support;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use freedom_shared::merkle::{Digest, Head, leaf_hash};
use freedom_shared::service::Log;
use freedom_shared::tlog::checkpoint::CheckpointSigner;
use freedom_shared::tlog::note::SigningKey;
use freedom_shared::tlog::proof::{self, TileHashes, TilePlan, TlogProof};
use freedom_shared::tlog::tiles::tiles_of;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;
use support::bench_ledger;

const ORIGIN: &str = "bench.example.com/log";

fn signing_key() -> SigningKey {
    SigningKey::from_seed(ORIGIN, [7; 32]).expect("a valid key name")
}

/// A record number that moves through `1..=size` with each call (a fixed
/// odd stride, so consecutive proofs share few tiles).
fn moving(counter: &Cell<u64>, size: u64, from: u64) -> u64 {
    let next = counter.get().wrapping_add(7_919);
    counter.set(next);
    from + next % (size - from + 1)
}

fn proofs(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("tlog");
    group.sample_size(50);
    for total in support::ledger_sizes() {
        let store = Arc::new(bench_ledger(&runtime, total));
        // One log per store, as the service has: its memo of subtrees is
        // that store's history.
        let log = Log::new(store, ORIGIN, Some(signing_key())).expect("log");
        let size = total as u64;
        let (proof, checkpoint) = runtime
            .block_on(log.inclusion(size / 2, None))
            .expect("proof");
        let file = TlogProof {
            index: proof.leaf_index,
            path: proof.path.clone(),
            checkpoint: checkpoint.to_string(),
            extra: None,
        }
        .to_text();
        let (consistency, _) = runtime
            .block_on(log.consistency(size / 2 + 1, None))
            .expect("consistency");
        eprintln!(
            "size {size}: inclusion {} hashes ({} bytes as hex in JSON), .tlog-proof {} bytes; consistency {} hashes",
            proof.path.len(),
            proof.path.len() * 67,
            file.len(),
            consistency.path.len()
        );
        let counter = Cell::new(0);
        group.bench_function(BenchmarkId::new("inclusion", total), |b| {
            b.to_async(&runtime).iter(|| {
                let seq = moving(&counter, size, 1);
                let log = &log;
                async move { log.inclusion(seq, None).await.unwrap() }
            })
        });
        group.bench_function(BenchmarkId::new("consistency", total), |b| {
            b.to_async(&runtime).iter(|| {
                let from = moving(&counter, size, size / 2);
                let log = &log;
                async move { log.consistency(from, None).await.unwrap() }
            })
        });
    }
    group.finish();
}

/// The proof computation alone, on tiles already in memory: what the
/// proof costs beyond reading the store.
fn proof_computation(c: &mut Criterion) {
    let mut group = c.benchmark_group("tlog_compute");
    for total in [1_000u64, 100_000, 1_000_000] {
        let leaves: Vec<Digest> = (0..total).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        let tiles = tiles_of(&leaves);
        let counter = Cell::new(0);
        group.bench_with_input(BenchmarkId::new("inclusion", total), &tiles, |b, tiles| {
            b.iter(|| {
                let seq = moving(&counter, total, 1);
                let mut plan = TilePlan::default();
                proof::inclusion(&mut plan, seq - 1, total).unwrap();
                let read: BTreeMap<_, _> = plan
                    .tiles()
                    .iter()
                    .map(|id| (*id, tiles[id].clone()))
                    .collect();
                proof::inclusion(&mut TileHashes::new(&read), seq - 1, total).unwrap()
            })
        });
    }
    group.finish();
}

fn checkpoints(c: &mut Criterion) {
    let signer = CheckpointSigner::new(signing_key());
    let mut group = c.benchmark_group("checkpoint");
    let mut size = 0u64;
    group.bench_function("sign_new_head", |b| {
        b.iter(|| {
            size += 1;
            signer.sign(Head {
                size,
                root_hash: Digest([size as u8; 32]),
            })
        })
    });
    // The signer caches its latest head; a fresh one, so this head is it.
    let signer = CheckpointSigner::new(signing_key());
    let head = Head {
        size: 1,
        root_hash: Digest([1; 32]),
    };
    signer.sign(head);
    group.bench_function("sign_same_head", |b| b.iter(|| signer.sign(head)));
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = proofs, proof_computation, checkpoints
}
criterion_main!(benches);
