//! How a series was recorded: each snapshot's lag (its witnessed time minus
//! its `asOf`), folded as the series is (a part of [`SeriesFold`]'s state,
//! so the since-inception roll-up keeps it).
//!
//! Snapshots wait, in order, until the witnessed history holds them; each
//! reader resolves what its [`WitnessTable`] covers (the history only
//! grows, and holds a prefix of the log, so the first snapshot still
//! pending keeps every later one pending). A resolved snapshot is on time
//! when its lag is at most [`RECORDING_WINDOW_SECONDS`], late above, and a
//! **clock conflict** when its witnessed time precedes its `asOf` by more
//! than [`CLOCK_TOLERANCE_SECONDS`] (a lag below minus that): a clock is
//! wrong, the service's or a witness's, so it is never on time; it ends an
//! on-time stretch as a late one does, and its lag is left out of the
//! median and the largest (a wrong clock's lag says nothing of the delay).
//!
//! [`SeriesFold`]: super::rollup::SeriesFold

use super::view::{RecordingState, RecordingView, SinceOnTime};
use crate::analytics::finite;
use crate::clock::CLOCK_TOLERANCE_SECONDS;
use crate::service::log::{RECORDING_WINDOW_SECONDS, Recorded, WitnessTable, lag_seconds};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A snapshot not yet in the witnessed history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Waiting {
    seq: u64,
    /// `asOf` in seconds since the epoch.
    at: i64,
    /// `asOf` as written.
    as_of: String,
    /// The series' growth index at it, as bits (NaN included).
    index: u64,
}

/// One series' recording so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Recording {
    waiting: Vec<Waiting>,
    on_time: u64,
    late: u64,
    /// Snapshots dated after their witnessed time by more than the
    /// clocks' tolerance.
    #[serde(default)]
    clock_conflict: u64,
    /// How many resolved snapshots had each lag, in seconds (bounded by
    /// the distinct lags, not by the series' length); clock conflicts are
    /// not counted here.
    lags: BTreeMap<i64, u64>,
    /// The first on-time snapshot after the last late one or clock
    /// conflict: its `asOf` as written and its growth index's bits.
    since: Option<(String, u64)>,
}

impl Recording {
    /// Takes the series' next snapshot (record `seq`, valued at `at`, its
    /// growth index `index`).
    pub(crate) fn push(&mut self, seq: u64, at: DateTime<Utc>, as_of: &str, index: f64) {
        self.waiting.push(Waiting {
            seq,
            at: at.timestamp(),
            as_of: as_of.to_owned(),
            index: index.to_bits(),
        });
    }

    /// The first record still waiting for its witnessed time.
    pub(crate) fn first_waiting(&self) -> Option<u64> {
        self.waiting.first().map(|w| w.seq)
    }

    /// Resolves, in order, every waiting snapshot `table` gives a time.
    pub(crate) fn resolve(&mut self, table: &WitnessTable) {
        let mut resolved = 0;
        for waiting in &self.waiting {
            let Recorded::Witnessed(witnessed) = table.of(waiting.seq) else {
                break;
            };
            let as_of = DateTime::from_timestamp(waiting.at, 0).unwrap_or_default();
            let lag = lag_seconds(witnessed, as_of);
            if lag < CLOCK_TOLERANCE_SECONDS.saturating_neg() {
                self.clock_conflict = self.clock_conflict.saturating_add(1);
                self.since = None;
                resolved += 1;
                continue;
            }
            let count = self.lags.entry(lag).or_insert(0);
            *count = count.saturating_add(1);
            if lag <= RECORDING_WINDOW_SECONDS {
                self.on_time = self.on_time.saturating_add(1);
                if self.since.is_none() {
                    self.since = Some((waiting.as_of.clone(), waiting.index));
                }
            } else {
                self.late = self.late.saturating_add(1);
                self.since = None;
            }
            resolved += 1;
        }
        self.waiting.drain(..resolved);
    }

    /// The view, once resolved against `table`; `latest_index` is the
    /// series' growth index at its latest snapshot, `returns_shown` whether
    /// its returns are defined.
    pub(crate) fn view(
        &self,
        table: &WitnessTable,
        latest_index: Option<f64>,
        returns_shown: bool,
    ) -> (RecordingState, Option<SinceOnTime>) {
        if !table.is_witnessed() {
            return (RecordingState::unwitnessed(), None);
        }
        let median = self.median_lag();
        let since = self.since.as_ref().map(|(as_of, index)| {
            let start = f64::from_bits(*index);
            SinceOnTime {
                start: as_of.clone(),
                twr: latest_index
                    .filter(|_| returns_shown)
                    .and_then(|latest| finite(latest / start - 1.0)),
            }
        });
        let view = RecordingView {
            on_time_since: self.since.as_ref().map(|(as_of, _)| as_of.clone()),
            on_time: self.on_time,
            late: self.late,
            pending: u64::try_from(self.waiting.len()).unwrap_or(u64::MAX),
            clock_conflict: self.clock_conflict,
            median_lag_seconds: median,
            max_lag_seconds: self.lags.keys().next_back().copied(),
        };
        (RecordingState::Witnessed(view), since)
    }
}

impl Recording {
    /// The median of the resolved lags (the mean of the two middle ones
    /// for an even count), clock conflicts left out.
    fn median_lag(&self) -> Option<f64> {
        let total: u64 = self.lags.values().sum();
        if total == 0 {
            return None;
        }
        // The lags at (0-based) ranks (total - 1) / 2 and total / 2.
        let ranks = [(total - 1) / 2, total / 2];
        let mut found = [None, None];
        let mut seen = 0u64;
        for (&lag, &count) in &self.lags {
            let next = seen.saturating_add(count);
            for (slot, rank) in found.iter_mut().zip(ranks) {
                if slot.is_none() && rank < next {
                    *slot = Some(lag as f64);
                }
            }
            seen = next;
        }
        match found {
            [Some(low), Some(high)] => Some((low + high) / 2.0),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(seconds: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(seconds, 0).unwrap()
    }

    /// A valuation dated after the witnesses saw it (lag −4,800 s) is a
    /// clock conflict: never on time, it ends the on-time stretch as a late
    /// one does and is left out of the lags; −60 s is still within the
    /// tolerance, −61 s is not.
    #[test]
    fn a_valuation_dated_after_its_witnessed_time_is_a_clock_conflict() {
        let mut recording = Recording::default();
        recording.push(1, at(0), "a", 1.0);
        recording.push(2, at(10_000), "b", 1.1);
        recording.push(3, at(5_300), "c", 1.2);
        recording.push(4, at(5_460), "d", 1.3);
        let table = WitnessTable::new(1, vec![(1, 100), (2, 5_200), (3, 5_400)]);
        recording.resolve(&table);
        let (RecordingState::Witnessed(view), since) = recording.view(&table, Some(1.2), true)
        else {
            panic!("witnessed")
        };
        assert_eq!((view.on_time, view.late, view.pending), (2, 0, 1));
        assert_eq!(view.clock_conflict, 1);
        assert_eq!(
            view.on_time_since.as_deref(),
            Some("c"),
            "the conflict ended the stretch"
        );
        assert_eq!(since.map(|s| s.start).as_deref(), Some("c"));
        assert_eq!(
            view.max_lag_seconds,
            Some(100),
            "the conflict's lag is left out"
        );
        assert_eq!(view.median_lag_seconds, Some(100.0));
        // At the tolerance's edge: −60 s is on time, −61 s a conflict.
        let mut edge = Recording::default();
        edge.push(1, at(1_060), "x", 1.0);
        edge.push(2, at(1_061), "y", 1.0);
        let edge_table = WitnessTable::new(1, vec![(1, 1_000), (2, 1_000)]);
        edge.resolve(&edge_table);
        let (RecordingState::Witnessed(view), _) = edge.view(&edge_table, Some(1.0), true) else {
            panic!("witnessed")
        };
        assert_eq!((view.on_time, view.late, view.clock_conflict), (1, 0, 1));
        assert_eq!(view.on_time_since, None, "the latest is a conflict");
        assert_eq!(view.max_lag_seconds, Some(-60));
    }

    #[test]
    fn late_snapshots_reset_the_stretch_and_pending_ones_wait() {
        let mut recording = Recording::default();
        // Valued at 0, 1000, 5000, 9000; witnessed at 4000 (late, then on
        // time), 9100 (on time), and the last not yet.
        recording.push(1, at(0), "a", 1.0);
        recording.push(2, at(3_000), "b", 1.1);
        recording.push(3, at(9_000), "c", 1.2);
        recording.push(4, at(9_500), "d", 1.32);
        let table = WitnessTable::new(1, vec![(1, 4_000), (2, 4_000), (3, 9_100)]);
        recording.resolve(&table);
        assert_eq!(recording.first_waiting(), Some(4));
        let (state, since) = recording.view(&table, Some(1.32), true);
        let RecordingState::Witnessed(view) = state else {
            panic!("witnessed")
        };
        assert_eq!((view.on_time, view.late, view.pending), (2, 1, 1));
        assert_eq!(view.on_time_since.as_deref(), Some("b"));
        assert_eq!(view.max_lag_seconds, Some(4_000));
        assert_eq!(view.median_lag_seconds, Some(1_000.0));
        let since = since.unwrap();
        assert_eq!(since.start, "b");
        assert!((since.twr.unwrap() - 0.2).abs() < 1e-12);
        // Resolving again later changes nothing already given.
        let later = WitnessTable::new(1, vec![(1, 4_000), (2, 4_000), (3, 9_100), (4, 99_000)]);
        recording.resolve(&later);
        let (RecordingState::Witnessed(view), since) = recording.view(&later, Some(1.32), true)
        else {
            panic!("witnessed")
        };
        assert_eq!((view.on_time, view.late, view.pending), (2, 2, 0));
        assert_eq!(view.on_time_since, None, "the latest was late");
        assert!(since.is_none());
        let mut many = Recording::default();
        for (seq, valued) in [(1, 0), (2, 10), (3, 20), (4, 30), (5, 40)] {
            many.push(seq, at(valued), "x", 1.0);
        }
        // Lags 100, 90, 80, 100, 90: the median is 90, the largest 100.
        many.resolve(&WitnessTable::new(
            1,
            vec![(1, 100), (2, 100), (3, 100), (5, 130)],
        ));
        let (RecordingState::Witnessed(view), _) =
            many.view(&WitnessTable::new(1, vec![(5, 130)]), Some(1.0), true)
        else {
            panic!("witnessed")
        };
        assert_eq!(view.median_lag_seconds, Some(90.0));
        assert_eq!(view.max_lag_seconds, Some(100));
        let (state, _) = recording.view(&WitnessTable::unwitnessed(), None, false);
        assert_eq!(
            serde_json::to_value(state).unwrap(),
            serde_json::json!("unwitnessed")
        );
    }
}
