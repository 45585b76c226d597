//! The series reads' cases.

use super::*;
use crate::ports::ledger_store::{Rollup, SeriesSince};
use crate::record::Mode;

pub(super) async fn series_after_reads_from_the_cursor<S: LedgerStore>(store: S) {
    // The series "s" live, interleaved with another series, its paper
    // twin and decisions.
    let mut own = Vec::new();
    for day in 0..8 {
        let (entry, _) = created(
            &store,
            snapshot(&format!("s{day}"), "s", "live", day, 100 + day),
        )
        .await;
        own.push(entry.seq);
        created(&store, snapshot(&format!("t{day}"), "t", "live", day, 50)).await;
        created(&store, snapshot(&format!("p{day}"), "s", "paper", day, 70)).await;
        created(&store, decision(&format!("d{day}"), "s", day)).await;
    }
    let seqs = |entries: Vec<Entry>| entries.iter().map(|e| e.seq).collect::<Vec<_>>();
    let s = strategy("s");
    let after = |cursor, limit| store.series_after(&s, Mode::Live, cursor, limit);
    assert_eq!(seqs(after(0, 3).await.unwrap()), own[..3]);
    assert_eq!(seqs(after(own[2], 100).await.unwrap()), own[3..]);
    // A cursor that is not one of the series' seqs (another series', a
    // decision's) starts at the series' first seq above it.
    assert_eq!(seqs(after(own[4] + 1, 2).await.unwrap()), own[5..7]);
    assert!(after(own[7], 10).await.unwrap().is_empty());
    assert!(after(u64::MAX, 10).await.unwrap().is_empty());
    assert!(after(0, 0).await.unwrap().is_empty());
    let first = &after(0, 1).await.unwrap()[0];
    assert!(first.canonical.contains("\"id\":\"s0\""));
    assert!(
        store
            .series_after(&strategy("nobody"), Mode::Live, 0, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub(super) async fn series_starts_at_the_baseline<S: LedgerStore>(store: S) {
    for day in [0, 2, 4, 6, 8] {
        created(
            &store,
            snapshot(&format!("s{day}"), "s", "live", day, 100 + day),
        )
        .await;
    }
    created(&store, snapshot("other", "t", "live", 3, 100)).await;
    created(&store, decision("d", "s", 3)).await;
    let s = strategy("s");
    // Baseline is the last snapshot at or before the start.
    assert_eq!(
        ids(&store
            .snapshot_series(&s, Mode::Live, day_nanos(3), day_nanos(6))
            .await
            .unwrap()),
        ["s2", "s4", "s6"]
    );
    assert_eq!(
        ids(&store
            .snapshot_series(&s, Mode::Live, day_nanos(4), day_nanos(8))
            .await
            .unwrap()),
        ["s4", "s6", "s8"]
    );
    // A strategy that began inside the window has no earlier baseline.
    assert_eq!(
        ids(&store
            .snapshot_series(&s, Mode::Live, day_nanos(-5), day_nanos(2))
            .await
            .unwrap()),
        ["s0", "s2"]
    );
    assert!(
        store
            .snapshot_series(&s, Mode::Paper, day_nanos(0), day_nanos(8))
            .await
            .unwrap()
            .is_empty()
    );
}

pub(super) async fn latest_snapshots_has_one_per_strategy_and_mode<S: LedgerStore>(store: S) {
    created(&store, snapshot("a1", "a", "live", 0, 100)).await;
    created(&store, snapshot("a2", "a", "live", 1, 101)).await;
    created(&store, snapshot("a3", "a", "paper", 0, 100)).await;
    created(&store, snapshot("b1", "b", "live", 2, 100)).await;
    let (_, head) = created(&store, decision("d", "a", 9)).await;
    let latest = store.latest_snapshots().await.unwrap();
    assert_eq!(latest.head, head);
    let mut latest_ids = ids(&latest.entries);
    latest_ids.sort();
    assert_eq!(latest_ids, ["a2", "a3", "b1"]);
    let first = latest.first.expect("the first record");
    assert_eq!(
        (first.seq, ids(std::slice::from_ref(&first))),
        (1, vec!["a1".to_owned()])
    );
}

pub(super) async fn decisions_in_range_are_newest_first<S: LedgerStore>(store: S) {
    for (id, day) in [("d1", 1), ("d5", 5), ("d3", 3), ("d3b", 3), ("d9", 9)] {
        created(&store, decision(id, "s", day)).await;
    }
    created(&store, snapshot("s4", "s", "live", 4, 100)).await;
    // After the start, up to and including the end.
    assert_eq!(
        ids(&store
            .decisions_in_range(day_nanos(1), day_nanos(5), 10)
            .await
            .unwrap()),
        ["d5", "d3b", "d3"]
    );
    assert_eq!(
        ids(&store
            .decisions_in_range(day_nanos(0), day_nanos(9), 2)
            .await
            .unwrap()),
        ["d9", "d5"]
    );
    assert!(
        store
            .decisions_in_range(day_nanos(9), day_nanos(20), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub(super) async fn window_reads_every_series_and_the_decisions<S: LedgerStore>(store: S) {
    for day in 0..6 {
        created(&store, snapshot(&format!("a{day}"), "a", "live", day, 100)).await;
        created(&store, snapshot(&format!("b{day}"), "b", "paper", day, 100)).await;
    }
    created(&store, decision("d", "a", 4)).await;
    let keys = [
        (strategy("b"), Mode::Paper),
        (strategy("a"), Mode::Live),
        (strategy("none"), Mode::Live),
    ];
    let window = store
        .window(&keys, day_nanos(3), day_nanos(5), 10)
        .await
        .unwrap();
    assert_eq!(window.series.len(), 3);
    assert_eq!(ids(&window.series[0]), ["b3", "b4", "b5"]);
    assert_eq!(ids(&window.series[1]), ["a3", "a4", "a5"]);
    assert!(window.series[2].is_empty());
    assert_eq!(ids(&window.decisions), ["d"]);
}

pub(super) fn rollup(
    strategy_id: &str,
    version: u32,
    from_day: i64,
    through_seq: u64,
    state: &str,
) -> Rollup {
    Rollup {
        strategy_id: strategy(strategy_id),
        mode: Mode::Live,
        version,
        from_nanos: day_nanos(from_day),
        through_seq,
        state: state.to_owned(),
        overwrite: false,
    }
}

pub(super) async fn rollups_move_forward_and_only_serve_their_version_and_head<S: LedgerStore>(
    store: S,
) {
    for day in 0..6 {
        created(&store, snapshot(&format!("a{day}"), "a", "live", day, 100)).await;
    }
    created(&store, decision("d1", "a", 1)).await;
    created(&store, decision("d2", "a", 2)).await;
    let keys = [(strategy("a"), Mode::Live), (strategy("b"), Mode::Live)];
    let read = |version: u32, head_size: u64| {
        let store = &store;
        let keys = &keys;
        async move {
            let since = store
                .since_inception(keys, version, head_size, 1)
                .await
                .unwrap();
            assert_eq!(ids(&since.decisions), ["d2"], "the latest decisions");
            assert_eq!(since.series.len(), 2);
            assert_eq!(since.series[1], SeriesSince::default(), "no series b");
            since.series.into_iter().next().unwrap()
        }
    };
    // Without a roll-up: the whole series.
    let whole = read(1, 8).await;
    assert_eq!((&whole.state, ids(&whole.entries).len()), (&None, 6));

    store
        .put_rollups(&[rollup("a", 1, 3, 3, "through day 2")])
        .await
        .unwrap();
    let since = read(1, 8).await;
    assert_eq!(since.state.as_deref(), Some("through day 2"));
    assert_eq!(ids(&since.entries), ["a3", "a4", "a5"]);
    // A reader at a head before the roll-up's last seq, or of another
    // version, reads the whole series.
    assert_eq!(read(1, 2).await, whole);
    assert_eq!(read(2, 8).await, whole);

    // An older roll-up never replaces a newer one; a newer one does.
    store
        .put_rollups(&[rollup("a", 1, 2, 2, "through day 1")])
        .await
        .unwrap();
    store
        .put_rollups(&[rollup("a", 1, 3, 3, "again")])
        .await
        .unwrap();
    assert_eq!(read(1, 8).await.state.as_deref(), Some("through day 2"));
    store
        .put_rollups(&[rollup("a", 1, 5, 5, "through day 4")])
        .await
        .unwrap();
    let since = read(1, 8).await;
    assert_eq!(since.state.as_deref(), Some("through day 4"));
    assert_eq!(ids(&since.entries), ["a5"]);
    // Another version replaces it, whatever its start.
    store
        .put_rollups(&[rollup("a", 2, 1, 1, "version 2")])
        .await
        .unwrap();
    assert_eq!(read(1, 8).await, whole);
    let since = read(2, 8).await;
    assert_eq!(since.state.as_deref(), Some("version 2"));
    assert_eq!(ids(&since.entries).len(), 5);
    // A reader that could not read the stored one replaces it, even with
    // an older start.
    let overwrite = Rollup {
        overwrite: true,
        ..rollup("a", 2, 0, 0, "readable again")
    };
    store.put_rollups(&[overwrite]).await.unwrap();
    let since = read(2, 8).await;
    assert_eq!(since.state.as_deref(), Some("readable again"));
    assert_eq!(ids(&since.entries).len(), 6);
    store.put_rollups(&[]).await.unwrap();
}
