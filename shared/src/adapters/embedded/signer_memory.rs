//! The embedded store's adapter of [`SignerMemory`]: the log's largest
//! signed checkpoint in a row of the ledger's own database
//! (`ledger.sqlite3`, table `signer_memory`), the store's copy of what the
//! signer remembers. It is restored, emptied or replaced with the ledger,
//! which is why freedom-local also keeps a copy beside the key file,
//! outside the data dir ([`super::SignedFile`]), and checks the ledger
//! against both. The compare-and-swap is one `BEGIN IMMEDIATE`
//! transaction, so processes sharing the data dir never move it back.

use super::connection::{self, SharedConnection};
use super::ledger_store::DATABASE_FILE;
use crate::ports::StoreError;
use crate::ports::signer_memory::SignerMemory;
use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use std::path::{Path, PathBuf};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS signer_memory (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    note      TEXT    NOT NULL
) STRICT;
";

/// How errors name this store.
const STORE: &str = "embedded signer memory";

fn sqlite_failed(error: rusqlite::Error) -> StoreError {
    connection::failed(STORE)(error)
}

/// The signer's memory in the ledger's database.
#[derive(Clone)]
pub struct SqliteSignerMemory {
    connection: SharedConnection,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteSignerMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteSignerMemory")
            .field("path", &self.path)
            .finish()
    }
}

impl SqliteSignerMemory {
    /// Opens (creating the table if needed) the memory in `data_dir`'s
    /// ledger database.
    pub fn open(data_dir: &Path) -> Result<SqliteSignerMemory, StoreError> {
        Ok(SqliteSignerMemory {
            connection: SharedConnection::open(data_dir, DATABASE_FILE, SCHEMA, STORE)?,
            path: data_dir.join(DATABASE_FILE),
        })
    }
}

#[async_trait]
impl SignerMemory for SqliteSignerMemory {
    async fn recall(&self) -> Result<Option<String>, StoreError> {
        self.connection
            .run(|conn| {
                conn.query_row(
                    "SELECT note FROM signer_memory WHERE singleton = 1",
                    [],
                    |r| r.get(0),
                )
                .optional()
                .map_err(sqlite_failed)
            })
            .await
    }

    async fn remember(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError> {
        let (previous, next) = (previous.map(str::to_owned), next.to_owned());
        self.connection
            .run(move |conn| {
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(sqlite_failed)?;
                let held: Option<String> = tx
                    .query_row(
                        "SELECT note FROM signer_memory WHERE singleton = 1",
                        [],
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(sqlite_failed)?;
                if held != previous {
                    return Ok(false);
                }
                tx.execute(
                    "INSERT INTO signer_memory (singleton, note) VALUES (1, ?1)
                     ON CONFLICT (singleton) DO UPDATE SET note = excluded.note",
                    params![next],
                )
                .map_err(sqlite_failed)?;
                tx.commit().map_err(sqlite_failed)?;
                Ok(true)
            })
            .await
    }

    fn describe(&self) -> String {
        format!("the table signer_memory of {}", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_ledger_databases_memory_passes_the_signer_memory_suite() {
        let dir = tempfile::tempdir().unwrap();
        crate::ports::conformance::run_signer_memory(|| async {
            (
                SqliteSignerMemory::open(dir.path()).unwrap(),
                SqliteSignerMemory::open(dir.path()).unwrap(),
            )
        })
        .await;
    }
}
