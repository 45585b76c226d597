//! How the strategies line up: shared timestamps, misaligned series, and
//! returns over the shared span.

use super::view::{Comparison, SeriesKey, SharedReturn, StrategyView};
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, BTreeSet};

/// One series' valuation instants (baseline included) with its growth index.
#[derive(Debug, Clone)]
pub(super) struct Timeline {
    /// The window's start: instants before it are the baseline's, not the window's.
    pub(super) start: DateTime<Utc>,
    /// Each instant with the growth index there (null where undefined).
    pub(super) instants: BTreeMap<DateTime<Utc>, Option<f64>>,
}

impl Timeline {
    /// The instants inside the window.
    fn in_window(&self) -> impl Iterator<Item = &DateTime<Utc>> {
        self.instants.range(self.start..).map(|(t, _)| t)
    }

    /// From the baseline to the latest snapshot.
    fn span(&self) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        Some((
            *self.instants.keys().next()?,
            *self.instants.keys().next_back()?,
        ))
    }
}

/// Shared timestamps, misaligned series, and returns over the shared span.
pub(super) fn compare(strategies: &[StrategyView], timelines: &[Timeline]) -> Comparison {
    let mut users: BTreeMap<DateTime<Utc>, usize> = BTreeMap::new();
    for timeline in timelines {
        for instant in timeline.in_window() {
            *users.entry(*instant).or_default() += 1;
        }
    }
    let series_count = timelines.len();
    let shared: BTreeSet<DateTime<Utc>> = users
        .iter()
        .filter(|(_, n)| **n == series_count)
        .map(|(t, _)| *t)
        .collect();
    let reference: BTreeSet<DateTime<Utc>> = users
        .iter()
        .filter(|(_, n)| **n * 2 >= series_count)
        .map(|(t, _)| *t)
        .collect();
    let mut misaligned: Vec<SeriesKey> = strategies
        .iter()
        .zip(timelines)
        .filter(|(_, timeline)| {
            let Some((first, last)) = timeline.span() else {
                return false;
            };
            let expected: Vec<&DateTime<Utc>> = reference.range(first..=last).collect();
            let missed = expected
                .iter()
                .filter(|t| !timeline.instants.contains_key(t))
                .count();
            missed * 2 > expected.len()
        })
        .map(|(s, _)| SeriesKey {
            strategy_id: s.strategy_id.clone(),
            mode: s.mode,
        })
        .collect();
    misaligned.sort();
    // Every shared instant lies at or after the latest first valuation in
    // the window: a series that ends before it, or has none in the window,
    // leaves no instant shared, and is named.
    let latest_first = timelines
        .iter()
        .filter_map(|timeline| timeline.in_window().next())
        .max();
    let mut disjoint: Vec<SeriesKey> = strategies
        .iter()
        .zip(timelines)
        .filter(
            |(_, timeline)| match (timeline.in_window().last(), latest_first) {
                (Some(last), Some(latest_first)) => last < latest_first,
                _ => true,
            },
        )
        .map(|(s, _)| SeriesKey {
            strategy_id: s.strategy_id.clone(),
            mode: s.mode,
        })
        .collect();
    disjoint.sort();
    let returns = strategies
        .iter()
        .zip(timelines)
        .map(|(s, timeline)| {
            let index_at = |instant: Option<&DateTime<Utc>>| {
                instant.and_then(|i| timeline.instants.get(i).copied().flatten())
            };
            let twr = match (index_at(shared.first()), index_at(shared.last())) {
                (Some(a), Some(b)) if shared.len() >= 2 && a > 0.0 => {
                    Some(b / a - 1.0).filter(|x| x.is_finite())
                }
                _ => None,
            };
            SharedReturn {
                strategy_id: s.strategy_id.clone(),
                mode: s.mode,
                twr,
            }
        })
        .collect();
    Comparison {
        shared_timestamps: shared.len(),
        misaligned,
        disjoint,
        strategies: returns,
    }
}
