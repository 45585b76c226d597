//! The embedded store's series reads: windows, cursors, the latest
//! snapshots, decisions and the since-inception roll-ups.

use super::{SqliteLedgerStore, collect_entries, entry_from_row, read_head, sqlite_failed};
use crate::ports::ledger_store::{
    Entry, LatestSnapshots, Rollup, SeriesReads, SeriesSince, SinceInception, StoreError,
    WindowEntries,
};
use crate::record::{Mode, StrategyId};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};

impl SqliteLedgerStore {
    /// In one read transaction: `read_one(tx, strategy, mode)` for each
    /// series, then the decisions after `start` up to `end`, newest first,
    /// at most `limit` (`decisions` = (start, end, limit)).
    async fn per_series_and_decisions<T: Send + 'static>(
        &self,
        strategies: &[(StrategyId, Mode)],
        (start, end, limit): (i64, i64, usize),
        read_one: impl Fn(&Connection, &str, &str) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<(Vec<T>, Vec<Entry>), StoreError> {
        let keys: Vec<(String, Mode)> = strategies
            .iter()
            .map(|(id, mode)| (id.as_str().to_owned(), *mode))
            .collect();
        self.reader
            .run(move |conn| {
                let tx = conn.transaction().map_err(sqlite_failed)?;
                let series = keys
                    .iter()
                    .map(|(id, mode)| read_one(&tx, id, mode.as_str()))
                    .collect::<Result<Vec<_>, _>>()?;
                let decisions = read_decisions(&tx, start, end, limit)?;
                tx.commit().map_err(sqlite_failed)?;
                Ok((series, decisions))
            })
            .await
    }
}

#[async_trait]
impl SeriesReads for SqliteLedgerStore {
    async fn snapshot_series(
        &self,
        strategy_id: &StrategyId,
        mode: Mode,
        start_nanos: i64,
        end_nanos: i64,
    ) -> Result<Vec<Entry>, StoreError> {
        let strategy = strategy_id.as_str().to_owned();
        self.reader
            .run(move |conn| read_series(conn, &strategy, mode.as_str(), start_nanos, end_nanos))
            .await
    }

    async fn series_after(
        &self,
        strategy_id: &StrategyId,
        mode: Mode,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Entry>, StoreError> {
        let strategy = strategy_id.as_str().to_owned();
        let (after, limit) = (
            i64::try_from(after).unwrap_or(i64::MAX),
            i64::try_from(limit).unwrap_or(i64::MAX),
        );
        self.reader
            .run(move |conn| {
                let mut statement = conn
                    .prepare_cached(SERIES_AFTER_SQL)
                    .map_err(sqlite_failed)?;
                let rows = statement
                    .query_map(
                        params![strategy, mode.as_str(), after, limit],
                        entry_from_row,
                    )
                    .map_err(sqlite_failed)?;
                collect_entries(rows)
            })
            .await
    }

    async fn latest_snapshots(&self) -> Result<LatestSnapshots, StoreError> {
        self.reader.run(|conn| {
            let tx = conn.transaction().map_err(sqlite_failed)?;
            let head = read_head(&tx)?;
            let entries = {
                let mut statement = tx
                    .prepare_cached(
                        "SELECT r.seq, r.leaf_hash, r.canonical FROM strategies s JOIN records r ON r.seq = s.latest_seq",
                    )
                    .map_err(sqlite_failed)?;
                let rows = statement.query_map([], entry_from_row).map_err(sqlite_failed)?;
                collect_entries(rows)?
            };
            let first = {
                let mut statement = tx
                    .prepare_cached(
                        "SELECT seq, leaf_hash, canonical FROM records WHERE seq = 1",
                    )
                    .map_err(sqlite_failed)?;
                let rows = statement.query_map([], entry_from_row).map_err(sqlite_failed)?;
                collect_entries(rows)?.into_iter().next()
            };
            tx.commit().map_err(sqlite_failed)?;
            Ok(LatestSnapshots {
                head,
                entries,
                first,
            })
        })
        .await
    }

    async fn decisions_in_range(
        &self,
        start_nanos: i64,
        end_nanos: i64,
        limit: usize,
    ) -> Result<Vec<Entry>, StoreError> {
        self.reader
            .run(move |conn| read_decisions(conn, start_nanos, end_nanos, limit))
            .await
    }

    /// The whole window in one read transaction on one blocking task.
    async fn window(
        &self,
        strategies: &[(StrategyId, Mode)],
        start_nanos: i64,
        end_nanos: i64,
        decision_limit: usize,
    ) -> Result<WindowEntries, StoreError> {
        let decisions = (start_nanos, end_nanos, decision_limit);
        let (series, decisions) = self
            .per_series_and_decisions(strategies, decisions, move |tx, id, mode| {
                read_series(tx, id, mode, start_nanos, end_nanos)
            })
            .await?;
        Ok(WindowEntries { series, decisions })
    }

    /// One read transaction: each series' roll-up and the snapshots after
    /// it, and the latest decisions.
    async fn since_inception(
        &self,
        strategies: &[(StrategyId, Mode)],
        version: u32,
        head_size: u64,
        decision_limit: usize,
    ) -> Result<SinceInception, StoreError> {
        let decisions = (i64::MIN, i64::MAX, decision_limit);
        let (series, decisions) = self
            .per_series_and_decisions(strategies, decisions, move |tx, id, mode| {
                read_series_since(tx, id, mode, version, head_size)
            })
            .await?;
        Ok(SinceInception { series, decisions })
    }

    /// One write transaction; a stored roll-up of the same version that
    /// starts at or after the new one's `from_nanos` stays.
    async fn put_rollups(&self, rollups: &[Rollup]) -> Result<(), StoreError> {
        if rollups.is_empty() {
            return Ok(());
        }
        let rollups = rollups.to_vec();
        self.writer
            .run(move |conn| {
                let tx = conn.transaction().map_err(sqlite_failed)?;
                {
                    let mut statement = tx
                        .prepare_cached(
                            "INSERT INTO rollups (strategy_id, mode, version, from_ns, through_seq, state)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                             ON CONFLICT (strategy_id, mode) DO UPDATE SET
                                 version = excluded.version, from_ns = excluded.from_ns,
                                 through_seq = excluded.through_seq, state = excluded.state
                             WHERE excluded.version != rollups.version
                                OR excluded.from_ns > rollups.from_ns OR ?7",
                        )
                        .map_err(sqlite_failed)?;
                    for rollup in &rollups {
                        statement
                            .execute(params![
                                rollup.strategy_id.as_str(),
                                rollup.mode.as_str(),
                                rollup.version,
                                rollup.from_nanos,
                                rollup.through_seq as i64,
                                rollup.state,
                                rollup.overwrite,
                            ])
                            .map_err(sqlite_failed)?;
                    }
                }
                tx.commit().map_err(sqlite_failed)
            })
            .await
    }
}

/// One series' baseline (the last snapshot at or before ?3) and its
/// snapshots after it up to ?4, oldest first. `INDEXED BY`: without
/// statistics SQLite's planner takes the time index instead, reading every
/// strategy's snapshots in the range (test `series_reads_use_the_series_index`).
pub(super) const SERIES_SQL: &str = "SELECT seq, leaf_hash, canonical FROM (
         SELECT seq, leaf_hash, canonical, as_of_ns FROM (
             SELECT seq, leaf_hash, canonical, as_of_ns FROM records INDEXED BY snapshot_slot
             WHERE kind = 'snapshot' AND strategy_id = ?1 AND mode = ?2 AND as_of_ns <= ?3
             ORDER BY as_of_ns DESC LIMIT 1)
         UNION ALL
         SELECT seq, leaf_hash, canonical, as_of_ns FROM records INDEXED BY snapshot_slot
         WHERE kind = 'snapshot' AND strategy_id = ?1 AND mode = ?2 AND as_of_ns > ?3 AND as_of_ns <= ?4)
     ORDER BY as_of_ns";

/// At most ?4 of one series' snapshots with seq above ?3, in seq order.
pub(super) const SERIES_AFTER_SQL: &str =
    "SELECT seq, leaf_hash, canonical FROM records INDEXED BY series_seq
     WHERE kind = 'snapshot' AND strategy_id = ?1 AND mode = ?2 AND seq > ?3
     ORDER BY seq LIMIT ?4";

/// One series' snapshots at or after ?3, oldest first.
pub(super) const SERIES_FROM_SQL: &str =
    "SELECT seq, leaf_hash, canonical FROM records INDEXED BY snapshot_slot
     WHERE kind = 'snapshot' AND strategy_id = ?1 AND mode = ?2 AND as_of_ns >= ?3
     ORDER BY as_of_ns";

fn read_series(
    conn: &Connection,
    strategy: &str,
    mode: &str,
    start: i64,
    end: i64,
) -> Result<Vec<Entry>, StoreError> {
    let mut statement = conn.prepare_cached(SERIES_SQL).map_err(sqlite_failed)?;
    let rows = statement
        .query_map(params![strategy, mode, start, end], entry_from_row)
        .map_err(sqlite_failed)?;
    collect_entries(rows)
}

/// One series' snapshots at or after `from`, oldest first.
fn read_series_from(
    conn: &Connection,
    strategy: &str,
    mode: &str,
    from: i64,
) -> Result<Vec<Entry>, StoreError> {
    let mut statement = conn
        .prepare_cached(SERIES_FROM_SQL)
        .map_err(sqlite_failed)?;
    let rows = statement
        .query_map(params![strategy, mode, from], entry_from_row)
        .map_err(sqlite_failed)?;
    collect_entries(rows)
}

/// A series' stored roll-up of `version` that folds nothing beyond
/// `head_size`, with the rest of the series.
fn read_series_since(
    conn: &Connection,
    strategy: &str,
    mode: &str,
    version: u32,
    head_size: u64,
) -> Result<SeriesSince, StoreError> {
    let stored: Option<(i64, String)> = conn
        .prepare_cached(
            "SELECT from_ns, state FROM rollups
             WHERE strategy_id = ?1 AND mode = ?2 AND version = ?3 AND through_seq <= ?4",
        )
        .map_err(sqlite_failed)?
        .query_row(params![strategy, mode, version, head_size as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
        .map_err(sqlite_failed)?;
    Ok(match stored {
        Some((from, state)) => SeriesSince {
            state: Some(state),
            entries: read_series_from(conn, strategy, mode, from)?,
        },
        None => SeriesSince {
            state: None,
            entries: read_series(conn, strategy, mode, i64::MIN, i64::MAX)?,
        },
    })
}

fn read_decisions(
    conn: &Connection,
    start: i64,
    end: i64,
    limit: usize,
) -> Result<Vec<Entry>, StoreError> {
    let mut statement = conn
        .prepare_cached(
            "SELECT seq, leaf_hash, canonical FROM records
             WHERE kind = 'decision' AND as_of_ns > ?1 AND as_of_ns <= ?2
             ORDER BY as_of_ns DESC, seq DESC LIMIT ?3",
        )
        .map_err(sqlite_failed)?;
    let rows = statement
        .query_map(params![start, end, limit as i64], entry_from_row)
        .map_err(sqlite_failed)?;
    collect_entries(rows)
}
