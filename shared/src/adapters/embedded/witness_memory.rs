//! The embedded adapter of [`WitnessMemory`]: `<data dir>/log-witnesses.sqlite3`,
//! one row per witness and one for the witnessed checkpoint; keeping a
//! checkpoint is one `BEGIN IMMEDIATE` transaction, so processes sharing
//! the data dir never move it back.

use super::connection::{self, SharedConnection};
use crate::ports::StoreError;
use crate::ports::witness_memory::{WitnessMemory, WitnessState};
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
";

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

    async fn keep_witnessed(&self, size: u64, note: &str) -> Result<bool, StoreError> {
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
                tx.commit().map_err(sqlite_failed)?;
                Ok(true)
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
