//! What the figures can and cannot say: the Sharpe ratio's uncertainty,
//! luck among many strategies, and a comparison with a benchmark
//! (docs/track-record.md, "What the figures can and cannot say").
//!
//! Bailey & López de Prado (2012, 2014), on n daily returns with per-day
//! Sharpe SR (mean / sample deviation, risk-free 0), skewness γ3 and
//! kurtosis γ4 estimated as pandas does (bias-adjusted skewness;
//! bias-adjusted excess kurtosis + 3):
//!
//! - standard error SE = √((1 − γ3·SR + (γ4 − 1)/4·SR²) / (n − 1));
//! - 95 % interval of the annualised Sharpe (SR ± 1.96·SE)·√252;
//! - probabilistic Sharpe ratio PSR = Φ(SR / SE);
//! - minimum track record MinTRL = 1 + (1 − γ3·SR + (γ4 − 1)/4·SR²)·(1.6449 / SR)²
//!   returns for 95 % confidence (none when SR ≤ 0);
//! - deflated Sharpe DSR = Φ((SR − SR0)·√(n − 1) / √(1 − γ3·SR + (γ4 − 1)/4·SR²)),
//!   SR0 = √V·((1 − γ)·Φ⁻¹(1 − 1/N) + γ·Φ⁻¹(1 − 1/(N·e))), for N strategies
//!   tried whose per-day Sharpes vary by V (γ = Euler–Mascheroni).
//!
//! Below [`MIN_DAILY_RETURNS`] daily returns, or without variation, the
//! figures are withheld ([`Withheld`]), never 0 or NaN. Every result passes
//! through [`finite`].

use super::{DayNumber, TRADING_DAYS_PER_YEAR, finite};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// Fewest daily returns behind a Sharpe, Sortino or Calmar ratio, or a
/// benchmark comparison: below it they are withheld.
pub const MIN_DAILY_RETURNS: u64 = 20;
/// The two-sided 95 % quantile of the normal distribution.
const Z_95_TWO_SIDED: f64 = 1.96;
/// The one-sided 95 % quantile, as the minimum track record uses it.
const Z_95_ONE_SIDED: f64 = 1.6449;
/// The Euler–Mascheroni constant.
const EULER_GAMMA: f64 = 0.577_215_664_9;

/// Why a figure is withheld.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Withheld {
    /// Fewer than [`MIN_DAILY_RETURNS`] daily returns.
    #[serde(rename = "fewer than 20 daily returns")]
    TooFewReturns,
    /// Every daily return is the same (zero deviation).
    #[serde(rename = "no variation")]
    NoVariation,
    /// The returns' skewness and kurtosis give the Sharpe no standard
    /// error (the variance term of the formula is not above 0).
    #[serde(rename = "no standard error")]
    NoStandardError,
}

impl Withheld {
    /// The reason in words, as the API gives it.
    pub fn reason(self) -> &'static str {
        match self {
            Withheld::TooFewReturns => "fewer than 20 daily returns",
            Withheld::NoVariation => "no variation",
            Withheld::NoStandardError => "no standard error",
        }
    }
}

/// Why a benchmark comparison is withheld.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum BenchmarkWithheld {
    /// Fewer than [`MIN_DAILY_RETURNS`] days on which both have a return.
    #[serde(rename = "fewer than 20 shared daily returns")]
    TooFewShared,
}

impl BenchmarkWithheld {
    /// The reason in words, as the API gives it.
    pub fn reason(self) -> &'static str {
        match self {
            BenchmarkWithheld::TooFewShared => "fewer than 20 shared daily returns",
        }
    }
}

/// The sample moments of a series of returns, as pandas estimates them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Moments {
    /// How many returns.
    pub n: u64,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation (n − 1).
    pub deviation: f64,
    /// Bias-adjusted skewness (pandas' `skew`); 0 without deviation.
    pub skewness: f64,
    /// Bias-adjusted excess kurtosis + 3 (pandas' `kurt` + 3); 3 without
    /// deviation.
    pub kurtosis: f64,
}

/// The moments of `returns` (two passes, as pandas computes them); `None`
/// below four returns (kurtosis needs four) or when one is not finite.
pub(crate) fn moments(returns: &[f64]) -> Option<Moments> {
    if returns.len() < 4 || returns.iter().any(|r| !r.is_finite()) {
        return None;
    }
    let count = returns.len() as f64;
    let mean = returns.iter().sum::<f64>() / count;
    let (mut m2, mut m3, mut m4) = (0.0, 0.0, 0.0);
    for r in returns {
        let d = r - mean;
        let d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    let deviation = (m2 / (count - 1.0)).sqrt();
    let (skewness, excess) = if m2 > 0.0 {
        let skewness = count * (count - 1.0).sqrt() / (count - 2.0) * (m3 / m2.powf(1.5));
        let adjustment = 3.0 * (count - 1.0).powi(2) / ((count - 2.0) * (count - 3.0));
        let excess = count * (count + 1.0) * (count - 1.0) * m4
            / ((count - 2.0) * (count - 3.0) * m2 * m2)
            - adjustment;
        (skewness, excess)
    } else {
        (0.0, 0.0)
    };
    Some(Moments {
        n: returns.len() as u64,
        mean,
        deviation: finite(deviation)?,
        skewness: finite(skewness)?,
        kurtosis: finite(excess + 3.0)?,
    })
}

/// The sample variance (n − 1) of `values`; `None` below two.
pub(crate) fn sample_variance(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let count = values.len() as f64;
    let mean = values.iter().sum::<f64>() / count;
    finite(values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (count - 1.0))
}

/// Φ, the standard normal distribution function, from libm's `erfc`
/// (correct to the last bits, as scipy's `norm.cdf`).
fn phi(x: f64) -> f64 {
    libm::erfc(-x / std::f64::consts::SQRT_2) / 2.0
}

/// Φ⁻¹, its inverse, for p in (0, 1): statrs' quantile (good to about
/// 1e-10) refined by one Newton step on [`phi`].
fn phi_inverse(p: f64) -> f64 {
    let guess = Normal::standard().inverse_cdf(p);
    let density = (-guess * guess / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    guess - (phi(guess) - p) / density
}

/// What a Sharpe ratio can support: its standard error and interval, the
/// probability that the true Sharpe is above 0, the track record 95 %
/// confidence needs, and the figure deflated for the strategies tried.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SharpeStatistics {
    /// The daily returns behind the figure.
    pub n: u64,
    /// SR: the per-day Sharpe, mean / sample deviation (risk-free 0).
    pub per_day: f64,
    /// γ3: the bias-adjusted skewness of the daily returns (pandas' `skew`).
    pub skewness: f64,
    /// γ4: their bias-adjusted excess kurtosis + 3 (pandas' `kurt` + 3).
    pub kurtosis: f64,
    /// SE = √((1 − γ3·SR + (γ4 − 1)/4·SR²) / (n − 1)), per day.
    pub standard_error: f64,
    /// The 95 % interval of the annualised Sharpe: (SR ± 1.96·SE)·√252.
    pub interval95: [f64; 2],
    /// PSR = Φ(SR / SE): the probability that the true Sharpe is above 0.
    pub psr: f64,
    /// MinTRL = 1 + (1 − γ3·SR + (γ4 − 1)/4·SR²)·(1.6449 / SR)²: the daily
    /// returns 95 % confidence that the Sharpe is above 0 needs; null when
    /// SR ≤ 0 (never, at this Sharpe).
    pub min_track_record: Option<f64>,
    /// n ≥ MinTRL.
    pub enough: bool,
    /// When not `enough`: about how many more trading days the series
    /// needs at its own cadence, ⌈(MinTRL − n) / (n / trading days from
    /// its baseline to its latest valuation)⌉; null otherwise.
    pub more_trading_days: Option<u64>,
    /// DSR = Φ((SR − SR0)·√(n − 1) / √(1 − γ3·SR + (γ4 − 1)/4·SR²)): the
    /// probability that the true Sharpe is above what the best of `trials`
    /// strategies would show by luck; null when fewer than two strategies
    /// were tried or fewer than two of them have a Sharpe in the window.
    pub deflated: Option<f64>,
    /// N: the distinct strategies of the series' mode the ledger holds.
    pub trials: u64,
}

/// 1 − γ3·SR + (γ4 − 1)/4·SR², the variance term every formula shares.
fn variance_term(skewness: f64, kurtosis: f64, per_day: f64) -> f64 {
    1.0 - skewness * per_day + (kurtosis - 1.0) / 4.0 * per_day * per_day
}

/// The Sharpe statistics of `returns` (the daily returns, in order), whose
/// baseline and latest valuation are `span_trading_days` trading days
/// apart; `deflated` is left null and `trials` 1 until [`deflate`].
pub fn sharpe_statistics(
    returns: &[f64],
    span_trading_days: u32,
) -> Result<SharpeStatistics, Withheld> {
    if (returns.len() as u64) < MIN_DAILY_RETURNS {
        return Err(Withheld::TooFewReturns);
    }
    // Equal returns are no variation, whatever rounding leaves in their
    // computed deviation.
    if returns.iter().all(|r| *r == returns[0]) {
        return Err(Withheld::NoVariation);
    }
    let moments = moments(returns).ok_or(Withheld::NoVariation)?;
    if moments.deviation <= 0.0 {
        return Err(Withheld::NoVariation);
    }
    let per_day = finite(moments.mean / moments.deviation).ok_or(Withheld::NoVariation)?;
    let term = variance_term(moments.skewness, moments.kurtosis, per_day);
    let n = moments.n as f64;
    let standard_error = finite((term / (n - 1.0)).sqrt())
        .filter(|se| *se > 0.0)
        .ok_or(Withheld::NoStandardError)?;
    let annual = TRADING_DAYS_PER_YEAR.sqrt();
    let interval = |sign: f64| finite((per_day + sign * Z_95_TWO_SIDED * standard_error) * annual);
    let interval95 = [
        interval(-1.0).ok_or(Withheld::NoStandardError)?,
        interval(1.0).ok_or(Withheld::NoStandardError)?,
    ];
    let psr = finite(phi(per_day / standard_error)).ok_or(Withheld::NoStandardError)?;
    let min_track_record = (per_day > 0.0)
        .then(|| finite(1.0 + term * (Z_95_ONE_SIDED / per_day).powi(2)))
        .flatten();
    let enough = min_track_record.is_some_and(|needed| n >= needed);
    let more_trading_days = match min_track_record {
        Some(needed) if !enough && span_trading_days > 0 => {
            let per_trading_day = n / f64::from(span_trading_days);
            finite(((needed - n) / per_trading_day).ceil())
                .filter(|days| *days < u64::MAX as f64)
                .map(|days| days as u64)
        }
        _ => None,
    };
    Ok(SharpeStatistics {
        n: moments.n,
        per_day,
        skewness: moments.skewness,
        kurtosis: moments.kurtosis,
        standard_error,
        interval95,
        psr,
        min_track_record,
        enough,
        more_trading_days,
        deflated: None,
        trials: 1,
    })
}

/// SR0: the per-day Sharpe the best of `trials` strategies would show by
/// luck when their per-day Sharpes vary by `variance`; `None` below two.
pub fn expected_maximum_sharpe(variance: f64, trials: u64) -> Option<f64> {
    if trials < 2 || variance.is_nan() || variance < 0.0 {
        return None;
    }
    let n = trials as f64;
    let quantiles = (1.0 - EULER_GAMMA) * phi_inverse(1.0 - 1.0 / n)
        + EULER_GAMMA * phi_inverse(1.0 - 1.0 / (n * std::f64::consts::E));
    finite(variance.sqrt() * quantiles)
}

/// Sets the deflated Sharpe of `statistics` for `trials` strategies tried
/// against `sr0`, what the best of them would show by luck
/// ([`expected_maximum_sharpe`], the same for every series of a mode;
/// `None` below two trials or without a variance): the deflated figure
/// stays null without it.
pub fn deflate(statistics: &mut SharpeStatistics, trials: u64, sr0: Option<f64>) {
    statistics.trials = trials;
    statistics.deflated = sr0.and_then(|sr0| {
        let per_day = statistics.per_day;
        let term = variance_term(statistics.skewness, statistics.kurtosis, per_day);
        let n = statistics.n as f64;
        finite(phi((per_day - sr0) * (n - 1.0).sqrt() / term.sqrt()))
    });
}

/// A series against its mode's benchmark over the days both have a daily
/// return.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BenchmarkComparison {
    /// The benchmark's strategy id.
    pub strategy_id: String,
    /// The UTC days on which both have a daily return.
    pub shared: u64,
    /// Why the figures are null: fewer than 20 shared daily returns.
    pub withheld: Option<BenchmarkWithheld>,
    /// Π(1 + r) − Π(1 + b) over the shared days: the series' return less
    /// the benchmark's.
    pub excess_return: Option<f64>,
    /// The annualised sample deviation of the daily differences r − b.
    pub tracking_error: Option<f64>,
    /// mean(r − b) / deviation(r − b) × √252.
    pub information_ratio: Option<f64>,
    /// cov(r, b) / var(b).
    pub beta: Option<f64>,
    /// (mean(r) − beta·mean(b)) × 252, as quantstats' greeks.
    pub alpha: Option<f64>,
    /// Pearson's correlation of r and b.
    pub correlation: Option<f64>,
    /// mean(r) / mean(b) over the shared days the benchmark rose.
    pub up_capture: Option<f64>,
    /// mean(r) / mean(b) over the shared days the benchmark fell.
    pub down_capture: Option<f64>,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values.fold((0.0, 0u64), |(s, c), v| (s + v, c + 1));
    (count > 0).then(|| sum / count as f64).and_then(finite)
}

/// mean of the series' returns / mean of the benchmark's over the shared
/// days `select` picks by the benchmark's return.
fn capture(pairs: &[(f64, f64)], select: impl Fn(f64) -> bool) -> Option<f64> {
    let (ours, theirs) = pairs
        .iter()
        .filter(|(_, b)| select(*b))
        .fold((0.0, 0.0), |(ours, theirs), (r, b)| (ours + r, theirs + b));
    // Over the same days, the ratio of the sums is the ratio of the means.
    (theirs != 0.0).then(|| finite(ours / theirs)).flatten()
}

/// `series` against `benchmark` (each a strategy's daily returns by UTC
/// day, in day order) over the days both have, the benchmark named
/// `benchmark_id`.
pub fn compare_with_benchmark(
    series: &[(DayNumber, f64)],
    benchmark: &[(DayNumber, f64)],
    benchmark_id: &str,
) -> BenchmarkComparison {
    let pairs = shared_days(series, benchmark);
    let mut comparison = BenchmarkComparison {
        strategy_id: benchmark_id.to_owned(),
        shared: pairs.len() as u64,
        withheld: None,
        excess_return: None,
        tracking_error: None,
        information_ratio: None,
        beta: None,
        alpha: None,
        correlation: None,
        up_capture: None,
        down_capture: None,
    };
    if comparison.shared < MIN_DAILY_RETURNS {
        comparison.withheld = Some(BenchmarkWithheld::TooFewShared);
        return comparison;
    }
    let growth =
        |pick: fn(&(f64, f64)) -> f64| pairs.iter().map(|p| 1.0 + pick(p)).product::<f64>();
    comparison.excess_return = finite(growth(|p| p.0) - growth(|p| p.1));
    let differences: Vec<f64> = pairs.iter().map(|(r, b)| r - b).collect();
    let annual = TRADING_DAYS_PER_YEAR.sqrt();
    if let Some(deviation) = sample_variance(&differences).map(f64::sqrt) {
        comparison.tracking_error = finite(deviation * annual);
        if deviation > 0.0 {
            comparison.information_ratio =
                mean(differences.iter().copied()).and_then(|m| finite(m / deviation * annual));
        }
    }
    let (mean_r, mean_b) = (
        mean(pairs.iter().map(|p| p.0)),
        mean(pairs.iter().map(|p| p.1)),
    );
    if let (Some(mean_r), Some(mean_b)) = (mean_r, mean_b) {
        let count = pairs.len() as f64 - 1.0;
        let (mut covariance, mut var_r, mut var_b) = (0.0, 0.0, 0.0);
        for (r, b) in &pairs {
            covariance += (r - mean_r) * (b - mean_b);
            var_r += (r - mean_r).powi(2);
            var_b += (b - mean_b).powi(2);
        }
        let (covariance, var_r, var_b) = (covariance / count, var_r / count, var_b / count);
        if var_b > 0.0 {
            comparison.beta = finite(covariance / var_b);
            comparison.alpha = comparison
                .beta
                .and_then(|beta| finite((mean_r - beta * mean_b) * TRADING_DAYS_PER_YEAR));
            if var_r > 0.0 {
                comparison.correlation = finite(covariance / (var_r.sqrt() * var_b.sqrt()));
            }
        }
    }
    comparison.up_capture = capture(&pairs, |b| b > 0.0);
    comparison.down_capture = capture(&pairs, |b| b < 0.0);
    comparison
}

/// The (series, benchmark) returns of the days both lists hold.
fn shared_days(series: &[(DayNumber, f64)], benchmark: &[(DayNumber, f64)]) -> Vec<(f64, f64)> {
    let mut pairs = Vec::with_capacity(series.len().min(benchmark.len()));
    let mut theirs = benchmark.iter().peekable();
    for (day, r) in series {
        while theirs.next_if(|(d, _)| d < day).is_some() {}
        if let Some((_, b)) = theirs.next_if(|(d, _)| d == day) {
            pairs.push((*r, *b));
        }
    }
    pairs
}

#[cfg(test)]
mod tests;
