//! Each formula on its own over a whole series, as `metrics` computed them
//! before it became one [`Fold`](super::Fold): the reference the property
//! tests hold the fold to.

use super::{Month, TRADING_DAYS_PER_YEAR, Valuation, finite, interval_return};
use chrono::{DateTime, Datelike, Utc};

/// Interval returns r_i = (E_i − F_i) / E_{i−1} − 1 for consecutive
/// valuations (the first is the baseline). An interval that starts from zero
/// equity has return 0 when nothing was gained either, and is undefined (the
/// whole series gets `None`) when something was.
pub(super) fn interval_returns(series: &[Valuation]) -> Option<Vec<f64>> {
    series
        .windows(2)
        .map(|pair| interval_return(&pair[0], &pair[1]))
        .collect()
}

/// Time-weighted return: Π(1 + r_i) − 1; `None` without any interval.
pub(super) fn time_weighted_return(returns: &[f64]) -> Option<f64> {
    if returns.is_empty() {
        return None;
    }
    finite(returns.iter().map(|r| 1.0 + r).product::<f64>() - 1.0)
}

/// The growth index at each valuation: 1 at the baseline, then × (1 + r_i).
pub(super) fn growth_index(returns: &[f64]) -> Vec<f64> {
    let mut index = Vec::with_capacity(returns.len() + 1);
    index.push(1.0);
    let mut level = 1.0;
    for r in returns {
        level *= 1.0 + r;
        index.push(level);
    }
    index
}

/// Maximum drawdown of a growth index: the most negative index / running
/// peak − 1 (0 when it never fell); `None` for fewer than two points.
pub(super) fn max_drawdown(index: &[f64]) -> Option<f64> {
    if index.len() < 2 {
        return None;
    }
    let mut peak = f64::NEG_INFINITY;
    let mut worst: f64 = 0.0;
    for &level in index {
        peak = peak.max(level);
        if peak > 0.0 {
            worst = worst.min(level / peak - 1.0);
        }
    }
    finite(worst)
}

/// Daily returns: the interval returns chained within each UTC date (an
/// interval belongs to the date of its ending valuation), in date order.
pub(super) fn daily_returns(series: &[Valuation], returns: &[f64]) -> Vec<f64> {
    chained_by(series, returns, |at| at.date_naive())
        .into_iter()
        .map(|(_, r)| r)
        .collect()
}

/// The interval returns chained within each group `group_of` assigns (an
/// interval belongs to the group of its ending valuation), in order: the
/// return of each day, month or year that holds at least one interval.
fn chained_by<K: PartialEq>(
    series: &[Valuation],
    returns: &[f64],
    group_of: impl Fn(DateTime<Utc>) -> K,
) -> Vec<(K, f64)> {
    let mut groups: Vec<(K, f64)> = Vec::new();
    for (valuation, r) in series.iter().skip(1).zip(returns) {
        let group = group_of(valuation.at);
        match groups.last_mut() {
            Some((last, growth)) if *last == group => *growth *= 1.0 + r,
            _ => groups.push((group, 1.0 + r)),
        }
    }
    groups
        .into_iter()
        .map(|(group, growth)| (group, growth - 1.0))
        .collect()
}

/// The TWR of each UTC calendar month that holds an interval (the first
/// from the baseline), in order (the contract's `monthly` formula).
pub(super) fn monthly_returns(series: &[Valuation], returns: &[f64]) -> Vec<(Month, f64)> {
    chained_by(series, returns, |at| (at.year(), at.month()))
}

/// The TWR of each UTC calendar year that holds an interval, in order
/// (the contract's `yearly` formula).
pub(super) fn yearly_returns(series: &[Valuation], returns: &[f64]) -> Vec<(i32, f64)> {
    chained_by(series, returns, |at| at.year())
}

/// The drawdown at each point of a growth index: index / running peak − 1
/// (0 at a new peak, negative below it), for the underwater chart.
pub(super) fn underwater(index: &[f64]) -> Vec<f64> {
    let mut peak = f64::NEG_INFINITY;
    index
        .iter()
        .map(|&level| {
            peak = peak.max(level);
            if peak > 0.0 { level / peak - 1.0 } else { 0.0 }
        })
        .collect()
}

/// The longest drawdown in calendar days (by UTC date): from the instant
/// the growth index set a peak to the first valuation at or above that
/// peak again, or to the latest valuation when it has not recovered. 0 when
/// the index never fell; `None` for fewer than two points. `at` and
/// `index` are parallel.
pub(super) fn longest_drawdown_days(at: &[DateTime<Utc>], index: &[f64]) -> Option<i64> {
    if index.len() < 2 || at.len() != index.len() {
        return None;
    }
    let days =
        |from: DateTime<Utc>, to: DateTime<Utc>| (to.date_naive() - from.date_naive()).num_days();
    let mut longest = 0;
    let mut peak = (at[0], index[0]);
    let mut under = false;
    for (&when, &level) in at.iter().zip(index) {
        if level >= peak.1 {
            if under {
                longest = longest.max(days(peak.0, when));
                under = false;
            }
            peak = (when, level);
        } else {
            under = true;
        }
    }
    if under {
        longest = longest.max(days(peak.0, at[at.len() - 1]));
    }
    Some(longest)
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample standard deviation (n − 1); `None` for fewer than two values.
pub(super) fn sample_deviation(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values);
    let variance = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    finite(variance.sqrt())
}

/// Annualised volatility of daily returns: sample deviation × √252.
pub(super) fn volatility(daily: &[f64]) -> Option<f64> {
    finite(sample_deviation(daily)? * TRADING_DAYS_PER_YEAR.sqrt())
}

/// Sharpe ratio with a risk-free rate of 0: mean / sample deviation × √252;
/// `None` for fewer than two days or zero deviation.
pub(super) fn sharpe(daily: &[f64]) -> Option<f64> {
    let deviation = sample_deviation(daily).filter(|d| *d > 0.0)?;
    finite(mean(daily) / deviation * TRADING_DAYS_PER_YEAR.sqrt())
}

/// Sortino ratio: mean / √(mean of squared negative daily returns over all
/// days) × √252; `None` for fewer than two days or no downside at all.
pub(super) fn sortino(daily: &[f64]) -> Option<f64> {
    if daily.len() < 2 {
        return None;
    }
    let downside =
        (daily.iter().map(|r| r.min(0.0).powi(2)).sum::<f64>() / daily.len() as f64).sqrt();
    if downside <= 0.0 {
        return None;
    }
    finite(mean(daily) / downside * TRADING_DAYS_PER_YEAR.sqrt())
}
