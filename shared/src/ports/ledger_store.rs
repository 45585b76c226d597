//! The ledger's storage port, [`LedgerStore`], and what crosses it.
//!
//! `append` performs the contract's checks atomically (id → identical or
//! `id_conflict`; same strategy, mode and instant → `duplicate_snapshot`;
//! older than the latest of its strategy and mode → `out_of_order`), then
//! writes record, leaf and head in one step. Reads: ledger pages newest
//! first, one strategy's snapshots around a time window, the latest snapshot
//! of each strategy (with the head it was read at), decisions in a time
//! range, the dashboard's whole window in one call
//! ([`LedgerStore::window`]), and since inception each series' stored
//! roll-up with the snapshots after it ([`LedgerStore::since_inception`],
//! kept by [`LedgerStore::put_rollups`]). Every read the dashboard makes
//! costs O(window + strategies), or O(open month + strategies) since
//! inception, never O(history).
//!
//! Adapters: `adapters::embedded::SqliteLedgerStore` (feature `embedded`)
//! and `adapters::kv_rest::KvLedgerStore` (feature `kv`).

use crate::merkle::{Digest, Head, leaf_hash};
use crate::record::{Mode, Record, RecordId, RecordKind, StrategyId};
use crate::tlog::tiles::TileId;
use async_trait::async_trait;
use std::collections::BTreeMap;

/// A record ready to append: its canonical bytes, leaf hash and the keys the
/// store's checks and indexes need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The record's id.
    pub id: RecordId,
    /// Snapshot or decision.
    pub kind: RecordKind,
    /// The record's strategy.
    pub strategy_id: StrategyId,
    /// Live or paper.
    pub mode: Mode,
    /// `asOf` as nanoseconds since the epoch.
    pub as_of_nanos: i64,
    /// RFC 8785 text: the leaf bytes.
    pub canonical: String,
    /// `SHA-256(0x00 || canonical)`.
    pub leaf_hash: Digest,
}

impl Candidate {
    /// Prepares `record` for the ledger.
    pub fn new(record: &Record) -> Candidate {
        let header = record.header();
        let canonical = record.canonical_json();
        Candidate {
            id: header.id.clone(),
            kind: record.kind(),
            strategy_id: header.strategy_id.clone(),
            mode: header.mode,
            as_of_nanos: header.as_of.nanos(),
            leaf_hash: leaf_hash(canonical.as_bytes()),
            canonical,
        }
    }
}

/// One stored record with its place in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// 1-based position in the log (leaf index + 1).
    pub seq: u64,
    /// The leaf hash.
    pub leaf_hash: Digest,
    /// The record's canonical text.
    pub canonical: String,
}

/// Why the store refused an append (each is a 409 at the API).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The id exists with different content.
    #[error("a record with this id already exists with different content (seq {existing_seq})")]
    IdConflict {
        /// Where the existing record is.
        existing_seq: u64,
    },
    /// A snapshot exists for the same strategy, mode and instant.
    #[error("a snapshot already exists for this strategy, mode and instant (seq {existing_seq})")]
    DuplicateSnapshot {
        /// Where the existing snapshot is.
        existing_seq: u64,
    },
    /// The snapshot is older than the latest of its strategy and mode.
    #[error("the snapshot is older than the latest of its strategy and mode (seq {latest_seq})")]
    OutOfOrder {
        /// Where the latest snapshot is.
        latest_seq: u64,
    },
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendOutcome {
    /// Stored durably as a new leaf.
    Created {
        /// The new entry.
        entry: Entry,
        /// The head including it.
        head: Head,
    },
    /// The same id with identical content was already stored; nothing changed.
    Unchanged {
        /// The existing entry.
        entry: Entry,
        /// The current head.
        head: Head,
    },
    /// Refused; nothing was stored.
    Refused(Refusal),
}

/// Which ledger entries a page holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageQuery {
    /// Only entries with `seq` below this (the cursor).
    pub before: Option<u64>,
    /// At most this many entries.
    pub limit: usize,
    /// Only this strategy.
    pub strategy_id: Option<StrategyId>,
    /// Only this kind.
    pub kind: Option<RecordKind>,
    /// Only this mode.
    pub mode: Option<Mode>,
}

/// Most bytes a ledger page's response body may have (1 MiB): `limit` is a
/// maximum, and a page of large records stops early, with `next` continuing.
/// No page can then pass Lambda's 6 MB response limit or pin memory.
pub const MAX_PAGE_BYTES: usize = 1024 * 1024;
/// What the page body holds besides its entries (schemaVersion, head, next).
const PAGE_ENVELOPE_BYTES: usize = 512;
/// What one entry adds to the page body besides its record:
/// `{"seq":N,"leafHash":"<64 hex>","record":…},`.
pub const PAGE_ENTRY_OVERHEAD_BYTES: usize = 128;

impl Entry {
    /// The bytes this entry adds to a ledger page's body (at most).
    pub fn page_cost(&self) -> usize {
        self.canonical
            .len()
            .saturating_add(PAGE_ENTRY_OVERHEAD_BYTES)
    }
}

/// Builds a ledger page from entries offered newest first: at most `limit`
/// of them and at most [`MAX_PAGE_BYTES`] of body (always at least one
/// entry: a record is at most 64 KiB). Both adapters cut pages with it, so
/// the rule is one.
#[derive(Debug)]
pub struct PageBuilder {
    limit: usize,
    budget: usize,
    entries: Vec<Entry>,
    more: bool,
}

impl PageBuilder {
    /// A page of at most `limit` entries.
    pub fn new(limit: usize) -> PageBuilder {
        PageBuilder {
            limit,
            budget: MAX_PAGE_BYTES - PAGE_ENVELOPE_BYTES,
            entries: Vec::new(),
            more: false,
        }
    }

    /// The byte budget still open for entries.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Offers the next older entry; `false` when the page is full (the
    /// entry is not kept, and the page continues with `next`).
    pub fn offer(&mut self, entry: Entry) -> bool {
        let cost = entry.page_cost();
        if self.entries.len() == self.limit || (!self.entries.is_empty() && cost > self.budget) {
            self.more = true;
            return false;
        }
        self.budget = self.budget.saturating_sub(cost);
        self.entries.push(entry);
        true
    }

    /// Notes that older matching entries remain that were not offered.
    pub fn more_remain(&mut self) {
        self.more = true;
    }

    /// The page, read at `head`.
    pub fn finish(self, head: Head) -> Page {
        let next = if self.more {
            self.entries.last().map(|e| e.seq)
        } else {
            None
        };
        Page {
            head,
            entries: self.entries,
            next,
        }
    }
}

/// A page of the ledger, newest first, read at one head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The head the page was read at.
    pub head: Head,
    /// Entries, newest first.
    pub entries: Vec<Entry>,
    /// The cursor for the next page (`before`), when older entries match.
    pub next: Option<u64>,
}

/// The latest snapshot of every (strategy, mode), read at one head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestSnapshots {
    /// The head the entries were read at.
    pub head: Head,
    /// One entry per (strategy, mode), in no particular order.
    pub entries: Vec<Entry>,
    /// The ledger's first record (seq 1): where the record starts.
    pub first: Option<Entry>,
}

/// What the dashboard reads for one window.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WindowEntries {
    /// Per requested strategy, in request order: its series as
    /// [`LedgerStore::snapshot_series`] returns it.
    pub series: Vec<Vec<Entry>>,
    /// Decisions in the window, newest first, as
    /// [`LedgerStore::decisions_in_range`] returns them.
    pub decisions: Vec<Entry>,
}

/// A reader's since-inception roll-up of one series (the dashboard's fold
/// through the series' last closed month). The store keeps one per series
/// and never looks inside `state`; it is derived data, never part of the
/// log, and a lost one is recomputed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollup {
    /// The series' strategy.
    pub strategy_id: StrategyId,
    /// The series' mode.
    pub mode: Mode,
    /// The format of `state`: a read hands back only the version it asks
    /// for, and a write of another version replaces the stored one.
    pub version: u32,
    /// The state folds every snapshot of the series before this instant
    /// (`asOf` nanoseconds) and none after.
    pub from_nanos: i64,
    /// The largest seq the state folds: a reader whose head is smaller may
    /// not use it.
    pub through_seq: u64,
    /// The state, as the dashboard serialised it.
    pub state: String,
    /// Replace the stored roll-up whatever it holds: the reader could not
    /// read it (a format changed without a new version), and the rule that
    /// never moves a roll-up back would otherwise keep it for good.
    pub overwrite: bool,
}

/// One series as [`LedgerStore::since_inception`] reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SeriesSince {
    /// The stored roll-up's state, when one of the asked version folds
    /// nothing beyond the reader's head.
    pub state: Option<String>,
    /// The snapshots the state does not fold (from its `from_nanos` on), or
    /// the whole series when there is no usable state; oldest first.
    pub entries: Vec<Entry>,
}

/// What the since-inception dashboard reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SinceInception {
    /// Per requested strategy, in request order.
    pub series: Vec<SeriesSince>,
    /// The latest decisions, newest first (ties: higher seq first).
    pub decisions: Vec<Entry>,
}

/// Stored hash tiles and the head they were read with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileRead {
    /// The head at the moment of the read.
    pub head: Head,
    /// Each tile asked for that is stored, with the hashes it holds at
    /// `head` (a tile still filling may be wider than a smaller tree needs).
    pub tiles: BTreeMap<TileId, Vec<Digest>>,
}

/// Consecutive entries and the head they were read with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRun {
    /// The head at the moment of the read.
    pub head: Head,
    /// The entries asked for that exist, in seq order, without gaps.
    pub entries: Vec<Entry>,
}

/// What made a store fail, kept for the log (clients never see it).
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A store failed; nothing is half-written. Each variant says whether
/// trying again can help, which decides what the client is told.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store cannot be reached, did not answer in time, or is busy:
    /// trying again later may succeed (503 with `Retry-After`).
    #[error("the store is unavailable: {context}")]
    Unavailable {
        /// What the store was doing, or which store it is.
        context: String,
        /// What failed underneath, when something did.
        #[source]
        cause: Option<Cause>,
    },
    /// The store holds data that breaks the ledger's invariants: a fault no
    /// retry mends (500).
    #[error("the store holds data that breaks the ledger's invariants: {0}")]
    Corrupt(String),
    /// The store refused an operation the service got wrong (a script error,
    /// a key of the wrong type): a fault of the service's own (500).
    #[error("the store refused the service's operation: {context}")]
    Fault {
        /// What the store was doing, or which store it is.
        context: String,
        /// The store's own account of it.
        #[source]
        cause: Option<Cause>,
    },
}

impl StoreError {
    /// The store failed while doing `context`, because of `cause`.
    pub fn unavailable(context: impl Into<String>, cause: impl Into<Cause>) -> StoreError {
        StoreError::Unavailable {
            context: context.into(),
            cause: Some(cause.into()),
        }
    }

    /// The store cannot do `context` now, with no lower cause to name.
    pub fn unavailable_now(context: impl Into<String>) -> StoreError {
        StoreError::Unavailable {
            context: context.into(),
            cause: None,
        }
    }

    /// Whether trying again later may succeed (the store is down, slow or
    /// busy), as opposed to a fault of the service's own.
    pub fn is_transient(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }
}

/// The ledger's storage port.
#[async_trait]
pub trait LedgerStore: Send + Sync + 'static {
    /// Appends `candidate` with the contract's checks, atomically.
    async fn append(&self, candidate: Candidate) -> Result<AppendOutcome, StoreError>;

    /// The current head.
    async fn head(&self) -> Result<Head, StoreError>;

    /// A page of entries, newest first, and the head it was read at: at
    /// most `query.limit` entries, cut by [`PageBuilder`] at
    /// [`MAX_PAGE_BYTES`], reading no more records than the page holds
    /// (plus one).
    async fn page(&self, query: &PageQuery) -> Result<Page, StoreError>;

    /// One strategy's snapshots for a window: the last one at or before
    /// `start_nanos` (the baseline, if any) followed by every one after it up
    /// to and including `end_nanos`, oldest first.
    async fn snapshot_series(
        &self,
        strategy_id: &StrategyId,
        mode: Mode,
        start_nanos: i64,
        end_nanos: i64,
    ) -> Result<Vec<Entry>, StoreError>;

    /// At most `limit` snapshots of one strategy in one mode whose seq is
    /// above `after`, oldest first (a series is appended in time order, so
    /// seq order is its time order): a series export's page from its
    /// cursor. Costs O(limit), wherever the cursor is. The default reads
    /// the whole series; both adapters read from the cursor.
    async fn series_after(
        &self,
        strategy_id: &StrategyId,
        mode: Mode,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Entry>, StoreError> {
        let series = self
            .snapshot_series(strategy_id, mode, i64::MIN, i64::MAX)
            .await?;
        Ok(series
            .into_iter()
            .filter(|e| e.seq > after)
            .take(limit)
            .collect())
    }

    /// The latest snapshot of every (strategy, mode) and the ledger's first
    /// record, with the head read at the same moment. Costs O(strategies).
    async fn latest_snapshots(&self) -> Result<LatestSnapshots, StoreError>;

    /// Decisions whose `asOf` is after `start_nanos` and at most `end_nanos`,
    /// newest first (ties: higher seq first), at most `limit`.
    async fn decisions_in_range(
        &self,
        start_nanos: i64,
        end_nanos: i64,
        limit: usize,
    ) -> Result<Vec<Entry>, StoreError>;

    /// The hash tiles `ids` (c2sp.org/tlog-tiles, height 8) as stored, and
    /// the head, read at one moment. Stores keep the tiles as appends
    /// complete them (each append adds the nodes it closed at heights that
    /// are multiples of 8), so this is one read: one round trip on the KV
    /// store, one read transaction on SQLite.
    async fn tiles(&self, ids: &[TileId]) -> Result<TileRead, StoreError>;

    /// At most `count` entries (and never more than a bundle's 256) from
    /// `first_seq` on, in order, and the head, read at one moment: an entry
    /// bundle's records.
    async fn entry_run(&self, first_seq: u64, count: u64) -> Result<EntryRun, StoreError>;

    /// The since-inception dashboard's read in one call: each series'
    /// stored roll-up of version `version` whose `through_seq` is at most
    /// `head_size` with the snapshots from its `from_nanos` on (the whole
    /// series without one), and the latest `decision_limit` decisions. The
    /// default keeps no roll-ups and reads whole series.
    async fn since_inception(
        &self,
        strategies: &[(StrategyId, Mode)],
        version: u32,
        head_size: u64,
        decision_limit: usize,
    ) -> Result<SinceInception, StoreError> {
        let _ = (version, head_size);
        let window = self
            .window(strategies, i64::MIN, i64::MAX, decision_limit)
            .await?;
        Ok(SinceInception {
            series: window
                .series
                .into_iter()
                .map(|entries| SeriesSince {
                    state: None,
                    entries,
                })
                .collect(),
            decisions: window.decisions,
        })
    }

    /// Keeps each roll-up unless the stored one of the same version starts
    /// at or after its `from_nanos` (so concurrent readers never move a
    /// roll-up back) and it does not ask to `overwrite`. The default keeps
    /// nothing.
    async fn put_rollups(&self, rollups: &[Rollup]) -> Result<(), StoreError> {
        let _ = rollups;
        Ok(())
    }

    /// The dashboard's window in one call: each strategy's series and the
    /// window's decisions. The default makes one call per part; an adapter
    /// with round trips to save (the KV store) batches them.
    async fn window(
        &self,
        strategies: &[(StrategyId, Mode)],
        start_nanos: i64,
        end_nanos: i64,
        decision_limit: usize,
    ) -> Result<WindowEntries, StoreError> {
        let mut series = Vec::with_capacity(strategies.len());
        for (strategy_id, mode) in strategies {
            series.push(
                self.snapshot_series(strategy_id, *mode, start_nanos, end_nanos)
                    .await?,
            );
        }
        let decisions = self
            .decisions_in_range(start_nanos, end_nanos, decision_limit)
            .await?;
        Ok(WindowEntries { series, decisions })
    }
}
