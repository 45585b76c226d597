//! The ledger pages' cases.

use super::*;
use crate::record::{Mode, RecordKind};

pub(super) async fn pages_are_newest_first_with_cursor_and_filters<S: LedgerStore>(store: S) {
    for i in 0..10 {
        created(
            &store,
            snapshot(
                &format!("s{i}"),
                if i % 2 == 0 { "even" } else { "odd" },
                "live",
                i,
                100,
            ),
        )
        .await;
        created(&store, decision(&format!("d{i}"), "even", i)).await;
    }
    let page = store.page(&all(7)).await.unwrap();
    assert_eq!(
        page.entries.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![20, 19, 18, 17, 16, 15, 14]
    );
    assert_eq!(page.next, Some(14));
    assert_eq!(page.head.size, 20);
    let page = store
        .page(&PageQuery {
            before: Some(14),
            ..all(7)
        })
        .await
        .unwrap();
    assert_eq!(page.entries.first().map(|e| e.seq), Some(13));
    let page = store
        .page(&PageQuery {
            before: Some(4),
            ..all(7)
        })
        .await
        .unwrap();
    assert_eq!(
        page.entries.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![3, 2, 1]
    );
    assert_eq!(page.next, None);

    let evens = store
        .page(&PageQuery {
            strategy_id: Some(strategy("even")),
            ..all(100)
        })
        .await
        .unwrap();
    assert_eq!(evens.entries.len(), 15);
    let snaps = store
        .page(&PageQuery {
            kind: Some(RecordKind::Snapshot),
            ..all(100)
        })
        .await
        .unwrap();
    assert_eq!(snaps.entries.len(), 10);
    assert!(
        snaps
            .entries
            .iter()
            .all(|e| e.canonical.contains("\"type\":\"snapshot\""))
    );
    let odd_snaps = store
        .page(&PageQuery {
            strategy_id: Some(strategy("odd")),
            kind: Some(RecordKind::Snapshot),
            mode: Some(Mode::Live),
            ..all(2)
        })
        .await
        .unwrap();
    assert_eq!(odd_snaps.entries.len(), 2);
    assert_eq!(odd_snaps.next, odd_snaps.entries.last().map(|e| e.seq));
    let paper = store
        .page(&PageQuery {
            mode: Some(Mode::Paper),
            kind: Some(RecordKind::Snapshot),
            ..all(100)
        })
        .await
        .unwrap();
    assert!(paper.entries.is_empty());
    let none = store
        .page(&PageQuery {
            strategy_id: Some(strategy("missing")),
            ..all(100)
        })
        .await
        .unwrap();
    assert!(none.entries.is_empty() && none.next.is_none());
}

/// A decision of about 64 KB (four long fields of 4-byte characters).
pub(crate) fn large_decision(id: &str, day: i64) -> Candidate {
    let text = "\u{1D11E}".repeat(3_990);
    candidate(json!({
        "id": id, "type": "decision", "visibility": "public", "mode": "paper",
        "strategyId": "large", "strategyName": "Strategy large",
        "asOf": timestamp(day), "source": {"name": "suite", "url": "https://example.com/suite"},
        "action": "research", "summary": text, "thesis": text, "counterEvidence": text, "nextCheck": text
    }))
}

pub(super) async fn pages_stop_at_the_byte_budget_and_next_reaches_every_entry<S: LedgerStore>(
    store: S,
) {
    use crate::ports::ledger_store::MAX_PAGE_BYTES;
    let (mut all, mut decisions) = (Vec::new(), Vec::new());
    for i in 0..40 {
        let (entry, _) = created(&store, large_decision(&format!("big-{i}"), i)).await;
        all.push(entry.seq);
        decisions.push(entry.seq);
        if i % 10 == 0 {
            let (entry, _) =
                created(&store, snapshot(&format!("small-{i}"), "s", "live", i, 100)).await;
            all.push(entry.seq);
        }
    }
    for (kind, mut expected) in [(None, all), (Some(RecordKind::Decision), decisions)] {
        expected.reverse();
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let page = store
                .page(&PageQuery {
                    before,
                    limit: 1000,
                    strategy_id: None,
                    kind,
                    mode: None,
                })
                .await
                .expect("page");
            let cost: usize = page.entries.iter().map(Entry::page_cost).sum();
            assert!(
                cost <= MAX_PAGE_BYTES,
                "a page of {} entries costs {cost} bytes",
                page.entries.len()
            );
            assert!(
                !page.entries.is_empty(),
                "every page holds at least one entry"
            );
            seen.extend(page.entries.iter().map(|e| e.seq));
            match page.next {
                Some(next) => {
                    assert_eq!(Some(next), page.entries.last().map(|e| e.seq));
                    before = Some(next);
                }
                None => break,
            }
        }
        assert!(seen.len() > 10, "several pages were needed");
        assert_eq!(
            seen, expected,
            "following next reaches every entry once, newest first"
        );
    }
}
