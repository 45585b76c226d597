//! Every metric of a series in one pass, with a state that can be kept.
//!
//! [`Fold`] takes the valuations one at a time, in time order, and holds
//! only what the formulas still need: the growth index and its peaks, the
//! open day, month and year, the closed months and years, running
//! statistics of the daily returns and each closed day's return. So a fold can stop after any valuation,
//! be stored, and resume later with the same result as one pass over the
//! whole series: the arithmetic is the same operations in the same order
//! (the state keeps each `f64` bit for bit when serialised). That is what
//! lets the dashboard's since-inception figures be rolled up by month
//! instead of recomputed from the first snapshot on every request.
//!
//! [`super::metrics`] is this fold over a slice, so the windowed periods
//! and since inception share one implementation. The sample deviation is
//! Welford's running form (same value as the two-pass formula up to
//! rounding; the property tests hold the two within 1e-9).

use super::bits;
use super::{
    DayNumber, Metrics, Month, TRADING_DAYS_PER_YEAR, Valuation, finite, interval_return,
    trading_days_between,
};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// A group of intervals (a day, month or year) and its chained growth
/// Π(1 + r_i) so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Group<K> {
    /// The day, month or year.
    pub key: K,
    /// Π(1 + r_i) over the group's intervals.
    pub growth: f64,
}

/// Stored as `[key, growth's bits]`: a roll-up holds one per month.
impl<K: Serialize> Serialize for Group<K> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.key, self.growth.to_bits()).serialize(serializer)
    }
}

impl<'de, K: Deserialize<'de>> Deserialize<'de> for Group<K> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Group<K>, D::Error> {
        let (key, bits) = <(K, u64)>::deserialize(deserializer)?;
        Ok(Group {
            key,
            growth: f64::from_bits(bits),
        })
    }
}

/// Running statistics of the closed days' returns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct DailyStatistics {
    count: u64,
    #[serde(with = "bits")]
    sum: f64,
    #[serde(with = "bits")]
    mean: f64,
    /// Σ(d − mean)², Welford's running form.
    #[serde(with = "bits")]
    squared_deviations: f64,
    /// Σ min(d, 0)².
    #[serde(with = "bits")]
    downside: f64,
    #[serde(with = "bits")]
    best: f64,
    #[serde(with = "bits")]
    worst: f64,
}

impl Default for DailyStatistics {
    fn default() -> DailyStatistics {
        DailyStatistics {
            count: 0,
            sum: 0.0,
            mean: 0.0,
            squared_deviations: 0.0,
            downside: 0.0,
            best: f64::NEG_INFINITY,
            worst: f64::INFINITY,
        }
    }
}

impl DailyStatistics {
    fn add(&mut self, day_return: f64) {
        self.count += 1;
        self.sum += day_return;
        let delta = day_return - self.mean;
        self.mean += delta / self.count as f64;
        self.squared_deviations += delta * (day_return - self.mean);
        self.downside += day_return.min(0.0).powi(2);
        self.best = self.best.max(day_return);
        self.worst = self.worst.min(day_return);
    }

    fn sample_deviation(&self) -> Option<f64> {
        if self.count < 2 {
            return None;
        }
        finite((self.squared_deviations / (self.count - 1) as f64).sqrt())
    }

    fn volatility(&self) -> Option<f64> {
        finite(self.sample_deviation()? * TRADING_DAYS_PER_YEAR.sqrt())
    }

    fn sortino(&self) -> Option<f64> {
        if self.count < 2 {
            return None;
        }
        let downside = (self.downside / self.count as f64).sqrt();
        if downside <= 0.0 {
            return None;
        }
        finite(self.sum / self.count as f64 / downside * TRADING_DAYS_PER_YEAR.sqrt())
    }
}

/// Every closed day's return, in day order: what a benchmark comparison
/// pairs by day and the Sharpe's statistics take their moments from.
/// Stored as one base64 text of runs of consecutive days, each its first
/// day ([`DayNumber`], big-endian i32), its length (big-endian u32) and
/// its returns' bits (big-endian u64 each): about 8 bytes a day, so a
/// roll-up of years of days stays small and quick to read.
#[derive(Debug, Clone, Default, PartialEq)]
struct DailyReturns(Vec<(DayNumber, f64)>);

impl Serialize for DailyReturns {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::with_capacity(self.0.len() * 8 + 8);
        let mut rest = self.0.as_slice();
        while let Some(&(first, _)) = rest.first() {
            let length = rest
                .iter()
                .enumerate()
                .take_while(|(i, (day, _))| i64::from(*day) == i64::from(first) + *i as i64)
                .count();
            bytes.extend_from_slice(&first.to_be_bytes());
            bytes.extend_from_slice(&(length as u32).to_be_bytes());
            for (_, r) in &rest[..length] {
                bytes.extend_from_slice(&r.to_bits().to_be_bytes());
            }
            rest = &rest[length..];
        }
        serializer.serialize_str(&BASE64.encode(bytes))
    }
}

impl<'de> Deserialize<'de> for DailyReturns {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<DailyReturns, D::Error> {
        use serde::de::Error;
        let bytes = super::base64_bytes(deserializer)?;
        let mut days = Vec::with_capacity(bytes.len() / 8);
        let mut rest = bytes.as_slice();
        while !rest.is_empty() {
            let (head, body) = rest
                .split_at_checked(8)
                .ok_or_else(|| D::Error::custom("a run of days is cut short"))?;
            let first = i32::from_be_bytes(head[..4].try_into().expect("four bytes"));
            let length = u32::from_be_bytes(head[4..].try_into().expect("four bytes")) as usize;
            let (returns, after) = length
                .checked_mul(8)
                .and_then(|size| body.split_at_checked(size))
                .ok_or_else(|| D::Error::custom("a run of days is cut short"))?;
            for (i, bits) in returns.chunks_exact(8).enumerate() {
                let day = i32::try_from(i)
                    .ok()
                    .and_then(|i| first.checked_add(i))
                    .ok_or_else(|| D::Error::custom("a day out of range"))?;
                let bits = u64::from_be_bytes(bits.try_into().expect("eight bytes"));
                days.push((day, f64::from_bits(bits)));
            }
            rest = after;
        }
        Ok(DailyReturns(days))
    }
}

/// The highest growth index so far and when it was set, for the longest
/// drawdown.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct HighWater {
    #[serde(with = "chrono::serde::ts_nanoseconds")]
    at: DateTime<Utc>,
    #[serde(with = "bits")]
    level: f64,
}

/// A valuation's place on the growth index: the index and its drawdown
/// from the running peak (raw: the caller decides what is shown as finite).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Step {
    /// The growth index (1 at the baseline).
    pub index: f64,
    /// index / running peak − 1.
    pub drawdown: f64,
}

/// Where a fold's growth index stands after a valuation: everything the
/// steps (index and drawdown) of later valuations depend on. Kept at each
/// month's end, it lets a series export start a page in any month without
/// folding the series from its first snapshot ([`Fold::resuming`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexPoint {
    last: Valuation,
    defined: bool,
    #[serde(with = "bits")]
    level: f64,
    #[serde(with = "bits")]
    peak: f64,
}

impl IndexPoint {
    /// How many bytes [`IndexPoint::to_bytes`] writes.
    pub(crate) const BYTES: usize = 8 + 16 + 16 + 1 + 8 + 8;

    /// The point as fixed-width bytes: the valuation's instant (i64
    /// nanoseconds), equity and flow (rust_decimal's 16-byte form),
    /// whether returns are defined, then the index and its peak (f64
    /// bits), each big-endian: how a roll-up keeps one per month, read
    /// back far quicker than JSON objects.
    pub(crate) fn to_bytes(self) -> [u8; IndexPoint::BYTES] {
        let mut bytes = [0u8; IndexPoint::BYTES];
        let at = self.last.at.timestamp_nanos_opt().unwrap_or(i64::MAX);
        bytes[..8].copy_from_slice(&at.to_be_bytes());
        bytes[8..24].copy_from_slice(&self.last.equity.serialize());
        bytes[24..40].copy_from_slice(&self.last.flow.serialize());
        bytes[40] = u8::from(self.defined);
        bytes[41..49].copy_from_slice(&self.level.to_bits().to_be_bytes());
        bytes[49..57].copy_from_slice(&self.peak.to_bits().to_be_bytes());
        bytes
    }

    /// The point [`IndexPoint::to_bytes`] wrote; `None` for bytes it
    /// cannot have written (a decimal's scale beyond 28, a flag not 0/1).
    pub(crate) fn from_bytes(bytes: &[u8; IndexPoint::BYTES]) -> Option<IndexPoint> {
        let word = |from: usize| {
            u64::from_be_bytes(bytes[from..from + 8].try_into().expect("eight bytes"))
        };
        let decimal = |from: usize| {
            let raw: [u8; 16] = bytes[from..from + 16].try_into().expect("sixteen bytes");
            // rust_decimal's form keeps the scale in the third byte.
            (raw[2] <= 28).then(|| Decimal::deserialize(raw))
        };
        let defined = match bytes[40] {
            0 => false,
            1 => true,
            _ => return None,
        };
        Some(IndexPoint {
            last: Valuation {
                at: DateTime::from_timestamp_nanos(word(0) as i64),
                equity: decimal(8)?,
                flow: decimal(24)?,
            },
            defined,
            level: f64::from_bits(word(41)),
            peak: f64::from_bits(word(49)),
        })
    }
}

/// The state of one pass over a series (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Fold {
    baseline: Option<Valuation>,
    last: Option<Valuation>,
    intervals: usize,
    /// ΣF after the baseline; `None` once it no longer fits a decimal.
    net_flows: Option<Decimal>,
    /// Whether every interval return so far is defined.
    defined: bool,
    #[serde(with = "bits")]
    level: f64,
    #[serde(with = "bits")]
    peak: f64,
    #[serde(with = "bits")]
    max_drawdown: f64,
    high_water: Option<HighWater>,
    under_water: bool,
    longest_drawdown_days: i64,
    daily: DailyStatistics,
    days: DailyReturns,
    open_day: Option<Group<NaiveDate>>,
    months: Vec<Group<Month>>,
    open_month: Option<Group<Month>>,
    years: Vec<Group<i32>>,
    open_year: Option<Group<i32>>,
}

impl Default for Fold {
    fn default() -> Fold {
        Fold {
            baseline: None,
            last: None,
            intervals: 0,
            net_flows: Some(Decimal::ZERO),
            defined: true,
            level: 1.0,
            peak: f64::NEG_INFINITY,
            max_drawdown: 0.0,
            high_water: None,
            under_water: false,
            longest_drawdown_days: 0,
            daily: DailyStatistics::default(),
            days: DailyReturns::default(),
            open_day: None,
            months: Vec::new(),
            open_month: None,
            years: Vec::new(),
            open_year: None,
        }
    }
}

/// Chains `growth` into the open group, or closes it and opens `key`'s;
/// the closed group is returned.
fn chain<K: PartialEq + Copy>(
    open: &mut Option<Group<K>>,
    key: K,
    growth: f64,
) -> Option<Group<K>> {
    match open {
        Some(group) if group.key == key => {
            group.growth *= growth;
            None
        }
        _ => open.replace(Group { key, growth }),
    }
}

/// Each group's return (growth − 1), the open one last.
fn group_returns<K: Copy>(closed: &[Group<K>], open: &Option<Group<K>>) -> Vec<(K, Option<f64>)> {
    closed
        .iter()
        .chain(open)
        .map(|g| (g.key, finite(g.growth - 1.0)))
        .collect()
}

fn calendar_days(from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
    (to.date_naive() - from.date_naive()).num_days()
}

impl Fold {
    /// Takes the next valuation (later than every one before). Gives its
    /// place on the growth index, or `None` once the series' returns are
    /// undefined (an interval from zero equity that gained something, or a
    /// flow that does not fit a decimal).
    pub(crate) fn push(&mut self, valuation: Valuation) -> Option<Step> {
        let Some(previous) = self.last.replace(valuation) else {
            self.baseline = Some(valuation);
            self.peak = self.peak.max(self.level);
            self.high_water = Some(HighWater {
                at: valuation.at,
                level: self.level,
            });
            return Some(Step {
                index: self.level,
                drawdown: 0.0,
            });
        };
        self.intervals += 1;
        self.net_flows = self
            .net_flows
            .and_then(|sum| sum.checked_add(valuation.flow));
        if !self.defined {
            return None;
        }
        let Some(r) = interval_return(&previous, &valuation) else {
            self.defined = false;
            return None;
        };
        self.level *= 1.0 + r;
        self.peak = self.peak.max(self.level);
        let drawdown = if self.peak > 0.0 {
            self.level / self.peak - 1.0
        } else {
            0.0
        };
        self.max_drawdown = self.max_drawdown.min(drawdown);
        if let Some(high) = self.high_water.as_mut() {
            if self.level >= high.level {
                if self.under_water {
                    self.longest_drawdown_days = self
                        .longest_drawdown_days
                        .max(calendar_days(high.at, valuation.at));
                    self.under_water = false;
                }
                *high = HighWater {
                    at: valuation.at,
                    level: self.level,
                };
            } else {
                self.under_water = true;
            }
        }
        if let Some(day) = chain(&mut self.open_day, valuation.at.date_naive(), 1.0 + r) {
            self.daily.add(day.growth - 1.0);
            self.days
                .0
                .push((day.key.num_days_from_ce(), day.growth - 1.0));
        }
        let month = (valuation.at.year(), valuation.at.month());
        if let Some(closed) = chain(&mut self.open_month, month, 1.0 + r) {
            self.months.push(closed);
        }
        if let Some(closed) = chain(&mut self.open_year, valuation.at.year(), 1.0 + r) {
            self.years.push(closed);
        }
        Some(Step {
            index: self.level,
            drawdown,
        })
    }

    /// Whether every interval return so far is defined.
    pub(crate) fn returns_defined(&self) -> bool {
        self.defined
    }

    /// How many intervals (valuations after the baseline) it has taken.
    pub(crate) fn intervals(&self) -> usize {
        self.intervals
    }

    /// Where the growth index stands now; `None` before any valuation.
    pub(crate) fn index_point(&self) -> Option<IndexPoint> {
        Some(IndexPoint {
            last: self.last?,
            defined: self.defined,
            level: self.level,
            peak: self.peak,
        })
    }

    /// A fold that goes on from `point`: for every later valuation it gives
    /// the same step (index and drawdown) as the one pass over the whole
    /// series, bit for bit. Its other metrics cover only what it takes
    /// after `point`.
    pub(crate) fn resuming(point: &IndexPoint) -> Fold {
        Fold {
            baseline: Some(point.last),
            last: Some(point.last),
            defined: point.defined,
            level: point.level,
            peak: point.peak,
            ..Fold::default()
        }
    }

    /// The latest valuation taken.
    pub(crate) fn last(&self) -> Option<&Valuation> {
        self.last.as_ref()
    }

    /// Every metric of the valuations taken so far, as [`super::metrics`]
    /// gives them, without the per-valuation `index` and `underwater`
    /// (a fold keeps none; they are empty here).
    pub(crate) fn metrics(&self) -> Metrics {
        let intervals = self.intervals;
        let (pnl, net_flows) = match (&self.baseline, &self.last) {
            (Some(first), Some(last)) if intervals > 0 => {
                let pnl = self
                    .net_flows
                    .and_then(|flows| last.equity.checked_sub(first.equity)?.checked_sub(flows));
                (pnl, self.net_flows)
            }
            _ => (None, None),
        };
        let (Some(first), Some(last)) = (&self.baseline, &self.last) else {
            return Metrics::undefined(intervals, pnl, net_flows);
        };
        if intervals == 0 || !self.defined {
            return Metrics::undefined(intervals, pnl, net_flows);
        }
        let mut daily = self.daily;
        let mut daily_returns = Vec::with_capacity(self.days.0.len() + 1);
        daily_returns.extend_from_slice(&self.days.0);
        if let Some(day) = self.open_day {
            daily.add(day.growth - 1.0);
            daily_returns.push((day.key.num_days_from_ce(), day.growth - 1.0));
        }
        let twr = finite(self.level - 1.0);
        let span = trading_days_between(first.at, last.at);
        let annualized = super::annualized_return(twr, span);
        let max_drawdown = finite(self.max_drawdown);
        let current_drawdown = if self.peak > 0.0 {
            self.level / self.peak - 1.0
        } else {
            0.0
        };
        let returns: Vec<f64> = daily_returns.iter().map(|(_, r)| *r).collect();
        let (statistics, withheld) = match super::sharpe_statistics(&returns, span) {
            Ok(statistics) => (Some(statistics), None),
            Err(reason) => (None, Some(reason)),
        };
        let shown = |ratio: Option<f64>| ratio.filter(|_| withheld.is_none());
        let longest = match (self.under_water, self.high_water) {
            (true, Some(high)) => self
                .longest_drawdown_days
                .max(calendar_days(high.at, last.at)),
            _ => self.longest_drawdown_days,
        };
        Metrics {
            twr,
            annualized_return: annualized,
            pnl,
            net_flows,
            max_drawdown,
            volatility: daily.volatility(),
            // One definition of the Sharpe: the statistics' per-day figure,
            // annualised (none while withheld).
            sharpe: statistics
                .as_ref()
                .and_then(|s| finite(s.per_day * TRADING_DAYS_PER_YEAR.sqrt())),
            sortino: shown(daily.sortino()),
            calmar: shown(super::calmar(annualized, max_drawdown)),
            withheld,
            sharpe_statistics: statistics,
            daily_returns,
            best_day: (daily.count > 0).then_some(daily.best).and_then(finite),
            worst_day: (daily.count > 0).then_some(daily.worst).and_then(finite),
            current_drawdown: finite(current_drawdown),
            longest_drawdown_days: Some(longest),
            intervals,
            index: Vec::new(),
            underwater: Vec::new(),
            monthly: group_returns(&self.months, &self.open_month),
            yearly: group_returns(&self.years, &self.open_year),
        }
    }
}
