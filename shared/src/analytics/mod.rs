//! The dashboard's analytics as pure functions (no I/O), per
//! docs/track-record.md, and the contract's formulas. Each rule answers a mistake well-known trackers make:
//!
//! - flows land at interval end and are removed from the gain:
//!   r_i = (E_i − F_i) / E_{i−1} − 1, so deposits are never counted as returns;
//! - TWR = Π(1 + r_i) − 1; P&L = E_end − E_baseline − ΣF;
//! - the growth index starts at 1 *at the baseline*, so a fall on the first
//!   interval is a drawdown (trackers that start the index after the first
//!   return lose it);
//! - daily returns chain the intervals within each UTC date; volatility is
//!   the sample deviation (n − 1) × √252; Sharpe (risk-free 0) and Sortino
//!   (downside over *all* days) follow;
//! - no annualised return unless the window spans at least 252 trading days;
//! - whatever cannot be computed (too few points, zero deviation, zero
//!   capital) is `None`, never 0 or NaN.
//!
//! [`metrics`] computes them all in one pass (`Fold`, whose state can be
//! stored and resumed: the dashboard's since-inception roll-up). The tests
//! keep each formula on its own over a whole series (`reference.rs`) and
//! hold the fold to them.
//!
//! Money stays in exact decimals until a ratio is formed; ratios are `f64`.
//! Decimal arithmetic is checked (a value that does not fit is `None`), and
//! every `f64` result passes through `finite`, so no record the parser
//! accepts can make a metric panic, overflow or print as NaN.

/// A value of the fold kept exactly: an `f64` serialised as its bits, so
/// a stored state resumes bit for bit, infinities and NaN included.
pub(crate) mod bits {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the bits.
    pub(crate) fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(value.to_bits())
    }

    /// Reads the bits.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        u64::deserialize(deserializer).map(f64::from_bits)
    }
}

/// A base64 text of a stored state read straight into its bytes, from the
/// JSON it is part of without copying the text first (it has no escapes to
/// undo, so serde_json hands it over in place).
pub(crate) fn base64_bytes<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<u8>, D::Error> {
    struct Base64Text;

    impl serde::de::Visitor<'_> for Base64Text {
        type Value = Vec<u8>;

        fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
            formatter.write_str("a base64 text")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Vec<u8>, E> {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(text.as_bytes())
                .map_err(E::custom)
        }
    }

    deserializer.deserialize_str(Base64Text)
}

mod fold;
mod uncertainty;

pub(crate) use fold::{Fold, IndexPoint, Step};
pub(crate) use uncertainty::sample_variance;
pub use uncertainty::{
    BenchmarkComparison, BenchmarkWithheld, MIN_DAILY_RETURNS, SharpeStatistics, Withheld,
    compare_with_benchmark, deflate, expected_maximum_sharpe, sharpe_statistics,
};

use chrono::{DateTime, Datelike, Duration, Utc, Weekday};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

/// A UTC date as its number of days from the common era
/// (`NaiveDate::num_days_from_ce`): daily returns are keyed by it.
pub type DayNumber = i32;

/// Trading days in a year, for annualising.
pub(crate) const TRADING_DAYS_PER_YEAR: f64 = 252.0;

/// One valuation of a strategy: when, what it was worth, the flow at its end.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Valuation {
    /// The snapshot's instant.
    #[serde(with = "chrono::serde::ts_nanoseconds")]
    pub at: DateTime<Utc>,
    /// Equity after the flow.
    pub equity: Decimal,
    /// Net flow since the previous snapshot (deposit +, withdrawal −).
    pub flow: Decimal,
}

/// Whether `day` is a trading day (Monday to Friday by UTC date).
pub(crate) fn is_trading_day(day: DateTime<Utc>) -> bool {
    !matches!(day.weekday(), Weekday::Sat | Weekday::Sun)
}

/// The window's start: step back from `end` one calendar day at a time,
/// counting the steps that land on a weekday, until `days` are counted.
pub(crate) fn window_start(end: DateTime<Utc>, days: u32) -> DateTime<Utc> {
    let mut at = end;
    let mut counted = 0;
    while counted < days {
        at -= Duration::days(1);
        if is_trading_day(at) {
            counted += 1;
        }
    }
    at
}

/// How many trading-day steps lie between `from` and `to` (the inverse of
/// [`window_start`]: `trading_days_between(window_start(e, n), e) == n`):
/// of the instants `to` − k days, k = 1, 2, … while at or after `from`,
/// those on a weekday. Constant time: five per whole week, then the rest
/// one by one.
pub(crate) fn trading_days_between(from: DateTime<Utc>, to: DateTime<Utc>) -> u32 {
    let steps = (to - from).num_days().max(0);
    let (weeks, rest) = (steps / 7, steps % 7);
    let mut counted = weeks.saturating_mul(5);
    // The last `rest` steps land on the days just before `to` − 7 × weeks.
    let base = to - Duration::days(7 * weeks);
    for k in 1..=rest {
        if is_trading_day(base - Duration::days(k)) {
            counted += 1;
        }
    }
    u32::try_from(counted).unwrap_or(u32::MAX)
}

/// Whether a strategy whose latest snapshot is `latest` is stale: more than
/// one trading day older than the fund's latest snapshot `end`.
pub(crate) fn is_stale(latest: DateTime<Utc>, end: DateTime<Utc>) -> bool {
    latest < window_start(end, 1)
}

fn ratio(numerator: Decimal, denominator: Decimal) -> Option<f64> {
    numerator.checked_div(denominator)?.to_f64()
}

/// One interval's return r = (E − F) / E_prev − 1; `None` when undefined
/// (from zero equity with a gain, or a flow that does not fit a decimal).
fn interval_return(previous: &Valuation, current: &Valuation) -> Option<f64> {
    let grown = current.equity.checked_sub(current.flow)?;
    if previous.equity.is_zero() {
        return grown.is_zero().then_some(0.0);
    }
    Some(ratio(grown, previous.equity)? - 1.0)
}

/// A UTC calendar month, `(year, month)` with month 1 to 12.
pub(crate) type Month = (i32, u32);

/// The Calmar ratio: annualised return / |max drawdown|; `None` unless both
/// are defined and the drawdown is below 0.
pub(crate) fn calmar(annualized_return: Option<f64>, max_drawdown: Option<f64>) -> Option<f64> {
    let drawdown = max_drawdown.filter(|d| *d < 0.0)?;
    finite(annualized_return? / drawdown.abs())
}

/// Annualised return, only for a span of at least 252 trading days:
/// (1 + TWR)^(252 / span) − 1.
pub(crate) fn annualized_return(twr: Option<f64>, span_trading_days: u32) -> Option<f64> {
    if span_trading_days < TRADING_DAYS_PER_YEAR as u32 {
        return None;
    }
    finite((1.0 + twr?).powf(TRADING_DAYS_PER_YEAR / f64::from(span_trading_days)) - 1.0)
}

/// `value` when it is finite (a zero without its sign), else `None`.
pub(crate) fn finite(value: f64) -> Option<f64> {
    value
        .is_finite()
        .then_some(if value == 0.0 { 0.0 } else { value })
}

/// Every metric of one strategy over its window.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// Time-weighted return.
    pub twr: Option<f64>,
    /// Annualised return (windows of 252 trading days or more).
    pub annualized_return: Option<f64>,
    /// E_end − E_baseline − ΣF, exact.
    pub pnl: Option<Decimal>,
    /// ΣF over the window, exact.
    pub net_flows: Option<Decimal>,
    /// Maximum drawdown of the growth index (≤ 0).
    pub max_drawdown: Option<f64>,
    /// Annualised volatility of daily returns.
    pub volatility: Option<f64>,
    /// Sharpe ratio (risk-free 0); `None` while `withheld`.
    pub sharpe: Option<f64>,
    /// Sortino ratio; `None` while `withheld`.
    pub sortino: Option<f64>,
    /// Annualised return / |max drawdown|; `None` while `withheld`.
    pub calmar: Option<f64>,
    /// Why the Sharpe, Sortino and Calmar ratios and the Sharpe's
    /// statistics are withheld (too few daily returns, no variation).
    pub withheld: Option<Withheld>,
    /// What the Sharpe can support ([`sharpe_statistics`]); deflated by
    /// the caller, who knows the other strategies.
    pub sharpe_statistics: Option<SharpeStatistics>,
    /// Each UTC day's return, in day order (for a benchmark comparison).
    pub daily_returns: Vec<(DayNumber, f64)>,
    /// The best daily return.
    pub best_day: Option<f64>,
    /// The worst daily return.
    pub worst_day: Option<f64>,
    /// The drawdown at the latest valuation (≤ 0).
    pub current_drawdown: Option<f64>,
    /// The longest drawdown in calendar days, recovered or not.
    pub longest_drawdown_days: Option<i64>,
    /// Number of intervals (snapshots after the baseline).
    pub intervals: usize,
    /// The growth index at each valuation (`None` when returns are undefined).
    pub index: Vec<Option<f64>>,
    /// The drawdown at each valuation (`None` when returns are undefined).
    pub underwater: Vec<Option<f64>>,
    /// Each calendar month's TWR (empty when returns are undefined).
    pub monthly: Vec<(Month, Option<f64>)>,
    /// Each calendar year's TWR (empty when returns are undefined).
    pub yearly: Vec<(i32, Option<f64>)>,
}

impl Metrics {
    /// The metrics of a series without a defined return (only a baseline,
    /// or an interval that cannot be computed): the index is 1 at the
    /// baseline and undefined after; everything else is `None`.
    fn undefined(intervals: usize, pnl: Option<Decimal>, net_flows: Option<Decimal>) -> Metrics {
        Metrics {
            twr: None,
            annualized_return: None,
            pnl,
            net_flows,
            max_drawdown: None,
            volatility: None,
            sharpe: None,
            sortino: None,
            calmar: None,
            withheld: None,
            sharpe_statistics: None,
            daily_returns: Vec::new(),
            best_day: None,
            worst_day: None,
            current_drawdown: None,
            longest_drawdown_days: None,
            intervals,
            index: Vec::new(),
            underwater: Vec::new(),
            monthly: Vec::new(),
            yearly: Vec::new(),
        }
    }
}

/// Computes every metric for `series` (baseline first): one `Fold` over
/// it, with the growth index and drawdown at each valuation.
pub fn metrics(series: &[Valuation]) -> Metrics {
    let mut fold = Fold::default();
    let steps: Vec<Option<Step>> = series.iter().map(|v| fold.push(*v)).collect();
    let mut metrics = fold.metrics();
    let defined = fold.returns_defined() && metrics.intervals > 0;
    let shown = |value: fn(&Step) -> f64| {
        steps
            .iter()
            .enumerate()
            .map(|(i, step)| match step {
                Some(step) if defined || i == 0 => finite(value(step)),
                _ => None,
            })
            .collect()
    };
    metrics.index = shown(|step| step.index);
    metrics.underwater = shown(|step| step.drawdown);
    metrics
}

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
