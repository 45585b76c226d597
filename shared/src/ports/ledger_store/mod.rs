//! The ledger's storage port, cut by reader, and what crosses it.
//!
//! Each kind of reader has a small trait, implemented in its own file by
//! both adapters (`adapters::embedded::ledger_store`, feature `embedded`,
//! and `adapters::kv_rest::ledger_store`, feature `kv`):
//!
//! - [`LedgerAppend`] (`append.rs`): the one write. `append` performs the
//!   contract's checks atomically (id → identical or `id_conflict`; same
//!   strategy, mode and instant → `duplicate_snapshot`; older than the
//!   latest of its strategy and mode → `out_of_order`), then writes record,
//!   leaf and head in one step.
//! - [`LedgerPages`] (`pages.rs`): ledger pages, newest first, cut by one
//!   rule ([`PageBuilder`]).
//! - [`SeriesReads`] (`series.rs`): what the dashboard and the exports read:
//!   one strategy's snapshots around a window or after a cursor, the
//!   latest snapshot of each strategy (with the head it was read at),
//!   decisions in a time range, the whole window in one call, and since
//!   inception each series' stored roll-up with the snapshots after it.
//!   Every read costs O(window + strategies), or O(open month +
//!   strategies) since inception, never O(history).
//! - [`TileReads`] (`tiles.rs`): what the log reads: hash tiles and entry
//!   runs.
//! - [`HeadReads`] (`head.rs`): the head, which every reader's trait
//!   extends (a conditional read compares its tag with it first).
//!
//! [`LedgerStore`] is all four: what a store adapter is, and what a
//! process holds. The conformance suite (`ports::conformance`) follows the
//! same cut.

mod append;
mod head;
mod pages;
mod series;
mod tiles;

pub use append::LedgerAppend;
pub use head::HeadReads;
pub use pages::LedgerPages;
pub use pages::Page;
pub(crate) use pages::PageBuilder;
pub use pages::PageQuery;
pub(crate) use pages::{MAX_PAGE_BYTES, PAGE_ENTRY_OVERHEAD_BYTES};
pub use series::LatestSnapshots;
pub(crate) use series::Rollup;
pub use series::SeriesReads;
pub(crate) use series::{SeriesSince, SinceInception, WindowEntries};
pub use tiles::{EntryRun, TileRead, TileReads};

use crate::merkle::{Digest, Head, leaf_hash};
use crate::record::{Mode, Record, RecordId, RecordKind, StrategyId};

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

impl Entry {
    /// An entry as a store read it: its record's text must hash to its
    /// leaf hash (RFC 9162's `SHA-256(0x00 || leaf)`), else the store holds
    /// a record altered behind the ledger's back, which is never served.
    pub(crate) fn read(
        seq: u64,
        stored_leaf: Digest,
        canonical: String,
    ) -> Result<Entry, StoreError> {
        if leaf_hash(canonical.as_bytes()) != stored_leaf {
            return Err(StoreError::Corrupt(format!(
                "record {seq} does not hash to its leaf: it was altered in the store"
            )));
        }
        Ok(Entry {
            seq,
            leaf_hash: stored_leaf,
            canonical,
        })
    }
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

/// What made a store fail, kept for the log (clients never see it).
pub(crate) type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

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
    pub(crate) fn unavailable(context: impl Into<String>, cause: impl Into<Cause>) -> StoreError {
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
    pub(crate) fn is_transient(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }
}

/// A ledger store: every reader's trait, which each adapter implements
/// (one file per trait); a process holds one and gives each use case the
/// traits it reads through.
pub trait LedgerStore: LedgerAppend + LedgerPages + SeriesReads + TileReads + 'static {}

impl<T: LedgerAppend + LedgerPages + SeriesReads + TileReads + 'static> LedgerStore for T {}
