//! A scanner run over 200 tokens with every provider answering after 100 ms
//! (the stand-in), with the production pacing (the rates of docs/providers.md), against
//! the critical path those rates and batch sizes allow:
//!
//! - DexScreener: ceil(201 / 30) = 7 requests (the universe and the
//!   benchmark's wrapped SOL), one every 200 ms (300/min);
//! - RugCheck: at most 40 fresh reports a run, one every 250 ms, 4 at once;
//! - Solana RPC: ceil(202 / 100) = 3 calls for the mints, wrapped SOL and
//!   the wallet,
//!   20 `getTokenLargestAccounts` (one run's holder budget) and ceil(20 × 20
//!   / 100) = 4 calls for the owners of their accounts, one every 250 ms
//!   (40 per 10 s), 4 at once.
//!
//! The providers are asked at once, so the critical path is the slowest of
//! the three.
//!
//! Then one provider slow: 40 tokens (one run's RugCheck budget), RugCheck
//! answering each report after 4.5 s (inside its 8 s timeout), production
//! pacing and deadlines, one store across runs. The first run keeps
//! DexScreener's and the RPC's answers (every price and account known) and
//! caches the reports that came before RugCheck's deadline; the runs after
//! it fill the cache until a run is complete. Run: `cargo bench -p scanner
//! --bench run`.
#![allow(missing_docs)]

use freedom_shared::adapters::Stores;
use freedom_shared::config::ProviderConfig;
use freedom_shared::config::ScannerConfig;
use freedom_shared::config::WriteToken;
use freedom_testkit::provider_standin::{ProviderStandIn, synthetic_tokens};
use std::time::{Duration, Instant};

const TOKENS: usize = 200;
const LATENCY: Duration = Duration::from_millis(100);

/// When the last of `requests` paced requests finishes.
fn finish(requests: usize, config: &ProviderConfig) -> Duration {
    let mut ends: Vec<Duration> = Vec::new();
    let mut next_start = Duration::ZERO;
    for i in 0..requests {
        // A start waits for its slot and for a free permit.
        let permit_free = if i >= config.concurrency {
            ends[i - config.concurrency]
        } else {
            Duration::ZERO
        };
        let start = next_start.max(permit_free);
        next_start = start + config.spacing;
        ends.push(start + LATENCY);
        ends.sort();
    }
    ends.last().copied().unwrap_or_default()
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let stand_in = runtime
        .block_on(ProviderStandIn::start(synthetic_tokens(TOKENS)))
        .unwrap();
    stand_in.set_latency(LATENCY);
    let env = stand_in.env();
    let config =
        ScannerConfig::from_env(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
            .unwrap();
    // The universe and the benchmark's wrapped SOL.
    let asked = TOKENS + 1;
    let dex = finish(asked.div_ceil(30), &config.dexscreener);
    let rug = finish(TOKENS.min(config.max_risk_fetches), &config.rugcheck);
    let holders = TOKENS.min(freedom_shared::scan::MAX_HOLDER_FETCHES);
    let rpc = finish(
        (asked + config.wallets.len()).div_ceil(100) + holders + (holders * 20).div_ceil(100),
        &config.solana,
    );
    let critical = dex.max(rug).max(rpc);
    println!("critical path: DexScreener {dex:?}, RugCheck {rug:?}, Solana {rpc:?} → {critical:?}");
    for round in 1..=3 {
        // A fresh store each round, so every run fetches its reports cold.
        let dir = tempfile::tempdir().unwrap();
        let stores = Stores::open(None, dir.path()).unwrap();
        let state = scanner::compose::scanner(
            config.clone(),
            &stores,
            WriteToken::new("bench-token-0123456789"),
        );
        let started = Instant::now();
        let report: serde_json::Value =
            serde_json::from_str(&runtime.block_on(state.runner.run()).unwrap().to_json_text())
                .unwrap();
        let took = started.elapsed();
        assert_eq!(report["status"], "ok");
        println!(
            "run {round}: {took:?} for {} tokens, {} eligible, {} provider answers as evidence; ratio to the critical path {:.3}",
            report["universe"].as_array().unwrap().len(),
            report["universe"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|u| u["eligible"] == true)
                .count(),
            report["provenance"].as_array().unwrap().len(),
            took.as_secs_f64() / critical.as_secs_f64()
        );
    }
    slow_rugcheck(&runtime);
}

/// How many of a report's tokens have a check known (not `unknown`).
fn known(report: &serde_json::Value, check: &str) -> usize {
    report["universe"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| {
            u["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["name"] == check && c["status"] != "unknown")
        })
        .count()
}

fn slow_rugcheck(runtime: &tokio::runtime::Runtime) {
    const TOKENS: usize = 40;
    let stand_in = runtime
        .block_on(ProviderStandIn::start(synthetic_tokens(TOKENS)))
        .unwrap();
    stand_in.set_latency(LATENCY);
    stand_in.set_latency_of(
        freedom_testkit::provider_standin::Provider::RugCheck,
        Duration::from_millis(4400),
    );
    let env = stand_in.env();
    let config =
        ScannerConfig::from_env(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let stores = Stores::open(None, dir.path()).unwrap();
    let state =
        scanner::compose::scanner(config, &stores, WriteToken::new("bench-token-0123456789"));
    println!("RugCheck answering after 4.5 s, {TOKENS} tokens, one store:");
    for round in 1..=4 {
        let started = Instant::now();
        let report: serde_json::Value =
            serde_json::from_str(&runtime.block_on(state.runner.run()).unwrap().to_json_text())
                .unwrap();
        println!(
            "run {round}: {:.1?}, {}: prices known {}/{TOKENS}, accounts known {}/{TOKENS}, holders known {}/{TOKENS}, RugCheck reports known {}/{TOKENS}",
            started.elapsed(),
            report["status"].as_str().unwrap(),
            known(&report, "indexed_and_priced"),
            known(&report, "mint_authority_revoked"),
            known(&report, "holders_spread"),
            known(&report, "no_danger_risk"),
        );
        if report["status"] == "ok" {
            return;
        }
    }
}
