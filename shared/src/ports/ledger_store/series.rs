//! What the dashboard and the series exports read: series around a window
//! or after a cursor, the latest snapshots, decisions, and the
//! since-inception roll-ups.

use super::{Entry, HeadReads, StoreError};
use crate::merkle::Head;
use crate::record::{Mode, StrategyId};
use async_trait::async_trait;

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
    /// [`SeriesReads::snapshot_series`] returns it.
    pub series: Vec<Vec<Entry>>,
    /// Decisions in the window, newest first, as
    /// [`SeriesReads::decisions_in_range`] returns them.
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

/// One series as [`SeriesReads::since_inception`] reads it.
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

/// The series reads (and the head, as every reader).
#[async_trait]
pub trait SeriesReads: HeadReads {
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
