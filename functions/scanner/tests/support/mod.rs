//! What the scanner's run tests share: a harness running the scanner on
//! the embedded store against the providers' stand-in under a controlled
//! clock, and readers of its report and ledger.
#![allow(dead_code)]

use chrono::{DateTime, TimeDelta, Utc};
use freedom_shared::adapters::Stores;
use freedom_shared::config::ScannerConfig;
use freedom_shared::config::WriteToken;
use freedom_shared::ports::PageQuery;
use freedom_shared::service::ScanRunner;
use freedom_testkit::provider_standin::{ProviderStandIn, StandInToken, fixture_tokens};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A report as the JSON the route answers (its stored text).
pub fn as_json(report: &freedom_shared::scan::Report) -> Value {
    serde_json::from_str(&report.to_json_text()).unwrap()
}

/// The write token of the harness's ledger.
pub const TOKEN: &str = "scanner-test-token-0123456789";
pub const ALPHA: &str = "FakeA1phaMintTestTestTestTestTestTestTespump";
pub const BRAVO: &str = "FakeBravoMintTestTestTestTestTestTestTestTes";
pub const CHAR: &str = "FakeCharMintNoPairsTestTestTestTestTestTestT";
pub const DELTA: &str = "FakeDe1taMintTestTestTestTestTestTestTestTe";

pub struct Harness {
    pub stand_in: ProviderStandIn,
    pub stores: Stores,
    pub state: scanner::AppState,
    pub now: Arc<Mutex<DateTime<Utc>>>,
    _dir: tempfile::TempDir,
}

impl Harness {
    pub async fn new() -> Harness {
        Harness::with(|_| {}).await
    }

    pub async fn with(adjust: impl FnOnce(&mut ScannerConfig)) -> Harness {
        Harness::with_tokens(fixture_tokens(), adjust).await
    }

    pub async fn with_tokens(
        tokens: Vec<StandInToken>,
        adjust: impl FnOnce(&mut ScannerConfig),
    ) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let stores = Stores::open(None, dir.path()).unwrap();
        Harness::on(stores, dir, tokens, adjust).await
    }

    pub async fn on(
        stores: Stores,
        dir: tempfile::TempDir,
        tokens: Vec<StandInToken>,
        adjust: impl FnOnce(&mut ScannerConfig),
    ) -> Harness {
        let stand_in = ProviderStandIn::start(tokens).await.unwrap();
        let env = stand_in.env();
        let mut config = ScannerConfig::from_env(|name| {
            env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
        .unwrap();
        for provider in [
            &mut config.dexscreener,
            &mut config.rugcheck,
            &mut config.solana,
        ] {
            provider.spacing = Duration::ZERO;
            provider.backoff = Duration::from_millis(1);
            provider.timeout = Duration::from_millis(500);
        }
        adjust(&mut config);
        // 2026-05-04T12:07:00Z: the grid slot is 12:00.
        let now = Arc::new(Mutex::new(
            DateTime::from_timestamp(1_777_896_420, 0).unwrap(),
        ));
        let clock = {
            let now = Arc::clone(&now);
            Arc::new(move || *now.lock().unwrap())
        };
        let state = scanner::compose::scanner_at(config, &stores, WriteToken::new(TOKEN), clock);
        Harness {
            stand_in,
            stores,
            state,
            now,
            _dir: dir,
        }
    }

    pub fn runner(&self) -> &ScanRunner {
        &self.state.runner
    }

    /// One run's report as the JSON the route answers.
    pub async fn run(&self) -> Value {
        as_json(&self.runner().run().await.unwrap())
    }

    /// Takes the lock as another run would.
    pub async fn hold_lock(&self) -> freedom_shared::ports::LockToken {
        self.stores
            .scan
            .acquire(Duration::from_secs(60))
            .await
            .unwrap()
            .expect("the lock is free")
    }

    pub fn advance_clock(&self, minutes: i64) {
        *self.now.lock().unwrap() += TimeDelta::minutes(minutes);
    }

    pub async fn ledger_snapshots(&self) -> Vec<Value> {
        let page = self
            .stores
            .ledger
            .page(&PageQuery {
                before: None,
                limit: 100,
                strategy_id: None,
                kind: Some(freedom_shared::record::RecordKind::Snapshot),
                mode: None,
            })
            .await
            .unwrap();
        page.entries
            .iter()
            .map(|e| serde_json::from_str(&e.canonical).unwrap())
            .collect()
    }
}

/// The message of the report's first event of `kind` whose message holds
/// `text` (any event of that kind for an empty `text`).
pub fn event<'a>(report: &'a Value, kind: &str, text: &str) -> Option<&'a str> {
    report["events"]
        .as_array()?
        .iter()
        .filter(|e| e["kind"] == kind)
        .filter_map(|e| e["message"].as_str())
        .find(|message| message.contains(text))
}

pub fn entry<'a>(report: &'a Value, mint: &str) -> &'a Value {
    report["universe"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["mint"] == mint)
        .unwrap()
}

pub fn statuses(report: &Value, mint: &str) -> Vec<String> {
    entry(report, mint)["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}={}",
                c["name"].as_str().unwrap(),
                c["status"].as_str().unwrap()
            )
        })
        .collect()
}

/// All records of the fund ledger, oldest first.
pub async fn ledger_records(h: &Harness) -> Vec<(u64, Value)> {
    let page = h
        .stores
        .ledger
        .page(&PageQuery {
            before: None,
            limit: 1000,
            strategy_id: None,
            kind: None,
            mode: None,
        })
        .await
        .unwrap();
    let mut records: Vec<(u64, Value)> = page
        .entries
        .iter()
        .map(|e| (e.seq, serde_json::from_str(&e.canonical).unwrap()))
        .collect();
    records.reverse();
    records
}
