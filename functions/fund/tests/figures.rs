//! What the figures can support, through the router: the deflated Sharpe
//! of the best of nine noise strategies, its trials against the ledger
//! view's count, the benchmark comparison, the withheld figures, and a
//! benchmark naming no series refused.

mod support;

use axum::http::StatusCode;
use freedom_shared::config::{Benchmarks, ConfigError};
use freedom_shared::record::StrategyId;
use freedom_shared::service::{BenchmarkCheckError, check_benchmarks};
use serde_json::Value;
use std::collections::BTreeSet;
use support::{App, snapshot, strategy, weekdays};

/// A paper series of weekday closes ending Friday 2026-05-29, one per
/// return, written through `app`.
async fn series(app: &App, strategy: &str, returns: &[f64]) {
    let days = weekdays(returns.len() + 1);
    let mut equity = 10_000.0f64;
    for (i, at) in days.iter().enumerate() {
        if i > 0 {
            equity = (equity * (1.0 + returns[i - 1]) * 1e6).round() / 1e6;
        }
        app.post(snapshot(strategy, "paper", *at, equity, 0.0))
            .await;
    }
}

/// Seeded normal draws (a linear congruential generator through
/// Box–Muller) with mean 0 and deviation `scale`.
fn noise(seed: u64, count: usize, scale: f64) -> Vec<f64> {
    let mut state = seed
        .wrapping_mul(2_862_933_555_777_941_757)
        .wrapping_add(3_037_000_493);
    let mut uniform = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..count)
        .map(|_| {
            scale * (-2.0 * uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * uniform()).cos()
        })
        .collect()
}

/// The distinct paper strategies a reader finds in the ledger view.
async fn paper_strategies_in_the_ledger(app: &App) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut before: Option<u64> = None;
    loop {
        let query = match before {
            Some(before) => {
                format!("?view=ledger&type=snapshot&mode=paper&limit=200&before={before}")
            }
            None => "?view=ledger&type=snapshot&mode=paper&limit=200".to_owned(),
        };
        let page = app.get(&query).await;
        for entry in page["entries"].as_array().unwrap() {
            found.insert(entry["record"]["strategyId"].as_str().unwrap().to_owned());
        }
        match page["next"].as_u64() {
            Some(next) => before = Some(next),
            None => return found,
        }
    }
}

#[tokio::test]
async fn the_best_of_nine_noise_strategies_is_deflated_and_compared_with_the_benchmark() {
    let app = App::with_benchmarks(Benchmarks {
        live: None,
        paper: StrategyId::parse("bench"),
    });
    let benchmark = noise(1, 60, 0.02);
    series(&app, "bench", &benchmark).await;
    for k in 0..9u64 {
        let returns: Vec<f64> = noise(10 + k, 60, 0.01)
            .iter()
            .zip(&benchmark)
            .map(|(r, b)| r + 0.25 * b)
            .collect();
        series(&app, &format!("noise-{k}"), &returns).await;
    }
    let listed = paper_strategies_in_the_ledger(&app).await;
    assert_eq!(listed.len(), 10);
    for period in ["all", "63"] {
        let dashboard = app.get(&format!("?period={period}")).await;
        let mut best: Option<&Value> = None;
        for id in &listed {
            let metrics = &strategy(&dashboard, id)["metrics"];
            let stats = &metrics["sharpeStats"];
            assert_eq!(
                stats["trials"],
                listed.len(),
                "{id}: N is the ledger's count"
            );
            assert_eq!(stats["n"], 60, "{id}");
            assert!(metrics["withheld"].is_null());
            let [low, high] =
                [&stats["interval95"][0], &stats["interval95"][1]].map(|v| v.as_f64().unwrap());
            let sharpe = metrics["sharpe"].as_f64().unwrap();
            assert!(
                low < sharpe && sharpe < high,
                "{id}: {low} < {sharpe} < {high}"
            );
            if id == "bench" {
                assert!(metrics["benchmark"].is_null(), "not compared with itself");
                continue;
            }
            let comparison = &metrics["benchmark"];
            assert_eq!(comparison["strategyId"], "bench");
            assert_eq!(comparison["shared"], 60);
            assert!(comparison["withheld"].is_null());
            let beta = comparison["beta"].as_f64().unwrap();
            assert!((0.1..0.5).contains(&beta), "{id}: beta {beta} near 0.25");
            if best.is_none_or(|b| stats["perDay"].as_f64() > b["perDay"].as_f64()) {
                best = Some(stats);
            }
        }
        let best = best.unwrap();
        let (psr, deflated) = (
            best["psr"].as_f64().unwrap(),
            best["deflated"].as_f64().unwrap(),
        );
        assert!(
            deflated < psr - 0.1,
            "period {period}: deflated {deflated} vs psr {psr}"
        );
    }
    let contract = app.get("?view=contract").await;
    assert_eq!(contract["benchmarks"]["paper"], "bench");
    assert_eq!(contract["benchmarks"]["live"], Value::Null);
    assert_eq!(
        contract["benchmarks"]["paperDefault"],
        "scanner-hold-sol-v3"
    );
    let (status, page) = app.fetch("/").await;
    let page = String::from_utf8(page).unwrap();
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("Probability the Sharpe is above 0"));
    assert!(page.contains("Allowing for 10 paper strategies tried"));
    assert!(
        page.contains("Against <bdi>bench</bdi> (60 shared days)"),
        "the benchmark table"
    );
}

#[tokio::test]
async fn few_or_flat_returns_are_withheld_with_the_reason() {
    let app = App::with_benchmarks(Benchmarks::default());
    series(&app, "short", &noise(3, 19, 0.01)).await;
    series(&app, "flat", &[0.0; 40]).await;
    series(&app, "enough", &noise(4, 20, 0.01)).await;
    let dashboard = app.get("?period=all").await;
    for (id, reason, days) in [
        ("short", "fewer than 20 daily returns", 19),
        ("flat", "no variation", 40),
    ] {
        let metrics = &strategy(&dashboard, id)["metrics"];
        assert_eq!(metrics["withheld"], reason, "{id}");
        assert_eq!(metrics["dailyReturns"], days, "{id}");
        for field in ["sharpe", "sortino", "calmar", "sharpeStats", "benchmark"] {
            assert!(metrics[field].is_null(), "{id}: {field} is null");
        }
        assert!(
            metrics["volatility"].is_number(),
            "{id}: volatility keeps its rule"
        );
    }
    let enough = &strategy(&dashboard, "enough")["metrics"];
    assert!(enough["withheld"].is_null());
    assert_eq!(enough["sharpeStats"]["trials"], 3);
    // One strategy of three has statistics: no variance to deflate with.
    assert!(enough["sharpeStats"]["deflated"].is_null());
    let (_, page) = app.fetch("/").await;
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("withheld: fewer than 20 daily returns"));
    assert!(page.contains("withheld: no variation"));
}

#[tokio::test]
async fn the_paper_default_benchmark_applies_once_the_ledger_holds_it() {
    let app = App::with_benchmarks(Benchmarks::default());
    series(&app, "momentum", &noise(5, 30, 0.01)).await;
    let dashboard = app.get("?period=all").await;
    assert!(strategy(&dashboard, "momentum")["metrics"]["benchmark"].is_null());
    series(&app, "scanner-hold-sol-v3", &noise(6, 30, 0.02)).await;
    let dashboard = app.get("?period=all").await;
    let comparison = &strategy(&dashboard, "momentum")["metrics"]["benchmark"];
    assert_eq!(comparison["strategyId"], "scanner-hold-sol-v3");
    assert_eq!(comparison["shared"], 30);
}

#[tokio::test]
async fn a_benchmark_naming_no_series_of_its_mode_is_refused_naming_the_variable() {
    let app = App::with_benchmarks(Benchmarks::default());
    series(&app, "bench", &noise(7, 5, 0.01)).await;
    let paper = Benchmarks {
        live: None,
        paper: StrategyId::parse("bench"),
    };
    check_benchmarks(&paper, app.store.as_ref()).await.unwrap();
    // A paper series is not a live benchmark.
    let live = Benchmarks {
        live: StrategyId::parse("bench"),
        paper: None,
    };
    match check_benchmarks(&live, app.store.as_ref()).await {
        Err(BenchmarkCheckError::Config(unknown)) => {
            assert!(matches!(
                &unknown,
                ConfigError::UnknownBenchmark {
                    variable: "FF_BENCHMARK_LIVE",
                    ..
                }
            ));
            assert!(
                unknown
                    .to_string()
                    .contains("FF_BENCHMARK_LIVE names bench")
            );
        }
        other => panic!("{other:?}"),
    }
    let bad = freedom_shared::config::benchmarks(|name: &str| {
        (name == "FF_BENCHMARK_PAPER").then(|| "no spaces allowed".to_owned())
    });
    assert_eq!(
        bad.unwrap_err(),
        ConfigError::BadBenchmark {
            variable: "FF_BENCHMARK_PAPER"
        }
    );
}
