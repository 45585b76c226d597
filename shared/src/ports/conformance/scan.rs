//! The scan store's cases: the run lock and fenced state.

use crate::ports::scan_store::{LockToken, ScanStore, StateEntry};
use std::future::Future;
use std::sync::Arc;

/// Runs the scanner lock's cases; `make_store` must give a fresh store each
/// call. Expiry is adapter-specific (its clock) and tested beside each adapter.
pub async fn run_scanner<S, F, Fut>(make_store: F)
where
    S: ScanStore,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    only_the_holder_writes_and_releases(make_store().await).await;
    exactly_one_of_many_acquires(make_store().await).await;
    evidence_is_kept_by_its_hash(make_store().await).await;
}

/// Evidence is kept under its SHA-256 with no lock, read back byte for
/// byte (any bytes, not only text), kept once, and absent when unknown.
pub(super) async fn evidence_is_kept_by_its_hash<S: ScanStore>(store: S) {
    use crate::scan::provenance::sha256_hex;
    let json = bytes::Bytes::from_static(br#"[{"pairAddress":"P"}]"#);
    let binary = bytes::Bytes::from((0u8..=255).collect::<Vec<u8>>());
    let items = vec![
        (sha256_hex(&json), json.clone()),
        (sha256_hex(&binary), binary.clone()),
    ];
    assert_eq!(store.evidence(&items[0].0).await.unwrap(), None);
    assert_eq!(store.evidence_bytes().await.unwrap(), 0);
    store.keep_evidence(&items, LOCK_TTL).await.unwrap();
    let kept = (json.len() + binary.len()) as u64;
    assert!(
        store.evidence_bytes().await.unwrap() >= kept,
        "every byte kept is counted"
    );
    // Kept again (another run used the same answer): still the same bytes.
    store.keep_evidence(&items[..1], LOCK_TTL).await.unwrap();
    store.keep_evidence(&[], LOCK_TTL).await.unwrap();
    assert_eq!(
        store.evidence(&items[0].0).await.unwrap(),
        Some(json.to_vec())
    );
    assert_eq!(
        store.evidence(&items[1].0).await.unwrap(),
        Some(binary.to_vec())
    );
    assert_eq!(
        store.evidence(&sha256_hex(b"never kept")).await.unwrap(),
        None
    );
}

const LOCK_TTL: std::time::Duration = std::time::Duration::from_secs(60);

pub(super) fn state(name: &str, value: &str) -> Vec<StateEntry> {
    vec![(name.to_owned(), value.to_owned())]
}

pub(super) async fn only_the_holder_writes_and_releases<S: ScanStore>(store: S) {
    assert_eq!(
        store.read(&["report", "books"]).await.unwrap(),
        vec![None, None]
    );
    let holder = store.acquire(LOCK_TTL).await.unwrap().expect("a free lock");
    assert!(store.acquire(LOCK_TTL).await.unwrap().is_none(), "held");
    let stranger = LockToken::random().unwrap();
    assert!(!store.release(&stranger).await.unwrap());
    assert!(
        !store
            .write_fenced(&stranger, &state("report", "x"))
            .await
            .unwrap()
    );
    assert_eq!(store.read(&["report"]).await.unwrap(), vec![None]);

    let entries = vec![
        ("report".to_owned(), "r1".to_owned()),
        ("books".to_owned(), "b1".to_owned()),
    ];
    assert!(store.write_fenced(&holder, &entries).await.unwrap());
    assert_eq!(
        store.read(&["report", "books", "other"]).await.unwrap(),
        vec![Some("r1".to_owned()), Some("b1".to_owned()), None]
    );
    assert!(store.release(&holder).await.unwrap());
    assert!(!store.release(&holder).await.unwrap(), "released twice");
    assert!(
        !store
            .write_fenced(&holder, &state("report", "r2"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.read(&["report"]).await.unwrap(),
        vec![Some("r1".to_owned())]
    );

    let next = store.acquire(LOCK_TTL).await.unwrap().expect("free again");
    assert_ne!(next, holder);
    assert!(
        !store
            .write_fenced(&holder, &state("report", "r3"))
            .await
            .unwrap()
    );
    assert!(
        store
            .write_fenced(&next, &state("report", "r4"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.read(&["report"]).await.unwrap(),
        vec![Some("r4".to_owned())]
    );
    assert!(store.release(&next).await.unwrap());
}

pub(super) async fn exactly_one_of_many_acquires<S: ScanStore>(store: S) {
    let store = Arc::new(store);
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.acquire(LOCK_TTL).await.expect("store available") })
        })
        .collect();
    let mut holders = Vec::new();
    for task in tasks {
        if let Some(token) = task.await.expect("task completes") {
            holders.push(token);
        }
    }
    assert_eq!(holders.len(), 1, "exactly one run holds the lock");
    assert!(store.release(&holders[0]).await.unwrap());
}

/// After `stale`'s lock expired and `fresh` took it: the stale holder can
/// neither write nor release, nothing it tried is stored, and the fresh
/// holder releases normally. For each adapter's expiry test.
pub async fn assert_stale_holder_is_fenced_out<S: ScanStore + ?Sized>(
    store: &S,
    stale: &LockToken,
    fresh: &LockToken,
) {
    assert_ne!(stale, fresh);
    assert!(
        !store
            .write_fenced(stale, &state("report", "stale"))
            .await
            .unwrap()
    );
    assert!(!store.release(stale).await.unwrap());
    assert_eq!(store.read(&["report"]).await.unwrap(), vec![None]);
    assert!(store.release(fresh).await.unwrap());
}
