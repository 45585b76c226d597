//! DexScreener market data: `GET {base}/tokens/v1/solana/{mint,…}`, at most 30
//! mints a request (300 requests a minute). The answer is a flat array of
//! pairs; the mint asked for may be either side of a pair; a mint with no
//! pairs is absent (not indexed). The most liquid pair gives the price.

use super::wire::{Pair, PairToken, PairsAnswer};
use super::{Http, received};
use crate::ports::providers::{DEXSCREENER, MarketData, MarketQuotes, ProviderError};
use crate::record::MAX_AMOUNT;
use crate::scan::MarketQuote;
use crate::scan::provenance::http_request;
use async_trait::async_trait;
use futures_util::future::join_all;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::time::Instant;

/// Mints per request (the endpoint's limit).
pub(crate) const BATCH: usize = 30;
/// Most pool addresses kept per token (a token with more pools than this
/// has them listed by DexScreener in no useful order; the holders' check
/// leaves these out of its count).
pub(crate) const MAX_POOLS: usize = 30;

/// The DexScreener client.
#[derive(Debug, Clone)]
pub(crate) struct DexScreener {
    http: Http,
}

impl DexScreener {
    /// A client on `http` (base URL, timeout, pacing).
    pub(crate) fn new(http: Http) -> DexScreener {
        DexScreener { http }
    }
}

#[async_trait]
impl MarketData for DexScreener {
    /// Quotes for `mints`, in batches of `BATCH`, paced; the batches that
    /// answer by `deadline` are kept.
    async fn quotes(&self, mints: &[String], deadline: Instant) -> MarketQuotes {
        let batches = mints.chunks(BATCH).map(|batch| async move {
            let path = format!("/tokens/v1/solana/{}", batch.join(","));
            let url = format!("{}{path}", self.http.base_url());
            let answer = self.http.by(deadline, self.http.get(&url)).await?;
            let received = received(
                DEXSCREENER,
                http_request("GET", self.http.base_url(), &path),
                &answer,
            );
            Ok((parse_pairs(&answer.body, batch)?, received))
        });
        let mut data = MarketQuotes::default();
        for answer in join_all(batches).await {
            match answer {
                Ok((quotes, received)) => {
                    let index = data.answers.len();
                    data.answers.push(received);
                    data.sources
                        .extend(quotes.keys().map(|mint| (mint.clone(), index)));
                    data.quotes.extend(quotes);
                }
                Err(error) => data.failures.push(error),
            }
        }
        data
    }
}

/// The best quote per requested mint from an answer's body (an array of
/// pairs, or the older `{"pairs": null | [...]}` envelope).
pub(crate) fn parse_pairs(
    body: &[u8],
    requested: &[String],
) -> Result<BTreeMap<String, Option<MarketQuote>>, ProviderError> {
    let answer: PairsAnswer = super::wire::read(body, "expected an array of pairs")?;
    let mut best: BTreeMap<String, Option<MarketQuote>> =
        requested.iter().map(|m| (m.clone(), None)).collect();
    let mut pools: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for pair in answer.pairs() {
        for (side, is_base) in [(&pair.base_token, true), (&pair.quote_token, false)] {
            let Some(token) = side.get() else {
                continue;
            };
            let Some(slot) = best.get_mut(&token.address) else {
                continue;
            };
            if let Some(address) = pair.pair_address.get() {
                let list = pools.entry(token.address.as_str()).or_default();
                if !list.contains(address) && list.len() < MAX_POOLS {
                    list.push(address.clone());
                }
            }
            let quote = quote_for_side(pair, token, is_base);
            let better = match slot {
                None => true,
                Some(current) => {
                    quote.liquidity_usd.unwrap_or_default()
                        > current.liquidity_usd.unwrap_or_default()
                }
            };
            if better {
                *slot = Some(quote);
            }
        }
    }
    for (mint, quote) in &mut best {
        if let (Some(quote), Some(list)) = (quote.as_mut(), pools.remove(mint.as_str())) {
            quote.pools = list;
        }
    }
    Ok(best)
}

/// A USD amount the scanner can compute with: below 10^15 (the ledger's
/// bound), and positive for a price. Anything else is unknown.
fn usable(value: Decimal, positive: bool) -> Option<Decimal> {
    let in_range = value < MAX_AMOUNT
        && if positive {
            value > Decimal::ZERO
        } else {
            !value.is_sign_negative()
        };
    in_range.then_some(value)
}

/// What `pair` says of `token`, its base side (`is_base`) or its quote side.
fn quote_for_side(pair: &Pair, token: &PairToken, is_base: bool) -> MarketQuote {
    let base_price = pair.price_usd.get().map(|p| p.0);
    let price_usd = if is_base {
        base_price
    } else {
        // priceNative is the base token's price in quote tokens.
        match (base_price, pair.price_native.get().map(|p| p.0)) {
            (Some(usd), Some(native)) if native > Decimal::ZERO => usd.checked_div(native),
            _ => None,
        }
    }
    .and_then(|p| usable(p, true));
    MarketQuote {
        symbol: token
            .symbol
            .get()
            .map_or("?", String::as_str)
            .chars()
            .take(32)
            .collect(),
        price_usd: price_usd.map(|p| p.round_sf(12).unwrap_or(p).normalize()),
        liquidity_usd: pair
            .liquidity
            .get()
            .and_then(|l| l.usd.get())
            .and_then(|l| usable(l.0, false)),
        price_change_h24: pair.price_change.get().and_then(|c| c.h24.get().copied()),
        pair_url: pair
            .url
            .get()
            .filter(|u| u.starts_with("https://"))
            .cloned(),
        pools: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MINT: &str = "So11111111111111111111111111111111111111112";

    fn pair(side: &str, price_usd: &str, price_native: &str, liquidity: &str) -> Vec<u8> {
        serde_json::to_vec(&json!([{
            "url": "https://dexscreener.com/solana/pool",
            side: {"address": MINT, "symbol": "SOL"},
            "priceUsd": price_usd, "priceNative": price_native,
            "liquidity": {"usd": liquidity}, "priceChange": {"h24": 1.5}
        }]))
        .unwrap()
    }

    /// Any decimal a provider sends is judged without panic; one the
    /// scanner cannot compute with (not positive, or 1e15 USD and more) is
    /// unknown, never a wrong number.
    #[test]
    fn extreme_prices_and_liquidity_are_unknown_not_a_panic() {
        let huge = "79228162514264337593543950335";
        let tiny = "0.0000000000000000000000000001";
        for (side, usd, native, liquidity) in [
            ("quoteToken", huge, tiny, "1000"),
            ("quoteToken", "1", "0", "1000"),
            ("baseToken", huge, "1", huge),
            ("baseToken", "-5", "1", "-1"),
            ("baseToken", "1e15", "1", "1e15"),
        ] {
            let quotes =
                parse_pairs(&pair(side, usd, native, liquidity), &[MINT.to_owned()]).unwrap();
            let quote = quotes[MINT].as_ref().unwrap();
            assert_eq!(quote.price_usd, None, "{side} {usd} / {native}");
            assert_eq!(
                quote.liquidity_usd.is_some(),
                liquidity == "1000",
                "{liquidity}"
            );
        }
        let quotes = parse_pairs(
            &pair("quoteToken", "150", "0.5", "1000"),
            &[MINT.to_owned()],
        )
        .unwrap();
        assert_eq!(
            quotes[MINT].as_ref().unwrap().price_usd,
            Some(Decimal::from(300))
        );
    }
}
