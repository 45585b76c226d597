//! The embedded adapter of [`ScannerStore`]: `<data dir>/scanner.sqlite3`.
//!
//! The lock is one row `(token, expires_ms)`; acquiring, releasing and every
//! fenced write are single `BEGIN IMMEDIATE` transactions, so they are atomic
//! across threads and across processes sharing the data dir. Expiry uses the
//! wall clock in milliseconds (injectable for tests).

use super::StoreError;
use super::scanner::{LockToken, ScannerStore, StateEntry};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// File name of the scanner's database inside the data dir.
pub const DATABASE_FILE: &str = "scanner.sqlite3";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS lock (
    singleton  INTEGER PRIMARY KEY CHECK (singleton = 1),
    token      TEXT    NOT NULL,
    expires_ms INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS state (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
";

/// Milliseconds since the epoch, as the lock's expiry sees them.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The embedded scanner store.
#[derive(Clone)]
pub struct SqliteScannerStore {
    connection: Arc<Mutex<Connection>>,
    clock: Clock,
}

impl std::fmt::Debug for SqliteScannerStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteScannerStore")
    }
}

fn unavailable(error: rusqlite::Error) -> StoreError {
    StoreError::Unavailable(format!("embedded scanner store: {error}"))
}

fn system_clock() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl SqliteScannerStore {
    /// Opens (creating if needed) the scanner store in `data_dir`.
    pub fn open(data_dir: &Path) -> Result<SqliteScannerStore, StoreError> {
        SqliteScannerStore::open_with_clock(data_dir, Arc::new(system_clock))
    }

    /// Opens it with `clock` deciding when a lock has expired.
    pub fn open_with_clock(
        data_dir: &Path,
        clock: Clock,
    ) -> Result<SqliteScannerStore, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|e| {
            StoreError::Unavailable(format!(
                "cannot create data dir {}: {e}",
                data_dir.display()
            ))
        })?;
        let connection = super::sqlite::open_database(&data_dir.join(DATABASE_FILE), SCHEMA)
            .map_err(unavailable)?;
        Ok(SqliteScannerStore {
            connection: Arc::new(Mutex::new(connection)),
            clock,
        })
    }

    async fn in_transaction<T: Send + 'static>(
        &self,
        work: impl FnOnce(&rusqlite::Transaction<'_>, i64) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let connection = Arc::clone(&self.connection);
        let clock = Arc::clone(&self.clock);
        tokio::task::spawn_blocking(move || {
            let mut conn = connection.lock().unwrap_or_else(|p| p.into_inner());
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(unavailable)?;
            let result = work(&tx, clock())?;
            tx.commit().map_err(unavailable)?;
            Ok(result)
        })
        .await
        .map_err(|e| StoreError::Unavailable(format!("embedded scanner store task failed: {e}")))?
    }
}

/// Whether `token` holds the lock at `now`.
fn holds(tx: &rusqlite::Transaction<'_>, token: &str, now: i64) -> Result<bool, StoreError> {
    let row: Option<(String, i64)> = tx
        .query_row(
            "SELECT token, expires_ms FROM lock WHERE singleton = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(unavailable)?;
    Ok(matches!(row, Some((held, expires)) if held == token && expires > now))
}

#[async_trait]
impl ScannerStore for SqliteScannerStore {
    async fn acquire(&self, ttl: Duration) -> Result<Option<LockToken>, StoreError> {
        let token = LockToken::random()?;
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        self.in_transaction(move |tx, now| {
            let taken = tx
                .execute(
                    "INSERT INTO lock (singleton, token, expires_ms) VALUES (1, ?1, ?2)
                     ON CONFLICT (singleton) DO UPDATE SET token = excluded.token, expires_ms = excluded.expires_ms
                     WHERE lock.expires_ms <= ?3",
                    params![token.as_str(), now.saturating_add(ttl_ms), now],
                )
                .map_err(unavailable)?;
            Ok((taken == 1).then_some(token))
        })
        .await
    }

    async fn release(&self, token: &LockToken) -> Result<bool, StoreError> {
        let token = token.clone();
        self.in_transaction(move |tx, _| {
            let deleted = tx
                .execute("DELETE FROM lock WHERE token = ?1", [token.as_str()])
                .map_err(unavailable)?;
            Ok(deleted == 1)
        })
        .await
    }

    async fn write_fenced(
        &self,
        token: &LockToken,
        entries: &[StateEntry],
    ) -> Result<bool, StoreError> {
        let token = token.clone();
        let entries = entries.to_vec();
        self.in_transaction(move |tx, now| {
            if !holds(tx, token.as_str(), now)? {
                return Ok(false);
            }
            for (name, value) in &entries {
                tx.execute(
                    "INSERT INTO state (name, value) VALUES (?1, ?2)
                     ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    params![name, value],
                )
                .map_err(unavailable)?;
            }
            Ok(true)
        })
        .await
    }

    async fn read(&self, names: &[&str]) -> Result<Vec<Option<String>>, StoreError> {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        self.in_transaction(move |tx, _| {
            names
                .iter()
                .map(|name| {
                    tx.query_row("SELECT value FROM state WHERE name = ?1", [name], |r| {
                        r.get(0)
                    })
                    .optional()
                    .map_err(unavailable)
                })
                .collect()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn the_embedded_scanner_store_passes_the_lock_suite() {
        let dirs = std::sync::Mutex::new(Vec::new());
        super::super::conformance::run_scanner(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let store = SqliteScannerStore::open(dir.path()).expect("open");
            dirs.lock().unwrap().push(dir);
            async move { store }
        })
        .await;
    }

    #[tokio::test]
    async fn an_expired_lock_passes_on_and_fences_out_its_old_holder() {
        let dir = tempfile::tempdir().unwrap();
        let now = Arc::new(AtomicI64::new(1_000_000));
        let clock: Clock = {
            let now = Arc::clone(&now);
            Arc::new(move || now.load(Ordering::SeqCst))
        };
        let store = SqliteScannerStore::open_with_clock(dir.path(), clock).unwrap();
        let stale = store
            .acquire(Duration::from_secs(60))
            .await
            .unwrap()
            .unwrap();
        now.fetch_add(59_999, Ordering::SeqCst);
        assert!(
            store
                .acquire(Duration::from_secs(60))
                .await
                .unwrap()
                .is_none()
        );
        now.fetch_add(1, Ordering::SeqCst);
        let fresh = store
            .acquire(Duration::from_secs(60))
            .await
            .unwrap()
            .unwrap();
        super::super::conformance::assert_stale_holder_is_fenced_out(&store, &stale, &fresh).await;
    }

    #[tokio::test]
    async fn a_lock_past_its_expiry_no_longer_fences_writes_in() {
        let dir = tempfile::tempdir().unwrap();
        let now = Arc::new(AtomicI64::new(0));
        let clock: Clock = {
            let now = Arc::clone(&now);
            Arc::new(move || now.load(Ordering::SeqCst))
        };
        let store = SqliteScannerStore::open_with_clock(dir.path(), clock).unwrap();
        let token = store
            .acquire(Duration::from_millis(500))
            .await
            .unwrap()
            .unwrap();
        let entry = vec![("report".to_owned(), "late".to_owned())];
        now.store(500, Ordering::SeqCst);
        assert!(!store.write_fenced(&token, &entry).await.unwrap());
        assert_eq!(store.read(&["report"]).await.unwrap(), vec![None]);
    }
}
