//! Asking the providers: DexScreener, RugCheck, the Solana RPC's accounts
//! and the largest holders, all at once, each until its own deadline within
//! the collection budget. What each has answered by then is kept (a slow
//! RugCheck leaves prices and accounts known), risk reports and holders are
//! cached (so the caches fill across runs), and every answer used becomes
//! a provenance entry with its body kept as evidence.

use super::ScanRunner;
use crate::config::scanner::ProviderConfig;
use crate::errors::ErrorChain;
use crate::ports::providers::{Accounts, MarketQuotes, ProviderError, Received, RiskAnswer};
use crate::scan::CachedRisk;
use crate::scan::accounts::holdings;
use crate::scan::experiments::WRAPPED_SOL;
use crate::scan::holders::{CachedHolders, HOLDERS_READING, Holding, MAX_HOLDER_FETCHES};
use crate::scan::provenance::{Provenance, ProvenanceEntry, sha256_hex};
use crate::scan::report::ScannerState;
use bytes::Bytes;
use chrono::{DateTime, TimeDelta, Utc};
use futures_util::future::join_all;
use std::collections::BTreeMap;
use std::time::Instant;

/// What the providers answered in one run, and the provenance it builds.
pub(super) struct Collected {
    /// DexScreener's quotes.
    pub market: MarketQuotes,
    /// The mint and wallet accounts.
    pub accounts: Accounts,
    /// Why the run is degraded, so far.
    pub degraded: Vec<String>,
    /// The answers the run used, each once.
    pub provenance: Provenance,
    /// Every body received this run, by its SHA-256, to keep as evidence.
    pub bodies: BTreeMap<String, Bytes>,
    /// When the run's collection started, on both clocks (to date answers).
    pub clocks: (Instant, DateTime<Utc>),
}

impl Collected {
    /// The provenance entry of `received` (its body kept as evidence).
    pub(crate) fn entry(&mut self, received: &Received) -> ProvenanceEntry {
        entry(received, self.clocks, &mut self.bodies)
    }
}

/// `received` as provenance records it, dated on the run's clock; its body
/// goes to `bodies`.
fn entry(
    received: &Received,
    (instant, wall): (Instant, DateTime<Utc>),
    bodies: &mut BTreeMap<String, Bytes>,
) -> ProvenanceEntry {
    let sha256 = sha256_hex(&received.body);
    bodies
        .entry(sha256.clone())
        .or_insert_with(|| received.body.clone());
    let elapsed = received.at.saturating_duration_since(instant);
    ProvenanceEntry {
        provider: received.provider.to_owned(),
        request: received.request.clone(),
        status: received.status,
        received_at: wall + TimeDelta::from_std(elapsed).unwrap_or_default(),
        body_sha256: sha256,
        bytes: received.body.len() as u64,
        slot: received.slot,
        kept: true,
    }
}

/// A token's holders as one run read them, and the answers (the largest
/// accounts', the owners' batches) they came from.
type HolderAnswer = Result<(Option<Vec<Holding>>, Vec<Received>), ProviderError>;

impl ScanRunner {
    /// Asks every provider at once (see the module's documentation).
    pub(super) async fn collect(&self, state: &mut ScannerState, now: DateTime<Utc>) -> Collected {
        let mints: Vec<String> = self
            .config
            .universe
            .iter()
            .map(|t| t.mint.clone())
            .collect();
        // The benchmark's wrapped SOL is asked for with the universe.
        let mut asked = mints.clone();
        if !asked.iter().any(|mint| mint == WRAPPED_SOL) {
            asked.push(WRAPPED_SOL.to_owned());
        }
        let mut keys = asked.clone();
        keys.extend(self.config.wallets.iter().cloned());
        let stale_risks: Vec<String> = mints
            .iter()
            .filter(|m| state.risk_cache.get(*m).is_none_or(|r| !r.is_fresh(now)))
            .take(self.config.max_risk_fetches)
            .cloned()
            .collect();
        let stale_holders: Vec<String> = mints
            .iter()
            .filter(|m| state.holders_cache.get(*m).is_none_or(|h| !h.is_fresh(now)))
            .take(MAX_HOLDER_FETCHES)
            .cloned()
            .collect();
        let started = Instant::now();
        let deadline =
            |provider: &ProviderConfig| started + provider.deadline.min(self.config.collect_budget);
        let rugcheck_deadline = deadline(&self.config.rugcheck);
        let risks = join_all(stale_risks.iter().map(|mint| async move {
            (
                mint.clone(),
                self.providers.risk.report(mint, rugcheck_deadline).await,
            )
        }));
        let solana_deadline = deadline(&self.config.solana);
        let (market, risks, accounts, holders) = tokio::join!(
            self.providers
                .market
                .quotes(&asked, deadline(&self.config.dexscreener)),
            risks,
            self.providers.chain.accounts(&keys, solana_deadline),
            self.holders(&stale_holders, solana_deadline),
        );
        let mut collected = Collected {
            market,
            accounts,
            degraded: Vec::new(),
            provenance: Provenance::default(),
            bodies: BTreeMap::new(),
            clocks: (started, now),
        };
        let mut failures: Vec<(&str, Vec<ProviderError>)> = vec![
            (
                "DexScreener",
                std::mem::take(&mut collected.market.failures),
            ),
            (
                "Solana RPC",
                std::mem::take(&mut collected.accounts.failures),
            ),
        ];
        let mut risk_failures = Vec::new();
        for (mint, answer) in risks {
            match answer {
                Ok((answer, received)) => {
                    let report = match answer {
                        RiskAnswer::Report(report) => Some(report),
                        RiskAnswer::NoReport => None,
                    };
                    let provenance = vec![collected.entry(&received)];
                    state.risk_cache.insert(
                        mint,
                        CachedRisk {
                            fetched_at: now,
                            report,
                            provenance,
                        },
                    );
                }
                Err(error) => risk_failures.push(error),
            }
        }
        failures.push(("RugCheck", risk_failures));
        let mut holder_failures = Vec::new();
        for (mint, answer) in holders {
            match answer {
                Ok((holdings, received)) => {
                    let provenance = received.iter().map(|r| collected.entry(r)).collect();
                    state.holders_cache.insert(
                        mint,
                        CachedHolders {
                            fetched_at: now,
                            holdings,
                            provenance,
                            reading: HOLDERS_READING,
                        },
                    );
                }
                Err(error) => holder_failures.push(error),
            }
        }
        failures.push(("Solana RPC (holders)", holder_failures));
        for (provider, failures) in failures {
            if let Some(first) = failures.first() {
                let message = format!(
                    "{provider}: {} failed request(s), e.g. {}",
                    failures.len(),
                    ErrorChain(first)
                );
                state.push_event(now, "provider", message.clone());
                collected.degraded.push(message);
            }
        }
        collected
    }

    /// The largest accounts of each of `mints` and their owners: one
    /// `getTokenLargestAccounts` a mint, then the owners of every account
    /// in batches of `getMultipleAccounts`, all by `deadline`. A token
    /// whose owners' batch did not answer has no holders this run (nothing
    /// is cached for it).
    async fn holders(&self, mints: &[String], deadline: Instant) -> Vec<(String, HolderAnswer)> {
        if mints.is_empty() {
            return Vec::new();
        }
        let largest = join_all(
            mints
                .iter()
                .map(|mint| self.providers.chain.largest(mint, deadline)),
        )
        .await;
        let addresses: Vec<String> = largest
            .iter()
            .flatten()
            .flat_map(|l| {
                l.accounts
                    .iter()
                    .flatten()
                    .map(|(address, _)| address.clone())
            })
            .collect();
        let mut owners = self.providers.chain.accounts(&addresses, deadline).await;
        let owners_failure = owners.failures.pop();
        let mut owners_failure = owners_failure.map(|e| ErrorChain(&e).to_string());
        mints
            .iter()
            .cloned()
            .zip(largest)
            .map(|(mint, answer)| {
                let answer = answer.and_then(|largest| {
                    let Some(accounts) = &largest.accounts else {
                        return Ok((None, vec![largest.received]));
                    };
                    let mut used = Vec::new();
                    for (address, _) in accounts {
                        match owners.sources.get(address) {
                            Some(&index) => used.push(index),
                            None => {
                                return Err(ProviderError::OwnersUnread(
                                    owners_failure
                                        .get_or_insert_with(|| "no answer".to_owned())
                                        .clone(),
                                ));
                            }
                        }
                    }
                    used.sort_unstable();
                    used.dedup();
                    let holdings = holdings(accounts, &owners.accounts);
                    let mut received = vec![largest.received];
                    received.extend(used.iter().map(|&i| owners.answers[i].clone()));
                    Ok((Some(holdings), received))
                });
                (mint, answer)
            })
            .collect()
    }
}
