//! The figures that set a series beside the others of its mode: the
//! deflated Sharpe (luck among the N strategies of the mode the ledger has
//! ever held) and the comparison with the mode's benchmark.

use super::view::StrategyView;
use crate::analytics::{
    self, compare_with_benchmark, deflate, expected_maximum_sharpe, sample_variance,
};
use crate::config::{Benchmarks, ConfigError, DEFAULT_PAPER_BENCHMARK};
use crate::ports::ledger_store::{SeriesReads, StoreError};
use crate::record::{Mode, Record, StrategyId};

/// Why the benchmarks could not be checked at start-up.
#[derive(Debug, thiserror::Error)]
pub enum BenchmarkCheckError {
    /// A benchmark names no series ([`ConfigError::UnknownBenchmark`]).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Refuses a configured benchmark the ledger in `store` has no series of
/// in its mode (a start-up check: the ledger only grows, so one found
/// stays found).
pub async fn check_benchmarks(
    benchmarks: &Benchmarks,
    store: &dyn SeriesReads,
) -> Result<(), BenchmarkCheckError> {
    let wanted: Vec<(Mode, &StrategyId)> = [Mode::Live, Mode::Paper]
        .into_iter()
        .filter_map(|mode| benchmarks.configured(mode).map(|id| (mode, id)))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let latest = store.latest_snapshots().await?;
    let held: Vec<(Mode, StrategyId)> = latest
        .entries
        .iter()
        .filter_map(|entry| Record::from_canonical(&entry.canonical).ok())
        .map(|record| (record.header().mode, record.header().strategy_id.clone()))
        .collect();
    for (mode, id) in wanted {
        if !held.iter().any(|(m, held_id)| *m == mode && held_id == id) {
            return Err(ConfigError::UnknownBenchmark {
                variable: Benchmarks::variable(mode),
                strategy: id.to_string(),
                mode: mode.as_str(),
            }
            .into());
        }
    }
    Ok(())
}

/// `mode`'s benchmark among `series` (every series of the ledger): its
/// position, when the ledger holds the strategy `benchmarks` wants.
fn find_benchmark(benchmarks: &Benchmarks, mode: Mode, series: &[StrategyView]) -> Option<usize> {
    let id = benchmarks.wanted(mode)?;
    series
        .iter()
        .position(|s| s.mode == mode && s.strategy_id == id)
}

/// Completes each series' figures against the others of its mode, in
/// place: the Sharpe deflated for N = the series of the mode (every
/// strategy of that mode the ledger holds, retired ones included) and V =
/// the sample variance of the per-day Sharpes shown among them; and, for
/// every series but the benchmark, the comparison with the mode's
/// benchmark. `daily_returns[i]` are `strategies[i]`'s.
pub(super) fn compare_within_modes(
    strategies: &mut [StrategyView],
    daily_returns: &[Vec<(analytics::DayNumber, f64)>],
    benchmarks: &Benchmarks,
) {
    for mode in [Mode::Live, Mode::Paper] {
        let members: Vec<usize> = (0..strategies.len())
            .filter(|&i| strategies[i].mode == mode)
            .collect();
        let trials = members.len() as u64;
        let sharpes: Vec<f64> = members
            .iter()
            .filter_map(|&i| strategies[i].metrics.sharpe_stats.as_ref())
            .map(|stats| stats.per_day)
            .collect();
        // What the best of them would show by luck: once per mode.
        let sr0 = sample_variance(&sharpes)
            .and_then(|variance| expected_maximum_sharpe(variance, trials));
        for &i in &members {
            if let Some(stats) = strategies[i].metrics.sharpe_stats.as_mut() {
                deflate(stats, trials, sr0);
            }
        }
        let Some(benchmark) = find_benchmark(benchmarks, mode, strategies) else {
            continue;
        };
        let benchmark_id = strategies[benchmark].strategy_id.clone();
        for &i in members.iter().filter(|&&i| i != benchmark) {
            strategies[i].metrics.benchmark = Some(compare_with_benchmark(
                &daily_returns[i],
                &daily_returns[benchmark],
                &benchmark_id,
            ));
        }
    }
}

/// What the contract says of the benchmarks: the configured ones and the
/// paper default.
pub fn describe(benchmarks: &Benchmarks) -> serde_json::Value {
    serde_json::json!({
        "live": benchmarks.live.as_ref().map(StrategyId::as_str),
        "paper": benchmarks.paper.as_ref().map(StrategyId::as_str),
        "paperDefault": DEFAULT_PAPER_BENCHMARK,
        "minSharedDailyReturns": analytics::MIN_DAILY_RETURNS,
    })
}
