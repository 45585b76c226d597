//! DexScreener market data: `GET {base}/tokens/v1/solana/{mint,…}`, at most 30
//! mints a request (300 requests a minute). The answer is a flat array of
//! pairs; the mint asked for may be either side of a pair; a mint with no
//! pairs is absent (not indexed). The most liquid pair gives the price.

use super::{Http, ProviderError, decimal};
use freedom_shared::record::MAX_AMOUNT;
use freedom_shared::scanner::MarketQuote;
use futures_util::future::join_all;
use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::BTreeMap;

/// Mints per request (the endpoint's limit).
pub const BATCH: usize = 30;

/// What one collection got: quotes for every mint of the batches that
/// answered (`None` = not indexed), and the batches that failed.
#[derive(Debug, Default)]
pub struct MarketData {
    /// Per answered mint: its best pool, or `None` when not indexed.
    pub quotes: BTreeMap<String, Option<MarketQuote>>,
    /// One entry per failed batch.
    pub failures: Vec<ProviderError>,
}

/// The DexScreener client.
#[derive(Debug, Clone)]
pub struct DexScreener {
    http: Http,
}

impl DexScreener {
    /// A client on `http` (base URL, timeout, pacing).
    pub fn new(http: Http) -> DexScreener {
        DexScreener { http }
    }

    /// Quotes for `mints`, in batches of [`BATCH`], paced.
    pub async fn quotes(&self, mints: &[String]) -> MarketData {
        let batches = mints.chunks(BATCH).map(|batch| async move {
            let url = format!(
                "{}/tokens/v1/solana/{}",
                self.http.base_url(),
                batch.join(",")
            );
            (batch, self.http.get_json(&url).await)
        });
        let mut data = MarketData::default();
        for (batch, answer) in join_all(batches).await {
            match answer.and_then(|body| parse_pairs(&body, batch)) {
                Ok(quotes) => data.quotes.extend(quotes),
                Err(error) => data.failures.push(error),
            }
        }
        data
    }
}

/// The best quote per requested mint from an answer (an array of pairs, or
/// the older `{"pairs": null | [...]}` envelope).
pub fn parse_pairs(
    body: &Value,
    requested: &[String],
) -> Result<BTreeMap<String, Option<MarketQuote>>, ProviderError> {
    let pairs: &[Value] = match body {
        Value::Array(pairs) => pairs,
        Value::Object(fields) => match fields.get("pairs") {
            Some(Value::Array(pairs)) => pairs,
            Some(Value::Null) | None => &[],
            Some(_) => return Err(ProviderError::Malformed("pairs is not an array".into())),
        },
        _ => {
            return Err(ProviderError::Malformed(
                "expected an array of pairs".into(),
            ));
        }
    };
    let mut best: BTreeMap<String, Option<MarketQuote>> =
        requested.iter().map(|m| (m.clone(), None)).collect();
    for pair in pairs {
        for side in ["baseToken", "quoteToken"] {
            let Some(address) = pair
                .pointer(&format!("/{side}/address"))
                .and_then(Value::as_str)
            else {
                continue;
            };
            let Some(slot) = best.get_mut(address) else {
                continue;
            };
            let quote = quote_for_side(pair, side);
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

fn quote_for_side(pair: &Value, side: &str) -> MarketQuote {
    let base_price = decimal(pair.get("priceUsd"));
    let price_usd = if side == "baseToken" {
        base_price
    } else {
        // priceNative is the base token's price in quote tokens.
        match (base_price, decimal(pair.get("priceNative"))) {
            (Some(usd), Some(native)) if native > Decimal::ZERO => usd.checked_div(native),
            _ => None,
        }
    }
    .and_then(|p| usable(p, true));
    MarketQuote {
        symbol: pair
            .pointer(&format!("/{side}/symbol"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .chars()
            .take(32)
            .collect(),
        price_usd: price_usd.map(|p| p.round_sf(12).unwrap_or(p).normalize()),
        liquidity_usd: decimal(pair.pointer("/liquidity/usd")).and_then(|l| usable(l, false)),
        price_change_h24: pair.pointer("/priceChange/h24").and_then(Value::as_f64),
        pair_url: pair
            .get("url")
            .and_then(Value::as_str)
            .filter(|u| u.starts_with("https://"))
            .map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MINT: &str = "So11111111111111111111111111111111111111112";

    fn pair(side: &str, price_usd: &str, price_native: &str, liquidity: &str) -> Value {
        json!([{
            "url": "https://dexscreener.com/solana/pool",
            side: {"address": MINT, "symbol": "SOL"},
            "priceUsd": price_usd, "priceNative": price_native,
            "liquidity": {"usd": liquidity}, "priceChange": {"h24": 1.5}
        }])
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
