//! The embedded adapter of [`WitnessMemory`]: `<data dir>/log-witnesses.sqlite3`,
//! one row per witness, one for the witnessed checkpoint, and one per
//! checkpoint of the witnessed history (keyed by its size as 20 digits, so
//! text order is size order for every `u64`); keeping a checkpoint is one
//! `BEGIN IMMEDIATE` transaction, so processes sharing the data dir never
//! move it back nor change the history.

use super::connection::{self, SharedConnection};
use crate::ports::StoreError;
use crate::ports::witness_memory::{KeptCheckpoint, MAX_HISTORY_READ, WitnessMemory, WitnessState};
use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use std::path::Path;

/// File name of the witnesses' database inside the data dir.
pub(crate) const DATABASE_FILE: &str = "log-witnesses.sqlite3";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS witness_size (
    witness TEXT PRIMARY KEY,
    size    INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS witnessed (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    size      INTEGER NOT NULL,
    note      TEXT    NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS witnessed_history (
    size        TEXT    PRIMARY KEY,
    quorum_time INTEGER NOT NULL,
    note        TEXT    NOT NULL
) STRICT;
";

/// A size as the history's key: 20 digits.
fn padded(size: u64) -> String {
    format!("{size:020}")
}

fn size_of_key(key: &str) -> rusqlite::Result<u64> {
    key.parse().map_err(|_| rusqlite::Error::InvalidQuery)
}

/// How errors name this store.
const STORE: &str = "embedded witness memory";

fn sqlite_failed(error: rusqlite::Error) -> StoreError {
    connection::failed(STORE)(error)
}

/// SQLite stores integers signed: sizes are kept as their bit pattern.
fn to_sql(size: u64) -> i64 {
    size as i64
}

fn from_sql(size: i64) -> u64 {
    size as u64
}

/// A read's limit as SQLite takes it, capped at [`MAX_HISTORY_READ`].
fn limit_of(limit: usize) -> i64 {
    i64::try_from(limit.min(MAX_HISTORY_READ)).unwrap_or(0)
}

/// The log's memory of its witnesses in the data dir.
#[derive(Clone)]
pub struct SqliteWitnessMemory {
    connection: SharedConnection,
}

impl std::fmt::Debug for SqliteWitnessMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteWitnessMemory")
    }
}

impl SqliteWitnessMemory {
    /// Opens (creating if needed) the memory in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<SqliteWitnessMemory, StoreError> {
        Ok(SqliteWitnessMemory {
            connection: SharedConnection::open(data_dir, DATABASE_FILE, SCHEMA, STORE)?,
        })
    }
}

#[async_trait]
impl WitnessMemory for SqliteWitnessMemory {
    async fn read(&self) -> Result<WitnessState, StoreError> {
        self.connection
            .run(|conn| {
                let tx = conn.transaction().map_err(sqlite_failed)?;
                let mut state = WitnessState::default();
                {
                    let mut rows = tx
                        .prepare("SELECT witness, size FROM witness_size")
                        .map_err(sqlite_failed)?;
                    let sizes = rows
                        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                        .map_err(sqlite_failed)?;
                    for row in sizes {
                        let (witness, size) = row.map_err(sqlite_failed)?;
                        state.sizes.insert(witness, from_sql(size));
                    }
                }
                state.witnessed = tx
                    .query_row(
                        "SELECT size, note FROM witnessed WHERE singleton = 1",
                        [],
                        |r| Ok((from_sql(r.get(0)?), r.get(1)?)),
                    )
                    .optional()
                    .map_err(sqlite_failed)?;
                let top: Option<String> = tx
                    .query_row("SELECT max(size) FROM witnessed_history", [], |r| r.get(0))
                    .map_err(sqlite_failed)?;
                state.history_top = top
                    .map(|key| size_of_key(&key))
                    .transpose()
                    .map_err(sqlite_failed)?;
                Ok(state)
            })
            .await
    }

    async fn set_size(&self, witness: &str, size: u64) -> Result<(), StoreError> {
        let witness = witness.to_owned();
        self.connection
            .run(move |conn| {
                conn.execute(
                    "INSERT INTO witness_size (witness, size) VALUES (?1, ?2)
                     ON CONFLICT (witness) DO UPDATE SET size = excluded.size",
                    params![witness, to_sql(size)],
                )
                .map_err(sqlite_failed)?;
                Ok(())
            })
            .await
    }

    async fn keep_witnessed(
        &self,
        size: u64,
        note: &str,
        quorum_time: Option<u64>,
    ) -> Result<bool, StoreError> {
        let note = note.to_owned();
        self.connection
            .run(move |conn| {
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(sqlite_failed)?;
                let kept: Option<i64> = tx
                    .query_row("SELECT size FROM witnessed WHERE singleton = 1", [], |r| r.get(0))
                    .optional()
                    .map_err(sqlite_failed)?;
                if kept.is_some_and(|kept| from_sql(kept) > size) {
                    return Ok(false);
                }
                tx.execute(
                    "INSERT INTO witnessed (singleton, size, note) VALUES (1, ?1, ?2)
                     ON CONFLICT (singleton) DO UPDATE SET size = excluded.size, note = excluded.note",
                    params![to_sql(size), note],
                )
                .map_err(sqlite_failed)?;
                if let Some(quorum_time) = quorum_time {
                    tx.execute(
                    "INSERT INTO witnessed_history (size, quorum_time, note)
                     SELECT ?1, max(?2, coalesce((SELECT quorum_time FROM witnessed_history ORDER BY size DESC LIMIT 1), ?2)), ?3
                     WHERE NOT EXISTS (SELECT 1 FROM witnessed_history WHERE size >= ?1)",
                    params![padded(size), to_sql(quorum_time), note],
                )
                .map_err(sqlite_failed)?;
                }
                tx.commit().map_err(sqlite_failed)?;
                Ok(true)
            })
            .await
    }

    async fn history(&self, from: u64, limit: usize) -> Result<Vec<KeptCheckpoint>, StoreError> {
        self.connection
            .run(move |conn| {
                let mut rows = conn
                    .prepare_cached(
                        "SELECT size, quorum_time, note FROM witnessed_history
                         WHERE size >= ?1 ORDER BY size LIMIT ?2",
                    )
                    .map_err(sqlite_failed)?;
                let kept = rows
                    .query_map(params![padded(from), limit_of(limit)], |r| {
                        Ok(KeptCheckpoint {
                            size: size_of_key(&r.get::<_, String>(0)?)?,
                            quorum_time: from_sql(r.get(1)?),
                            note: r.get(2)?,
                        })
                    })
                    .map_err(sqlite_failed)?;
                kept.collect::<Result<_, _>>().map_err(sqlite_failed)
            })
            .await
    }

    async fn history_times(&self, from: u64, limit: usize) -> Result<Vec<(u64, u64)>, StoreError> {
        self.connection
            .run(move |conn| {
                let mut rows = conn
                    .prepare_cached(
                        "SELECT size, quorum_time FROM witnessed_history
                         WHERE size >= ?1 ORDER BY size LIMIT ?2",
                    )
                    .map_err(sqlite_failed)?;
                let kept = rows
                    .query_map(params![padded(from), limit_of(limit)], |r| {
                        Ok((size_of_key(&r.get::<_, String>(0)?)?, from_sql(r.get(1)?)))
                    })
                    .map_err(sqlite_failed)?;
                kept.collect::<Result<_, _>>().map_err(sqlite_failed)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_embedded_memory_passes_the_witness_memory_suite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_owned();
        crate::ports::conformance::run_witness_memory(|| {
            let path = path.clone();
            async move {
                let first = SqliteWitnessMemory::open(&path).unwrap();
                let second = SqliteWitnessMemory::open(&path).unwrap();
                (first, second)
            }
        })
        .await;
    }
}
