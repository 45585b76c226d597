//! One scanner run (docs/design.md, "The scanner"): take the lock or refuse; collect
//! from the three providers within the time budget; check every universe
//! entry; record observations (10-minute dedup); advance the experiments at
//! most once per 10 minutes and append their paper snapshots to the fund
//! ledger on the 15-minute grid; persist report and state with a write that
//! succeeds only while the run still holds the lock; release the lock, also
//! when the run fails or panics.
//!
//! A provider failing, hanging or answering nonsense makes the run
//! `degraded` (its checks become `unknown`, the reason is an event); it
//! never aborts the run.

use crate::config::ScannerConfig;
use crate::providers::dexscreener::{DexScreener, MarketData};
use crate::providers::rugcheck::{RiskAnswer, RugCheck};
use crate::providers::solana::{Accounts, SolanaRpc, mint_account, wallet_view};
use crate::providers::{Http, ProviderError};
use chrono::{DateTime, Utc};
use freedom_shared::clock::{Clock, rfc3339, whole_seconds};
use freedom_shared::errors::ErrorChain;
use freedom_shared::ports::StoreError;
use freedom_shared::ports::event_sink::{Events, OutsideEvent, no_events};
use freedom_shared::ports::scan_store::{LockToken, ScanStore};
use freedom_shared::record::decimal_json;
use freedom_shared::scan::checks::{self, Evidence};
use freedom_shared::scan::experiments::{EXPERIMENTS, Side, TokenMarket, Trade};
use freedom_shared::scan::report::{Observation, ReportParts, ScannerState, UniverseEntry};
use freedom_shared::scan::text;
use freedom_shared::scan::view::RunStatus;
use freedom_shared::scan::{CachedRisk, RISK_CACHE_TTL, UniverseToken, grid_slot};
use freedom_shared::service::ledger::{AppendError, Ledger};
use futures_util::FutureExt;
use futures_util::future::join_all;
use serde_json::{Value, json};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

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

/// What runs scans: the providers, the scan store, the ledger the paper
/// snapshots go to, the universe and the clock.
#[derive(Clone)]
pub struct ScanRunner {
    config: ScannerConfig,
    store: Arc<dyn ScanStore>,
    ledger: Ledger,
    dexscreener: DexScreener,
    rugcheck: RugCheck,
    solana: SolanaRpc,
    /// Read in whole seconds: every instant the scanner records is.
    clock: Clock,
    events: Events,
    /// The lock this process's run holds, while it holds one (shared by
    /// every clone), so a process told to stop can give it back.
    held: Arc<std::sync::Mutex<Option<LockToken>>>,
}

/// What the providers answered in one run.
struct Collected {
    market: MarketData,
    accounts: Accounts,
    degraded: Vec<String>,
}

impl ScanRunner {
    /// A runner over `store` (lock and state) appending to `ledger`.
    pub fn new(
        config: ScannerConfig,
        store: Arc<dyn ScanStore>,
        ledger: Ledger,
        clock: Clock,
    ) -> ScanRunner {
        ScanRunner {
            dexscreener: DexScreener::new(Http::new(config.dexscreener.clone())),
            rugcheck: RugCheck::new(Http::new(config.rugcheck.clone())),
            solana: SolanaRpc::new(Http::new(config.solana.clone())),
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

    /// One run. The lock is released whatever happens inside, and whatever
    /// happens to the caller: the run is a task of its own, so a caller that
    /// goes away (an HTTP client that disconnects makes the server drop the
    /// handler's future) cannot cancel it between taking and releasing the
    /// lock. The run then completes, saves its report and releases.
    pub async fn run(&self) -> Result<Value, RunError> {
        let runner = self.clone();
        match tokio::spawn(async move { runner.run_to_the_end().await }).await {
            Ok(outcome) => outcome,
            // The task only fails if the runtime is shutting down.
            Err(_) => Err(RunError::Panicked),
        }
    }

    async fn run_to_the_end(&self) -> Result<Value, RunError> {
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

    /// One run under the lock: read the state, collect, assess every token,
    /// advance the experiments, then save the report and state together
    /// (fenced by the lock) and announce the run.
    async fn run_locked(&self, token: &LockToken) -> Result<Value, RunError> {
        let started = whole_seconds((self.clock)());
        let mut state = self.read_state().await?;
        state.prune(&self.config.universe);
        let collected = self.collect(&mut state, started).await;
        let mut degraded = collected.degraded.clone();
        let mut universe = Vec::with_capacity(self.config.universe.len());
        let mut market = Vec::new();
        for watched in &self.config.universe {
            let (entry, priced) = self.assess(watched, &collected, &mut state, started);
            universe.extend(Some(entry));
            market.extend(priced);
        }
        let mut fills = Vec::new();
        if state.may_advance(started) {
            fills = self
                .advance(&mut state, &market, started, &mut degraded)
                .await;
        } else {
            state.push_event(
                started,
                "experiments",
                "not advanced: the last advance was less than 10 minutes ago",
            );
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
        state.push_event(finished, "run", run_summary(status, &universe, &degraded));
        let report = ReportParts {
            status,
            report_at: finished,
            observed_at: started,
            universe: &universe,
            state: &state,
            wallets: &wallets,
        }
        .to_json();
        self.save(token, &report, &state).await?;
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

    /// One watched token as this run saw it: its report entry (checks,
    /// links) and, when it is priced, its market for the experiments. The
    /// observation goes into the state's history.
    fn assess(
        &self,
        watched: &UniverseToken,
        collected: &Collected,
        state: &mut ScannerState,
        started: DateTime<Utc>,
    ) -> (UniverseEntry, Option<TokenMarket>) {
        let quote = collected
            .market
            .quotes
            .get(&watched.mint)
            .map(Option::as_ref);
        let mint = collected
            .accounts
            .accounts
            .get(&watched.mint)
            .map(mint_account);
        let evidence = Evidence {
            market: quote,
            risk: state
                .risk_cache
                .get(&watched.mint)
                .and_then(|c| c.report.as_ref()),
            mint: mint.as_ref(),
        };
        let checks = checks::evaluate(&evidence);
        let eligible = checks::eligible(&checks);
        let quote = quote.flatten();
        let raw_symbol = quote.map_or(watched.symbol.as_str(), |q| q.symbol.as_str());
        let symbol = text::symbol(raw_symbol, self.ledger.guard()).unwrap_or_else(|| {
            let fallback = text::fallback_symbol(&watched.mint);
            state.push_event(
                started,
                "provider",
                format!(
                    "{}: its symbol is not fit for a public record (see the record rules); shown as {fallback}",
                    watched.mint
                ),
            );
            fallback
        });
        let priced = quote.and_then(|q| match (q.price_usd, q.liquidity_usd) {
            (Some(price), Some(liquidity)) => Some(TokenMarket {
                mint: watched.mint.clone(),
                symbol: symbol.clone(),
                price,
                liquidity,
                change_h24: q.price_change_h24,
                eligible,
            }),
            _ => None,
        });
        if let Some(q) = quote {
            state.observe(
                &watched.mint,
                Observation {
                    observed_at: started,
                    price_usd: q.price_usd,
                    liquidity_usd: q.liquidity_usd,
                },
            );
        }
        let entry = UniverseEntry {
            mint: watched.mint.clone(),
            symbol,
            price_usd: quote.and_then(|q| q.price_usd),
            liquidity_usd: quote.and_then(|q| q.liquidity_usd),
            eligible,
            checks,
            links: links(&watched.mint, quote.and_then(|q| q.pair_url.as_deref())),
        };
        (entry, priced)
    }

    /// Saves the report and the state together, only while this run still
    /// holds the lock.
    async fn save(
        &self,
        token: &LockToken,
        report: &Value,
        state: &ScannerState,
    ) -> Result<(), RunError> {
        let state_text = serde_json::to_string(state).expect("the state serialises");
        let saved = self
            .store
            .write_fenced(
                token,
                &[
                    (REPORT.to_owned(), report.to_string()),
                    (STATE.to_owned(), state_text),
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
        report: &Value,
        universe: &[UniverseEntry],
        fills: &[Trade],
    ) {
        if !self.events.is_enabled() {
            return;
        }
        let mut events = vec![OutsideEvent {
            detail_type: "ScannerRunCompleted",
            detail: json!({
                "status": status.as_str(), "reportAt": report["reportAt"], "observedAt": report["observedAt"],
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

    /// Asks the three providers at once, each until its own deadline within
    /// the collection budget: what each has answered by then is kept (a
    /// slow RugCheck leaves prices and accounts known), and every risk
    /// report that arrived is cached, so the cache fills across runs.
    async fn collect(&self, state: &mut ScannerState, now: DateTime<Utc>) -> Collected {
        let mints: Vec<String> = self
            .config
            .universe
            .iter()
            .map(|t| t.mint.clone())
            .collect();
        let mut keys = mints.clone();
        keys.extend(self.config.wallets.iter().cloned());
        let stale: Vec<String> = mints
            .iter()
            .filter(|m| {
                state
                    .risk_cache
                    .get(*m)
                    .is_none_or(|r| now - r.fetched_at >= RISK_CACHE_TTL)
            })
            .take(self.config.max_risk_fetches)
            .cloned()
            .collect();
        let started = tokio::time::Instant::now();
        let deadline = |provider: &crate::providers::ProviderConfig| {
            started + provider.deadline.min(self.config.collect_budget)
        };
        let rugcheck_deadline = deadline(&self.config.rugcheck);
        let risks = join_all(stale.iter().map(|mint| async move {
            (
                mint.clone(),
                self.rugcheck.report(mint, rugcheck_deadline).await,
            )
        }));
        let (market, risks, accounts) = tokio::join!(
            self.dexscreener
                .quotes(&mints, deadline(&self.config.dexscreener)),
            risks,
            self.solana.accounts(&keys, deadline(&self.config.solana))
        );
        let mut degraded = Vec::new();
        let mut risk_failures = Vec::new();
        for (mint, answer) in risks {
            match answer {
                Ok(answer) => {
                    let report = match answer {
                        RiskAnswer::Report(report) => Some(report),
                        RiskAnswer::NoReport => None,
                    };
                    state.risk_cache.insert(
                        mint,
                        CachedRisk {
                            fetched_at: now,
                            report,
                        },
                    );
                }
                Err(error) => risk_failures.push(error),
            }
        }
        let mut note = |provider: &str, failures: &[ProviderError]| {
            if let Some(first) = failures.first() {
                let message = format!(
                    "{provider}: {} failed request(s), e.g. {}",
                    failures.len(),
                    ErrorChain(first)
                );
                state.push_event(now, "provider", message.clone());
                degraded.push(message);
            }
        };
        note("DexScreener", &market.failures);
        note("Solana RPC", &accounts.failures);
        note("RugCheck", &risk_failures);
        Collected {
            market,
            accounts,
            degraded,
        }
    }

    /// Advances every experiment and appends its paper snapshot to the ledger.
    async fn advance(
        &self,
        state: &mut ScannerState,
        market: &[TokenMarket],
        now: DateTime<Utc>,
        degraded: &mut Vec<String>,
    ) -> Vec<Trade> {
        let mut all_fills = Vec::new();
        let slot = grid_slot(now);
        state.last_advanced_at = Some(now);
        for experiment in &EXPERIMENTS {
            let book = state.book_mut(experiment);
            let fills = book.advance(experiment, market, now);
            let record = book.snapshot_record(experiment, slot);
            for fill in &fills {
                state.push_event(
                    now,
                    "trade",
                    format!(
                        "{}: paper {} {} {} at ${} (fee ${})",
                        experiment.id,
                        if fill.side == Side::Buy {
                            "buy"
                        } else {
                            "sell"
                        },
                        fill.quantity,
                        fill.symbol,
                        fill.price,
                        fill.fee
                    ),
                );
            }
            all_fills.extend(fills);
            let Some(record) = record else {
                let message = format!(
                    "{}: the book's value cannot be computed or recorded exactly; no {} snapshot",
                    experiment.id,
                    rfc3339(slot)
                );
                state.push_event(now, "ledger", message.clone());
                degraded.push(message);
                continue;
            };
            match self.ledger.append(record.to_string().as_bytes()).await {
                // The ledger announces a new leaf itself.
                Ok(_) => {}
                // A refused paper snapshot leaves a gap in the public
                // series: the run is degraded, and says why.
                Err(AppendError::Refused(refusal)) => {
                    let message = format!(
                        "{}: the {} snapshot was not appended ({refusal})",
                        experiment.id,
                        rfc3339(slot)
                    );
                    state.push_event(now, "ledger", message.clone());
                    degraded.push(message);
                }
                Err(AppendError::Record(error)) => {
                    let message =
                        format!("{}: the paper snapshot was refused: {error}", experiment.id);
                    state.push_event(now, "ledger", message.clone());
                    degraded.push(message);
                }
                Err(AppendError::Store(error)) => {
                    tracing::error!(error = %ErrorChain(&error), "the ledger store failed during a scanner run");
                    let message = format!("{}: the ledger could not be written", experiment.id);
                    state.push_event(now, "ledger", message.clone());
                    degraded.push(message);
                }
            }
        }
        all_fills
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

/// A token's pages at the providers: DexScreener's pair page when it gave
/// a fit one, else its token page; RugCheck's and Solscan's.
fn links(mint: &str, pair_url: Option<&str>) -> Vec<(String, String)> {
    let dexscreener_page = pair_url.and_then(text::url).map_or_else(
        || format!("https://dexscreener.com/solana/{mint}"),
        str::to_owned,
    );
    vec![
        ("dexscreener".into(), dexscreener_page),
        (
            "rugcheck".into(),
            format!("https://rugcheck.xyz/tokens/{mint}"),
        ),
        ("solscan".into(), format!("https://solscan.io/token/{mint}")),
    ]
}
