//! The log reads' cases.

use super::*;
use crate::merkle::Digest;
use crate::tlog::tiles::{TileId, tiles_of};

/// Asserts the store's tiles are exactly those of its leaves.
pub async fn assert_tiles_match_the_leaves<S: LedgerStore + ?Sized>(store: &S) {
    let page = store.page(&all(1000)).await.expect("store available");
    assert!(page.next.is_none(), "the suite's ledgers fit one page");
    let leaves: Vec<Digest> = page.entries.iter().rev().map(|e| e.leaf_hash).collect();
    let expected = tiles_of(&leaves);
    let ids: Vec<TileId> = expected.keys().copied().collect();
    let read = store.tiles(&ids).await.expect("store available");
    assert_eq!(read.head, page.head);
    assert_eq!(read.tiles, expected, "the stored tiles are the tree's");
}

pub(super) async fn tiles_and_entry_runs_follow_the_tree<S: LedgerStore>(store: S) {
    let empty = store.tiles(&[TileId { level: 0, index: 0 }]).await.unwrap();
    assert_eq!((empty.head, empty.tiles.len()), (Head::empty(), 0));
    let mut canonical = Vec::new();
    for i in 0..260 {
        let c = decision(&format!("d{i}"), "s", i);
        canonical.push(c.canonical.clone());
        created(&store, c).await;
    }
    assert_tiles_match_the_leaves(&store).await;
    let read = store
        .tiles(&[TileId { level: 0, index: 1 }, TileId { level: 3, index: 0 }])
        .await
        .unwrap();
    assert_eq!(read.head.size, 260);
    assert_eq!(read.tiles.len(), 1, "a tile not stored is absent");
    assert_eq!(read.tiles[&TileId { level: 0, index: 1 }].len(), 4);
    let full = store.entry_run(1, 256).await.unwrap();
    assert_eq!(full.entries.len(), 256);
    assert!(full.entries.iter().zip(1..).all(|(e, seq)| e.seq == seq));
    assert_eq!(full.entries[9].canonical, canonical[9]);
    let tail = store.entry_run(257, 256).await.unwrap();
    let seqs: Vec<u64> = tail.entries.iter().map(|e| e.seq).collect();
    assert_eq!((tail.head.size, seqs), (260, vec![257, 258, 259, 260]));
    assert!(store.entry_run(1000, 256).await.unwrap().entries.is_empty());
    assert!(
        store
            .entry_run(u64::MAX, 256)
            .await
            .unwrap()
            .entries
            .is_empty()
    );
}
