//! The [`LedgerStore`] conformance suite: written once, run by every adapter.
//!
//! `run(make_store)` calls `make_store` for a fresh, empty store per case and
//! panics with a description of the first broken guarantee. Cases cover the
//! append checks and their order, idempotency, the Merkle head against a full
//! recomputation, paging and filters, the series and latest reads, and
//! concurrent appends (same id, same slot, different records), and the
//! log's tiles against a recomputation from the leaves.
//! `run_scanner(make_store)` does the same for the scanner's lock and fenced
//! state ([`ScanStore`]), and `run_signer_memory(make_memory)` for the log
//! signer's memory ([`SignerMemory`]).

use super::ledger_store::{
    AppendOutcome, Candidate, Entry, LedgerStore, PageQuery, Refusal, Rollup, SeriesSince,
};
use super::scan_store::{LockToken, ScanStore, StateEntry};
use super::signer_memory::SignerMemory;
use crate::merkle::{Digest, Head, root_of};
use crate::record::guard::Guard;
use crate::record::{Mode, Record, RecordKind, StrategyId};
use crate::tlog::tiles::{TileId, tiles_of};
use serde_json::json;
use std::future::Future;
use std::sync::Arc;

const DAY_NANOS: i64 = 86_400_000_000_000;
/// 2026-01-05T00:00:00Z, a Monday: day 0 of the suite's calendar.
const EPOCH_SECONDS: i64 = 1_767_571_200;

fn timestamp(day: i64) -> String {
    chrono::DateTime::from_timestamp(EPOCH_SECONDS + day * 86_400, 0)
        .expect("in range")
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The nanosecond instant of suite day `day`.
pub fn day_nanos(day: i64) -> i64 {
    (EPOCH_SECONDS * 1_000_000_000) + day * DAY_NANOS
}

fn candidate(value: serde_json::Value) -> Candidate {
    let record = Record::parse(
        value.to_string().as_bytes(),
        &Guard::default(),
        chrono::Utc::now(),
    )
    .expect("suite records are valid");
    Candidate::new(&record)
}

/// A snapshot of `strategy` in `mode` at suite day `day` with `equity`.
pub fn snapshot(id: &str, strategy: &str, mode: &str, day: i64, equity: i64) -> Candidate {
    candidate(json!({
        "id": id, "type": "snapshot", "visibility": "public", "mode": mode,
        "strategyId": strategy, "strategyName": format!("Strategy {strategy}"),
        "asOf": timestamp(day), "source": {"name": "suite", "url": "https://example.com/suite"},
        "currency": "USD", "equity": equity, "flowSincePrevious": 0
    }))
}

/// A decision of `strategy` at suite day `day`.
pub fn decision(id: &str, strategy: &str, day: i64) -> Candidate {
    candidate(json!({
        "id": id, "type": "decision", "visibility": "public", "mode": "paper",
        "strategyId": strategy, "strategyName": format!("Strategy {strategy}"),
        "asOf": timestamp(day), "source": {"name": "suite", "url": "https://example.com/suite"},
        "action": "hold", "summary": format!("decision {id}")
    }))
}

async fn created<S: LedgerStore>(store: &S, c: Candidate) -> (Entry, Head) {
    match store.append(c.clone()).await.expect("store available") {
        AppendOutcome::Created { entry, head } => (entry, head),
        other => panic!("append of {} should create, got {other:?}", c.id),
    }
}

async fn refused<S: LedgerStore>(store: &S, c: Candidate) -> Refusal {
    match store.append(c.clone()).await.expect("store available") {
        AppendOutcome::Refused(refusal) => refusal,
        other => panic!("append of {} should be refused, got {other:?}", c.id),
    }
}

fn strategy(id: &str) -> StrategyId {
    StrategyId::parse(id).expect("valid id")
}

/// A page query for every entry, newest first, at most `limit`.
pub fn all(limit: usize) -> PageQuery {
    PageQuery {
        before: None,
        limit,
        strategy_id: None,
        kind: None,
        mode: None,
    }
}

/// Runs every case; `make_store` must give a fresh, empty store each call.
pub async fn run<S, F, Fut>(make_store: F)
where
    S: LedgerStore,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    empty_store_has_the_empty_head(make_store().await).await;
    append_assigns_sequence_numbers_and_heads(make_store().await).await;
    identical_replay_is_unchanged_and_stores_nothing(make_store().await).await;
    id_conflict_is_checked_before_slot_and_order(make_store().await).await;
    duplicate_and_out_of_order_snapshots_are_refused(make_store().await).await;
    strategies_and_modes_are_independent(make_store().await).await;
    head_matches_a_full_recomputation(make_store().await).await;
    pages_are_newest_first_with_cursor_and_filters(make_store().await).await;
    pages_stop_at_the_byte_budget_and_next_reaches_every_entry(make_store().await).await;
    series_starts_at_the_baseline(make_store().await).await;
    series_after_reads_from_the_cursor(make_store().await).await;
    latest_snapshots_has_one_per_strategy_and_mode(make_store().await).await;
    decisions_in_range_are_newest_first(make_store().await).await;
    window_reads_every_series_and_the_decisions(make_store().await).await;
    rollups_move_forward_and_only_serve_their_version_and_head(make_store().await).await;
    concurrent_appends_are_serialised(make_store().await).await;
    tiles_and_entry_runs_follow_the_tree(make_store().await).await;
}

/// Asserts the store's tiles are exactly those of its leaves.
pub async fn assert_tiles_match_the_leaves<S: LedgerStore + ?Sized>(store: &S) {
    let page = store.page(&all(1000)).await.expect("store available");
    assert!(page.next.is_none(), "the suite's ledgers fit one page");
    let leaves: Vec<Digest> = page.entries.iter().rev().map(|e| e.leaf_hash).collect();
    let expected = tiles_of(&leaves);
    let ids: Vec<TileId> = expected.keys().copied().collect();
    let read = store.tiles(&ids).await.expect("store available");
    assert_eq!(read.head, page.head);
    assert_eq!(read.tiles, expected, "the stored tiles are the tree's");
}

async fn tiles_and_entry_runs_follow_the_tree<S: LedgerStore>(store: S) {
    let empty = store.tiles(&[TileId { level: 0, index: 0 }]).await.unwrap();
    assert_eq!((empty.head, empty.tiles.len()), (Head::empty(), 0));
    let mut canonical = Vec::new();
    for i in 0..260 {
        let c = decision(&format!("d{i}"), "s", i);
        canonical.push(c.canonical.clone());
        created(&store, c).await;
    }
    assert_tiles_match_the_leaves(&store).await;
    let read = store
        .tiles(&[TileId { level: 0, index: 1 }, TileId { level: 3, index: 0 }])
        .await
        .unwrap();
    assert_eq!(read.head.size, 260);
    assert_eq!(read.tiles.len(), 1, "a tile not stored is absent");
    assert_eq!(read.tiles[&TileId { level: 0, index: 1 }].len(), 4);
    let full = store.entry_run(1, 256).await.unwrap();
    assert_eq!(full.entries.len(), 256);
    assert!(full.entries.iter().zip(1..).all(|(e, seq)| e.seq == seq));
    assert_eq!(full.entries[9].canonical, canonical[9]);
    let tail = store.entry_run(257, 256).await.unwrap();
    let seqs: Vec<u64> = tail.entries.iter().map(|e| e.seq).collect();
    assert_eq!((tail.head.size, seqs), (260, vec![257, 258, 259, 260]));
    assert!(store.entry_run(1000, 256).await.unwrap().entries.is_empty());
    assert!(
        store
            .entry_run(u64::MAX, 256)
            .await
            .unwrap()
            .entries
            .is_empty()
    );
}

async fn series_after_reads_from_the_cursor<S: LedgerStore>(store: S) {
    // The series "s" live, interleaved with another series, its paper
    // twin and decisions.
    let mut own = Vec::new();
    for day in 0..8 {
        let (entry, _) = created(
            &store,
            snapshot(&format!("s{day}"), "s", "live", day, 100 + day),
        )
        .await;
        own.push(entry.seq);
        created(&store, snapshot(&format!("t{day}"), "t", "live", day, 50)).await;
        created(&store, snapshot(&format!("p{day}"), "s", "paper", day, 70)).await;
        created(&store, decision(&format!("d{day}"), "s", day)).await;
    }
    let seqs = |entries: Vec<Entry>| entries.iter().map(|e| e.seq).collect::<Vec<_>>();
    let s = strategy("s");
    let after = |cursor, limit| store.series_after(&s, Mode::Live, cursor, limit);
    assert_eq!(seqs(after(0, 3).await.unwrap()), own[..3]);
    assert_eq!(seqs(after(own[2], 100).await.unwrap()), own[3..]);
    // A cursor that is not one of the series' seqs (another series', a
    // decision's) starts at the series' first seq above it.
    assert_eq!(seqs(after(own[4] + 1, 2).await.unwrap()), own[5..7]);
    assert!(after(own[7], 10).await.unwrap().is_empty());
    assert!(after(u64::MAX, 10).await.unwrap().is_empty());
    assert!(after(0, 0).await.unwrap().is_empty());
    let first = &after(0, 1).await.unwrap()[0];
    assert!(first.canonical.contains("\"id\":\"s0\""));
    assert!(
        store
            .series_after(&strategy("nobody"), Mode::Live, 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn empty_store_has_the_empty_head<S: LedgerStore>(store: S) {
    assert_eq!(store.head().await.unwrap(), Head::empty());
    let page = store.page(&all(10)).await.unwrap();
    assert!(page.entries.is_empty() && page.next.is_none());
    let latest = store.latest_snapshots().await.unwrap();
    assert!(latest.entries.is_empty() && latest.first.is_none());
    assert_eq!(latest.head, Head::empty());
    assert!(
        store
            .decisions_in_range(i64::MIN, i64::MAX, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn append_assigns_sequence_numbers_and_heads<S: LedgerStore>(store: S) {
    let first = snapshot("a", "s", "live", 0, 100);
    let (entry, head) = created(&store, first.clone()).await;
    assert_eq!(entry.seq, 1);
    assert_eq!(entry.leaf_hash, first.leaf_hash);
    assert_eq!(entry.canonical, first.canonical);
    assert_eq!(
        head,
        Head {
            size: 1,
            root_hash: first.leaf_hash
        }
    );
    let (entry, head) = created(&store, decision("b", "s", 0)).await;
    assert_eq!((entry.seq, head.size), (2, 2));
    assert_eq!(store.head().await.unwrap(), head);
}

async fn identical_replay_is_unchanged_and_stores_nothing<S: LedgerStore>(store: S) {
    let (first, _) = created(&store, snapshot("a", "s", "live", 0, 100)).await;
    let (_, head) = created(&store, snapshot("b", "s", "live", 1, 101)).await;
    // Replaying the older record after a newer one is still unchanged: the id is checked first.
    match store
        .append(snapshot("a", "s", "live", 0, 100))
        .await
        .unwrap()
    {
        AppendOutcome::Unchanged { entry, head: now } => {
            assert_eq!(entry, first);
            assert_eq!(now, head);
        }
        other => panic!("replay should be unchanged, got {other:?}"),
    }
    assert_eq!(store.head().await.unwrap(), head);
}

async fn id_conflict_is_checked_before_slot_and_order<S: LedgerStore>(store: S) {
    created(&store, snapshot("a", "s", "live", 5, 100)).await;
    assert_eq!(
        refused(&store, snapshot("a", "s", "live", 5, 999)).await,
        Refusal::IdConflict { existing_seq: 1 }
    );
    assert_eq!(
        refused(&store, snapshot("a", "s", "live", 1, 100)).await,
        Refusal::IdConflict { existing_seq: 1 }
    );
    assert_eq!(
        refused(&store, decision("a", "s", 5)).await,
        Refusal::IdConflict { existing_seq: 1 }
    );
    assert_eq!(store.head().await.unwrap().size, 1);
}

async fn duplicate_and_out_of_order_snapshots_are_refused<S: LedgerStore>(store: S) {
    created(&store, snapshot("a", "s", "live", 3, 100)).await;
    created(&store, snapshot("b", "s", "live", 5, 100)).await;
    assert_eq!(
        refused(&store, snapshot("c", "s", "live", 5, 101)).await,
        Refusal::DuplicateSnapshot { existing_seq: 2 }
    );
    // The same instant as an older snapshot is a duplicate, not out of order.
    assert_eq!(
        refused(&store, snapshot("d", "s", "live", 3, 101)).await,
        Refusal::DuplicateSnapshot { existing_seq: 1 }
    );
    assert_eq!(
        refused(&store, snapshot("e", "s", "live", 4, 101)).await,
        Refusal::OutOfOrder { latest_seq: 2 }
    );
    // Decisions may come in any order.
    created(&store, decision("f", "s", 1)).await;
    let head = store.head().await.unwrap();
    assert_eq!(head.size, 3);
}

async fn strategies_and_modes_are_independent<S: LedgerStore>(store: S) {
    created(&store, snapshot("a", "s", "live", 5, 100)).await;
    created(&store, snapshot("b", "s", "paper", 5, 100)).await;
    created(&store, snapshot("c", "t", "live", 5, 100)).await;
    // Older than "c" in the same strategy and mode.
    assert_eq!(
        refused(&store, snapshot("d", "t", "live", 1, 100)).await,
        Refusal::OutOfOrder { latest_seq: 3 }
    );
    created(&store, snapshot("e", "t", "paper", 1, 100)).await;
}

async fn head_matches_a_full_recomputation<S: LedgerStore>(store: S) {
    let mut leaves = Vec::new();
    for i in 0..37 {
        let c = if i % 3 == 0 {
            decision(&format!("d{i}"), "s", i)
        } else {
            snapshot(&format!("s{i}"), "s", "live", i, 100 + i)
        };
        leaves.push(c.leaf_hash);
        let (_, head) = created(&store, c).await;
        assert_eq!(
            head,
            Head {
                size: leaves.len() as u64,
                root_hash: root_of(&leaves)
            },
            "after {} appends",
            i + 1
        );
    }
}

async fn pages_are_newest_first_with_cursor_and_filters<S: LedgerStore>(store: S) {
    for i in 0..10 {
        created(
            &store,
            snapshot(
                &format!("s{i}"),
                if i % 2 == 0 { "even" } else { "odd" },
                "live",
                i,
                100,
            ),
        )
        .await;
        created(&store, decision(&format!("d{i}"), "even", i)).await;
    }
    let page = store.page(&all(7)).await.unwrap();
    assert_eq!(
        page.entries.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![20, 19, 18, 17, 16, 15, 14]
    );
    assert_eq!(page.next, Some(14));
    assert_eq!(page.head.size, 20);
    let page = store
        .page(&PageQuery {
            before: Some(14),
            ..all(7)
        })
        .await
        .unwrap();
    assert_eq!(page.entries.first().map(|e| e.seq), Some(13));
    let page = store
        .page(&PageQuery {
            before: Some(4),
            ..all(7)
        })
        .await
        .unwrap();
    assert_eq!(
        page.entries.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![3, 2, 1]
    );
    assert_eq!(page.next, None);

    let evens = store
        .page(&PageQuery {
            strategy_id: Some(strategy("even")),
            ..all(100)
        })
        .await
        .unwrap();
    assert_eq!(evens.entries.len(), 15);
    let snaps = store
        .page(&PageQuery {
            kind: Some(RecordKind::Snapshot),
            ..all(100)
        })
        .await
        .unwrap();
    assert_eq!(snaps.entries.len(), 10);
    assert!(
        snaps
            .entries
            .iter()
            .all(|e| e.canonical.contains("\"type\":\"snapshot\""))
    );
    let odd_snaps = store
        .page(&PageQuery {
            strategy_id: Some(strategy("odd")),
            kind: Some(RecordKind::Snapshot),
            mode: Some(Mode::Live),
            ..all(2)
        })
        .await
        .unwrap();
    assert_eq!(odd_snaps.entries.len(), 2);
    assert_eq!(odd_snaps.next, odd_snaps.entries.last().map(|e| e.seq));
    let paper = store
        .page(&PageQuery {
            mode: Some(Mode::Paper),
            kind: Some(RecordKind::Snapshot),
            ..all(100)
        })
        .await
        .unwrap();
    assert!(paper.entries.is_empty());
    let none = store
        .page(&PageQuery {
            strategy_id: Some(strategy("missing")),
            ..all(100)
        })
        .await
        .unwrap();
    assert!(none.entries.is_empty() && none.next.is_none());
}

/// A decision of about 64 KB (four long fields of 4-byte characters).
pub fn large_decision(id: &str, day: i64) -> Candidate {
    let text = "\u{1D11E}".repeat(3_990);
    candidate(json!({
        "id": id, "type": "decision", "visibility": "public", "mode": "paper",
        "strategyId": "large", "strategyName": "Strategy large",
        "asOf": timestamp(day), "source": {"name": "suite", "url": "https://example.com/suite"},
        "action": "research", "summary": text, "thesis": text, "counterEvidence": text, "nextCheck": text
    }))
}

async fn pages_stop_at_the_byte_budget_and_next_reaches_every_entry<S: LedgerStore>(store: S) {
    use super::ledger_store::MAX_PAGE_BYTES;
    let (mut all, mut decisions) = (Vec::new(), Vec::new());
    for i in 0..40 {
        let (entry, _) = created(&store, large_decision(&format!("big-{i}"), i)).await;
        all.push(entry.seq);
        decisions.push(entry.seq);
        if i % 10 == 0 {
            let (entry, _) =
                created(&store, snapshot(&format!("small-{i}"), "s", "live", i, 100)).await;
            all.push(entry.seq);
        }
    }
    for (kind, mut expected) in [(None, all), (Some(RecordKind::Decision), decisions)] {
        expected.reverse();
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let page = store
                .page(&PageQuery {
                    before,
                    limit: 1000,
                    strategy_id: None,
                    kind,
                    mode: None,
                })
                .await
                .expect("page");
            let cost: usize = page.entries.iter().map(Entry::page_cost).sum();
            assert!(
                cost <= MAX_PAGE_BYTES,
                "a page of {} entries costs {cost} bytes",
                page.entries.len()
            );
            assert!(
                !page.entries.is_empty(),
                "every page holds at least one entry"
            );
            seen.extend(page.entries.iter().map(|e| e.seq));
            match page.next {
                Some(next) => {
                    assert_eq!(Some(next), page.entries.last().map(|e| e.seq));
                    before = Some(next);
                }
                None => break,
            }
        }
        assert!(seen.len() > 10, "several pages were needed");
        assert_eq!(
            seen, expected,
            "following next reaches every entry once, newest first"
        );
    }
}

async fn series_starts_at_the_baseline<S: LedgerStore>(store: S) {
    for day in [0, 2, 4, 6, 8] {
        created(
            &store,
            snapshot(&format!("s{day}"), "s", "live", day, 100 + day),
        )
        .await;
    }
    created(&store, snapshot("other", "t", "live", 3, 100)).await;
    created(&store, decision("d", "s", 3)).await;
    let s = strategy("s");
    // Baseline is the last snapshot at or before the start.
    assert_eq!(
        ids(&store
            .snapshot_series(&s, Mode::Live, day_nanos(3), day_nanos(6))
            .await
            .unwrap()),
        ["s2", "s4", "s6"]
    );
    assert_eq!(
        ids(&store
            .snapshot_series(&s, Mode::Live, day_nanos(4), day_nanos(8))
            .await
            .unwrap()),
        ["s4", "s6", "s8"]
    );
    // A strategy that began inside the window has no earlier baseline.
    assert_eq!(
        ids(&store
            .snapshot_series(&s, Mode::Live, day_nanos(-5), day_nanos(2))
            .await
            .unwrap()),
        ["s0", "s2"]
    );
    assert!(
        store
            .snapshot_series(&s, Mode::Paper, day_nanos(0), day_nanos(8))
            .await
            .unwrap()
            .is_empty()
    );
}

async fn latest_snapshots_has_one_per_strategy_and_mode<S: LedgerStore>(store: S) {
    created(&store, snapshot("a1", "a", "live", 0, 100)).await;
    created(&store, snapshot("a2", "a", "live", 1, 101)).await;
    created(&store, snapshot("a3", "a", "paper", 0, 100)).await;
    created(&store, snapshot("b1", "b", "live", 2, 100)).await;
    let (_, head) = created(&store, decision("d", "a", 9)).await;
    let latest = store.latest_snapshots().await.unwrap();
    assert_eq!(latest.head, head);
    let mut latest_ids = ids(&latest.entries);
    latest_ids.sort();
    assert_eq!(latest_ids, ["a2", "a3", "b1"]);
    let first = latest.first.expect("the first record");
    assert_eq!(
        (first.seq, ids(std::slice::from_ref(&first))),
        (1, vec!["a1".to_owned()])
    );
}

async fn concurrent_appends_are_serialised<S: LedgerStore>(store: S) {
    let store = Arc::new(store);
    let outcomes = |candidates: Vec<Candidate>| {
        let store = Arc::clone(&store);
        async move {
            let tasks: Vec<_> = candidates
                .into_iter()
                .map(|c| {
                    let store = Arc::clone(&store);
                    tokio::spawn(async move { store.append(c).await.expect("store available") })
                })
                .collect();
            let mut results = Vec::new();
            for task in tasks {
                results.push(task.await.expect("task completes"));
            }
            results
        }
    };
    let count = |results: &[AppendOutcome], f: fn(&AppendOutcome) -> bool| {
        results.iter().filter(|o| f(o)).count()
    };

    // 50 identical: one created, 49 unchanged.
    let same = outcomes(
        (0..50)
            .map(|_| snapshot("same", "s", "live", 0, 100))
            .collect(),
    )
    .await;
    assert_eq!(
        count(&same, |o| matches!(o, AppendOutcome::Created { .. })),
        1
    );
    assert_eq!(
        count(&same, |o| matches!(o, AppendOutcome::Unchanged { .. })),
        49
    );

    // 50 of one id with different content: one created, 49 id conflicts.
    let conflicting = outcomes(
        (0..50)
            .map(|i| snapshot("contested", "t", "live", 0, 100 + i))
            .collect(),
    )
    .await;
    assert_eq!(
        count(&conflicting, |o| matches!(o, AppendOutcome::Created { .. })),
        1
    );
    assert_eq!(
        count(&conflicting, |o| matches!(
            o,
            AppendOutcome::Refused(Refusal::IdConflict { .. })
        )),
        49
    );

    // 50 different ids in one snapshot slot: one created, 49 duplicates.
    let slot = outcomes(
        (0..50)
            .map(|i| snapshot(&format!("slot{i}"), "u", "live", 0, 100))
            .collect(),
    )
    .await;
    assert_eq!(
        count(&slot, |o| matches!(o, AppendOutcome::Created { .. })),
        1
    );
    assert_eq!(
        count(&slot, |o| matches!(
            o,
            AppendOutcome::Refused(Refusal::DuplicateSnapshot { .. })
        )),
        49
    );

    // 50 different records: all created, with distinct sequence numbers.
    let different = outcomes(
        (0..50)
            .map(|i| decision(&format!("d{i}"), "v", i))
            .collect(),
    )
    .await;
    let mut seqs: Vec<u64> = different
        .iter()
        .map(|o| match o {
            AppendOutcome::Created { entry, .. } => entry.seq,
            other => panic!("expected created, got {other:?}"),
        })
        .collect();
    seqs.sort();
    assert_eq!(seqs, (4..=53).collect::<Vec<u64>>());

    // Every acknowledged record is present and the head re-derives from the leaves.
    let page = store.page(&all(1000)).await.unwrap();
    assert_eq!(page.head.size, 53);
    let mut leaves: Vec<_> = page.entries.iter().map(|e| e.leaf_hash).collect();
    leaves.reverse();
    assert_eq!(page.head.root_hash, root_of(&leaves));
    assert_tiles_match_the_leaves(store.as_ref()).await;
}

fn ids(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            serde_json::from_str::<serde_json::Value>(&e.canonical).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

async fn decisions_in_range_are_newest_first<S: LedgerStore>(store: S) {
    for (id, day) in [("d1", 1), ("d5", 5), ("d3", 3), ("d3b", 3), ("d9", 9)] {
        created(&store, decision(id, "s", day)).await;
    }
    created(&store, snapshot("s4", "s", "live", 4, 100)).await;
    // After the start, up to and including the end.
    assert_eq!(
        ids(&store
            .decisions_in_range(day_nanos(1), day_nanos(5), 10)
            .await
            .unwrap()),
        ["d5", "d3b", "d3"]
    );
    assert_eq!(
        ids(&store
            .decisions_in_range(day_nanos(0), day_nanos(9), 2)
            .await
            .unwrap()),
        ["d9", "d5"]
    );
    assert!(
        store
            .decisions_in_range(day_nanos(9), day_nanos(20), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn window_reads_every_series_and_the_decisions<S: LedgerStore>(store: S) {
    for day in 0..6 {
        created(&store, snapshot(&format!("a{day}"), "a", "live", day, 100)).await;
        created(&store, snapshot(&format!("b{day}"), "b", "paper", day, 100)).await;
    }
    created(&store, decision("d", "a", 4)).await;
    let keys = [
        (strategy("b"), Mode::Paper),
        (strategy("a"), Mode::Live),
        (strategy("none"), Mode::Live),
    ];
    let window = store
        .window(&keys, day_nanos(3), day_nanos(5), 10)
        .await
        .unwrap();
    assert_eq!(window.series.len(), 3);
    assert_eq!(ids(&window.series[0]), ["b3", "b4", "b5"]);
    assert_eq!(ids(&window.series[1]), ["a3", "a4", "a5"]);
    assert!(window.series[2].is_empty());
    assert_eq!(ids(&window.decisions), ["d"]);
}

fn rollup(strategy_id: &str, version: u32, from_day: i64, through_seq: u64, state: &str) -> Rollup {
    Rollup {
        strategy_id: strategy(strategy_id),
        mode: Mode::Live,
        version,
        from_nanos: day_nanos(from_day),
        through_seq,
        state: state.to_owned(),
        overwrite: false,
    }
}

async fn rollups_move_forward_and_only_serve_their_version_and_head<S: LedgerStore>(store: S) {
    for day in 0..6 {
        created(&store, snapshot(&format!("a{day}"), "a", "live", day, 100)).await;
    }
    created(&store, decision("d1", "a", 1)).await;
    created(&store, decision("d2", "a", 2)).await;
    let keys = [(strategy("a"), Mode::Live), (strategy("b"), Mode::Live)];
    let read = |version: u32, head_size: u64| {
        let store = &store;
        let keys = &keys;
        async move {
            let since = store
                .since_inception(keys, version, head_size, 1)
                .await
                .unwrap();
            assert_eq!(ids(&since.decisions), ["d2"], "the latest decisions");
            assert_eq!(since.series.len(), 2);
            assert_eq!(since.series[1], SeriesSince::default(), "no series b");
            since.series.into_iter().next().unwrap()
        }
    };
    // Without a roll-up: the whole series.
    let whole = read(1, 8).await;
    assert_eq!((&whole.state, ids(&whole.entries).len()), (&None, 6));

    store
        .put_rollups(&[rollup("a", 1, 3, 3, "through day 2")])
        .await
        .unwrap();
    let since = read(1, 8).await;
    assert_eq!(since.state.as_deref(), Some("through day 2"));
    assert_eq!(ids(&since.entries), ["a3", "a4", "a5"]);
    // A reader at a head before the roll-up's last seq, or of another
    // version, reads the whole series.
    assert_eq!(read(1, 2).await, whole);
    assert_eq!(read(2, 8).await, whole);

    // An older roll-up never replaces a newer one; a newer one does.
    store
        .put_rollups(&[rollup("a", 1, 2, 2, "through day 1")])
        .await
        .unwrap();
    store
        .put_rollups(&[rollup("a", 1, 3, 3, "again")])
        .await
        .unwrap();
    assert_eq!(read(1, 8).await.state.as_deref(), Some("through day 2"));
    store
        .put_rollups(&[rollup("a", 1, 5, 5, "through day 4")])
        .await
        .unwrap();
    let since = read(1, 8).await;
    assert_eq!(since.state.as_deref(), Some("through day 4"));
    assert_eq!(ids(&since.entries), ["a5"]);
    // Another version replaces it, whatever its start.
    store
        .put_rollups(&[rollup("a", 2, 1, 1, "version 2")])
        .await
        .unwrap();
    assert_eq!(read(1, 8).await, whole);
    let since = read(2, 8).await;
    assert_eq!(since.state.as_deref(), Some("version 2"));
    assert_eq!(ids(&since.entries).len(), 5);
    // A reader that could not read the stored one replaces it, even with
    // an older start.
    let overwrite = Rollup {
        overwrite: true,
        ..rollup("a", 2, 0, 0, "readable again")
    };
    store.put_rollups(&[overwrite]).await.unwrap();
    let since = read(2, 8).await;
    assert_eq!(since.state.as_deref(), Some("readable again"));
    assert_eq!(ids(&since.entries).len(), 6);
    store.put_rollups(&[]).await.unwrap();
}

/// Runs the scanner lock's cases; `make_store` must give a fresh store each
/// call. Expiry is adapter-specific (its clock) and tested beside each adapter.
pub async fn run_scanner<S, F, Fut>(make_store: F)
where
    S: ScanStore,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    only_the_holder_writes_and_releases(make_store().await).await;
    exactly_one_of_many_acquires(make_store().await).await;
}

const LOCK_TTL: std::time::Duration = std::time::Duration::from_secs(60);

fn state(name: &str, value: &str) -> Vec<StateEntry> {
    vec![(name.to_owned(), value.to_owned())]
}

async fn only_the_holder_writes_and_releases<S: ScanStore>(store: S) {
    assert_eq!(
        store.read(&["report", "books"]).await.unwrap(),
        vec![None, None]
    );
    let holder = store.acquire(LOCK_TTL).await.unwrap().expect("a free lock");
    assert!(store.acquire(LOCK_TTL).await.unwrap().is_none(), "held");
    let stranger = LockToken::random().unwrap();
    assert!(!store.release(&stranger).await.unwrap());
    assert!(
        !store
            .write_fenced(&stranger, &state("report", "x"))
            .await
            .unwrap()
    );
    assert_eq!(store.read(&["report"]).await.unwrap(), vec![None]);

    let entries = vec![
        ("report".to_owned(), "r1".to_owned()),
        ("books".to_owned(), "b1".to_owned()),
    ];
    assert!(store.write_fenced(&holder, &entries).await.unwrap());
    assert_eq!(
        store.read(&["report", "books", "other"]).await.unwrap(),
        vec![Some("r1".to_owned()), Some("b1".to_owned()), None]
    );
    assert!(store.release(&holder).await.unwrap());
    assert!(!store.release(&holder).await.unwrap(), "released twice");
    assert!(
        !store
            .write_fenced(&holder, &state("report", "r2"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.read(&["report"]).await.unwrap(),
        vec![Some("r1".to_owned())]
    );

    let next = store.acquire(LOCK_TTL).await.unwrap().expect("free again");
    assert_ne!(next, holder);
    assert!(
        !store
            .write_fenced(&holder, &state("report", "r3"))
            .await
            .unwrap()
    );
    assert!(
        store
            .write_fenced(&next, &state("report", "r4"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.read(&["report"]).await.unwrap(),
        vec![Some("r4".to_owned())]
    );
    assert!(store.release(&next).await.unwrap());
}

async fn exactly_one_of_many_acquires<S: ScanStore>(store: S) {
    let store = Arc::new(store);
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.acquire(LOCK_TTL).await.expect("store available") })
        })
        .collect();
    let mut holders = Vec::new();
    for task in tasks {
        if let Some(token) = task.await.expect("task completes") {
            holders.push(token);
        }
    }
    assert_eq!(holders.len(), 1, "exactly one run holds the lock");
    assert!(store.release(&holders[0]).await.unwrap());
}

/// After `stale`'s lock expired and `fresh` took it: the stale holder can
/// neither write nor release, nothing it tried is stored, and the fresh
/// holder releases normally. For each adapter's expiry test.
pub async fn assert_stale_holder_is_fenced_out<S: ScanStore + ?Sized>(
    store: &S,
    stale: &LockToken,
    fresh: &LockToken,
) {
    assert_ne!(stale, fresh);
    assert!(
        !store
            .write_fenced(stale, &state("report", "stale"))
            .await
            .unwrap()
    );
    assert!(!store.release(stale).await.unwrap());
    assert_eq!(store.read(&["report"]).await.unwrap(), vec![None]);
    assert!(store.release(fresh).await.unwrap());
}

/// Runs the signer memory's cases; `make_memory` must give a fresh, empty
/// memory each call. A memory starts empty, is set only from what it holds
/// (compare-and-swap, never moved by a stale writer), keeps the exact text,
/// and a second handle on the same memory sees what the first wrote.
pub async fn run_signer_memory<M, F, Fut>(make_memory: F)
where
    M: SignerMemory,
    F: Fn() -> Fut,
    Fut: Future<Output = (M, M)>,
{
    let (memory, other_handle) = make_memory().await;
    assert_eq!(
        memory.recall().await.unwrap(),
        None,
        "a new memory is empty"
    );
    let first = "log.example/x\n3\nAAAA\n\n\u{2014} log.example/x abc\n";
    let second = "log.example/x\n5\nBBBB\n\n\u{2014} log.example/x def\n";
    assert!(memory.remember(None, first).await.unwrap());
    assert_eq!(memory.recall().await.unwrap().as_deref(), Some(first));
    assert!(
        !memory.remember(None, second).await.unwrap(),
        "a writer that read nothing cannot overwrite a remembered checkpoint"
    );
    assert!(
        !memory.remember(Some(second), first).await.unwrap(),
        "a writer that read another checkpoint cannot overwrite"
    );
    assert!(memory.remember(Some(first), second).await.unwrap());
    assert_eq!(
        other_handle.recall().await.unwrap().as_deref(),
        Some(second),
        "another handle on the same memory reads it"
    );
    assert!(!other_handle.remember(Some(first), first).await.unwrap());
    assert!(!memory.describe().is_empty());
}
