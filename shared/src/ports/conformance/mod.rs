//! The storage ports' conformance suites: written once, run by every
//! adapter. They follow the ledger port's cut by reader:
//!
//! - [`run`] calls `make_store` for a fresh, empty [`LedgerStore`] per case
//!   and panics with a description of the first broken guarantee: the
//!   append checks and their order, idempotency, the Merkle head against a
//!   full recomputation and concurrent appends (`append`); paging and
//!   filters (`pages`); the series, cursor, latest, decision, window and
//!   roll-up reads (`series`); the log's tiles and entry runs against a
//!   recomputation from the leaves (`tiles`).
//! - [`run_scanner`] does the same for the scanner's lock and fenced state
//!   ([`ScanStore`](super::ScanStore)), and [`run_signer_memory`] for the
//!   log signer's memory ([`SignerMemory`](super::SignerMemory)), and
//!   [`run_witness_memory`] for the log's memory of its witnesses
//!   ([`WitnessMemory`](super::WitnessMemory)).

use super::ledger_store::{AppendOutcome, Candidate, Entry, LedgerStore, PageQuery, Refusal};
use crate::merkle::Head;
use crate::record::guard::Guard;
use crate::record::{Record, StrategyId};
use serde_json::json;
use std::future::Future;

mod append;
mod pages;
mod scan;
mod series;
mod signer;
mod tiles;
mod witnesses;

pub use scan::{assert_stale_holder_is_fenced_out, run_scanner};
pub use signer::run_signer_memory;
pub use tiles::assert_tiles_match_the_leaves;
pub use witnesses::run_witness_memory;

const DAY_NANOS: i64 = 86_400_000_000_000;

/// 2026-01-05T00:00:00Z, a Monday: day 0 of the suite's calendar.
const EPOCH_SECONDS: i64 = 1_767_571_200;

pub(super) fn timestamp(day: i64) -> String {
    chrono::DateTime::from_timestamp(EPOCH_SECONDS + day * 86_400, 0)
        .expect("in range")
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The nanosecond instant of suite day `day`.
pub fn day_nanos(day: i64) -> i64 {
    (EPOCH_SECONDS * 1_000_000_000) + day * DAY_NANOS
}

/// `value` parsed as a record (it must be valid) and ready to append.
pub fn candidate(value: serde_json::Value) -> Candidate {
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

pub(super) async fn created<S: LedgerStore>(store: &S, c: Candidate) -> (Entry, Head) {
    match store.append(c.clone()).await.expect("store available") {
        AppendOutcome::Created { entry, head } => (entry, head),
        other => panic!("append of {} should create, got {other:?}", c.id),
    }
}

pub(super) async fn refused<S: LedgerStore>(store: &S, c: Candidate) -> Refusal {
    match store.append(c.clone()).await.expect("store available") {
        AppendOutcome::Refused(refusal) => refusal,
        other => panic!("append of {} should be refused, got {other:?}", c.id),
    }
}

pub(super) fn strategy(id: &str) -> StrategyId {
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
    append::append_assigns_sequence_numbers_and_heads(make_store().await).await;
    append::identical_replay_is_unchanged_and_stores_nothing(make_store().await).await;
    append::id_conflict_is_checked_before_slot_and_order(make_store().await).await;
    append::duplicate_and_out_of_order_snapshots_are_refused(make_store().await).await;
    append::strategies_and_modes_are_independent(make_store().await).await;
    append::head_matches_a_full_recomputation(make_store().await).await;
    append::a_check_answers_as_the_append_would_and_writes_nothing(make_store().await).await;
    pages::pages_are_newest_first_with_cursor_and_filters(make_store().await).await;
    pages::pages_stop_at_the_byte_budget_and_next_reaches_every_entry(make_store().await).await;
    series::series_starts_at_the_baseline(make_store().await).await;
    series::series_after_reads_from_the_cursor(make_store().await).await;
    series::latest_snapshots_has_one_per_strategy_and_mode(make_store().await).await;
    series::decisions_in_range_are_newest_first(make_store().await).await;
    series::window_reads_every_series_and_the_decisions(make_store().await).await;
    series::rollups_move_forward_and_only_serve_their_version_and_head(make_store().await).await;
    append::concurrent_appends_are_serialised(make_store().await).await;
    tiles::tiles_and_entry_runs_follow_the_tree(make_store().await).await;
}

pub(super) fn ids(entries: &[Entry]) -> Vec<String> {
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

pub(super) async fn empty_store_has_the_empty_head<S: LedgerStore>(store: S) {
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
