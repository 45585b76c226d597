//! The dashboard's computation at one head: the series folded from the
//! store (a window, or since inception from the roll-ups), their metrics
//! and chart points, and the comparison.

use super::compare::{Timeline, compare};
use super::figures::compare_within_modes;
use super::period::*;
use super::rollup::{self, ROLLUP_VERSION, SeriesFold};
use super::snapshot_of;
use super::view::*;
use crate::analytics;
use crate::clock::{epoch_seconds_rfc3339, rfc3339};
use crate::config::Benchmarks;
use crate::merkle::Head;
use crate::ports::ledger_store::{Entry, Rollup, SeriesReads, SeriesSince, StoreError};
use crate::record::{Mode, Snapshot, StrategyId};
use crate::service::log::{RECORDING_WINDOW_SECONDS, WitnessTable, WitnessedTimes};
use chrono::{DateTime, Utc};
use std::borrow::Cow;

fn nanos(instant: DateTime<Utc>) -> i64 {
    instant.timestamp_nanos_opt().unwrap_or(i64::MAX)
}

/// The dashboard for `period` at `head`, from the `latest` snapshot of
/// every series and the ledger's `inception` (its first record's `asOf`),
/// with the witnessed times `times` holds up to its checkpoint of size
/// `top` (read with the head: `(head, top)`), each series set beside its
/// mode's `benchmarks`.
pub(super) async fn compute(
    store: &dyn SeriesReads,
    times: &WitnessedTimes,
    benchmarks: &Benchmarks,
    (head, top): (Head, Option<u64>),
    period: Period,
    latest: Vec<Entry>,
    inception: Option<(String, DateTime<Utc>)>,
) -> Result<(Dashboard, Vec<Timeline>), StoreError> {
    let witnessing = WitnessingView {
        state: if times.is_witnessed() {
            "witnessed"
        } else {
            "unwitnessed"
        },
        since: times.began().await?.map(epoch_seconds_rfc3339),
        recording_window_seconds: RECORDING_WINDOW_SECONDS,
    };
    let mut latest: Vec<(Entry, Snapshot)> = latest
        .into_iter()
        .map(|e| snapshot_of(&e).map(|s| (e, s)))
        .collect::<Result<_, _>>()?;
    latest.sort_by(|(_, a), (_, b)| {
        (a.header.strategy_id.as_str(), a.header.mode)
            .cmp(&(b.header.strategy_id.as_str(), b.header.mode))
    });
    let end = latest.iter().map(|(_, s)| s.header.as_of.instant()).max();
    let inception = inception.map(|(as_of, instant)| Inception {
        as_of,
        age_days: end.map(|end| (end.date_naive() - instant.date_naive()).num_days()),
    });
    let Some(end) = end else {
        return Ok((
            Dashboard::without_snapshots(period, head, inception, witnessing),
            Vec::new(),
        ));
    };
    let keys: Vec<(StrategyId, Mode)> = latest
        .iter()
        .map(|(_, s)| (s.header.strategy_id.clone(), s.header.mode))
        .collect();
    let (folds, decisions, rollups) = match period.days() {
        Some(days) => {
            let (folds, decisions) = fold_window(
                store,
                times.is_witnessed(),
                &keys,
                &latest,
                head,
                nanos(analytics::window_start(end, days)),
            )
            .await?;
            (folds, decisions, Vec::new())
        }
        None => fold_since_inception(store, times.is_witnessed(), &keys, &latest, head).await?,
    };
    // One read of the witnessed history for every series and roll-up.
    let table = table_for(times, &folds, head, top).await?;
    keep_rollups(store, rollups, &table).await;
    let start = match period.days() {
        Some(days) => analytics::window_start(end, days),
        // The fund's first snapshot.
        None => folds
            .iter()
            .filter_map(SeriesFold::first_instant)
            .min()
            .unwrap_or(end),
    };
    let mut strategies = Vec::with_capacity(latest.len());
    let mut timelines = Vec::with_capacity(latest.len());
    let mut daily_returns = Vec::with_capacity(latest.len());
    for ((latest_entry, latest_snapshot), mut fold) in latest.iter().zip(folds) {
        // The series always holds the latest snapshot; fall back to it alone.
        if fold.is_empty() {
            fold.push(latest_entry.seq, latest_snapshot);
        }
        let finished = fold.finish(latest_entry.seq, latest_snapshot, end, &table);
        strategies.push(finished.view);
        timelines.push(Timeline {
            start,
            instants: finished.timeline,
        });
        daily_returns.push(finished.daily_returns);
    }
    compare_within_modes(&mut strategies, &daily_returns, benchmarks);
    let comparison = compare(&strategies, &timelines);
    // The store's query selects decisions; the text is checked to be JSON here.
    let decisions = decisions
        .iter()
        .map(DecisionView::of)
        .collect::<Result<_, StoreError>>()?;
    let dashboard = Dashboard {
        schema_version: crate::record::SCHEMA_VERSION,
        period,
        unit: UNIT,
        window: Window {
            start: Some(rfc3339(start)),
            end: Some(rfc3339(end)),
        },
        inception,
        head,
        witnessing,
        strategies,
        comparison,
        decisions,
        next: None,
    };
    Ok((dashboard, timelines))
}

impl Dashboard {
    /// The answer of `compute` when the ledger holds no snapshot yet.
    fn without_snapshots(
        period: Period,
        head: Head,
        inception: Option<Inception>,
        witnessing: WitnessingView,
    ) -> Dashboard {
        Dashboard {
            schema_version: crate::record::SCHEMA_VERSION,
            period,
            unit: UNIT,
            window: Window {
                start: None,
                end: None,
            },
            inception,
            head,
            witnessing,
            strategies: Vec::new(),
            comparison: Comparison {
                shared_timestamps: 0,
                misaligned: Vec::new(),
                disjoint: Vec::new(),
                strategies: Vec::new(),
            },
            decisions: Vec::new(),
            next: None,
        }
    }
}

/// A windowed period's series folded from the store: each series'
/// baseline and window snapshots (keeping every point for the comparison),
/// and the window's decisions, up to `head`.
async fn fold_window(
    store: &dyn SeriesReads,
    witnessed: bool,
    keys: &[(StrategyId, Mode)],
    latest: &[(Entry, Snapshot)],
    head: Head,
    read_from: i64,
) -> Result<(Vec<SeriesFold>, Vec<Entry>), StoreError> {
    // Read up to the end of time rather than `end`: no series has a
    // snapshot after its latest (so the series are the same), and decisions
    // made after the fund's latest snapshot belong on the dashboard too.
    let window = store
        .window(keys, read_from, i64::MAX, MAX_DECISIONS)
        .await?;
    let mut folds = Vec::with_capacity(keys.len());
    for (entries, latest) in window.series.iter().zip(latest) {
        let mut fold = SeriesFold::keeping_every_point(witnessed);
        for entry in entries.iter().filter(|e| at_head(e, head)) {
            fold.push(entry.seq, &*snapshot_in(entry, Some(latest))?);
        }
        folds.push(fold);
    }
    let decisions = window
        .decisions
        .into_iter()
        .filter(|e| at_head(e, head))
        .collect();
    Ok((folds, decisions))
}

/// The since-inception series: each stored roll-up (see the `rollup` module) with
/// the snapshots after it, and the latest decisions, up to `head`. Months
/// that closed since a series' roll-up are folded into it and the roll-up
/// is to be stored again (the roll-ups returned, kept by the caller once
/// the witnessed times are known); a store that cannot keep it only costs
/// the next reader the same work.
async fn fold_since_inception(
    store: &dyn SeriesReads,
    witnessed: bool,
    keys: &[(StrategyId, Mode)],
    latest: &[(Entry, Snapshot)],
    head: Head,
) -> Result<(Vec<SeriesFold>, Vec<Entry>, Vec<RollupCandidate>), StoreError> {
    let since = store
        .since_inception(keys, ROLLUP_VERSION, head.size, MAX_DECISIONS)
        .await?;
    let mut folds = Vec::with_capacity(keys.len());
    let mut rollups = Vec::new();
    for ((key, series), latest) in keys.iter().zip(since.series).zip(latest) {
        folds.push(
            fold_series(
                store,
                key,
                series,
                Some(latest),
                head,
                witnessed,
                &mut rollups,
            )
            .await?,
        );
    }
    let decisions = since
        .decisions
        .into_iter()
        .filter(|e| at_head(e, head))
        .collect();
    Ok((folds, decisions, rollups))
}

/// The witnessed times the `folds` wait for (one store read, none when
/// nothing waits or the log is unwitnessed), up to the kept checkpoint of
/// size `top`.
async fn table_for(
    times: &WitnessedTimes,
    folds: &[SeriesFold],
    head: Head,
    top: Option<u64>,
) -> Result<WitnessTable, StoreError> {
    match folds.iter().filter_map(SeriesFold::first_waiting).min() {
        Some(from) => times.table(from, head.size, top).await,
        None if times.is_witnessed() => Ok(WitnessTable::new(head.size, Vec::new())),
        None => Ok(WitnessTable::unwitnessed()),
    }
}

/// A roll-up to store: its fold, serialised once the witnessed times
/// known are given to it.
pub(crate) struct RollupCandidate {
    /// The roll-up, its state still empty.
    rollup: Rollup,
    /// The fold through the series' last closed month.
    fold: SeriesFold,
}

/// Stores `rollups` with the witnessed times `table` holds given to them;
/// a store that cannot keep them only costs the next reader the same work.
pub(crate) async fn keep_rollups(
    store: &dyn SeriesReads,
    rollups: Vec<RollupCandidate>,
    table: &WitnessTable,
) {
    let rollups: Vec<Rollup> = rollups
        .into_iter()
        .map(
            |RollupCandidate {
                 mut rollup,
                 mut fold,
             }| {
                fold.resolve(table);
                rollup.state = serde_json::to_string(&fold).expect("a fold serialises");
                rollup
            },
        )
        .collect();
    if rollups.is_empty() {
        return;
    }
    if let Err(error) = store.put_rollups(&rollups).await {
        tracing::warn!(%error, "the since-inception roll-ups were not kept");
    }
}

/// One series since inception, up to `head`: its stored roll-up (`series`
/// as [`SeriesReads::since_inception`] read it) with the snapshots after
/// it. When months closed since the roll-up, the new roll-up (the fold
/// through the last closed month) is added to `rollups`. `latest` is the
/// series' latest snapshot when the caller has it parsed already. A reader
/// that shows witnessed times (`witnessed`) cannot use a roll-up that did
/// not keep how its snapshots were recorded (one made while the log had no
/// witnesses): it folds the whole series once, and replaces it. Another
/// reader continues whatever the roll-up keeps.
pub(crate) async fn fold_series(
    store: &dyn SeriesReads,
    (strategy_id, mode): &(StrategyId, Mode),
    series: SeriesSince,
    latest: Option<&(Entry, Snapshot)>,
    head: Head,
    witnessed: bool,
    rollups: &mut Vec<RollupCandidate>,
) -> Result<SeriesFold, StoreError> {
    let stored = series
        .state
        .as_deref()
        .map(serde_json::from_str::<SeriesFold>)
        .map(|parsed| {
            parsed.map_err(|e| e.to_string()).and_then(|fold| {
                if witnessed && !fold.keeps_recording() {
                    Err("kept no recording".to_owned())
                } else {
                    Ok(fold)
                }
            })
        });
    let unreadable = matches!(stored, Some(Err(_)));
    let (mut fold, entries) = match stored {
        Some(Ok(fold)) => (fold, series.entries),
        // A state this version cannot read: start over from the series'
        // first snapshot, and replace it.
        Some(Err(_)) => (
            SeriesFold::new(witnessed),
            store
                .snapshot_series(strategy_id, *mode, i64::MIN, i64::MAX)
                .await?,
        ),
        None => (SeriesFold::new(witnessed), series.entries),
    };
    let snapshots: Vec<(u64, Cow<Snapshot>)> = entries
        .iter()
        .filter(|e| at_head(e, head))
        .map(|e| snapshot_in(e, latest).map(|s| (e.seq, s)))
        .collect::<Result<_, _>>()?;
    // Every month before the latest snapshot's is closed.
    let open_month = snapshots
        .last()
        .and_then(|(_, s)| rollup::month_start(s.header.as_of.instant()));
    let closed = open_month.map_or(0, |start| {
        snapshots.partition_point(|(_, s)| s.header.as_of.instant() < start)
    });
    for (seq, snapshot) in &snapshots[..closed] {
        fold.push(*seq, snapshot);
    }
    if let (true, Some(start)) = (closed > 0, open_month) {
        rollups.push(RollupCandidate {
            rollup: Rollup {
                strategy_id: strategy_id.clone(),
                mode: *mode,
                version: ROLLUP_VERSION,
                from_nanos: nanos(start),
                through_seq: fold.through_seq(),
                state: String::new(),
                overwrite: unreadable,
            },
            fold: fold.clone(),
        });
    }
    for (seq, snapshot) in &snapshots[closed..] {
        fold.push(*seq, snapshot);
    }
    Ok(fold)
}

/// The snapshot `entry` holds: the series' `latest`, parsed already, when it
/// is that one (every series read ends with it).
fn snapshot_in<'a>(
    entry: &Entry,
    latest: Option<&'a (Entry, Snapshot)>,
) -> Result<Cow<'a, Snapshot>, StoreError> {
    match latest {
        Some((latest_entry, snapshot)) if entry.seq == latest_entry.seq => {
            Ok(Cow::Borrowed(snapshot))
        }
        _ => snapshot_of(entry).map(Cow::Owned),
    }
}

/// Whether `entry` is part of the ledger at `head` (entries appended after
/// the head are not part of a dashboard computed at it).
fn at_head(entry: &Entry, head: Head) -> bool {
    entry.seq <= head.size
}
