//! The append's cases.

use super::*;
use crate::merkle::root_of;
use crate::ports::ledger_store::AppendOutcome;
use std::sync::Arc;

pub(super) async fn append_assigns_sequence_numbers_and_heads<S: LedgerStore>(store: S) {
    let first = snapshot("a", "s", "live", 0, 100);
    let (entry, head) = created(&store, first.clone()).await;
    assert_eq!(entry.seq, 1);
    assert_eq!(entry.leaf_hash, first.leaf_hash);
    assert_eq!(entry.canonical, first.canonical);
    assert_eq!(
        head,
        Head {
            size: 1,
            root_hash: first.leaf_hash
        }
    );
    let (entry, head) = created(&store, decision("b", "s", 0)).await;
    assert_eq!((entry.seq, head.size), (2, 2));
    assert_eq!(store.head().await.unwrap(), head);
}

pub(super) async fn identical_replay_is_unchanged_and_stores_nothing<S: LedgerStore>(store: S) {
    let (first, _) = created(&store, snapshot("a", "s", "live", 0, 100)).await;
    let (_, head) = created(&store, snapshot("b", "s", "live", 1, 101)).await;
    // Replaying the older record after a newer one is still unchanged: the id is checked first.
    match store
        .append(snapshot("a", "s", "live", 0, 100))
        .await
        .unwrap()
    {
        AppendOutcome::Unchanged { entry, head: now } => {
            assert_eq!(entry, first);
            assert_eq!(now, head);
        }
        other => panic!("replay should be unchanged, got {other:?}"),
    }
    assert_eq!(store.head().await.unwrap(), head);
}

pub(super) async fn id_conflict_is_checked_before_slot_and_order<S: LedgerStore>(store: S) {
    created(&store, snapshot("a", "s", "live", 5, 100)).await;
    assert_eq!(
        refused(&store, snapshot("a", "s", "live", 5, 999)).await,
        Refusal::IdConflict { existing_seq: 1 }
    );
    assert_eq!(
        refused(&store, snapshot("a", "s", "live", 1, 100)).await,
        Refusal::IdConflict { existing_seq: 1 }
    );
    assert_eq!(
        refused(&store, decision("a", "s", 5)).await,
        Refusal::IdConflict { existing_seq: 1 }
    );
    assert_eq!(store.head().await.unwrap().size, 1);
}

pub(super) async fn duplicate_and_out_of_order_snapshots_are_refused<S: LedgerStore>(store: S) {
    created(&store, snapshot("a", "s", "live", 3, 100)).await;
    created(&store, snapshot("b", "s", "live", 5, 100)).await;
    assert_eq!(
        refused(&store, snapshot("c", "s", "live", 5, 101)).await,
        Refusal::DuplicateSnapshot { existing_seq: 2 }
    );
    // The same instant as an older snapshot is a duplicate, not out of order.
    assert_eq!(
        refused(&store, snapshot("d", "s", "live", 3, 101)).await,
        Refusal::DuplicateSnapshot { existing_seq: 1 }
    );
    assert_eq!(
        refused(&store, snapshot("e", "s", "live", 4, 101)).await,
        Refusal::OutOfOrder { latest_seq: 2 }
    );
    // Decisions may come in any order.
    created(&store, decision("f", "s", 1)).await;
    let head = store.head().await.unwrap();
    assert_eq!(head.size, 3);
}

pub(super) async fn strategies_and_modes_are_independent<S: LedgerStore>(store: S) {
    created(&store, snapshot("a", "s", "live", 5, 100)).await;
    created(&store, snapshot("b", "s", "paper", 5, 100)).await;
    created(&store, snapshot("c", "t", "live", 5, 100)).await;
    // Older than "c" in the same strategy and mode.
    assert_eq!(
        refused(&store, snapshot("d", "t", "live", 1, 100)).await,
        Refusal::OutOfOrder { latest_seq: 3 }
    );
    created(&store, snapshot("e", "t", "paper", 1, 100)).await;
}

pub(super) async fn head_matches_a_full_recomputation<S: LedgerStore>(store: S) {
    let mut leaves = Vec::new();
    for i in 0..37 {
        let c = if i % 3 == 0 {
            decision(&format!("d{i}"), "s", i)
        } else {
            snapshot(&format!("s{i}"), "s", "live", i, 100 + i)
        };
        leaves.push(c.leaf_hash);
        let (_, head) = created(&store, c).await;
        assert_eq!(
            head,
            Head {
                size: leaves.len() as u64,
                root_hash: root_of(&leaves)
            },
            "after {} appends",
            i + 1
        );
    }
}

pub(super) async fn concurrent_appends_are_serialised<S: LedgerStore>(store: S) {
    let store = Arc::new(store);
    let outcomes = |candidates: Vec<Candidate>| {
        let store = Arc::clone(&store);
        async move {
            let tasks: Vec<_> = candidates
                .into_iter()
                .map(|c| {
                    let store = Arc::clone(&store);
                    tokio::spawn(async move { store.append(c).await.expect("store available") })
                })
                .collect();
            let mut results = Vec::new();
            for task in tasks {
                results.push(task.await.expect("task completes"));
            }
            results
        }
    };
    let count = |results: &[AppendOutcome], f: fn(&AppendOutcome) -> bool| {
        results.iter().filter(|o| f(o)).count()
    };

    // 50 identical: one created, 49 unchanged.
    let same = outcomes(
        (0..50)
            .map(|_| snapshot("same", "s", "live", 0, 100))
            .collect(),
    )
    .await;
    assert_eq!(
        count(&same, |o| matches!(o, AppendOutcome::Created { .. })),
        1
    );
    assert_eq!(
        count(&same, |o| matches!(o, AppendOutcome::Unchanged { .. })),
        49
    );

    // 50 of one id with different content: one created, 49 id conflicts.
    let conflicting = outcomes(
        (0..50)
            .map(|i| snapshot("contested", "t", "live", 0, 100 + i))
            .collect(),
    )
    .await;
    assert_eq!(
        count(&conflicting, |o| matches!(o, AppendOutcome::Created { .. })),
        1
    );
    assert_eq!(
        count(&conflicting, |o| matches!(
            o,
            AppendOutcome::Refused(Refusal::IdConflict { .. })
        )),
        49
    );

    // 50 different ids in one snapshot slot: one created, 49 duplicates.
    let slot = outcomes(
        (0..50)
            .map(|i| snapshot(&format!("slot{i}"), "u", "live", 0, 100))
            .collect(),
    )
    .await;
    assert_eq!(
        count(&slot, |o| matches!(o, AppendOutcome::Created { .. })),
        1
    );
    assert_eq!(
        count(&slot, |o| matches!(
            o,
            AppendOutcome::Refused(Refusal::DuplicateSnapshot { .. })
        )),
        49
    );

    // 50 different records: all created, with distinct sequence numbers.
    let different = outcomes(
        (0..50)
            .map(|i| decision(&format!("d{i}"), "v", i))
            .collect(),
    )
    .await;
    let mut seqs: Vec<u64> = different
        .iter()
        .map(|o| match o {
            AppendOutcome::Created { entry, .. } => entry.seq,
            other => panic!("expected created, got {other:?}"),
        })
        .collect();
    seqs.sort();
    assert_eq!(seqs, (4..=53).collect::<Vec<u64>>());

    // Every acknowledged record is present and the head re-derives from the leaves.
    let page = store.page(&all(1000)).await.unwrap();
    assert_eq!(page.head.size, 53);
    let mut leaves: Vec<_> = page.entries.iter().map(|e| e.leaf_hash).collect();
    leaves.reverse();
    assert_eq!(page.head.root_hash, root_of(&leaves));
    assert_tiles_match_the_leaves(store.as_ref()).await;
}

pub(super) async fn a_check_answers_as_the_append_would_and_writes_nothing<S: LedgerStore>(
    store: S,
) {
    // On the empty ledger: the receipt an append would make, nothing kept.
    let first = snapshot("a", "s", "live", 1, 100);
    let checked = store.check(first.clone()).await.unwrap();
    assert_eq!(store.head().await.unwrap(), Head::empty());
    let appended = store.append(first.clone()).await.unwrap();
    assert_eq!(checked, appended, "the check predicts the append exactly");
    let head = store.head().await.unwrap();
    let verdict = |outcome: &AppendOutcome| match outcome {
        AppendOutcome::Created { entry, .. } => format!("created {}", entry.seq),
        AppendOutcome::Unchanged { entry, .. } => format!("unchanged {}", entry.seq),
        AppendOutcome::Refused(refusal) => format!("{refusal:?}"),
    };
    let cases = [
        (first.clone(), "unchanged 1"),
        (
            snapshot("a", "s", "live", 1, 999),
            "IdConflict { existing_seq: 1 }",
        ),
        (
            snapshot("b", "s", "live", 1, 101),
            "DuplicateSnapshot { existing_seq: 1 }",
        ),
        (
            snapshot("c", "s", "live", 0, 101),
            "OutOfOrder { latest_seq: 1 }",
        ),
        (snapshot("d", "s", "live", 2, 102), "created 2"),
        (decision("e", "s", 3), "created 2"),
    ];
    for (candidate, expected) in cases {
        let checked = store.check(candidate).await.unwrap();
        assert_eq!(verdict(&checked), expected);
        assert_eq!(store.head().await.unwrap(), head, "a check moves no head");
        assert_eq!(
            store.page(&all(10)).await.unwrap().entries.len(),
            1,
            "a check stores no record"
        );
    }
    // Each verdict is what the append then answers, one after another.
    for candidate in [
        snapshot("d", "s", "live", 2, 102),
        snapshot("c", "s", "live", 0, 101),
        decision("e", "s", 3),
    ] {
        let checked = store.check(candidate.clone()).await.unwrap();
        let appended = store.append(candidate).await.unwrap();
        assert_eq!(checked, appended);
    }
}
