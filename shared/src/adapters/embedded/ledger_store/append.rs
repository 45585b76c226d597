//! The embedded store's append: one `BEGIN IMMEDIATE` transaction with
//! the contract's checks, the record, the head and the tiles the new nodes
//! go to.

use super::entry_from_row;
use super::tiles::extend_tiles;
use super::{SqliteLedgerStore, sqlite_failed, to_entry};
use crate::merkle::Frontier;
use crate::ports::ledger_store::{
    AppendOutcome, Candidate, Entry, LedgerAppend, Refusal, StoreError,
};
use crate::record::RecordKind;
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

impl SqliteLedgerStore {
    /// Appends many records in one transaction (one fsync), each with the
    /// same checks as [`LedgerAppend::append`], in order: for imports and
    /// benchmarks. Either all outcomes are durable or none is.
    pub async fn append_batch(
        &self,
        candidates: Vec<Candidate>,
    ) -> Result<Vec<AppendOutcome>, StoreError> {
        self.writer
            .run(move |conn| append_in_transaction(conn, &candidates, Keep::Commit))
            .await
    }
}

#[async_trait]
impl LedgerAppend for SqliteLedgerStore {
    async fn append(&self, candidate: Candidate) -> Result<AppendOutcome, StoreError> {
        let mut outcomes = self
            .writer
            .run(move |conn| append_in_transaction(conn, &[candidate], Keep::Commit))
            .await?;
        Ok(outcomes.pop().expect("one outcome per candidate"))
    }

    async fn check(&self, candidate: Candidate) -> Result<AppendOutcome, StoreError> {
        let mut outcomes = self
            .writer
            .run(move |conn| append_in_transaction(conn, &[candidate], Keep::RollBack))
            .await?;
        Ok(outcomes.pop().expect("one outcome per candidate"))
    }
}

/// What becomes of an append's transaction: kept, or (a dry run) rolled
/// back after the very same checks and writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    Commit,
    RollBack,
}

pub(super) fn read_frontier(conn: &Connection) -> Result<Frontier, StoreError> {
    let row: Option<(i64, Vec<u8>)> = conn
        .query_row(
            "SELECT size, frontier FROM head WHERE singleton = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(sqlite_failed)?;
    match row {
        None => Ok(Frontier::empty()),
        Some((size, bytes)) => Frontier::from_bytes(size as u64, &bytes)
            .map_err(|e| StoreError::Corrupt(e.to_string())),
    }
}

fn append_in_transaction(
    conn: &mut Connection,
    candidates: &[Candidate],
    keep: Keep,
) -> Result<Vec<AppendOutcome>, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite_failed)?;
    let mut frontier = read_frontier(&tx)?;
    let before = frontier.size();
    let outcomes = candidates
        .iter()
        .map(|c| apply(&tx, c, &mut frontier))
        .collect::<Result<Vec<_>, _>>()?;
    if frontier.size() != before && keep == Keep::Commit {
        let head = frontier.head();
        tx.execute(
            "INSERT INTO head (singleton, size, root, frontier) VALUES (1, ?1, ?2, ?3)
             ON CONFLICT (singleton) DO UPDATE SET size = excluded.size, root = excluded.root, frontier = excluded.frontier",
            params![head.size as i64, head.root_hash.0.as_slice(), frontier.to_bytes()],
        )
        .map_err(sqlite_failed)?;
        tx.commit().map_err(sqlite_failed)?;
    }
    Ok(outcomes)
}

/// One append's checks and writes inside an open transaction; `frontier`
/// is the in-memory right edge, written back once by the caller. (Long:
/// the checks and writes of one transaction, in the order the KV store's
/// script makes them, so the two stores read alike.)
fn apply(
    tx: &rusqlite::Transaction<'_>,
    c: &Candidate,
    frontier: &mut Frontier,
) -> Result<AppendOutcome, StoreError> {
    let existing: Option<(i64, Vec<u8>, String)> = tx
        .query_row(
            "SELECT seq, leaf_hash, canonical FROM records WHERE id = ?1",
            [c.id.as_str()],
            entry_from_row,
        )
        .optional()
        .map_err(sqlite_failed)?;
    if let Some(row) = existing {
        let entry = to_entry(row)?;
        if entry.canonical != c.canonical {
            return Ok(AppendOutcome::Refused(Refusal::IdConflict {
                existing_seq: entry.seq,
            }));
        }
        return Ok(AppendOutcome::Unchanged {
            entry,
            head: frontier.head(),
        });
    }
    if c.kind == RecordKind::Snapshot {
        let same_instant: Option<i64> = tx
            .query_row(
                "SELECT seq FROM records WHERE kind = 'snapshot' AND strategy_id = ?1 AND mode = ?2 AND as_of_ns = ?3",
                params![c.strategy_id.as_str(), c.mode.as_str(), c.as_of_nanos],
                |r| r.get(0),
            )
            .optional()
            .map_err(sqlite_failed)?;
        if let Some(seq) = same_instant {
            return Ok(AppendOutcome::Refused(Refusal::DuplicateSnapshot {
                existing_seq: seq as u64,
            }));
        }
        let latest: Option<(i64, i64)> = tx
            .query_row(
                "SELECT seq, as_of_ns FROM records WHERE kind = 'snapshot' AND strategy_id = ?1 AND mode = ?2
                 ORDER BY as_of_ns DESC LIMIT 1",
                params![c.strategy_id.as_str(), c.mode.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(sqlite_failed)?;
        if let Some((seq, as_of)) = latest
            && as_of > c.as_of_nanos
        {
            return Ok(AppendOutcome::Refused(Refusal::OutOfOrder {
                latest_seq: seq as u64,
            }));
        }
    }
    extend_tiles(tx, frontier, c.leaf_hash)?;
    let head = frontier.head();
    let seq = head.size;
    tx.execute(
        "INSERT INTO records (seq, id, kind, strategy_id, mode, as_of_ns, leaf_hash, canonical)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            seq as i64,
            c.id.as_str(),
            c.kind.as_str(),
            c.strategy_id.as_str(),
            c.mode.as_str(),
            c.as_of_nanos,
            c.leaf_hash.0.as_slice(),
            c.canonical
        ],
    )
    .map_err(sqlite_failed)?;
    if c.kind == RecordKind::Snapshot {
        // Appends are in asOf order per strategy and mode, so the new one is the latest.
        tx.execute(
            "INSERT INTO strategies (strategy_id, mode, latest_seq) VALUES (?1, ?2, ?3)
             ON CONFLICT (strategy_id, mode) DO UPDATE SET latest_seq = excluded.latest_seq",
            params![c.strategy_id.as_str(), c.mode.as_str(), seq as i64],
        )
        .map_err(sqlite_failed)?;
    }
    let entry = Entry {
        seq,
        leaf_hash: c.leaf_hash,
        canonical: c.canonical.clone(),
    };
    Ok(AppendOutcome::Created { entry, head })
}
