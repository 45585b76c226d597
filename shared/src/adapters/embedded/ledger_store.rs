//! The embedded ledger store: SQLite in `<data dir>/ledger.sqlite3`.
//!
//! WAL journal with `synchronous = FULL`, so a commit is on disk before
//! append returns: an acknowledged append survives `kill -9` and power loss.
//! Each append is one `BEGIN IMMEDIATE` transaction (checks, record, head), so
//! several processes sharing a data dir serialise their writes through
//! SQLite's lock. The head row keeps the Merkle frontier; no append reads the
//! leaves.
//!
//! Tables: `records(seq, id UNIQUE, kind, strategy_id, mode, as_of_ns,
//! leaf_hash, canonical)` with a unique index on snapshot slots
//! `(strategy_id, mode, as_of_ns)` (which also serves series reads) and an
//! index on `(kind, as_of_ns)` (decisions by time); `strategies(strategy_id,
//! mode, latest_seq)`, kept by append, so the latest snapshot of every
//! strategy is read without scanning history; `head(size, root,
//! frontier)`; and `tiles(level, idx, hashes)`, the log's hash tiles
//! (c2sp.org/tlog-tiles, height 8) as the served bytes: tile `idx` of a
//! level holds the level's hashes `256 idx ..` concatenated, extended by
//! each append in its transaction with the nodes it completed, so a proof
//! reads one row per tile. A ledger written before tiles were kept gets
//! them at open, built from its leaves once.

use super::connection::{self, SharedConnection};
use crate::merkle::{Digest, Frontier, Head};
use crate::ports::ledger_store::{
    AppendOutcome, Candidate, Entry, EntryRun, LatestSnapshots, LedgerStore, Page, PageBuilder,
    PageQuery, Refusal, Rollup, SeriesSince, SinceInception, StoreError, TileRead, WindowEntries,
};
use crate::record::{Mode, RecordKind, StrategyId};
use crate::tlog::tiles::{TILE_HEIGHT, TILE_WIDTH, TileId, level_width};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;

/// File name of the ledger database inside the data dir.
pub const DATABASE_FILE: &str = "ledger.sqlite3";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS records (
    seq         INTEGER PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    kind        TEXT    NOT NULL,
    strategy_id TEXT    NOT NULL,
    mode        TEXT    NOT NULL,
    as_of_ns    INTEGER NOT NULL,
    leaf_hash   BLOB    NOT NULL,
    canonical   TEXT    NOT NULL
) STRICT;
CREATE UNIQUE INDEX IF NOT EXISTS snapshot_slot
    ON records (strategy_id, mode, as_of_ns) WHERE kind = 'snapshot';
CREATE INDEX IF NOT EXISTS by_strategy ON records (strategy_id, seq);
-- A series by seq, for an export's page from its cursor.
CREATE INDEX IF NOT EXISTS series_seq
    ON records (strategy_id, mode, seq) WHERE kind = 'snapshot';
CREATE INDEX IF NOT EXISTS by_kind_time ON records (kind, as_of_ns);
CREATE TABLE IF NOT EXISTS strategies (
    strategy_id TEXT    NOT NULL,
    mode        TEXT    NOT NULL,
    latest_seq  INTEGER NOT NULL,
    PRIMARY KEY (strategy_id, mode)
) STRICT;
-- Ledgers written before the strategies table existed: fill it once.
INSERT INTO strategies (strategy_id, mode, latest_seq)
    SELECT r.strategy_id, r.mode, r.seq FROM records r
    WHERE r.kind = 'snapshot' AND NOT EXISTS (SELECT 1 FROM strategies)
      AND r.as_of_ns = (SELECT MAX(as_of_ns) FROM records x
                        WHERE x.kind = 'snapshot' AND x.strategy_id = r.strategy_id AND x.mode = r.mode);
CREATE TABLE IF NOT EXISTS head (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    size      INTEGER NOT NULL,
    root      BLOB    NOT NULL,
    frontier  BLOB    NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS tiles (
    level  INTEGER NOT NULL,
    idx    INTEGER NOT NULL,
    hashes BLOB    NOT NULL,
    PRIMARY KEY (level, idx)
) WITHOUT ROWID, STRICT;
-- The dashboard's since-inception roll-ups: derived data, one per series.
CREATE TABLE IF NOT EXISTS rollups (
    strategy_id TEXT    NOT NULL,
    mode        TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    from_ns     INTEGER NOT NULL,
    through_seq INTEGER NOT NULL,
    state       TEXT    NOT NULL,
    PRIMARY KEY (strategy_id, mode)
) WITHOUT ROWID, STRICT;
";

/// The embedded adapter of [`LedgerStore`].
#[derive(Clone, Debug)]
pub struct SqliteLedgerStore {
    writer: SharedConnection,
    reader: SharedConnection,
}

/// How errors name this store.
const STORE: &str = "embedded ledger store";

fn sqlite_failed(error: rusqlite::Error) -> StoreError {
    connection::failed(STORE)(error)
}

/// What a data dir's ledger file is, looked at without changing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerFile {
    /// There is no ledger file.
    Missing,
    /// The file is empty (zero bytes).
    Empty,
    /// The file is not a ledger: not a SQLite database, or one without the
    /// ledger's head.
    NotALedger,
    /// A ledger whose head has `size` records (0: none yet).
    Ledger {
        /// The head's size.
        size: u64,
    },
}

impl SqliteLedgerStore {
    /// The ledger file in `data_dir`, looked at read-only (nothing is
    /// created): what freedom-local checks before it opens a ledger whose
    /// log has signed checkpoints.
    pub fn inspect(data_dir: &Path) -> LedgerFile {
        let path = data_dir.join(DATABASE_FILE);
        match std::fs::metadata(&path) {
            Err(_) => return LedgerFile::Missing,
            Ok(metadata) if metadata.len() == 0 => return LedgerFile::Empty,
            Ok(_) => {}
        }
        let flags =
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let size = Connection::open_with_flags(&path, flags).and_then(|conn| {
            conn.query_row("SELECT size FROM head WHERE singleton = 1", [], |r| {
                r.get::<_, i64>(0)
            })
            .optional()
        });
        match size {
            Ok(size) => LedgerFile::Ledger {
                size: size.map_or(0, |s| s.max(0) as u64),
            },
            Err(_) => LedgerFile::NotALedger,
        }
    }

    /// The ledger file's path in `data_dir`.
    pub fn path_in(data_dir: &Path) -> std::path::PathBuf {
        data_dir.join(DATABASE_FILE)
    }

    /// Opens (creating if needed) the ledger in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<SqliteLedgerStore, StoreError> {
        let writer = SharedConnection::open(data_dir, DATABASE_FILE, SCHEMA, STORE)?;
        writer.run_blocking(complete_tiles)?;
        let reader = SharedConnection::open(data_dir, DATABASE_FILE, "", STORE)?;
        Ok(SqliteLedgerStore { writer, reader })
    }

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

    /// Appends many records in one transaction (one fsync), each with the
    /// same checks as [`LedgerStore::append`], in order: for imports and
    /// benchmarks. Either all outcomes are durable or none is.
    pub async fn append_batch(
        &self,
        candidates: Vec<Candidate>,
    ) -> Result<Vec<AppendOutcome>, StoreError> {
        self.writer
            .run(move |conn| append_in_transaction(conn, &candidates))
            .await
    }
}

fn read_frontier(conn: &Connection) -> Result<Frontier, StoreError> {
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

/// Rebuilds the tiles from the leaves when they do not cover the head (a
/// ledger written before tiles were kept): one transaction, once.
fn complete_tiles(conn: &mut Connection) -> Result<(), StoreError> {
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
fn extend_tiles(
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

fn read_head(conn: &Connection) -> Result<Head, StoreError> {
    let row: Option<(i64, Vec<u8>)> = conn
        .query_row("SELECT size, root FROM head WHERE singleton = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
        .map_err(sqlite_failed)?;
    match row {
        None => Ok(Head::empty()),
        Some((size, root)) => Ok(Head {
            size: size as u64,
            root_hash: digest(root)?,
        }),
    }
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

fn digest(bytes: Vec<u8>) -> Result<Digest, StoreError> {
    let array: [u8; 32] = bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt("a stored hash is not 32 bytes".into()))?;
    Ok(Digest(array))
}

fn entry_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, Vec<u8>, String)> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
}

fn to_entry((seq, hash, canonical): (i64, Vec<u8>, String)) -> Result<Entry, StoreError> {
    Ok(Entry {
        seq: seq as u64,
        leaf_hash: digest(hash)?,
        canonical,
    })
}

fn collect_entries(
    rows: impl Iterator<Item = rusqlite::Result<(i64, Vec<u8>, String)>>,
) -> Result<Vec<Entry>, StoreError> {
    rows.map(|row| to_entry(row.map_err(sqlite_failed)?))
        .collect()
}

fn append_in_transaction(
    conn: &mut Connection,
    candidates: &[Candidate],
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
    if frontier.size() != before {
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
/// is the in-memory right edge, written back once by the caller.
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

fn read_page(conn: &mut Connection, q: &PageQuery) -> Result<Page, StoreError> {
    // One read transaction: the head and the entries come from the same state.
    let tx = conn.transaction().map_err(sqlite_failed)?;
    let head = read_head(&tx)?;
    let before = q
        .before
        .map(|b| b.min(i64::MAX as u64) as i64)
        .unwrap_or(i64::MAX);
    let mut statement = tx
        .prepare(
            "SELECT seq, leaf_hash, canonical FROM records
             WHERE seq < ?1
               AND (?2 IS NULL OR strategy_id = ?2)
               AND (?3 IS NULL OR kind = ?3)
               AND (?4 IS NULL OR mode = ?4)
             ORDER BY seq DESC LIMIT ?5",
        )
        .map_err(sqlite_failed)?;
    let rows = statement
        .query_map(
            params![
                before,
                q.strategy_id.as_ref().map(|s| s.as_str()),
                q.kind.map(RecordKind::as_str),
                q.mode.map(Mode::as_str),
                q.limit as i64 + 1
            ],
            entry_from_row,
        )
        .map_err(sqlite_failed)?;
    // Rows are read one at a time, and no further once the page is full.
    let mut page = PageBuilder::new(q.limit);
    for row in rows {
        if !page.offer(to_entry(row.map_err(sqlite_failed)?)?) {
            break;
        }
    }
    drop(statement);
    tx.commit().map_err(sqlite_failed)?;
    Ok(page.finish(head))
}

/// One series' baseline (the last snapshot at or before ?3) and its
/// snapshots after it up to ?4, oldest first. `INDEXED BY`: without
/// statistics SQLite's planner takes the time index instead, reading every
/// strategy's snapshots in the range (test `series_reads_use_the_series_index`).
const SERIES_SQL: &str = "SELECT seq, leaf_hash, canonical FROM (
         SELECT seq, leaf_hash, canonical, as_of_ns FROM (
             SELECT seq, leaf_hash, canonical, as_of_ns FROM records INDEXED BY snapshot_slot
             WHERE kind = 'snapshot' AND strategy_id = ?1 AND mode = ?2 AND as_of_ns <= ?3
             ORDER BY as_of_ns DESC LIMIT 1)
         UNION ALL
         SELECT seq, leaf_hash, canonical, as_of_ns FROM records INDEXED BY snapshot_slot
         WHERE kind = 'snapshot' AND strategy_id = ?1 AND mode = ?2 AND as_of_ns > ?3 AND as_of_ns <= ?4)
     ORDER BY as_of_ns";

/// At most ?4 of one series' snapshots with seq above ?3, in seq order.
const SERIES_AFTER_SQL: &str = "SELECT seq, leaf_hash, canonical FROM records INDEXED BY series_seq
     WHERE kind = 'snapshot' AND strategy_id = ?1 AND mode = ?2 AND seq > ?3
     ORDER BY seq LIMIT ?4";

/// One series' snapshots at or after ?3, oldest first.
const SERIES_FROM_SQL: &str =
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

#[async_trait]
impl LedgerStore for SqliteLedgerStore {
    async fn append(&self, candidate: Candidate) -> Result<AppendOutcome, StoreError> {
        let mut outcomes = self
            .writer
            .run(move |conn| append_in_transaction(conn, &[candidate]))
            .await?;
        Ok(outcomes.pop().expect("one outcome per candidate"))
    }

    async fn head(&self) -> Result<Head, StoreError> {
        self.reader.run(|conn| read_head(conn)).await
    }

    async fn page(&self, query: &PageQuery) -> Result<Page, StoreError> {
        let query = query.clone();
        self.reader.run(move |conn| read_page(conn, &query)).await
    }

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

    async fn tiles(&self, ids: &[TileId]) -> Result<TileRead, StoreError> {
        let ids = ids.to_vec();
        self.reader.run(move |conn| read_tiles(conn, &ids)).await
    }

    async fn entry_run(&self, first_seq: u64, count: u64) -> Result<EntryRun, StoreError> {
        self.reader
            .run(move |conn| read_entry_run(conn, first_seq, count))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn the_embedded_store_passes_the_conformance_suite() {
        let dirs = std::sync::Mutex::new(Vec::new());
        crate::ports::conformance::run(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let store = SqliteLedgerStore::open(dir.path()).expect("open store");
            dirs.lock().unwrap().push(dir);
            async move { store }
        })
        .await;
    }

    /// A series' reads go through the series' own index, so they cost its
    /// window, not every strategy's snapshots in that time range (SQLite's
    /// planner, without statistics, otherwise takes the time index).
    #[test]
    fn series_reads_use_the_series_index() {
        let dir = tempfile::tempdir().unwrap();
        SqliteLedgerStore::open(dir.path()).unwrap();
        let conn = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
        for (name, sql, parameters, index) in [
            ("window", SERIES_SQL, 4, "snapshot_slot"),
            ("since a roll-up", SERIES_FROM_SQL, 3, "snapshot_slot"),
            ("an export page", SERIES_AFTER_SQL, 4, "series_seq"),
        ] {
            let mut plan = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let values: Vec<rusqlite::types::Value> = (0..parameters)
                .map(|i| match i {
                    0 => "s".to_owned().into(),
                    1 => "live".to_owned().into(),
                    _ => 0i64.into(),
                })
                .collect();
            let details: Vec<String> = plan
                .query_map(rusqlite::params_from_iter(values), |r| r.get(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let searches: Vec<&String> = details.iter().filter(|d| d.contains("records")).collect();
            assert!(!searches.is_empty(), "{name}: {details:?}");
            for search in searches {
                assert!(search.contains(index), "{name}: {search}");
            }
        }
    }

    #[tokio::test]
    async fn a_batch_applies_the_same_checks_in_order_and_writes_one_head() {
        use crate::ports::conformance::{decision, snapshot};
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteLedgerStore::open(dir.path()).unwrap();
        let outcomes = store
            .append_batch(vec![
                snapshot("a", "s", "live", 2, 100),
                snapshot("b", "s", "live", 1, 100),
                snapshot("a", "s", "live", 2, 100),
                decision("d", "s", 0),
            ])
            .await
            .unwrap();
        assert!(matches!(outcomes[0], AppendOutcome::Created { .. }));
        assert!(matches!(
            outcomes[1],
            AppendOutcome::Refused(Refusal::OutOfOrder { latest_seq: 1 })
        ));
        assert!(matches!(outcomes[2], AppendOutcome::Unchanged { .. }));
        let AppendOutcome::Created { head, .. } = &outcomes[3] else {
            panic!("{:?}", outcomes[3])
        };
        assert_eq!(store.head().await.unwrap(), *head);
        assert_eq!(head.size, 2);
    }

    #[tokio::test]
    async fn a_ledger_without_tiles_gets_them_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteLedgerStore::open(dir.path()).unwrap();
        let candidates = (0..300)
            .map(|i| crate::ports::conformance::decision(&format!("d{i}"), "s", i))
            .collect();
        store.append_batch(candidates).await.unwrap();
        drop(store);
        let database = Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
        database.execute("DELETE FROM tiles", []).unwrap();
        drop(database);
        let reopened = SqliteLedgerStore::open(dir.path()).unwrap();
        crate::ports::conformance::assert_tiles_match_the_leaves(&reopened).await;
    }

    #[tokio::test]
    async fn a_reopened_store_has_every_record_and_the_same_head() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteLedgerStore::open(dir.path()).unwrap();
        for i in 0..5 {
            let outcome = store
                .append(crate::ports::conformance::decision(
                    &format!("d{i}"),
                    "s",
                    0,
                ))
                .await
                .unwrap();
            assert!(matches!(outcome, AppendOutcome::Created { .. }));
        }
        let head = store.head().await.unwrap();
        drop(store);
        let reopened = SqliteLedgerStore::open(dir.path()).unwrap();
        assert_eq!(reopened.head().await.unwrap(), head);
        assert_eq!(head.size, 5);
    }
}
