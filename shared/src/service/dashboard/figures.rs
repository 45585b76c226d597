//! The figures that set a series beside the others of its mode: the
//! deflated Sharpe (luck among the N strategies of the mode the ledger has
//! ever held) and the comparison with the mode's benchmark.

use super::view::StrategyView;
use crate::analytics::{self, compare_with_benchmark, deflate, sample_variance};
use crate::ports::ledger_store::{SeriesReads, StoreError};
use crate::record::{Mode, Record, StrategyId};

/// The paper benchmark when `FF_BENCHMARK_PAPER` is not set: the scanner's
/// experiment that holds SOL, once the ledger has its series.
pub const DEFAULT_PAPER_BENCHMARK: &str = "scanner-hold-sol-v3";

/// The strategy each mode is compared with (`FF_BENCHMARK_LIVE`,
/// `FF_BENCHMARK_PAPER`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Benchmarks {
    /// The live benchmark, when configured.
    pub live: Option<StrategyId>,
    /// The paper benchmark, when configured (else
    /// [`DEFAULT_PAPER_BENCHMARK`] once the ledger holds it).
    pub paper: Option<StrategyId>,
}

/// A configured benchmark the ledger has no series of.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{variable} names {strategy}, which has no {mode} series in the ledger")]
pub struct UnknownBenchmark {
    /// The variable that names it.
    pub variable: &'static str,
    /// The strategy it names.
    pub strategy: String,
    /// The mode it is the benchmark of.
    pub mode: &'static str,
}

/// Why the benchmarks could not be checked at start-up.
#[derive(Debug, thiserror::Error)]
pub enum BenchmarkCheckError {
    /// A benchmark names no series.
    #[error(transparent)]
    Unknown(#[from] UnknownBenchmark),
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Benchmarks {
    /// The variable that configures `mode`'s benchmark.
    pub fn variable(mode: Mode) -> &'static str {
        match mode {
            Mode::Live => "FF_BENCHMARK_LIVE",
            Mode::Paper => "FF_BENCHMARK_PAPER",
        }
    }

    /// The benchmark configured for `mode`.
    pub fn configured(&self, mode: Mode) -> Option<&StrategyId> {
        match mode {
            Mode::Live => self.live.as_ref(),
            Mode::Paper => self.paper.as_ref(),
        }
    }

    /// `mode`'s benchmark among `series` (every series of the ledger): the
    /// configured one, else for paper [`DEFAULT_PAPER_BENCHMARK`] when it
    /// is there; its position in `series`.
    fn find(&self, mode: Mode, series: &[StrategyView]) -> Option<usize> {
        let id = match self.configured(mode) {
            Some(id) => id.as_str(),
            None if mode == Mode::Paper => DEFAULT_PAPER_BENCHMARK,
            None => return None,
        };
        series
            .iter()
            .position(|s| s.mode == mode && s.strategy_id == id)
    }

    /// Refuses a configured benchmark the ledger in `store` has no series
    /// of in its mode (a start-up check: the ledger only grows, so one
    /// found stays found).
    pub async fn check(&self, store: &dyn SeriesReads) -> Result<(), BenchmarkCheckError> {
        let wanted: Vec<(Mode, &StrategyId)> = [Mode::Live, Mode::Paper]
            .into_iter()
            .filter_map(|mode| self.configured(mode).map(|id| (mode, id)))
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
                return Err(UnknownBenchmark {
                    variable: Benchmarks::variable(mode),
                    strategy: id.to_string(),
                    mode: mode.as_str(),
                }
                .into());
            }
        }
        Ok(())
    }
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
        let variance = sample_variance(&sharpes);
        for &i in &members {
            if let Some(stats) = strategies[i].metrics.sharpe_stats.as_mut() {
                deflate(stats, trials, variance);
            }
        }
        let Some(benchmark) = benchmarks.find(mode, strategies) else {
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
