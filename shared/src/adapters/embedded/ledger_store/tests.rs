//! The embedded ledger store's own tests (the conformance suite and what
//! is particular to SQLite).

use super::series::{SERIES_AFTER_SQL, SERIES_FROM_SQL, SERIES_SQL};
use super::*;
use crate::ports::ledger_store::{AppendOutcome, Refusal};
use crate::ports::ledger_store::{HeadReads, LedgerAppend};

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
