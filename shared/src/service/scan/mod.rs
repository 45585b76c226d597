//! One scanner run (docs/design.md, "The scanner"), the scanner's use
//! case: it asks the three providers through their ports
//! ([`crate::ports::providers`]) and never holds an HTTP client. Take the lock or
//! refuse; collect from the three providers within the time budget, each
//! answer recorded as provenance (`collect`); check every universe entry
//! (`assess`), and wrapped SOL for the benchmark experiment; record
//! observations (10-minute dedup); make sure every
//! experiment is registered under the rule in code, then advance the
//! registered ones at most once per 10 minutes (`advance`); build the
//! report and keep it, with every provider body it rests on, as evidence
//! under its SHA-256; append the paper snapshots, each naming that hash, to
//! the fund ledger on the 15-minute grid; persist report and state with a
//! write that succeeds only while the run still holds the lock; release the
//! lock, also when the run fails or panics.
//!
//! A provider failing, hanging or answering nonsense makes the run
//! `degraded` (its checks become `unknown`, the reason is an event); it
//! never aborts the run. A paper snapshot the ledger refuses is appended
//! after the report it names is built, so its event shows in the next
//! run's report (a report cannot contain the outcome of a record that
//! commits to the report's own hash).

mod advance;
mod assess;
mod collect;

use crate::clock::{Clock, rfc3339, whole_seconds};
use crate::config::scanner::ScannerConfig;
use crate::errors::ErrorChain;
use crate::ports::StoreError;
use crate::ports::event_sink::{Events, OutsideEvent, no_events};
use crate::ports::providers::{ChainAccounts, MarketData, TokenRisk};
use crate::ports::scan_store::{LockToken, ScanStore};
use crate::record::decimal_json;
use crate::scan::accounts::wallet_view;
use crate::scan::experiments::Trade;
use crate::scan::provenance::{
    EVIDENCE_BYTES_PER_RUN, EVIDENCE_BYTES_TOTAL, EVIDENCE_TTL, Provenance, bodies_to_keep,
    evidence_room, pack_evidence,
};
use crate::scan::report::{ReportParts, ScannerState, UniverseEntry};
use crate::scan::view::{HEALTH, Report, RunStatus, ScannerHealth};
use crate::service::ledger::Ledger;
use advance::{MARKET_EVENT, priced_books, unread_market};
use bytes::Bytes;
use futures_util::FutureExt;
use serde_json::json;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// Room kept in the evidence budget for the event that says which bodies
/// were left out (it enters the report after the report was measured).
const EVIDENCE_NOTE_BYTES: u64 = 1024;

/// State names in the scanner store.
pub(crate) const REPORT: &str = "report";
/// The persisted [`ScannerState`].
pub(crate) const STATE: &str = "state";

/// Why a run did not produce a report.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Another run holds the lock.
    #[error("another scanner run holds the lock")]
    Busy,
    /// The run outlived its lock and another run took it; nothing was saved.
    #[error("the run lost its lock before saving; nothing was saved")]
    LockLost,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The run panicked (the lock was still released).
    #[error("the run failed unexpectedly")]
    Panicked,
}

/// The scanner's three providers, as ports (built over HTTP by
/// `adapters::http_providers`).
#[derive(Clone)]
pub struct Providers {
    /// Market data (DexScreener in production).
    pub(crate) market: Arc<dyn MarketData>,
    /// Token risk (RugCheck in production).
    pub(crate) risk: Arc<dyn TokenRisk>,
    /// Chain accounts (the Solana RPC in production).
    pub(crate) chain: Arc<dyn ChainAccounts>,
}

/// What runs scans: the providers, the scan store, the ledger the paper
/// snapshots go to, the universe and the clock.
#[derive(Clone)]
pub struct ScanRunner {
    config: ScannerConfig,
    store: Arc<dyn ScanStore>,
    ledger: Ledger,
    providers: Providers,
    /// Read in whole seconds: every instant the scanner records is.
    clock: Clock,
    events: Events,
    /// The lock this process's run holds, while it holds one (shared by
    /// every clone), so a process told to stop can give it back.
    held: Arc<std::sync::Mutex<Option<LockToken>>>,
}

impl ScanRunner {
    /// A runner asking `providers`, over `store` (lock and state),
    /// appending to `ledger`.
    pub fn new(
        config: ScannerConfig,
        providers: Providers,
        store: Arc<dyn ScanStore>,
        ledger: Ledger,
        clock: Clock,
    ) -> ScanRunner {
        ScanRunner {
            providers,
            config,
            store,
            ledger,
            clock,
            events: no_events(),
            held: Arc::default(),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Option<LockToken>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Releases the lock a run of this process holds, if any: for a process
    /// that is stopping (SIGTERM) while a run is under way, so the next
    /// process can run at once instead of waiting for the lock to expire.
    /// The run itself then cannot save (its fenced write fails), so nothing
    /// half-done is kept.
    pub async fn release_held(&self) {
        let Some(token) = self.held().take() else {
            return;
        };
        match self.store.release(&token).await {
            Ok(_) => tracing::info!("released the scanner lock of the run under way"),
            Err(error) => {
                tracing::error!(error = %ErrorChain(&error), "could not release the scanner lock; it expires on its own")
            }
        }
    }

    /// The same runner publishing run and trade events to `events`, and
    /// its ledger announcing the paper snapshots it appends there too.
    pub fn with_events(mut self, events: Events) -> ScanRunner {
        self.ledger = self.ledger.with_events(events.clone());
        self.events = events;
        self
    }

    /// The latest report (one store read), or `None` before the first run.
    pub async fn latest_report(&self) -> Result<Option<String>, StoreError> {
        Ok(self.store.read(&[REPORT]).await?.pop().flatten())
    }

    /// The evidence kept under `sha256` (a provider body or a report), while
    /// it is kept.
    pub async fn evidence(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.store.evidence(sha256).await
    }

    /// One run. The lock is released whatever happens inside, and whatever
    /// happens to the caller: the run is a task of its own, so a caller that
    /// goes away (an HTTP client that disconnects makes the server drop the
    /// handler's future) cannot cancel it between taking and releasing the
    /// lock. The run then completes, saves its report and releases.
    pub async fn run(&self) -> Result<Report, RunError> {
        let runner = self.clone();
        match tokio::spawn(async move { runner.run_to_the_end().await }).await {
            Ok(outcome) => outcome,
            // The task only fails if the runtime is shutting down.
            Err(_) => Err(RunError::Panicked),
        }
    }

    async fn run_to_the_end(&self) -> Result<Report, RunError> {
        let token = self
            .store
            .acquire(self.config.lock_ttl)
            .await?
            .ok_or(RunError::Busy)?;
        *self.held() = Some(token.clone());
        let outcome = AssertUnwindSafe(self.run_locked(&token))
            .catch_unwind()
            .await;
        if self.held().take().is_none() {
            // Released already: the process is stopping.
            return Err(RunError::LockLost);
        }
        match self.store.release(&token).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!("the scanner lock had expired before release"),
            Err(error) => {
                tracing::error!(error = %ErrorChain(&error), "could not release the scanner lock; it expires on its own")
            }
        }
        match outcome {
            Ok(result) => result,
            Err(_) => {
                tracing::error!("a scanner run panicked; the lock was released");
                Err(RunError::Panicked)
            }
        }
    }

    /// One run under the lock (see the module's documentation for the
    /// order of its steps).
    async fn run_locked(&self, token: &LockToken) -> Result<Report, RunError> {
        let started = whole_seconds((self.clock)());
        let mut state = self.read_state().await?;
        state.prune(&self.config.universe);
        let mut collected = self.collect(&mut state, started).await;
        let mut universe = Vec::with_capacity(self.config.universe.len());
        let mut market = Vec::new();
        for watched in &self.config.universe {
            let (entry, priced) = self.assess(watched, &mut collected, &mut state, started);
            universe.push(entry);
            market.extend(priced);
        }
        market.extend(self.benchmark_market(&mut collected));
        let mut degraded = std::mem::take(&mut state.carried);
        degraded.append(&mut collected.degraded);
        // A run writes only what it observed: without prices it neither
        // registers nor records (a book valued at prices no one saw).
        let unread = unread_market(&market);
        if let Some(reason) = &unread {
            tracing::warn!(reason = %reason, "scanner run wrote nothing to the ledger");
            state.push_event(started, MARKET_EVENT, reason.clone());
            degraded.push(reason.clone());
        }
        let experiments = self
            .register(&mut state, started, &mut degraded, unread.is_none())
            .await;
        self.find_retired(&mut state).await;
        let mut fills = Vec::new();
        let advancing = match unread {
            Some(_) => false,
            None if state.may_advance(started) => true,
            None => {
                state.push_event(
                    started,
                    "experiments",
                    "not advanced: the last advance was less than 10 minutes ago",
                );
                false
            }
        };
        // Only the books whose holdings all have a price this run.
        let recording = if advancing {
            priced_books(&mut state, &experiments, &market, started, &mut degraded)
        } else {
            Vec::new()
        };
        if advancing {
            fills = self.advance(&mut state, &recording, &market, started);
        }
        let wallets: Vec<_> = self
            .config
            .wallets
            .iter()
            .map(|w| wallet_view(w, collected.accounts.accounts.get(w)))
            .collect();
        let status = if degraded.is_empty() {
            RunStatus::Ok
        } else {
            RunStatus::Degraded
        };
        let finished = whole_seconds((self.clock)());
        if status == RunStatus::Ok {
            state.last_ok_at = Some(finished);
        }
        let health = ScannerHealth::of(status, finished, state.last_ok_at, &degraded);
        state.push_event(finished, "run", run_summary(status, &universe, &degraded));
        let room = evidence_room(self.store.evidence_bytes().await?);
        let report_parts = |state: &ScannerState, provenance: &Provenance| {
            ReportParts {
                status,
                report_at: finished,
                observed_at: started,
                universe: &universe,
                state,
                wallets: &wallets,
                provenance: provenance.entries(),
                experiments: &experiments,
            }
            .report()
        };
        // The report first (its stored size measured with every body kept,
        // and room left for the event below), then the bodies that fit, each
        // counted as stored (gzip-compressed).
        let packed: std::collections::BTreeMap<String, Bytes> = collected
            .bodies
            .values()
            .map(|body| pack_evidence(body))
            .collect();
        let order: Vec<(&str, u64)> = collected
            .provenance
            .entries()
            .iter()
            .filter_map(|e| {
                let stored = packed.get(&e.body_sha256)?;
                Some((e.body_sha256.as_str(), stored.len() as u64))
            })
            .collect();
        let (_, first_draft) = pack_evidence(
            report_parts(&state, &collected.provenance)
                .to_json_text()
                .as_bytes(),
        );
        let measured = first_draft.len() as u64;
        let kept: std::collections::BTreeSet<String> =
            bodies_to_keep(room, measured + EVIDENCE_NOTE_BYTES, order)
                .into_iter()
                .map(str::to_owned)
                .collect();
        let dropped: std::collections::BTreeSet<String> = collected
            .bodies
            .keys()
            .filter(|hash| !kept.contains(*hash))
            .cloned()
            .collect();
        if !dropped.is_empty() {
            let bytes: usize = dropped.iter().map(|h| packed[h].len()).sum();
            collected.provenance.mark_not_kept(&dropped);
            state.mark_not_kept(&dropped);
            state.push_event(
                finished,
                "evidence",
                format!(
                    "{} provider bodies ({bytes} bytes as stored) kept as their hash only: past this run's evidence budget of {room} bytes (at most {EVIDENCE_BYTES_PER_RUN} a run, {EVIDENCE_BYTES_TOTAL} in all, counted compressed)",
                    dropped.len()
                ),
            );
        }
        if measured > room {
            state.push_event(
                finished,
                "evidence",
                format!(
                    "this run's report is kept as its hash only: the evidence kept over the last seven days has reached its total of {EVIDENCE_BYTES_TOTAL} bytes"
                ),
            );
        }
        let report = report_parts(&state, &collected.provenance);
        let report_text = report.to_json_text();
        let (report_hash, report_packed) = pack_evidence(report_text.as_bytes());
        let mut evidence: Vec<(String, Bytes)> = packed
            .into_iter()
            .filter(|(hash, _)| kept.contains(hash))
            .collect();
        if measured <= room {
            evidence.push((report_hash.clone(), report_packed));
        }
        self.store.keep_evidence(&evidence, EVIDENCE_TTL).await?;
        if advancing {
            self.append_snapshots(&mut state, &recording, started, &report_hash)
                .await;
        }
        self.save(token, &report_text, &state, &health).await?;
        self.announce(status, &report, &universe, &fills).await;
        Ok(report)
    }

    /// The state the last run saved (a fresh one when there is none, or
    /// when it cannot be read: the scanner's state is derived, never the
    /// record).
    async fn read_state(&self) -> Result<ScannerState, RunError> {
        Ok(match self.store.read(&[STATE]).await?.pop().flatten() {
            Some(text) => serde_json::from_str(&text).unwrap_or_else(|error| {
                tracing::error!(%error, "the scanner state is unreadable; starting afresh");
                ScannerState::default()
            }),
            None => ScannerState::default(),
        })
    }

    /// Saves the report and the state together, only while this run still
    /// holds the lock.
    async fn save(
        &self,
        token: &LockToken,
        report: &str,
        state: &ScannerState,
        health: &ScannerHealth,
    ) -> Result<(), RunError> {
        let state_text = serde_json::to_string(state).expect("the state serialises");
        let health_text = serde_json::to_string(health).expect("the health serialises");
        let saved = self
            .store
            .write_fenced(
                token,
                &[
                    (REPORT.to_owned(), report.to_owned()),
                    (STATE.to_owned(), state_text),
                    (HEALTH.to_owned(), health_text),
                ],
            )
            .await?;
        if saved {
            Ok(())
        } else {
            Err(RunError::LockLost)
        }
    }

    /// Announces the finished run and its paper trades on the event bus.
    async fn announce(
        &self,
        status: RunStatus,
        report: &Report,
        universe: &[UniverseEntry],
        fills: &[Trade],
    ) {
        if !self.events.is_enabled() {
            return;
        }
        let mut events = vec![OutsideEvent {
            detail_type: "ScannerRunCompleted",
            detail: json!({
                "status": status.as_str(), "reportAt": report.report_at, "observedAt": report.observed_at,
                "tokens": universe.len(), "eligible": universe.iter().filter(|u| u.eligible).count(),
                "trades": fills.len(),
            }),
        }];
        events.extend(fills.iter().map(|fill| OutsideEvent {
            detail_type: "PaperTrade",
            detail: json!({
                "experimentId": fill.experiment_id, "at": rfc3339(fill.at), "side": fill.side,
                "mint": fill.mint, "symbol": fill.symbol,
                "quantity": decimal_json(fill.quantity), "price": decimal_json(fill.price),
                "fee": decimal_json(fill.fee), "paper": true,
            }),
        }));
        self.events.publish(events).await;
    }
}

/// The run's closing event: its status, the universe, and what degraded it.
fn run_summary(status: RunStatus, universe: &[UniverseEntry], degraded: &[String]) -> String {
    format!(
        "run {}: {} tokens, {} eligible{}",
        status.as_str(),
        universe.len(),
        universe.iter().filter(|u| u.eligible).count(),
        if degraded.is_empty() {
            String::new()
        } else {
            format!("; {}", degraded.join("; "))
        }
    )
}
