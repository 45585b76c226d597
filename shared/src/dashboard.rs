//! The dashboard's period, window and (first version) response: each
//! strategy's latest snapshot. The analytics (returns net of flows, drawdown,
//! volatility, ratios) build on the same window rule.

use crate::merkle::Head;
use crate::record::{Record, Snapshot};
use crate::store::{LedgerStore, StoreError};
use chrono::{DateTime, Datelike, Duration, Utc, Weekday};
use serde::Serialize;
use serde_json::Value;

/// The allowed periods, in trading days.
pub const PERIODS: [u32; 4] = [21, 63, 126, 252];
/// The period when none is asked for.
pub const DEFAULT_PERIOD: u32 = 63;

/// A dashboard period: a count of trading days, one of [`PERIODS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Period(u32);

/// A `period` that is not one of [`PERIODS`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("period must be one of 21, 63, 126, 252 (trading days); the default is 63")]
pub struct InvalidPeriod;

impl Period {
    /// Parses the query value; `None` gives the default.
    pub fn parse(value: Option<&str>) -> Result<Period, InvalidPeriod> {
        let Some(text) = value else {
            return Ok(Period(DEFAULT_PERIOD));
        };
        let days: u32 = text.parse().map_err(|_| InvalidPeriod)?;
        if PERIODS.contains(&days) && text == days.to_string() {
            Ok(Period(days))
        } else {
            Err(InvalidPeriod)
        }
    }

    /// Number of trading days.
    pub fn days(self) -> u32 {
        self.0
    }
}

/// The window's start: step back from `end` one calendar day at a time,
/// counting the steps that land on a weekday (by UTC date), until `days`
/// are counted.
pub fn window_start(end: DateTime<Utc>, days: u32) -> DateTime<Utc> {
    let mut at = end;
    let mut counted = 0;
    while counted < days {
        at -= Duration::days(1);
        if !matches!(at.weekday(), Weekday::Sat | Weekday::Sun) {
            counted += 1;
        }
    }
    at
}

/// The dashboard's window.
#[derive(Debug, Clone, Serialize)]
pub struct Window {
    /// Start instant (RFC 3339), or null before the first snapshot.
    pub start: Option<String>,
    /// The fund's latest snapshot instant (RFC 3339), or null.
    pub end: Option<String>,
}

/// One strategy's line in the first dashboard.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyLine {
    /// Strategy id.
    pub strategy_id: String,
    /// Strategy name from its latest snapshot.
    pub strategy_name: String,
    /// live or paper.
    pub mode: &'static str,
    /// The latest snapshot: asOf, equity, cash, positions.
    pub latest: Value,
    /// Ledger position of that snapshot.
    pub seq: u64,
}

/// The dashboard response (first version: latest snapshot per strategy).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Dashboard {
    /// Always 1.
    pub schema_version: u32,
    /// Trading days.
    pub period: Period,
    /// Always "tradingDays".
    pub unit: &'static str,
    /// The window the period selects.
    pub window: Window,
    /// The ledger head the dashboard was computed at.
    pub head: Head,
    /// One line per (strategyId, mode), sorted by strategy id then mode.
    pub strategies: Vec<StrategyLine>,
}

fn latest_view(snapshot: &Snapshot) -> Value {
    let mut value = Record::Snapshot(snapshot.clone()).to_json();
    let object = value.as_object_mut().expect("a record is an object");
    let keep = ["asOf", "equity", "cash", "positions", "flowSincePrevious"];
    object.retain(|k, _| keep.contains(&k.as_str()));
    value
}

/// Builds the first dashboard from the store.
pub async fn dashboard(store: &dyn LedgerStore, period: Period) -> Result<Dashboard, StoreError> {
    let head = store.head().await?;
    let mut lines = Vec::new();
    let mut end: Option<DateTime<Utc>> = None;
    for entry in store.latest_snapshots().await? {
        let record = Record::from_canonical(&entry.canonical).map_err(|e| {
            StoreError::Corrupt(format!("stored record {} does not parse: {e}", entry.seq))
        })?;
        let Record::Snapshot(snapshot) = record else {
            continue;
        };
        let instant = snapshot.header.as_of.instant();
        end = Some(end.map_or(instant, |e| e.max(instant)));
        lines.push(StrategyLine {
            strategy_id: snapshot.header.strategy_id.to_string(),
            strategy_name: snapshot.header.strategy_name.clone(),
            mode: snapshot.header.mode.as_str(),
            latest: latest_view(&snapshot),
            seq: entry.seq,
        });
    }
    lines.sort_by(|a, b| (&a.strategy_id, a.mode).cmp(&(&b.strategy_id, b.mode)));
    let rfc3339 = |t: DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
    Ok(Dashboard {
        schema_version: crate::SCHEMA_VERSION,
        period,
        unit: "tradingDays",
        window: Window {
            start: end.map(|e| rfc3339(window_start(e, period.days()))),
            end: end.map(rfc3339),
        },
        head,
        strategies: lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_the_four_allowed_counts_with_63_by_default() {
        assert_eq!(Period::parse(None).unwrap().days(), 63);
        for days in PERIODS {
            assert_eq!(Period::parse(Some(&days.to_string())).unwrap().days(), days);
        }
        for bad in [
            "0",
            "20",
            "64",
            "-21",
            "21.0",
            "021",
            "+21",
            "abc",
            "",
            "252 ",
            "99999999999",
        ] {
            assert_eq!(Period::parse(Some(bad)), Err(InvalidPeriod), "{bad}");
        }
    }

    #[test]
    fn twenty_one_weekdays_back_from_a_friday_is_four_weeks_and_a_day() {
        // Friday 2026-05-29 → 21 weekdays back lands on Thursday 2026-04-30:
        // with daily weekday snapshots that is exactly 21 intervals.
        let end: DateTime<Utc> = "2026-05-29T20:00:00Z".parse().unwrap();
        assert_eq!(
            window_start(end, 21),
            "2026-04-30T20:00:00Z".parse::<DateTime<Utc>>().unwrap()
        );
        // From a Monday, one trading day back is the Friday before.
        let monday: DateTime<Utc> = "2026-06-01T20:00:00Z".parse().unwrap();
        assert_eq!(
            window_start(monday, 1),
            "2026-05-29T20:00:00Z".parse::<DateTime<Utc>>().unwrap()
        );
    }
}
