//! Our metrics next to quantstats' (PyPI) on the same daily return series:
//! the same values, and how many times faster.
//!
//! A deterministic series of 1 008 daily returns (four years of weekdays)
//! becomes a ledger-like series of valuations (baseline first); Rust runs the
//! dashboard's `analytics::metrics` on it, and `scripts/compare-quantstats.py`
//! runs `qs.stats.comp / volatility / sharpe / sortino / max_drawdown` on the
//! returns. A second series starts with a 15 % loss, so its deepest drawdown
//! includes the first day (a case some trackers lose; quantstats 0.0.86
//! counts it, and both agree).
//!
//! Run: `cargo bench -p freedom-shared --bench quantstats` (needs
//! `pip install quantstats`; without it, only the Rust side is printed).
#![allow(missing_docs)]

use chrono::{DateTime, Datelike, Duration, Utc, Weekday};
use freedom_shared::analytics::{self, Valuation};
use rust_decimal::Decimal;
use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

const DAYS: usize = 1008;
const REPEATS: u32 = 2000;

fn returns(first: Option<f64>) -> Vec<f64> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut out: Vec<f64> = (0..DAYS)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.48) * 0.03
        })
        .collect();
    if let Some(r) = first {
        out[0] = r;
    }
    out
}

fn weekdays() -> Vec<DateTime<Utc>> {
    let mut at: DateTime<Utc> = "2022-01-03T20:00:00Z".parse().unwrap();
    let mut days = Vec::with_capacity(DAYS + 1);
    while days.len() <= DAYS {
        if !matches!(at.weekday(), Weekday::Sat | Weekday::Sun) {
            days.push(at);
        }
        at += Duration::days(1);
    }
    days
}

/// Valuations whose interval returns are `returns` (equity to 12 decimals).
fn valuations(returns: &[f64], days: &[DateTime<Utc>]) -> Vec<Valuation> {
    let mut equity = 10_000.0f64;
    let mut out = vec![Valuation {
        at: days[0],
        equity: Decimal::new(10_000, 0),
        flow: Decimal::ZERO,
    }];
    for (r, at) in returns.iter().zip(&days[1..]) {
        equity *= 1.0 + r;
        let exact = Decimal::from_f64_retain(equity).unwrap().round_dp(12);
        out.push(Valuation {
            at: *at,
            equity: exact,
            flow: Decimal::ZERO,
        });
    }
    out
}

fn quantstats(returns: &[f64], days: &[DateTime<Utc>]) -> Option<serde_json::Value> {
    let file = std::env::temp_dir().join(format!("ff-quantstats-{}.json", std::process::id()));
    let dates: Vec<String> = days[1..]
        .iter()
        .map(|d| d.format("%Y-%m-%d").to_string())
        .collect();
    std::fs::write(
        &file,
        serde_json::json!({"dates": dates, "returns": returns}).to_string(),
    )
    .ok()?;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/compare-quantstats.py"
    );
    let output = Command::new("python3")
        .arg(script)
        .arg(&file)
        .arg((REPEATS / 10).to_string())
        .output()
        .ok()?;
    std::fs::remove_file(&file).ok();
    if !output.status.success() {
        eprintln!(
            "quantstats unavailable: {}",
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return None;
    }
    serde_json::from_slice(&output.stdout).ok()
}

fn main() {
    // `cargo test --benches` runs bench binaries with --test: stay quick there.
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let days = weekdays();
    for (label, series) in [
        ("random walk", returns(None)),
        ("first day −15 %", returns(Some(-0.15))),
    ] {
        let valuations = valuations(&series, &days);
        let metrics = analytics::metrics(&valuations);
        let started = Instant::now();
        for _ in 0..REPEATS {
            black_box(analytics::metrics(black_box(&valuations)));
        }
        let rust_seconds = started.elapsed().as_secs_f64() / f64::from(REPEATS);
        println!(
            "\n{label}: {DAYS} daily returns; Rust analytics::metrics (all metrics at once) {:.1} µs",
            rust_seconds * 1e6
        );
        let ours = [
            ("twr", metrics.twr),
            ("volatility", metrics.volatility),
            ("sharpe", metrics.sharpe),
            ("sortino", metrics.sortino),
            ("maxDrawdown", metrics.max_drawdown),
        ];
        let Some(qs) = quantstats(&series, &days) else {
            for (name, value) in ours {
                println!("  {name:<12} {value:?}");
            }
            continue;
        };
        println!(
            "  {:<12} {:>22} {:>22} {:>12} {:>14}",
            "metric", "ours", "quantstats", "|diff|", "qs µs/call"
        );
        let mut qs_total = 0.0;
        for (name, value) in ours {
            let theirs = qs[name]["value"].as_f64().unwrap_or(f64::NAN);
            let seconds = qs[name]["seconds"].as_f64().unwrap_or(f64::NAN);
            qs_total += seconds;
            let ours = value.unwrap_or(f64::NAN);
            println!(
                "  {name:<12} {ours:>22.15} {theirs:>22.15} {:>12.1e} {:>14.1}",
                (ours - theirs).abs(),
                seconds * 1e6
            );
        }
        println!(
            "  quantstats {} total {:.1} µs for the five calls: Rust is {:.0}× faster",
            qs["quantstats"].as_str().unwrap_or("?"),
            qs_total * 1e6,
            qs_total / rust_seconds
        );
    }
}
