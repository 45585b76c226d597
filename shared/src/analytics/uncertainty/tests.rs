//! The statistics against the same formulas written another way: skewness
//! and kurtosis from the population moments with the textbook's sample
//! adjustments, Φ from tabled values.

use super::*;

fn close(a: f64, b: f64, relative: f64) -> bool {
    (a - b).abs() <= relative * a.abs().max(b.abs()).max(1e-300)
}

/// Seeded returns: a linear congruential generator through Box–Muller,
/// and a fat-tailed kind (a normal scaled by a random regime).
fn returns(seed: u64, count: usize, fat_tailed: bool) -> Vec<f64> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut uniform = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..count)
        .map(|_| {
            let z = (-2.0 * uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * uniform()).cos();
            let scale = if fat_tailed && uniform() < 0.1 {
                5.0
            } else {
                1.0
            };
            0.002 + 0.01 * scale * z
        })
        .collect()
}

/// g1 and g2 from population moments, then G1 = g1·√(n(n−1))/(n−2) and
/// G2 = ((n+1)·g2 + 6)·(n−1)/((n−2)(n−3)).
fn textbook(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let moment = |k: i32| values.iter().map(|v| (v - mean).powi(k)).sum::<f64>() / n;
    let (m2, m3, m4) = (moment(2), moment(3), moment(4));
    let g1 = m3 / m2.powf(1.5);
    let g2 = m4 / (m2 * m2) - 3.0;
    let skew = g1 * (n * (n - 1.0)).sqrt() / (n - 2.0);
    let excess = ((n + 1.0) * g2 + 6.0) * (n - 1.0) / ((n - 2.0) * (n - 3.0));
    (skew, excess + 3.0)
}

#[test]
fn skewness_and_kurtosis_are_pandas_estimators() {
    for (seed, count, fat) in [
        (1, 20, false),
        (2, 63, true),
        (3, 252, false),
        (4, 1000, true),
    ] {
        let values = returns(seed, count, fat);
        let m = moments(&values).unwrap();
        let (skew, kurtosis) = textbook(&values);
        assert!(close(m.skewness, skew, 1e-9), "{} vs {skew}", m.skewness);
        assert!(
            close(m.kurtosis, kurtosis, 1e-9),
            "{} vs {kurtosis}",
            m.kurtosis
        );
    }
}

#[test]
fn the_statistics_follow_the_formulas() {
    let values: Vec<f64> = returns(7, 120, true).iter().map(|r| r + 0.01).collect();
    let stats = sharpe_statistics(&values, 120).unwrap();
    assert!(stats.per_day > 0.0);
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let sr = mean / sd;
    let (g3, g4) = textbook(&values);
    let term = 1.0 - g3 * sr + (g4 - 1.0) / 4.0 * sr * sr;
    let se = (term / (n - 1.0)).sqrt();
    assert!(close(stats.per_day, sr, 1e-12));
    assert!(close(stats.standard_error, se, 1e-9));
    assert!(close(
        stats.interval95[0],
        (sr - 1.96 * se) * 252f64.sqrt(),
        1e-9
    ));
    assert!(close(
        stats.interval95[1],
        (sr + 1.96 * se) * 252f64.sqrt(),
        1e-9
    ));
    assert!(close(stats.psr, phi(sr / se), 1e-12));
    let needed = 1.0 + term * (1.6449 / sr).powi(2);
    assert!(close(stats.min_track_record.unwrap(), needed, 1e-9));
    assert_eq!(stats.enough, n >= needed);
    assert_eq!(stats.trials, 1);
    assert_eq!(stats.deflated, None);
}

#[test]
fn phi_and_its_inverse_match_tabled_values() {
    for (x, p) in [
        (0.0, 0.5),
        (1.0, 0.841_344_746_068_542_9),
        (-1.96, 0.024_997_895_148_220_43),
        (3.0, 0.998_650_101_968_369_9),
    ] {
        assert!(close(phi(x), p, 1e-12), "Φ({x})");
        assert!((phi_inverse(p) - x).abs() < 1e-9, "Φ⁻¹({p})");
    }
}

#[test]
fn figures_are_withheld_below_twenty_returns_and_without_variation() {
    let values = returns(9, 19, false);
    assert_eq!(sharpe_statistics(&values, 19), Err(Withheld::TooFewReturns));
    assert_eq!(
        sharpe_statistics(&[0.001; 40], 40),
        Err(Withheld::NoVariation)
    );
    assert_eq!(
        sharpe_statistics(&[0.0; 40], 40),
        Err(Withheld::NoVariation)
    );
    assert!(sharpe_statistics(&returns(9, 20, false), 20).is_ok());
    assert_eq!(
        Withheld::TooFewReturns.reason(),
        "fewer than 20 daily returns"
    );
    assert_eq!(
        serde_json::to_value(Withheld::NoVariation).unwrap(),
        "no variation"
    );
}

#[test]
fn a_losing_record_never_has_enough_history() {
    let values: Vec<f64> = returns(11, 60, false).iter().map(|r| r - 0.02).collect();
    let stats = sharpe_statistics(&values, 60).unwrap();
    assert!(stats.per_day < 0.0);
    assert_eq!(stats.min_track_record, None);
    assert!(!stats.enough);
    assert_eq!(stats.more_trading_days, None);
    assert!(stats.psr < 0.5);
}

#[test]
fn more_trading_days_count_at_the_series_cadence() {
    // Seven returns a week: the span in trading days is 5/7 of the count.
    let values = returns(13, 35, false);
    let stats = sharpe_statistics(&values, 25).unwrap();
    if let Some(needed) = stats.min_track_record.filter(|_| !stats.enough) {
        let expected = ((needed - 35.0) / (35.0 / 25.0)).ceil() as u64;
        assert_eq!(stats.more_trading_days, Some(expected));
    }
}

#[test]
fn deflation_lowers_the_best_of_many_and_needs_two_trials() {
    let series: Vec<Vec<f64>> = (0..9).map(|s| returns(100 + s, 60, false)).collect();
    let mut stats: Vec<SharpeStatistics> = series
        .iter()
        .map(|r| sharpe_statistics(r, 60).unwrap())
        .collect();
    let variance = sample_variance(&stats.iter().map(|s| s.per_day).collect::<Vec<_>>());
    let sr0 = expected_maximum_sharpe(variance.unwrap(), 9);
    for s in &mut stats {
        deflate(s, 9, sr0);
    }
    let best = stats
        .iter()
        .max_by(|a, b| a.per_day.total_cmp(&b.per_day))
        .unwrap();
    let deflated = best.deflated.unwrap();
    assert!(deflated < best.psr - 0.1, "{deflated} vs {}", best.psr);
    let sr0 = sr0.unwrap();
    let term = 1.0 - best.skewness * best.per_day
        + (best.kurtosis - 1.0) / 4.0 * best.per_day * best.per_day;
    let by_hand = phi((best.per_day - sr0) * 59f64.sqrt() / term.sqrt());
    assert!(close(deflated, by_hand, 1e-12));

    let mut alone = stats[0].clone();
    assert_eq!(
        expected_maximum_sharpe(variance.unwrap(), 1),
        None,
        "one trial"
    );
    deflate(&mut alone, 1, None);
    assert_eq!((alone.deflated, alone.trials), (None, 1));
    deflate(&mut alone, 9, None);
    assert_eq!((alone.deflated, alone.trials), (None, 9));
}

#[test]
fn the_benchmark_comparison_follows_its_formulas() {
    let day = |i: i32| 739_617 + i;
    let theirs = returns(21, 60, false);
    let ours: Vec<f64> = returns(22, 60, true)
        .iter()
        .zip(&theirs)
        .map(|(noise, b)| 0.5 * noise + 1.2 * b)
        .collect();
    // The benchmark misses day 3; the series misses day 10.
    let benchmark: Vec<(DayNumber, f64)> = (0..60)
        .filter(|i| *i != 3)
        .map(|i| (day(i), theirs[i as usize]))
        .collect();
    let series: Vec<(DayNumber, f64)> = (0..60)
        .filter(|i| *i != 10)
        .map(|i| (day(i), ours[i as usize]))
        .collect();
    let c = compare_with_benchmark(&series, &benchmark, "hold");
    assert_eq!(
        (c.shared, c.withheld, c.strategy_id.as_str()),
        (58, None, "hold")
    );
    let pairs: Vec<(f64, f64)> = (0..60usize)
        .filter(|i| *i != 3 && *i != 10)
        .map(|i| (ours[i], theirs[i]))
        .collect();
    let n = pairs.len() as f64;
    let mr = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let mb = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let cov = pairs.iter().map(|(r, b)| (r - mr) * (b - mb)).sum::<f64>() / (n - 1.0);
    let vr = pairs.iter().map(|(r, _)| (r - mr).powi(2)).sum::<f64>() / (n - 1.0);
    let vb = pairs.iter().map(|(_, b)| (b - mb).powi(2)).sum::<f64>() / (n - 1.0);
    let beta = cov / vb;
    assert!(close(c.beta.unwrap(), beta, 1e-9));
    assert!(close(c.alpha.unwrap(), (mr - beta * mb) * 252.0, 1e-9));
    assert!(close(c.correlation.unwrap(), cov / (vr * vb).sqrt(), 1e-9));
    let d: Vec<f64> = pairs.iter().map(|(r, b)| r - b).collect();
    let md = d.iter().sum::<f64>() / n;
    let sd = (d.iter().map(|x| (x - md).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert!(close(c.tracking_error.unwrap(), sd * 252f64.sqrt(), 1e-9));
    assert!(close(
        c.information_ratio.unwrap(),
        md / sd * 252f64.sqrt(),
        1e-9
    ));
    let growth = |f: fn(&(f64, f64)) -> f64| pairs.iter().map(|p| 1.0 + f(p)).product::<f64>();
    assert!(close(
        c.excess_return.unwrap(),
        growth(|p| p.0) - growth(|p| p.1),
        1e-12
    ));
    let up: Vec<&(f64, f64)> = pairs.iter().filter(|p| p.1 > 0.0).collect();
    let up_capture = up.iter().map(|p| p.0).sum::<f64>() / up.iter().map(|p| p.1).sum::<f64>();
    assert!(close(c.up_capture.unwrap(), up_capture, 1e-9));
    assert!(c.down_capture.is_some());
}

#[test]
fn a_short_or_flat_benchmark_gives_no_figures() {
    let day = |i: i32| 739_617 + i;
    let series: Vec<(DayNumber, f64)> = (0..30).map(|i| (day(i), 0.001 * (i % 3) as f64)).collect();
    let short: Vec<(DayNumber, f64)> = (0..19).map(|i| (day(i), 0.002)).collect();
    let c = compare_with_benchmark(&series, &short, "hold");
    assert_eq!(
        (c.shared, c.withheld),
        (19, Some(BenchmarkWithheld::TooFewShared))
    );
    assert_eq!(
        (c.beta, c.excess_return, c.information_ratio),
        (None, None, None)
    );
    let flat: Vec<(DayNumber, f64)> = (0..30).map(|i| (day(i), 0.0)).collect();
    let c = compare_with_benchmark(&series, &flat, "cash");
    assert_eq!(c.withheld, None);
    assert_eq!((c.beta, c.alpha, c.correlation), (None, None, None));
    assert_eq!((c.up_capture, c.down_capture), (None, None));
    assert!(c.excess_return.is_some() && c.information_ratio.is_some());
}
