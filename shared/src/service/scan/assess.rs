//! One watched token as a run sees it: its checks (each naming the answers
//! it rests on), its report entry and links, its observation, and its
//! market for the experiments (price, liquidity, transfer fee, whether it
//! can still be moved).

use super::ScanRunner;
use super::collect::Collected;
use crate::scan::accounts::mint_account;
use crate::scan::checks::{self, CheckStatus, Evidence, Sources, TRANSFERABLE};
use crate::scan::experiments::TokenMarket;
use crate::scan::mint::{FeeInForce, MintAccount, epoch_of};
use crate::scan::report::{Observation, ScannerState, UniverseEntry};
use crate::scan::{UniverseToken, text};
use chrono::{DateTime, Utc};

impl ScanRunner {
    /// One watched token as this run saw it: its report entry (checks,
    /// links) and, when it is priced, its market for the experiments. The
    /// observation goes into the state's history.
    pub(super) fn assess(
        &self,
        watched: &UniverseToken,
        collected: &mut Collected,
        state: &mut ScannerState,
        started: DateTime<Utc>,
    ) -> (UniverseEntry, Option<TokenMarket>) {
        let mint_key = &watched.mint;
        let mut sources = Sources::default();
        let mut hashes = Vec::new();
        if let Some(&index) = collected.market.sources.get(mint_key) {
            let received = collected.market.answers[index].clone();
            let entry = collected.entry(&received);
            hashes.push(entry.body_sha256.clone());
            sources.market = vec![collected.provenance.add(&entry)];
        }
        let mut epoch = None;
        if let Some(&index) = collected.accounts.sources.get(mint_key) {
            let received = collected.accounts.answers[index].clone();
            epoch = received.slot.map(epoch_of);
            let entry = collected.entry(&received);
            hashes.push(entry.body_sha256.clone());
            sources.mint = vec![collected.provenance.add(&entry)];
        }
        let risk = state.risk_cache.get(mint_key);
        if let Some(cached) = risk {
            sources.risk = collected.provenance.add_all(&cached.provenance);
        }
        let holders = state.holders_cache.get(mint_key);
        if let Some(cached) = holders {
            sources.holders = collected.provenance.add_all(&cached.provenance);
        }
        let quote = collected.market.quotes.get(mint_key).map(Option::as_ref);
        let mint = collected.accounts.accounts.get(mint_key).map(mint_account);
        let checks = checks::evaluate(&Evidence {
            market: quote,
            risk: risk.and_then(|c| c.report.as_ref()),
            mint: mint.as_ref(),
            holders: holders.map(|c| c.holdings.as_deref()),
            epoch,
            sources: &sources,
        });
        let eligible = checks::eligible(&checks);
        let blocked = checks::status_of(&checks, TRANSFERABLE) == Some(CheckStatus::Fail);
        let quote = quote.flatten();
        let raw_symbol = quote.map_or(watched.symbol.as_str(), |q| q.symbol.as_str());
        let symbol = text::symbol(raw_symbol, self.ledger.guard()).unwrap_or_else(|| {
            let fallback = text::fallback_symbol(mint_key);
            state.push_event(
                started,
                "provider",
                format!(
                    "{mint_key}: its symbol is not fit for a public record (see the record rules); shown as {fallback}"
                ),
            );
            fallback
        });
        let priced = quote.and_then(|q| match (q.price_usd, q.liquidity_usd) {
            (Some(price), Some(liquidity)) => Some(TokenMarket {
                mint: mint_key.clone(),
                symbol: symbol.clone(),
                price,
                liquidity,
                change_h24: q.price_change_h24,
                eligible,
                transfer_fee: transfer_fee(mint.as_ref(), epoch),
                blocked,
                evidence: hashes.clone(),
            }),
            _ => None,
        });
        if let Some(q) = quote {
            state.observe(
                mint_key,
                Observation {
                    observed_at: started,
                    price_usd: q.price_usd,
                    liquidity_usd: q.liquidity_usd,
                },
            );
        }
        let entry = UniverseEntry {
            mint: mint_key.clone(),
            symbol,
            price_usd: quote.and_then(|q| q.price_usd),
            liquidity_usd: quote.and_then(|q| q.liquidity_usd),
            eligible,
            checks,
            links: links(mint_key, quote.and_then(|q| q.pair_url.as_deref())),
        };
        (entry, priced)
    }
}

/// The transfer fee a move of the token pays: none for a mint without the
/// extension; `None` (no fill this run) when the mint was not read or its
/// fee does not read.
fn transfer_fee(mint: Option<&MintAccount>, epoch: Option<u64>) -> Option<FeeInForce> {
    match mint? {
        MintAccount::Mint(mint) => mint.fee_in_force(epoch)?.or(Some(FeeInForce::NONE)),
        _ => None,
    }
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
