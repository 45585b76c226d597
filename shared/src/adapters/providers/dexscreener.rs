//! DexScreener market data: `GET {base}/tokens/v1/solana/{mint,…}`, at most 30
//! mints a request (300 requests a minute). The answer is a flat array of
//! pairs; the mint asked for may be either side of a pair; a mint with no
//! pairs is absent (not indexed). The most liquid pair gives the price and
//! the reserves; wrapped SOL's is its most liquid pair with USDC (the pair
//! the benchmark experiment is bought at, and SOL's price in dollars).

use super::wire::{Pair, PairToken, PairsAnswer};
use super::{Http, received};
use crate::ports::providers::{DEXSCREENER, MarketData, MarketQuotes, ProviderError};
use crate::record::MAX_AMOUNT;
use crate::scan::MarketQuote;
use crate::scan::experiments::pool::Reserves;
use crate::scan::experiments::{USDC, WRAPPED_SOL};
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
        for (side, other, is_base) in [
            (&pair.base_token, &pair.quote_token, true),
            (&pair.quote_token, &pair.base_token, false),
        ] {
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
            if token.address == WRAPPED_SOL && other.get().is_none_or(|other| other.address != USDC)
            {
                continue; // SOL is priced at its pair with USDC only
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
        reserves: reserves(pair, is_base),
    }
}

/// The pair's reserves oriented to its base side (`is_base`) or its quote
/// side: the token's own reserve, the other side's, and the other side's
/// USD price (`priceUsd / priceNative` for the quote side, `priceUsd` for
/// the base side). `None` unless both reserves and that price are positive
/// and below 10^15.
fn reserves(pair: &Pair, is_base: bool) -> Option<Reserves> {
    let liquidity = pair.liquidity.get()?;
    let (base, quote) = (liquidity.base.get()?.0, liquidity.quote.get()?.0);
    let base_usd = pair.price_usd.get()?.0;
    if is_base {
        let quote_usd = base_usd.checked_div(pair.price_native.get()?.0)?;
        Reserves::new(base, quote, quote_usd)
    } else {
        Reserves::new(quote, base, base_usd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MINT: &str = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";

    fn pair(side: &str, price_usd: &str, price_native: &str, liquidity: &str) -> Vec<u8> {
        serde_json::to_vec(&json!([{
            "url": "https://dexscreener.com/solana/pool",
            side: {"address": MINT, "symbol": "SOL"},
            "priceUsd": price_usd, "priceNative": price_native,
            "liquidity": {"usd": liquidity}, "priceChange": {"h24": 1.5}
        }]))
        .unwrap()
    }

    fn d(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    /// The reserves are read oriented to the token asked for, on either side
    /// of its pair, with the other side's USD price (as DexScreener's
    /// `/tokens/v1` answers, e.g. a pump.fun token against SOL); a pair
    /// without both reserves has none.
    #[test]
    fn reserves_are_oriented_to_the_token_on_either_side() {
        let alpha = "FakeA1phaMintTestTestTestTestTestTestTespump";
        let answer = |liquidity: serde_json::Value| {
            serde_json::to_vec(&json!([{
                "chainId": "solana", "dexId": "pumpswap", "pairAddress": "FakePair",
                "baseToken": {"address": alpha, "symbol": "FALPHA"},
                "quoteToken": {"address": WRAPPED_SOL, "symbol": "SOL"},
                "priceNative": "0.0000003125", "priceUsd": "0.00004687",
                "liquidity": liquidity,
            }]))
            .unwrap()
        };
        let body = answer(json!({"usd": 18432.55, "base": 196612345, "quote": 61.44}));
        let quotes = parse_pairs(&body, &[alpha.to_owned()]).unwrap();
        let reserves = quotes[alpha].as_ref().unwrap().reserves.unwrap();
        // SOL's price is priceUsd / priceNative = 149.984.
        assert_eq!(
            (reserves.token, reserves.quote, reserves.quote_usd),
            (d("196612345"), d("61.44"), d("149.984"))
        );
        // Wrapped SOL is read at its pair with USDC, never at a deeper
        // pair that quotes another token in SOL.
        let sol_pairs = serde_json::to_vec(&json!([
            {"pairAddress": "Meme", "baseToken": {"address": alpha}, "quoteToken": {"address": WRAPPED_SOL},
             "priceNative": "0.0000003125", "priceUsd": "0.00004687",
             "liquidity": {"usd": 90000000, "base": 196612345, "quote": 61.44}},
            {"pairAddress": "SolUsdc", "baseToken": {"address": WRAPPED_SOL, "symbol": "SOL"}, "quoteToken": {"address": USDC},
             "priceNative": "150.02", "priceUsd": "150.02",
             "liquidity": {"usd": 20000000, "base": 66657.78, "quote": 10000000}}
        ]))
        .unwrap();
        let quotes = parse_pairs(&sol_pairs, &[WRAPPED_SOL.to_owned()]).unwrap();
        let sol = quotes[WRAPPED_SOL].as_ref().unwrap();
        assert_eq!(sol.price_usd, Some(d("150.02")));
        let reserves = sol.reserves.unwrap();
        assert_eq!(
            (reserves.token, reserves.quote, reserves.quote_usd),
            (d("66657.78"), d("10000000"), d("1"))
        );
        // Both pools are still listed (their accounts are not holders).
        assert_eq!(sol.pools, ["Meme", "SolUsdc"]);
        // The token on the quote side: its reserve is liquidity.quote, the
        // other side's price is the base's priceUsd.
        let quotes = parse_pairs(&sol_pairs, &[alpha.to_owned()]).unwrap();
        let meme = quotes[alpha].as_ref().unwrap().reserves.unwrap();
        assert_eq!((meme.token, meme.quote), (d("196612345"), d("61.44")));
        let quoted = serde_json::to_vec(&json!([
            {"baseToken": {"address": WRAPPED_SOL}, "quoteToken": {"address": alpha},
             "priceNative": "3200000", "priceUsd": "150",
             "liquidity": {"usd": 18432.55, "base": 61.44, "quote": 196612345}}
        ]))
        .unwrap();
        let quotes = parse_pairs(&quoted, &[alpha.to_owned()]).unwrap();
        let reserves = quotes[alpha].as_ref().unwrap().reserves.unwrap();
        assert_eq!(
            (reserves.token, reserves.quote, reserves.quote_usd),
            (d("196612345"), d("61.44"), d("150"))
        );
        for liquidity in [
            json!({"usd": 18432.55}),
            json!({"usd": 18432.55, "base": 196612345, "quote": 0}),
            json!({"usd": 18432.55, "base": "many", "quote": 61.44}),
            json!({"usd": 18432.55, "base": -1, "quote": 61.44}),
            json!({"usd": 18432.55, "base": 1e16, "quote": 61.44}),
        ] {
            let quotes = parse_pairs(&answer(liquidity.clone()), &[alpha.to_owned()]).unwrap();
            assert_eq!(
                quotes[alpha].as_ref().unwrap().reserves,
                None,
                "{liquidity}"
            );
        }
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
