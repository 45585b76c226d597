//! What the embedded stores share: opening a SQLite database in the data dir
//! and running blocking work on it off the async runtime.

use crate::ports::StoreError;
use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long opening a database retries while another process holds it in
/// the moment it switches the file to WAL.
const OPEN_RETRY: Duration = Duration::from_secs(10);

/// A SQLite failure as a store failure, naming which store: a database
/// whose pages are damaged, or a file that is not a database, is corrupt
/// (no retry mends it: a 500); anything else (busy, locked, the disk full
/// or failing) is unavailability, which may pass (a 503).
pub(super) fn failed(store: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |error| {
        if is_corruption(&error) {
            StoreError::Corrupt(format!("{store}: {error}"))
        } else {
            StoreError::unavailable(store, error)
        }
    }
}

/// Whether SQLite says the database itself is damaged or not a database.
fn is_corruption(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// One connection, used by one blocking task at a time.
#[derive(Clone)]
pub(crate) struct SharedConnection {
    connection: Arc<Mutex<Connection>>,
    /// Which store it belongs to, for errors.
    store: &'static str,
}

impl std::fmt::Debug for SharedConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedConnection")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl SharedConnection {
    /// Opens (creating if needed) `file` in `data_dir` and runs `schema`:
    /// WAL journal, `synchronous = FULL` (a commit is on disk before it
    /// returns), a 10 s busy timeout. `store` names it in errors.
    pub(crate) fn open(
        data_dir: &Path,
        file: &str,
        schema: &str,
        store: &'static str,
    ) -> Result<SharedConnection, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|error| {
            StoreError::unavailable(
                format!("cannot create the data dir {}", data_dir.display()),
                error,
            )
        })?;
        let path = data_dir.join(file);
        let connection = open_database(&path, schema).map_err(|error| {
            let context = format!("{store} {}", path.display());
            if is_corruption(&error) {
                StoreError::Corrupt(format!("{context} is damaged or not a database: {error}"))
            } else {
                StoreError::unavailable(context, error)
            }
        })?;
        Ok(SharedConnection {
            connection: Arc::new(Mutex::new(connection)),
            store,
        })
    }

    /// Runs `work` on the connection in a blocking task.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || {
            // A panic in other work cannot leave a half-done transaction
            // behind (SQLite rolls back), so a poisoned lock is still usable.
            let mut conn = connection
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            work(&mut conn)
        })
        .await
        .map_err(|error| StoreError::unavailable(self.store, error))?
    }
}

impl SharedConnection {
    /// Runs `work`, a read of a row or two, on this thread (a hop to the
    /// blocking pool and back costs more than such a read: it was most of
    /// a warm dashboard's time). For a connection only such reads use, so
    /// the lock is held for microseconds; WAL readers never wait for
    /// writers, so the read does not wait on another process.
    pub(crate) fn run_inline<T>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let conn = self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(&conn)
    }

    /// Runs `work` on the connection on this thread: for work at open,
    /// before any async caller can use the store.
    pub(crate) fn run_blocking<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        work(&mut conn)
    }
}

/// Opens a connection in WAL mode with `synchronous = FULL` and runs
/// `schema`. Switching to WAL and creating tables need a moment of exclusive
/// access, and SQLite answers `SQLITE_BUSY` there without waiting on the busy
/// timeout, so processes opening the same data dir at once retry for up to
/// [`OPEN_RETRY`].
fn open_database(path: &Path, schema: &str) -> rusqlite::Result<Connection> {
    let started = std::time::Instant::now();
    loop {
        match try_open(path, schema) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && started.elapsed() < OPEN_RETRY =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

/// How much of the database file a connection maps for reading.
const MMAP_BYTES: i64 = 1 << 30;

fn try_open(path: &Path, schema: &str) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Reads map the file instead of copying each page through a syscall
    // (a proof reads 8 KiB tiles, which span overflow pages).
    conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
    if !schema.is_empty() {
        // The store's first connection (the one that runs its schema)
        // checks the file; its others open the same file after it.
        quick_check(&conn)?;
    }
    conn.execute_batch(schema)?;
    Ok(conn)
}

/// `PRAGMA quick_check`: a database with a damaged page or index fails to
/// open (as corrupt) rather than failing some later request.
fn quick_check(conn: &Connection) -> rusqlite::Result<()> {
    let verdict: String = conn.query_row("PRAGMA quick_check(1)", [], |row| row.get(0))?;
    if verdict == "ok" {
        return Ok(());
    }
    Err(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
        Some(format!("quick_check: {verdict}")),
    ))
}
