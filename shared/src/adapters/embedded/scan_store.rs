//! The embedded adapter of [`ScanStore`]: `<data dir>/scanner.sqlite3`.
//!
//! The lock is one row `(token, expires_ms)`; acquiring, releasing and every
//! fenced write are single `BEGIN IMMEDIATE` transactions, so they are atomic
//! across threads and across processes sharing the data dir. Expiry uses the
//! wall clock in milliseconds (injectable for tests).

use super::connection::{self, SharedConnection};
use crate::clock::{Clock, system_clock};
use crate::ports::StoreError;
use crate::ports::scan_store::{Evidence, LockToken, ScanStore, StateEntry, checked_evidence};
use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// File name of the scanner's database inside the data dir.
pub(crate) const DATABASE_FILE: &str = "scanner.sqlite3";

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
CREATE TABLE IF NOT EXISTS evidence (
    sha256     TEXT PRIMARY KEY,
    body       BLOB    NOT NULL,
    expires_ms INTEGER NOT NULL
) STRICT;
";

/// The embedded scan store.
#[derive(Clone)]
pub(crate) struct SqliteScanStore {
    connection: SharedConnection,
    clock: Clock,
}

impl std::fmt::Debug for SqliteScanStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteScanStore")
    }
}

/// How errors name this store.
const STORE: &str = "embedded scan store";

fn sqlite_failed(error: rusqlite::Error) -> StoreError {
    connection::failed(STORE)(error)
}

impl SqliteScanStore {
    /// Opens (creating if needed) the scan store in `data_dir`.
    pub(crate) fn open(data_dir: &Path) -> Result<SqliteScanStore, StoreError> {
        SqliteScanStore::open_with_clock(data_dir, system_clock())
    }

    /// Opens it with `clock` deciding when a lock has expired.
    pub(crate) fn open_with_clock(
        data_dir: &Path,
        clock: Clock,
    ) -> Result<SqliteScanStore, StoreError> {
        let connection = SharedConnection::open(data_dir, DATABASE_FILE, SCHEMA, STORE)?;
        Ok(SqliteScanStore { connection, clock })
    }

    /// Runs `work` in one `BEGIN IMMEDIATE` transaction, with the clock's
    /// reading in milliseconds since the epoch.
    async fn in_transaction<T: Send + 'static>(
        &self,
        work: impl FnOnce(&rusqlite::Transaction<'_>, i64) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let clock = Arc::clone(&self.clock);
        self.connection
            .run(move |conn| {
                let tx = conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(sqlite_failed)?;
                let result = work(&tx, clock().timestamp_millis())?;
                tx.commit().map_err(sqlite_failed)?;
                Ok(result)
            })
            .await
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
        .map_err(sqlite_failed)?;
    Ok(matches!(row, Some((held, expires)) if held == token && expires > now))
}

#[async_trait]
impl ScanStore for SqliteScanStore {
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
                .map_err(sqlite_failed)?;
            Ok((taken == 1).then_some(token))
        })
        .await
    }

    async fn release(&self, token: &LockToken) -> Result<bool, StoreError> {
        let token = token.clone();
        self.in_transaction(move |tx, _| {
            let deleted = tx
                .execute("DELETE FROM lock WHERE token = ?1", [token.as_str()])
                .map_err(sqlite_failed)?;
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
                .map_err(sqlite_failed)?;
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
                    .map_err(sqlite_failed)
                })
                .collect()
        })
        .await
    }

    /// One transaction: expired evidence is dropped, new items inserted
    /// (an item kept already stays as it is).
    async fn keep_evidence(&self, items: &[Evidence], ttl: Duration) -> Result<(), StoreError> {
        let items = items.to_vec();
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        self.in_transaction(move |tx, now| {
            tx.execute("DELETE FROM evidence WHERE expires_ms <= ?1", [now])
                .map_err(sqlite_failed)?;
            for (sha256, body) in &items {
                tx.execute(
                    "INSERT INTO evidence (sha256, body, expires_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT (sha256) DO NOTHING",
                    params![sha256, body.as_ref(), now.saturating_add(ttl_ms)],
                )
                .map_err(sqlite_failed)?;
            }
            Ok(())
        })
        .await
    }

    async fn evidence_bytes(&self) -> Result<u64, StoreError> {
        self.in_transaction(move |tx, now| {
            let bytes: i64 = tx
                .query_row(
                    "SELECT coalesce(sum(length(body)), 0) FROM evidence WHERE expires_ms > ?1",
                    [now],
                    |r| r.get(0),
                )
                .map_err(sqlite_failed)?;
            Ok(u64::try_from(bytes).unwrap_or(0))
        })
        .await
    }

    async fn evidence(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let sha256 = sha256.to_owned();
        self.in_transaction(move |tx, now| {
            let body: Option<Vec<u8>> = tx
                .query_row(
                    "SELECT body FROM evidence WHERE sha256 = ?1 AND expires_ms > ?2",
                    params![sha256, now],
                    |r| r.get(0),
                )
                .optional()
                .map_err(sqlite_failed)?;
            body.map(|bytes| checked_evidence(&sha256, bytes, STORE))
                .transpose()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    /// The instant `ms` milliseconds after the epoch (the tests' clock).
    fn millis(ms: i64) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp_millis(ms).expect("in range")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn the_embedded_scanner_store_passes_the_lock_suite() {
        let dirs = std::sync::Mutex::new(Vec::new());
        crate::ports::conformance::run_scanner(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            let store = SqliteScanStore::open(dir.path()).expect("open");
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
            Arc::new(move || millis(now.load(Ordering::SeqCst)))
        };
        let store = SqliteScanStore::open_with_clock(dir.path(), clock).unwrap();
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
        crate::ports::conformance::assert_stale_holder_is_fenced_out(&store, &stale, &fresh).await;
    }

    #[tokio::test]
    async fn a_lock_past_its_expiry_no_longer_fences_writes_in() {
        let dir = tempfile::tempdir().unwrap();
        let now = Arc::new(AtomicI64::new(0));
        let clock: Clock = {
            let now = Arc::clone(&now);
            Arc::new(move || millis(now.load(Ordering::SeqCst)))
        };
        let store = SqliteScanStore::open_with_clock(dir.path(), clock).unwrap();
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

    #[tokio::test]
    async fn evidence_expires_after_its_time_and_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let now = Arc::new(AtomicI64::new(1_000_000));
        let clock: Clock = {
            let now = Arc::clone(&now);
            Arc::new(move || millis(now.load(Ordering::SeqCst)))
        };
        let store = SqliteScanStore::open_with_clock(dir.path(), clock).unwrap();
        let body = bytes::Bytes::from_static(b"{}");
        let hash = crate::scan::provenance::sha256_hex(&body);
        let ttl = Duration::from_millis(1_000);
        store
            .keep_evidence(&[(hash.clone(), body.clone())], ttl)
            .await
            .unwrap();
        now.fetch_add(999, Ordering::SeqCst);
        assert_eq!(store.evidence(&hash).await.unwrap(), Some(body.to_vec()));
        assert_eq!(store.evidence_bytes().await.unwrap(), 2);
        now.fetch_add(1, Ordering::SeqCst);
        assert_eq!(store.evidence(&hash).await.unwrap(), None);
        assert_eq!(
            store.evidence_bytes().await.unwrap(),
            0,
            "expired: not counted"
        );
        // The next keep drops it from the file.
        store.keep_evidence(&[], ttl).await.unwrap();
        let rows: i64 = rusqlite::Connection::open(dir.path().join(DATABASE_FILE))
            .unwrap()
            .query_row("SELECT count(*) FROM evidence", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0);
    }
}
