//! DexScreener's evidence: the token is indexed with a USD price, and its
//! deepest pool holds enough liquidity and reports both reserves (a paper
//! fill is priced at them).

use super::CheckStatus::{Fail, Pass, Unknown};
use super::{Check, Evidence, INDEXED_AND_PRICED, LIQUIDITY, check};
use crate::scan::MIN_LIQUIDITY_USD;
use rust_decimal::Decimal;

/// `indexed_and_priced` and `liquidity`.
pub(super) fn checks(evidence: &Evidence<'_>) -> [Check; 2] {
    let sources = &evidence.sources.market;
    match evidence.market {
        None => [
            check(
                INDEXED_AND_PRICED,
                Unknown,
                "DexScreener did not answer",
                &[],
            ),
            check(LIQUIDITY, Unknown, "DexScreener did not answer", &[]),
        ],
        Some(None) => [
            check(
                INDEXED_AND_PRICED,
                Fail,
                "DexScreener indexes no pool for this token",
                sources,
            ),
            check(LIQUIDITY, Fail, "no pool, so no liquidity", sources),
        ],
        Some(Some(quote)) => [
            match quote.price_usd {
                Some(price) if price > Decimal::ZERO => check(
                    INDEXED_AND_PRICED,
                    Pass,
                    format!("priced at ${price} on its most liquid pool"),
                    sources,
                ),
                _ => check(
                    INDEXED_AND_PRICED,
                    Fail,
                    "indexed, but its most liquid pool has no USD price",
                    sources,
                ),
            },
            match quote.liquidity_usd {
                Some(_) if quote.reserves.is_none() => check(
                    LIQUIDITY,
                    Unknown,
                    "the pool does not report both reserves (liquidity.base and liquidity.quote, positive), so no fill could be priced",
                    sources,
                ),
                Some(liquidity) if liquidity >= MIN_LIQUIDITY_USD => check(
                    LIQUIDITY,
                    Pass,
                    format!(
                        "${} of liquidity (at least ${MIN_LIQUIDITY_USD})",
                        liquidity.round_dp(0)
                    ),
                    sources,
                ),
                Some(liquidity) => check(
                    LIQUIDITY,
                    Fail,
                    format!(
                        "${} of liquidity, below ${MIN_LIQUIDITY_USD}",
                        liquidity.round_dp(0)
                    ),
                    sources,
                ),
                None => check(LIQUIDITY, Unknown, "the pool reports no liquidity", sources),
            },
        ],
    }
}
