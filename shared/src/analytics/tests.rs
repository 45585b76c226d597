use super::reference::*;
use super::*;
use proptest::prelude::*;
use rust_decimal::Decimal;
use std::str::FromStr;

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn dec(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

fn v(when: &str, equity: &str, flow: &str) -> Valuation {
    Valuation {
        at: at(when),
        equity: dec(equity),
        flow: dec(flow),
    }
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

/// Investopedia, "Time-Weighted Rate of Return" (worked example): $1,000,000
/// grows to $1,162,484 by 15 August, when $100,000 is added; the year ends at
/// $1,192,328. Published answer: (1 + 16.25%) × (1 − 5.56%) − 1 = 9.79%.
#[test]
fn investopedia_worked_example_is_9_79_percent() {
    let series = [
        v("2025-12-31T21:00:00Z", "1000000", "0"),
        v("2026-08-15T20:00:00Z", "1262484", "100000"),
        v("2026-12-31T21:00:00Z", "1192328", "0"),
    ];
    let m = metrics(&series);
    assert!(close(m.twr.unwrap(), 0.0979, 0.00005), "{:?}", m.twr);
    assert_eq!(m.pnl, Some(dec("92328")));
    assert_eq!(m.net_flows, Some(dec("100000")));
    assert_eq!(m.intervals, 2);
}

/// mathcelebrity.com, "Time Weighted Rate of Interest" (worked example):
/// 100,000 on 1 January; 112,000 on 1 March, then +30,000; 125,000 on
/// 1 August, then −42,000; 100,000 on 1 January next. Published: 18.78%.
#[test]
fn mathcelebrity_worked_example_is_18_78_percent() {
    let series = [
        v("2025-01-01T00:00:00Z", "100000", "0"),
        v("2025-03-01T00:00:00Z", "142000", "30000"),
        v("2025-08-01T00:00:00Z", "83000", "-42000"),
        v("2026-01-01T00:00:00Z", "100000", "0"),
    ];
    let twr = metrics(&series).twr.unwrap();
    assert!(close(twr, 0.1878, 0.0001), "{twr}");
}

#[test]
fn deposits_are_not_gains() {
    // +1000 deposited, equity up exactly 1000: no return at all.
    let series = [
        v("2026-05-04T20:00:00Z", "1000", "0"),
        v("2026-05-05T20:00:00Z", "2000", "1000"),
    ];
    let m = metrics(&series);
    assert_eq!(m.twr, Some(0.0));
    assert_eq!(m.pnl, Some(Decimal::ZERO));
}

#[test]
fn a_first_interval_fall_is_a_drawdown() {
    let series = [
        v("2026-05-04T20:00:00Z", "100", "0"),
        v("2026-05-05T20:00:00Z", "90", "0"),
        v("2026-05-06T20:00:00Z", "95", "0"),
        v("2026-05-07T20:00:00Z", "110", "0"),
    ];
    let m = metrics(&series);
    assert!(close(m.max_drawdown.unwrap(), -0.10, 1e-12));
    let index: Vec<f64> = m.index.iter().map(|i| i.unwrap()).collect();
    for (got, want) in index.iter().zip([1.0, 0.9, 0.95, 1.1]) {
        assert!(close(*got, want, 1e-12), "{index:?}");
    }
}

#[test]
fn no_fall_is_a_zero_drawdown_and_baseline_only_is_none() {
    let rising = [
        v("2026-05-04T20:00:00Z", "100", "0"),
        v("2026-05-05T20:00:00Z", "101", "0"),
    ];
    assert_eq!(metrics(&rising).max_drawdown, Some(0.0));
    let baseline_only = metrics(&[v("2026-05-04T20:00:00Z", "100", "0")]);
    assert_eq!(baseline_only.twr, None);
    assert_eq!(baseline_only.max_drawdown, None);
    assert_eq!(baseline_only.pnl, None);
    assert_eq!(baseline_only.intervals, 0);
    assert_eq!(baseline_only.index, vec![Some(1.0)]);
}

#[test]
fn intervals_within_a_utc_date_chain_into_one_daily_return() {
    let series = [
        v("2026-05-04T20:00:00Z", "100", "0"),
        v("2026-05-05T10:00:00Z", "110", "0"),
        v("2026-05-05T20:00:00Z", "99", "0"),
        v("2026-05-06T20:00:00Z", "108.9", "0"),
    ];
    let returns = interval_returns(&series).unwrap();
    let daily = daily_returns(&series, &returns);
    assert_eq!(daily.len(), 2);
    assert!(close(daily[0], -0.01, 1e-12), "1.1 × 0.9 − 1");
    assert!(close(daily[1], 0.10, 1e-12));
}

/// Daily returns +1 %, −1 %, +2 % by hand: mean 0.0066667, sample deviation
/// 0.0152753, downside √(0.0001 / 3) = 0.0057735.
#[test]
fn volatility_sharpe_and_sortino_by_hand() {
    let daily = [0.01, -0.01, 0.02];
    assert!(close(
        volatility(&daily).unwrap(),
        0.0152753 * 252f64.sqrt(),
        1e-6
    ));
    assert!(close(
        sharpe(&daily).unwrap(),
        0.0066667 / 0.0152753 * 252f64.sqrt(),
        1e-4
    ));
    assert!(close(
        sortino(&daily).unwrap(),
        0.0066667 / 0.0057735 * 252f64.sqrt(),
        1e-3
    ));
}

#[test]
fn ratios_that_cannot_be_computed_are_none() {
    assert_eq!(volatility(&[0.01]), None, "one day has no deviation");
    assert_eq!(sharpe(&[0.01, 0.01]), None, "zero deviation");
    assert_eq!(
        volatility(&[0.01, 0.01]),
        Some(0.0),
        "a constant series has zero volatility"
    );
    assert_eq!(sortino(&[0.01, 0.02]), None, "no downside");
    assert_eq!(sortino(&[-0.01]), None, "one day");
    assert_eq!(time_weighted_return(&[]), None);
}

#[test]
fn zero_starting_capital_is_zero_return_or_undefined() {
    let funded = [
        v("2026-05-04T20:00:00Z", "0", "0"),
        v("2026-05-05T20:00:00Z", "1000", "1000"),
        v("2026-05-06T20:00:00Z", "1100", "0"),
    ];
    assert!(close(metrics(&funded).twr.unwrap(), 0.10, 1e-12));
    let undefined = [
        v("2026-05-04T20:00:00Z", "0", "0"),
        v("2026-05-05T20:00:00Z", "1000", "0"),
    ];
    let m = metrics(&undefined);
    assert_eq!((m.twr, m.max_drawdown, m.volatility), (None, None, None));
    assert_eq!(m.pnl, Some(dec("1000")));
}

#[test]
fn annualised_return_needs_252_trading_days() {
    assert_eq!(annualized_return(Some(0.2), 251), None);
    assert!(close(
        annualized_return(Some(0.2), 252).unwrap(),
        0.2,
        1e-12
    ));
    assert!(close(
        annualized_return(Some(0.21), 504).unwrap(),
        0.1,
        1e-12
    ));
    // A 63-day window never annualises, however good the return.
    let series = [
        v("2026-02-02T20:00:00Z", "100", "0"),
        v("2026-05-01T20:00:00Z", "150", "0"),
    ];
    assert_eq!(metrics(&series).annualized_return, None);
}

#[test]
fn trading_days_count_weekdays_by_utc_date() {
    let friday = at("2026-05-29T20:00:00Z");
    assert_eq!(window_start(friday, 21), at("2026-04-30T20:00:00Z"));
    assert_eq!(window_start(at("2026-06-01T20:00:00Z"), 1), friday);
    for days in [1, 5, 21, 63, 126, 252] {
        assert_eq!(
            trading_days_between(window_start(friday, days), friday),
            days
        );
    }
    assert!(
        !is_stale(friday, at("2026-06-01T20:00:00Z")),
        "Friday is one trading day before Monday"
    );
    assert!(is_stale(
        at("2026-05-28T20:00:00Z"),
        at("2026-06-01T20:00:00Z")
    ));
}

/// The track-record metrics by hand on one series: 100 → 110 (peak, Mon
/// 4 May) → 99 (Wed 6 May) → 104.5 → 110 (recovered Mon 11 May, 7 calendar
/// days after the peak) → 121 (new peak, Fri 29 May) → 108.9 (Mon 1 June,
/// not recovered: 3 days so far).
#[test]
fn drawdown_durations_months_and_days_by_hand() {
    let series = [
        v("2026-04-30T20:00:00Z", "100", "0"),
        v("2026-05-04T20:00:00Z", "110", "0"),
        v("2026-05-06T20:00:00Z", "99", "0"),
        v("2026-05-08T20:00:00Z", "104.5", "0"),
        v("2026-05-11T20:00:00Z", "110", "0"),
        v("2026-05-29T20:00:00Z", "121", "0"),
        v("2026-06-01T20:00:00Z", "108.9", "0"),
    ];
    let m = metrics(&series);
    assert_eq!(m.longest_drawdown_days, Some(7));
    assert!(close(m.current_drawdown.unwrap(), -0.1, 1e-12));
    assert!(close(m.max_drawdown.unwrap(), -0.1, 1e-12));
    assert!(close(m.best_day.unwrap(), 0.1, 1e-12), "{:?}", m.best_day);
    assert!(close(m.worst_day.unwrap(), -0.1, 1e-12));
    // April holds no interval (only the baseline); May chains 100 → 121;
    // June is 121 → 108.9.
    let months: Vec<(Month, f64)> = m.monthly.iter().map(|(k, r)| (*k, r.unwrap())).collect();
    assert_eq!(months.len(), 2);
    assert_eq!(months[0].0, (2026, 5));
    assert!(close(months[0].1, 0.21, 1e-12));
    assert_eq!(months[1].0, (2026, 6));
    assert!(close(months[1].1, -0.1, 1e-12));
    assert_eq!(m.yearly.len(), 1);
    assert!(close(m.yearly[0].1.unwrap(), 0.089, 1e-12));
    // Under a year of record: no annualised return, so no Calmar.
    assert_eq!((m.annualized_return, m.calmar), (None, None));
    let underwater: Vec<f64> = m.underwater.iter().map(|d| d.unwrap()).collect();
    assert!(close(underwater[2], -0.1, 1e-12) && underwater[4] == 0.0 && underwater[5] == 0.0);
}

#[test]
fn a_series_that_never_falls_has_zero_drawdown_days_and_no_calmar() {
    let series = [
        v("2025-01-01T20:00:00Z", "100", "0"),
        v("2026-06-01T20:00:00Z", "150", "0"),
    ];
    let m = metrics(&series);
    assert_eq!(m.longest_drawdown_days, Some(0));
    assert_eq!(m.current_drawdown, Some(0.0));
    assert!(m.annualized_return.is_some(), "over a year of record");
    assert_eq!(
        m.calmar, None,
        "no drawdown: Calmar is undefined, not infinite"
    );
    let baseline_only = metrics(&series[..1]);
    assert_eq!(
        (
            baseline_only.longest_drawdown_days,
            baseline_only.best_day,
            baseline_only.current_drawdown
        ),
        (None, None, None)
    );
    assert!(baseline_only.monthly.is_empty() && baseline_only.yearly.is_empty());
}

/// Calmar by hand: a year and a half of record (390 trading days from
/// 2025-01-01 to 2026-07-01) growing 100 → 150 with a 20 % fall between.
/// annualised = 1.5^(252/390) − 1; Calmar = that / 0.2.
#[test]
fn calmar_is_the_annualised_return_over_the_drawdown() {
    let series = [
        v("2025-01-01T20:00:00Z", "100", "0"),
        v("2025-06-02T20:00:00Z", "125", "0"),
        v("2025-09-01T20:00:00Z", "100", "0"),
        v("2026-07-01T20:00:00Z", "150", "0"),
    ];
    let d = trading_days_between(at("2025-01-01T20:00:00Z"), at("2026-07-01T20:00:00Z"));
    assert_eq!(d, 390);
    let m = metrics(&series);
    let annualised = 1.5f64.powf(252.0 / 390.0) - 1.0;
    assert!(close(m.annualized_return.unwrap(), annualised, 1e-12));
    let calmar = super::calmar(m.annualized_return, m.max_drawdown);
    assert!(close(calmar.unwrap(), annualised / 0.2, 1e-12));
    // Three daily returns: the dashboard withholds it.
    assert_eq!(
        (m.calmar, m.withheld),
        (None, Some(Withheld::TooFewReturns))
    );
}

/// CFA Institute's GIPS guidance on annualising: a return for a period
/// shorter than a year must not be annualised. Published example
/// (Investopedia, "Compound Annual Growth Rate"): 10 000 growing to 19 500
/// over 3 years is a CAGR of 24.93 %; with 756 trading days (3 × 252) the
/// design's rule gives the same figure.
#[test]
fn cagr_worked_example_is_24_93_percent() {
    assert!(close(
        annualized_return(Some(0.95), 756).unwrap(),
        0.2493,
        0.00005
    ));
    assert_eq!(annualized_return(Some(0.95), 251), None);
}

/// A random, always-positive series: hourly valuations with returns in
/// ±20 % and flows (at most half the equity out, or up to equal in).
fn series_strategy() -> impl Strategy<Value = Vec<Valuation>> {
    (
        100_000i64..100_000_000,
        prop::collection::vec((-2000i64..2000, -5000i64..10000), 1..40),
    )
        .prop_map(|(start_cents, steps)| {
            let base = at("2026-03-02T14:00:00Z");
            let mut equity = Decimal::new(start_cents, 2);
            let mut series = vec![Valuation {
                at: base,
                equity,
                flow: Decimal::ZERO,
            }];
            for (i, (return_bp, flow_bp)) in steps.into_iter().enumerate() {
                let grown = (equity * (Decimal::ONE + Decimal::new(return_bp, 4))).round_dp(2);
                let flow = (grown * Decimal::new(flow_bp, 4)).round_dp(2);
                equity = grown + flow;
                series.push(Valuation {
                    at: base + Duration::hours(5 * (i as i64 + 1)),
                    equity,
                    flow,
                });
            }
            series
        })
}

fn relative_close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
        _ => false,
    }
}

proptest! {
    #[test]
    fn a_deposit_with_a_matching_equity_rise_leaves_twr_unchanged(
        series in series_strategy(), at_fraction in 0.0f64..1.0, deposit_cents in 1i64..10_000_000
    ) {
        let returns = interval_returns(&series).unwrap();
        let i = 1 + ((series.len() - 1) as f64 * at_fraction) as usize % (series.len() - 1);
        let deposit = Decimal::new(deposit_cents, 2);
        let mut with_deposit = series.clone();
        with_deposit[i].flow += deposit;
        // The deposit stays invested: it grows with the strategy's later returns.
        let mut grown = 1.0;
        for j in i..series.len() {
            if j > i {
                grown *= 1.0 + returns[j - 1];
            }
            with_deposit[j].equity += deposit * Decimal::try_from(grown).unwrap();
        }
        let before = time_weighted_return(&returns);
        let after = time_weighted_return(&interval_returns(&with_deposit).unwrap());
        prop_assert!(relative_close(before, after), "{before:?} vs {after:?}");
    }

    #[test]
    fn scaling_equities_and_flows_leaves_every_ratio_unchanged(series in series_strategy(), k in 1u32..1000) {
        let factor = Decimal::new(i64::from(k), 1);
        let scaled: Vec<Valuation> = series
            .iter()
            .map(|v| Valuation { at: v.at, equity: v.equity * factor, flow: v.flow * factor })
            .collect();
        let (a, b) = (metrics(&series), metrics(&scaled));
        prop_assert!(relative_close(a.twr, b.twr));
        prop_assert!(relative_close(a.max_drawdown, b.max_drawdown));
        prop_assert!(relative_close(a.volatility, b.volatility));
        prop_assert!(relative_close(a.sharpe, b.sharpe));
        prop_assert!(relative_close(a.sortino, b.sortino));
        prop_assert_eq!(b.pnl, a.pnl.map(|p| p * factor));
    }

    #[test]
    fn splitting_an_interval_without_a_flow_leaves_twr_unchanged(
        series in series_strategy(), at_fraction in 0.0f64..1.0, mid_bp in -2000i64..2000
    ) {
        let i = 1 + ((series.len() - 1) as f64 * at_fraction) as usize % (series.len() - 1);
        let previous = series[i - 1];
        let mid = Valuation {
            at: previous.at + (series[i].at - previous.at) / 2,
            equity: (previous.equity * (Decimal::ONE + Decimal::new(mid_bp, 4))).round_dp(2),
            flow: Decimal::ZERO,
        };
        let mut split = series.clone();
        split.insert(i, mid);
        let before = time_weighted_return(&interval_returns(&series).unwrap());
        let after = time_weighted_return(&interval_returns(&split).unwrap());
        prop_assert!(relative_close(before, after), "{before:?} vs {after:?}");
    }
}

/// A long random series: gaps from an hour to three weeks (so it crosses
/// days, months and years), returns in ±20 %, and flows.
fn long_series_strategy() -> impl Strategy<Value = Vec<Valuation>> {
    (
        100_000i64..100_000_000,
        prop::collection::vec((1i64..500, -2000i64..2000, -5000i64..10000), 1..300),
    )
        .prop_map(|(start_cents, steps)| {
            let mut at = at("2025-11-20T14:00:00Z");
            let mut equity = Decimal::new(start_cents, 2);
            let mut series = vec![Valuation {
                at,
                equity,
                flow: Decimal::ZERO,
            }];
            for (gap_hours, return_bp, flow_bp) in steps {
                let grown = (equity * (Decimal::ONE + Decimal::new(return_bp, 4))).round_dp(2);
                // A large account withdraws half, so 300 steps stay in range.
                let flow_bp = if grown > Decimal::from(10i64.pow(12)) {
                    -5000
                } else {
                    flow_bp
                };
                let flow = (grown * Decimal::new(flow_bp, 4)).round_dp(2);
                equity = grown + flow;
                at += Duration::hours(gap_hours);
                series.push(Valuation { at, equity, flow });
            }
            series
        })
}

/// A series of any equities the parser accepts, zero and extremes
/// included, so returns may be undefined or not finite.
fn wild_series_strategy() -> impl Strategy<Value = Vec<Valuation>> {
    let amount = prop_oneof![
        Just(Decimal::ZERO),
        Just(Decimal::MAX),
        Just(Decimal::new(1, 28)),
        (-1_000_000i64..1_000_000_000).prop_map(|c| Decimal::new(c, 2)),
    ];
    prop::collection::vec((1i64..2000, amount.clone(), amount), 1..120).prop_map(|points| {
        let mut at = at("2025-12-30T00:00:00Z");
        points
            .into_iter()
            .map(|(gap_hours, equity, flow)| {
                at += Duration::hours(gap_hours);
                Valuation { at, equity, flow }
            })
            .collect()
    })
}

/// The metrics formula by formula, each over the whole series (what
/// `metrics` computed before it became one fold).
fn reference_metrics(series: &[Valuation]) -> Metrics {
    let returns = interval_returns(series).unwrap();
    let twr = time_weighted_return(&returns);
    let index = growth_index(&returns);
    let daily = daily_returns(series, &returns);
    let span = trading_days_between(series[0].at, series[series.len() - 1].at);
    let annualized = annualized_return(twr, span);
    let drawdown = max_drawdown(&index);
    let under = underwater(&index);
    let instants: Vec<DateTime<Utc>> = series.iter().map(|v| v.at).collect();
    let flows: Decimal = series[1..].iter().map(|v| v.flow).sum();
    // The statistics' own formulas are tested in `uncertainty`; here, that
    // the fold withholds the ratios exactly when the whole series does.
    let statistics = super::sharpe_statistics(&daily, span);
    let withheld = statistics.as_ref().err().copied();
    let shown = |ratio: Option<f64>| ratio.filter(|_| withheld.is_none());
    Metrics {
        twr,
        annualized_return: annualized,
        pnl: Some(series[series.len() - 1].equity - series[0].equity - flows),
        net_flows: Some(flows),
        max_drawdown: drawdown,
        volatility: volatility(&daily),
        sharpe: shown(sharpe(&daily)),
        sortino: shown(sortino(&daily)),
        calmar: shown(calmar(annualized, drawdown)),
        withheld,
        sharpe_statistics: statistics.ok(),
        daily_returns: Vec::new(),
        best_day: daily.iter().copied().reduce(f64::max),
        worst_day: daily.iter().copied().reduce(f64::min),
        current_drawdown: under.last().copied(),
        longest_drawdown_days: longest_drawdown_days(&instants, &index),
        intervals: returns.len(),
        monthly: monthly_returns(series, &returns)
            .into_iter()
            .map(|(m, r)| (m, Some(r)))
            .collect(),
        yearly: yearly_returns(series, &returns)
            .into_iter()
            .map(|(y, r)| (y, Some(r)))
            .collect(),
        index: index.into_iter().map(Some).collect(),
        underwater: under.into_iter().map(Some).collect(),
    }
}

fn all_close(a: &[Option<f64>], b: &[Option<f64>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| relative_close(*x, *y))
}

/// A fold over `series[..split]`, stored as JSON and read back, then given
/// the rest.
fn resumed_fold(series: &[Valuation], split: usize) -> (Fold, Vec<Option<Step>>) {
    let mut fold = Fold::default();
    let mut steps: Vec<Option<Step>> = series[..split].iter().map(|v| fold.push(*v)).collect();
    let stored = serde_json::to_string(&fold).unwrap();
    let mut fold: Fold = serde_json::from_str(&stored).unwrap();
    steps.extend(series[split..].iter().map(|v| fold.push(*v)));
    (fold, steps)
}

/// Two metrics bit for bit (NaN never appears: `finite` removes it).
fn same_metrics(a: &Metrics, b: &Metrics) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

proptest! {
    #[test]
    fn the_fold_equals_each_formula_over_the_whole_series(series in long_series_strategy()) {
        let (fold, reference) = (metrics(&series), reference_metrics(&series));
        for (name, a, b) in [
            ("twr", fold.twr, reference.twr),
            ("annualized", fold.annualized_return, reference.annualized_return),
            ("maxDrawdown", fold.max_drawdown, reference.max_drawdown),
            ("volatility", fold.volatility, reference.volatility),
            ("sharpe", fold.sharpe, reference.sharpe),
            ("sortino", fold.sortino, reference.sortino),
            ("calmar", fold.calmar, reference.calmar),
            ("bestDay", fold.best_day, reference.best_day),
            ("worstDay", fold.worst_day, reference.worst_day),
            ("currentDrawdown", fold.current_drawdown, reference.current_drawdown),
        ] {
            prop_assert!(relative_close(a, b), "{name}: {a:?} vs {b:?}");
        }
        prop_assert_eq!(fold.withheld, reference.withheld);
        prop_assert_eq!(fold.sharpe_statistics.is_some(), reference.sharpe_statistics.is_some());
        let daily: Vec<f64> = fold.daily_returns.iter().map(|(_, r)| *r).collect();
        let reference_daily = daily_returns(&series, &interval_returns(&series).unwrap());
        prop_assert!(all_close(
            &daily.iter().copied().map(Some).collect::<Vec<_>>(),
            &reference_daily.iter().copied().map(Some).collect::<Vec<_>>()
        ));
        prop_assert!(fold.daily_returns.windows(2).all(|pair| pair[0].0 < pair[1].0));
        prop_assert_eq!(fold.pnl, reference.pnl);
        prop_assert_eq!(fold.net_flows, reference.net_flows);
        prop_assert_eq!(fold.intervals, reference.intervals);
        prop_assert_eq!(fold.longest_drawdown_days, reference.longest_drawdown_days);
        prop_assert!(all_close(&fold.index, &reference.index));
        prop_assert!(all_close(&fold.underwater, &reference.underwater));
        let keys = |m: &Metrics| m.monthly.iter().map(|(k, _)| *k).collect::<Vec<_>>();
        prop_assert_eq!(keys(&fold), keys(&reference));
        let values = |m: &Metrics| m.monthly.iter().map(|(_, r)| *r).collect::<Vec<_>>();
        prop_assert!(all_close(&values(&fold), &values(&reference)));
        let years = |m: &Metrics| m.yearly.iter().map(|(_, r)| *r).collect::<Vec<_>>();
        prop_assert_eq!(fold.yearly.len(), reference.yearly.len());
        prop_assert!(all_close(&years(&fold), &years(&reference)));
    }

    #[test]
    fn a_stored_fold_resumes_to_the_same_state_as_one_pass(
        series in long_series_strategy(), at_fraction in 0.0f64..=1.0
    ) {
        let split = (series.len() as f64 * at_fraction) as usize;
        let (resumed, steps) = resumed_fold(&series, split);
        let mut whole = Fold::default();
        let whole_steps: Vec<Option<Step>> = series.iter().map(|v| whole.push(*v)).collect();
        prop_assert_eq!(format!("{resumed:?}"), format!("{whole:?}"));
        prop_assert_eq!(format!("{steps:?}"), format!("{whole_steps:?}"));
        prop_assert!(same_metrics(&resumed.metrics(), &whole.metrics()));
    }

    #[test]
    fn any_accepted_series_folds_and_resumes_without_a_panic(
        series in wild_series_strategy(), at_fraction in 0.0f64..=1.0
    ) {
        let split = (series.len() as f64 * at_fraction) as usize;
        let (resumed, _) = resumed_fold(&series, split);
        let mut whole = Fold::default();
        series.iter().for_each(|v| { whole.push(*v); });
        // Bit for bit, NaN and infinities included.
        prop_assert_eq!(serde_json::to_string(&resumed).unwrap(), serde_json::to_string(&whole).unwrap());
        let m = metrics(&series);
        for value in [m.twr, m.max_drawdown, m.volatility, m.sharpe, m.sortino, m.current_drawdown] {
            prop_assert!(value.is_none_or(f64::is_finite));
        }
        prop_assert!(same_metrics(&resumed.metrics(), &whole.metrics()));
    }
}

proptest! {
    /// A fold resumed from the index point after any valuation (what a
    /// series export starts a page from) gives every later valuation the
    /// step one pass over the whole series gives it, bit for bit, NaN and
    /// infinities included.
    #[test]
    fn a_fold_resumed_from_an_index_point_steps_as_one_pass(
        series in prop_oneof![long_series_strategy(), wild_series_strategy()],
        at_fraction in 0.0f64..=1.0
    ) {
        let split = ((series.len() as f64 * at_fraction) as usize).clamp(1, series.len());
        let mut whole = Fold::default();
        let steps: Vec<Option<Step>> = series.iter().map(|v| whole.push(*v)).collect();
        let mut head = Fold::default();
        series[..split].iter().for_each(|v| { head.push(*v); });
        let point = head.index_point().expect("a valuation was taken");
        let stored: IndexPoint = serde_json::from_str(&serde_json::to_string(&point).unwrap()).unwrap();
        let mut resumed = Fold::resuming(&stored);
        let resumed_steps: Vec<Option<Step>> = series[split..].iter().map(|v| resumed.push(*v)).collect();
        prop_assert_eq!(format!("{resumed_steps:?}"), format!("{:?}", &steps[split..]));
        prop_assert_eq!(resumed.returns_defined(), whole.returns_defined());
    }
}

/// `trading_days_between` as first written: one calendar day at a time.
fn trading_days_stepping(from: DateTime<Utc>, to: DateTime<Utc>) -> u32 {
    let mut at = to;
    let mut counted = 0;
    while at - Duration::days(1) >= from {
        at -= Duration::days(1);
        if is_trading_day(at) {
            counted += 1;
        }
    }
    counted
}

proptest! {
    #[test]
    fn trading_days_between_counts_as_stepping_day_by_day(
        from_minutes in 0i64..6_000_000, span_minutes in -20_000i64..3_000_000
    ) {
        let from = at("2020-01-01T00:00:00Z") + Duration::minutes(from_minutes);
        let to = from + Duration::minutes(span_minutes);
        prop_assert_eq!(trading_days_between(from, to), trading_days_stepping(from, to));
    }
}

/// A stored fold whose daily returns are cut short, or name a day out of
/// range, is refused (the roll-up is then rebuilt), never a panic.
#[test]
fn a_damaged_list_of_daily_returns_is_refused() {
    let mut fold = Fold::default();
    for day in 1..=10 {
        fold.push(v(
            &format!("2026-05-{day:02}T20:00:00Z"),
            &format!("{}", 100 + day),
            "0",
        ));
    }
    let stored = serde_json::to_value(&fold).unwrap();
    let text = stored["days"].as_str().unwrap().to_owned();
    assert!(!text.is_empty());
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine.decode(&text).unwrap();
    let damaged = [
        engine.encode(&bytes[..bytes.len() - 3]),
        engine.encode(&bytes[..5]),
        engine.encode([&i32::MAX.to_be_bytes()[..], &2u32.to_be_bytes(), &[0; 16]].concat()),
        engine.encode([&0i32.to_be_bytes()[..], &u32::MAX.to_be_bytes()].concat()),
    ];
    for days in damaged {
        let mut state = stored.clone();
        state["days"] = serde_json::Value::String(days.clone());
        assert!(serde_json::from_value::<Fold>(state).is_err(), "{days}");
    }
    let back: Fold = serde_json::from_value(stored).unwrap();
    assert_eq!(back, fold);
}
