//! The witness's state: per origin, the latest checkpoint it cosigned (size,
//! root, and the note with its cosignature for the monitoring read), in
//! SQLite. Checking a request against it and recording the new checkpoint
//! are one `BEGIN IMMEDIATE` transaction.

use freedom_tlog::merkle::{Digest, Head};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;
use std::sync::{Arc, Mutex};

const SCHEMA: &str = "
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE IF NOT EXISTS cosigned (
    origin TEXT PRIMARY KEY,
    size   INTEGER NOT NULL,
    root   BLOB    NOT NULL,
    note   TEXT    NOT NULL
) STRICT;
";

/// Why the state could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// SQLite failed.
    #[error("the witness's database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A row does not hold a 32-byte root.
    #[error("the witness's database holds a damaged root for {0}")]
    Damaged(String),
    /// The blocking task failed.
    #[error("the witness's database task failed")]
    Task,
}

pub use freedom_tlog::witness::Cosigned;

/// The state, one connection shared by the requests.
#[derive(Clone)]
pub struct WitnessState {
    connection: Arc<Mutex<Connection>>,
}

impl WitnessState {
    /// Opens (creating if needed) the state at `path`.
    pub fn open(path: &Path) -> Result<WitnessState, StateError> {
        let connection = Connection::open(path)?;
        connection.busy_timeout(std::time::Duration::from_secs(10))?;
        connection.execute_batch(SCHEMA)?;
        Ok(WitnessState {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StateError> + Send + 'static,
    ) -> Result<T, StateError> {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || {
            let mut conn = connection.lock().unwrap_or_else(|p| p.into_inner());
            work(&mut conn)
        })
        .await
        .map_err(|_| StateError::Task)?
    }

    /// In one transaction: reads the head last cosigned for `origin`, asks
    /// `check` about it, and when it says [`Cosigned::Yes`] records `new`
    /// with `note` (the checkpoint and the witness's cosignature).
    pub async fn check_and_update(
        &self,
        origin: String,
        new: Head,
        note: String,
        check: impl FnOnce(Option<Head>) -> Cosigned + Send + 'static,
    ) -> Result<Cosigned, StateError> {
        self.run(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let latest: Option<(i64, Vec<u8>)> = tx
                .query_row(
                    "SELECT size, root FROM cosigned WHERE origin = ?1",
                    [&origin],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let latest = latest
                .map(|(size, root)| {
                    <[u8; 32]>::try_from(root.as_slice())
                        .ok()
                        .map(Digest)
                        .map(|root_hash| Head {
                            size: size as u64,
                            root_hash,
                        })
                        .ok_or_else(|| StateError::Damaged(origin.clone()))
                })
                .transpose()?;
            let outcome = check(latest);
            if outcome == Cosigned::Yes {
                tx.execute(
                    "INSERT INTO cosigned (origin, size, root, note) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root, note = excluded.note",
                    params![origin, new.size as i64, new.root_hash.0.to_vec(), note],
                )?;
                tx.commit()?;
            }
            Ok(outcome)
        })
        .await
    }

    /// The note last cosigned for `origin`, with the cosignature.
    pub async fn latest_note(&self, origin: String) -> Result<Option<String>, StateError> {
        self.run(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT note FROM cosigned WHERE origin = ?1",
                    [&origin],
                    |r| r.get(0),
                )
                .optional()?)
        })
        .await
    }
}
