//! One watched token as a run sees it: its checks (each naming the answers
//! it rests on), its report entry and links, its observation, and its
//! market for the experiments (mid price, pool reserves, transfer fee,
//! whether it can still be moved); and the benchmark's wrapped SOL, which
//! is no rule's token and needs no checks.

use super::ScanRunner;
use super::collect::Collected;
use crate::scan::MarketQuote;
use crate::scan::accounts::mint_account;
use crate::scan::checks::{self, CheckStatus, Evidence, Sources, TRANSFERABLE};
use crate::scan::experiments::{TokenMarket, WRAPPED_SOL};
use crate::scan::mint::{FeeInForce, MintAccount, epoch_of};
use crate::scan::report::{Observation, ScannerState, UniverseEntry};
use crate::scan::{UniverseToken, text};
use chrono::{DateTime, Utc};

impl ScanRunner {
    /// One watched token as this run saw it: its report entry (checks,
    /// links) and, when DexScreener answered for it, its market for the
    /// experiments. The observation goes into the state's history.
    pub(super) fn assess(
        &self,
        watched: &UniverseToken,
        collected: &mut Collected,
        state: &mut ScannerState,
        started: DateTime<Utc>,
    ) -> (UniverseEntry, Option<TokenMarket>) {
        let mint_key = &watched.mint;
        let mut sources = Sources::default();
        let answers = Answers::of(collected, mint_key);
        sources.market = answers.market.iter().map(|(index, _)| *index).collect();
        sources.mint = answers.mint.iter().map(|(index, _)| *index).collect();
        let epoch = answers.epoch;
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
        // Every token DexScreener answered for has a market, a pool or not
        // (a holding without one is worth 0).
        let market = collected.market.quotes.get(mint_key).map(|answered| {
            answers.market_of(
                mint_key,
                &symbol,
                answered.as_ref(),
                (eligible, blocked),
                transfer_fee(mint.as_ref(), epoch),
            )
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
        (entry, market)
    }

    /// Wrapped SOL as the benchmark experiment sees it, when the universe
    /// does not hold it (then it is assessed with the rest): its SOL/USDC
    /// pair and its mint, without checks (a benchmark is not a rule under
    /// test); `None` when DexScreener did not answer for it.
    pub(super) fn benchmark_market(&self, collected: &mut Collected) -> Option<TokenMarket> {
        if self.config.universe.iter().any(|t| t.mint == WRAPPED_SOL) {
            return None;
        }
        let answered = collected.market.quotes.get(WRAPPED_SOL)?.clone();
        let answers = Answers::of(collected, WRAPPED_SOL);
        let mint = collected
            .accounts
            .accounts
            .get(WRAPPED_SOL)
            .map(mint_account);
        Some(answers.market_of(
            WRAPPED_SOL,
            "SOL",
            answered.as_ref(),
            (false, false),
            transfer_fee(mint.as_ref(), answers.epoch),
        ))
    }
}

/// The answers a token's market and mint came from this run, each added
/// to the run's provenance: (provenance index, `bodySha256`).
struct Answers {
    market: Option<(usize, String)>,
    mint: Option<(usize, String)>,
    /// The epoch of the slot the mint was read at.
    epoch: Option<u64>,
}

impl Answers {
    fn of(collected: &mut Collected, mint: &str) -> Answers {
        let market = collected.market.sources.get(mint).copied().map(|index| {
            let received = collected.market.answers[index].clone();
            let entry = collected.entry(&received);
            (collected.provenance.add(&entry), entry.body_sha256)
        });
        let mut epoch = None;
        let mint = collected.accounts.sources.get(mint).copied().map(|index| {
            let received = collected.accounts.answers[index].clone();
            epoch = received.slot.map(epoch_of);
            let entry = collected.entry(&received);
            (collected.provenance.add(&entry), entry.body_sha256)
        });
        Answers {
            market,
            mint,
            epoch,
        }
    }

    /// The token's market for the experiments from DexScreener's answer
    /// (`quote`: its best pair, `None` when it has none), whether it is
    /// (eligible, blocked), and its transfer fee.
    fn market_of(
        &self,
        mint: &str,
        symbol: &str,
        quote: Option<&MarketQuote>,
        (eligible, blocked): (bool, bool),
        transfer_fee: Option<FeeInForce>,
    ) -> TokenMarket {
        TokenMarket {
            mint: mint.to_owned(),
            symbol: symbol.to_owned(),
            mid: quote.and_then(|q| q.price_usd),
            pool: quote.and_then(|q| q.reserves),
            change_h24: quote.and_then(|q| q.price_change_h24),
            eligible,
            transfer_fee,
            blocked,
            evidence: [&self.market, &self.mint]
                .into_iter()
                .flatten()
                .map(|(_, hash)| hash.clone())
                .collect(),
            pool_evidence: quote
                .and_then(|q| q.reserves)
                .and(self.market.as_ref())
                .map(|(_, hash)| hash.clone()),
        }
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
