//! The embedded store's log reads: the head, hash tiles and entry runs;
//! and the tiles' upkeep (each append extends them; a ledger written before
//! tiles were kept gets them at open).

use super::collect_entries;
use super::{SqliteLedgerStore, digest, entry_from_row, read_head, sqlite_failed};
use crate::merkle::{Digest, Frontier, Head};
use crate::ports::ledger_store::{EntryRun, HeadReads, StoreError, TileRead, TileReads};
use crate::tlog::tiles::{TILE_HEIGHT, TILE_WIDTH, TileId, level_width};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

#[async_trait]
impl HeadReads for SqliteLedgerStore {
    async fn head(&self) -> Result<Head, StoreError> {
        // One row, asked for by every read first: on this thread, on a
        // connection only head reads use.
        self.head_reader.run_inline(read_head)
    }
}

#[async_trait]
impl TileReads for SqliteLedgerStore {
    async fn tiles(&self, ids: &[TileId]) -> Result<TileRead, StoreError> {
        let ids = ids.to_vec();
        self.reader.run(move |conn| read_tiles(conn, &ids)).await
    }

    async fn entry_run(&self, first_seq: u64, count: u64) -> Result<EntryRun, StoreError> {
        self.reader
            .run(move |conn| read_entry_run(conn, first_seq, count))
            .await
    }
}

/// Rebuilds the tiles from the leaves when they do not cover the head (a
/// ledger written before tiles were kept): one transaction, once.
pub(super) fn complete_tiles(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite_failed)?;
    let head = read_head(&tx)?;
    let covered: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(idx * 256 + length(hashes) / 32), 0) FROM tiles WHERE level = 0",
            [],
            |r| r.get(0),
        )
        .map_err(sqlite_failed)?;
    if covered as u64 == head.size {
        return Ok(());
    }
    tracing::info!(
        leaves = head.size,
        "building the log's tiles from the ledger's leaves"
    );
    tx.execute("DELETE FROM tiles", []).map_err(sqlite_failed)?;
    let mut frontier = Frontier::empty();
    {
        let mut leaves = tx
            .prepare("SELECT leaf_hash FROM records ORDER BY seq")
            .map_err(sqlite_failed)?;
        let mut rows = leaves.query([]).map_err(sqlite_failed)?;
        while let Some(row) = rows.next().map_err(sqlite_failed)? {
            let leaf = digest(row.get(0).map_err(sqlite_failed)?)?;
            extend_tiles(&tx, &mut frontier, leaf)?;
        }
    }
    if frontier.head() != head {
        return Err(StoreError::Corrupt(
            "the ledger's leaves do not hash to its head".into(),
        ));
    }
    tx.commit().map_err(sqlite_failed)
}

/// Appends `leaf` to `frontier` and the nodes it completes to the tiles.
pub(super) fn extend_tiles(
    tx: &rusqlite::Transaction<'_>,
    frontier: &mut Frontier,
    leaf: Digest,
) -> Result<(), StoreError> {
    let created = frontier.push_recording(leaf);
    // `||` joins two blobs as text; the cast keeps the bytes as a blob.
    let mut statement = tx
        .prepare_cached(
            "INSERT INTO tiles (level, idx, hashes) VALUES (?1, ?2, ?3)
             ON CONFLICT (level, idx) DO UPDATE SET hashes = CAST(hashes || excluded.hashes AS BLOB)",
        )
        .map_err(sqlite_failed)?;
    for (height, hash) in created {
        if height % TILE_HEIGHT == 0 {
            let level = height / TILE_HEIGHT;
            let position = level_width(frontier.size(), level) - 1;
            statement
                .execute(params![
                    i64::from(level),
                    (position / TILE_WIDTH) as i64,
                    hash.0.as_slice()
                ])
                .map_err(sqlite_failed)?;
        }
    }
    Ok(())
}

fn read_tiles(conn: &mut Connection, ids: &[TileId]) -> Result<TileRead, StoreError> {
    let tx = conn.transaction().map_err(sqlite_failed)?;
    let head = read_head(&tx)?;
    let mut tiles = std::collections::BTreeMap::new();
    {
        let mut statement = tx
            .prepare_cached("SELECT hashes FROM tiles WHERE level = ?1 AND idx = ?2")
            .map_err(sqlite_failed)?;
        for id in ids {
            let Ok(index) = i64::try_from(id.index) else {
                continue;
            };
            let bytes: Option<Vec<u8>> = statement
                .query_row(params![i64::from(id.level), index], |r| r.get(0))
                .optional()
                .map_err(sqlite_failed)?;
            if let Some(bytes) = bytes {
                tiles.insert(*id, hashes_of_tile(&bytes)?);
            }
        }
    }
    tx.commit().map_err(sqlite_failed)?;
    Ok(TileRead { head, tiles })
}

fn read_entry_run(conn: &mut Connection, first: u64, count: u64) -> Result<EntryRun, StoreError> {
    let tx = conn.transaction().map_err(sqlite_failed)?;
    let head = read_head(&tx)?;
    let first = i64::try_from(first).unwrap_or(i64::MAX);
    let last = first.saturating_add(count.min(TILE_WIDTH) as i64);
    let entries = {
        let mut statement = tx
            .prepare_cached(
                "SELECT seq, leaf_hash, canonical FROM records WHERE seq >= ?1 AND seq < ?2 ORDER BY seq",
            )
            .map_err(sqlite_failed)?;
        let rows = statement
            .query_map(params![first, last], entry_from_row)
            .map_err(sqlite_failed)?;
        collect_entries(rows)?
    };
    tx.commit().map_err(sqlite_failed)?;
    Ok(EntryRun { head, entries })
}

/// A stored tile's bytes as its hashes.
fn hashes_of_tile(bytes: &[u8]) -> Result<Vec<Digest>, StoreError> {
    let (hashes, rest) = bytes.as_chunks::<32>();
    if !rest.is_empty() || hashes.len() as u64 > TILE_WIDTH {
        return Err(StoreError::Corrupt(
            "a stored tile is not a whole number of hashes".into(),
        ));
    }
    Ok(hashes.iter().map(|hash| Digest(*hash)).collect())
}
