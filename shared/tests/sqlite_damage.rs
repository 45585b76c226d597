//! A damaged SQLite ledger is the service's fault to report, not a store
//! that will come back: opening it fails `PRAGMA quick_check` (so
//! freedom-local refuses to start, naming the file), and damage met while
//! it runs is `Corrupt` (a 500), never `Unavailable` (a 503 "try again
//! later" that would never pass).

use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::ports::StoreError;
use freedom_shared::ports::conformance::{decision, snapshot};
use freedom_shared::ports::{LedgerAppend, SeriesReads};
use std::io::{Seek, SeekFrom, Write};

const PAGE: u64 = 4096;

/// A ledger of a few hundred records, written through to the main file
/// (no WAL left), in `dir`.
async fn ledger(dir: &std::path::Path) -> SqliteLedgerStore {
    let store = SqliteLedgerStore::open(dir).unwrap();
    for day in 0..300 {
        store
            .append(snapshot(&format!("s{day}"), "s", "live", day, 1000 + day))
            .await
            .unwrap();
    }
    store
}

/// Overwrites every page but the first two (the header and the schema)
/// with garbage.
fn damage(path: &std::path::Path) {
    let length = std::fs::metadata(path).unwrap().len();
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(2 * PAGE)).unwrap();
    file.write_all(&vec![0xA5; (length - 2 * PAGE) as usize])
        .unwrap();
    file.sync_all().unwrap();
}

#[tokio::test]
async fn a_damaged_ledger_fails_to_open_as_corrupt_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    drop(ledger(dir.path()).await);
    let path = SqliteLedgerStore::path_in(dir.path());
    damage(&path);
    match SqliteLedgerStore::open(dir.path()) {
        Err(StoreError::Corrupt(message)) => {
            assert!(message.contains(&path.display().to_string()), "{message}");
        }
        other => panic!("a damaged ledger must not open: {other:?}"),
    }
}

#[tokio::test]
async fn damage_met_while_running_is_corrupt_not_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let store = ledger(dir.path()).await;
    // Everything in the main file, then its pages damaged under the store.
    let checkpoint = rusqlite::Connection::open(SqliteLedgerStore::path_in(dir.path())).unwrap();
    checkpoint
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    drop(checkpoint);
    damage(&SqliteLedgerStore::path_in(dir.path()));
    let append = store.append(decision("after", "s", 300)).await;
    let strategy = freedom_shared::record::StrategyId::parse("s").unwrap();
    let read = store
        .snapshot_series(
            &strategy,
            freedom_shared::record::Mode::Live,
            i64::MIN,
            i64::MAX,
        )
        .await;
    for (what, error) in [("append", append.err()), ("read", read.err())] {
        match error {
            Some(StoreError::Corrupt(_)) => {}
            other => panic!("{what} on a damaged ledger must be corrupt, got {other:?}"),
        }
    }
}
