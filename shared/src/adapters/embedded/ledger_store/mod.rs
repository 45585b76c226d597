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

mod append;
mod pages;
mod series;
#[cfg(test)]
mod tests;
mod tiles;
use crate::merkle::{Digest, Head};
use crate::ports::ledger_store::{Entry, StoreError};
use rusqlite::{Connection, OptionalExtension};
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

/// The embedded adapter of [`crate::ports::LedgerStore`].
#[derive(Clone, Debug)]
pub struct SqliteLedgerStore {
    writer: SharedConnection,
    reader: SharedConnection,
    /// A connection of its own for the head, the one-row read every read
    /// starts with: never behind a long read, so it runs on the caller's
    /// thread.
    head_reader: SharedConnection,
}

/// How errors name this store.
pub(super) const STORE: &str = "embedded ledger store";

pub(super) fn sqlite_failed(error: rusqlite::Error) -> StoreError {
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
        writer.run_blocking(tiles::complete_tiles)?;
        let reader = SharedConnection::open(data_dir, DATABASE_FILE, "", STORE)?;
        let head_reader = SharedConnection::open(data_dir, DATABASE_FILE, "", STORE)?;
        Ok(SqliteLedgerStore {
            writer,
            reader,
            head_reader,
        })
    }
}

pub(super) fn read_head(conn: &Connection) -> Result<Head, StoreError> {
    let row: Option<(i64, Vec<u8>)> = conn
        .prepare_cached("SELECT size, root FROM head WHERE singleton = 1")
        .and_then(|mut statement| {
            statement
                .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(sqlite_failed)?;
    match row {
        None => Ok(Head::empty()),
        Some((size, root)) => Ok(Head {
            size: size as u64,
            root_hash: digest(root)?,
        }),
    }
}

pub(super) fn digest(bytes: Vec<u8>) -> Result<Digest, StoreError> {
    let array: [u8; 32] = bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt("a stored hash is not 32 bytes".into()))?;
    Ok(Digest(array))
}

pub(super) fn entry_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, Vec<u8>, String)> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
}

pub(super) fn to_entry(
    (seq, hash, canonical): (i64, Vec<u8>, String),
) -> Result<Entry, StoreError> {
    Entry::read(seq as u64, digest(hash)?, canonical)
}

pub(super) fn collect_entries(
    rows: impl Iterator<Item = rusqlite::Result<(i64, Vec<u8>, String)>>,
) -> Result<Vec<Entry>, StoreError> {
    rows.map(|row| to_entry(row.map_err(sqlite_failed)?))
        .collect()
}
