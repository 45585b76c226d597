//! How a paper fill is priced and a holding valued: exactly as a
//! constant-product pool (x · y = k) at the reserves DexScreener reports for
//! the token's deepest pair, whatever the pool's type (the rule text says
//! so). Pure arithmetic on exact decimals; every step is checked, and a
//! number that does not fit gives no fill rather than a wrong one.
//!
//! - **Buy** with a budget W (USD): the swap takes T = W − network fee,
//!   rounded down to the cent and at most [`MAX_RESERVE_SHARE`] of the
//!   quote reserve in USD; the swap fee is T × [`FEE_RATE`] (to the cent);
//!   q = (T − fee) / quoteUsd goes into the pool; tokens out =
//!   B · q / (Q + q); the buyer receives them less the token's transfer
//!   fee. Fill price = (T − fee) / tokens received.
//! - **Sell** x tokens (at most [`MAX_RESERVE_SHARE`] of the token reserve):
//!   the pool receives x less the transfer fee, x′; quote out =
//!   Q · x′ / (B + x′), worth quote out × quoteUsd = gross; the book
//!   receives gross − swap fee − network fee (each to the cent). Fill
//!   price = gross / x.
//! - **Mark**: what selling the whole holding in one swap would return now,
//!   per unit, after every fee (the sell above without the size cap); 0
//!   when the pool is gone, empty or unknown, or the fees exceed it.
//!
//! `impact` is fill price / mid − 1, the mid being the pair's USD price.

use super::{FEE_RATE, MAX_RESERVE_SHARE, MIN_TRADE_USD, NETWORK_FEE_USD};
use crate::record::MAX_AMOUNT;
use crate::scan::mint::FeeInForce;
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};

/// A pool's reserves oriented to one token: its own reserve and the other
/// side's, as the pair reports them (DexScreener's `liquidity.base` and
/// `liquidity.quote`, swapped when the token is the pair's quote side),
/// and the other side's USD price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Reserves {
    /// The token's reserve, in whole tokens (B).
    pub token: Decimal,
    /// The other side's reserve, in its whole units (Q).
    pub quote: Decimal,
    /// USD per unit of the other side.
    pub quote_usd: Decimal,
}

impl Reserves {
    /// Reserves the scanner can compute with: each positive and below
    /// 10^15 (the ledger's bound); anything else is no pool.
    pub(crate) fn new(token: Decimal, quote: Decimal, quote_usd: Decimal) -> Option<Reserves> {
        let usable = |value: Decimal| value > Decimal::ZERO && value < MAX_AMOUNT;
        (usable(token) && usable(quote) && usable(quote_usd)).then_some(Reserves {
            token,
            quote,
            quote_usd,
        })
    }

    /// Tokens the pool sends for `quote_in` of the other side: B · q / (Q + q).
    pub(crate) fn tokens_for(&self, quote_in: Decimal) -> Option<Decimal> {
        let share = quote_in.checked_div(self.quote.checked_add(quote_in)?)?;
        self.token.checked_mul(share)
    }

    /// The other side the pool sends for `tokens_in`: Q · x / (B + x).
    pub(crate) fn quote_for(&self, tokens_in: Decimal) -> Option<Decimal> {
        let share = tokens_in.checked_div(self.token.checked_add(tokens_in)?)?;
        self.quote.checked_mul(share)
    }

    /// The most USD a buy's swap may put in: [`MAX_RESERVE_SHARE`] of the
    /// quote reserve, at its USD price.
    pub(crate) fn largest_buy_usd(&self) -> Option<Decimal> {
        self.quote
            .checked_mul(MAX_RESERVE_SHARE)?
            .checked_mul(self.quote_usd)
    }

    /// The most tokens a sell may put in: [`MAX_RESERVE_SHARE`] of the
    /// token reserve.
    pub(crate) fn largest_sell(&self) -> Decimal {
        // A share below one of a reserve below 10^15 cannot overflow.
        significant(self.token * MAX_RESERVE_SHARE, RoundingStrategy::ToZero)
    }

    /// What selling `tokens` returns in USD before the swap fee (the pool
    /// receives them less the transfer fee `fee`), exactly.
    fn gross_usd(&self, tokens: Decimal, fee: FeeInForce) -> Option<Decimal> {
        let received = tokens.checked_sub(fee.on(tokens)?)?;
        if received <= Decimal::ZERO {
            return Some(Decimal::ZERO);
        }
        self.quote_for(received)?.checked_mul(self.quote_usd)
    }
}

/// A paper buy as the pool would fill it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bought {
    /// USD the swap took, swap fee included (T), to the cent.
    pub notional: Decimal,
    /// The swap fee in USD, to the cent.
    pub swap_fee: Decimal,
    /// Tokens the pool sent.
    pub sent: Decimal,
    /// The transfer fee on them, in tokens.
    pub transfer_fee: Decimal,
    /// Tokens received (sent less the transfer fee).
    pub received: Decimal,
    /// (T − swap fee) / tokens received.
    pub price: Decimal,
    /// What the book's cash pays: T plus the network fee.
    pub paid: Decimal,
}

/// A paper sell as the pool would fill it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sold {
    /// Tokens that left the book.
    pub sent: Decimal,
    /// The transfer fee on them, in tokens.
    pub transfer_fee: Decimal,
    /// USD the pool paid out before the swap fee, to the cent.
    pub notional: Decimal,
    /// The swap fee in USD, to the cent.
    pub swap_fee: Decimal,
    /// Gross USD / tokens sent.
    pub price: Decimal,
    /// What the book's cash receives: notional less the swap and network fees.
    pub proceeds: Decimal,
}

/// A USD amount to the cent, halves to even.
pub(crate) fn cents(value: Decimal) -> Decimal {
    value.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven)
}

/// Prices and quantities keep 12 significant digits, so every number the
/// ledger gets is exact as a double.
pub(crate) fn significant(value: Decimal, strategy: RoundingStrategy) -> Decimal {
    value
        .round_sf_with_strategy(12, strategy)
        .unwrap_or(value)
        .normalize()
}

/// The buy a budget of `budget` USD (network fee included) makes in
/// `pool`, the token paying `fee` on the tokens the pool sends; `None`
/// when the swap would be under [`MIN_TRADE_USD`], nothing would arrive,
/// or a number does not fit.
pub(crate) fn buy(pool: &Reserves, budget: Decimal, fee: FeeInForce) -> Option<Bought> {
    let wanted = budget.checked_sub(NETWORK_FEE_USD)?;
    let notional = wanted
        .min(pool.largest_buy_usd()?)
        .round_dp_with_strategy(2, RoundingStrategy::ToZero);
    if notional < MIN_TRADE_USD {
        return None;
    }
    let swap_fee = cents(notional.checked_mul(FEE_RATE)?);
    let swapped = notional.checked_sub(swap_fee)?;
    let quote_in = swapped.checked_div(pool.quote_usd)?;
    let sent = significant(pool.tokens_for(quote_in)?, RoundingStrategy::ToZero);
    let transfer_fee = fee.on(sent)?;
    let received = sent.checked_sub(transfer_fee)?;
    if received <= Decimal::ZERO {
        return None;
    }
    Some(Bought {
        notional,
        swap_fee,
        sent,
        transfer_fee,
        received,
        price: significant(
            swapped.checked_div(received)?,
            RoundingStrategy::AwayFromZero,
        ),
        paid: notional.checked_add(NETWORK_FEE_USD)?,
    })
}

/// The sell of up to `tokens` into `pool` (at most [`MAX_RESERVE_SHARE`] of
/// its token reserve), the token paying `fee` on the tokens sent; `None`
/// when the pool would pay less than [`MIN_TRADE_USD`] or a number does
/// not fit.
pub(crate) fn sell(pool: &Reserves, tokens: Decimal, fee: FeeInForce) -> Option<Sold> {
    let sent = tokens.min(pool.largest_sell());
    if sent <= Decimal::ZERO {
        return None;
    }
    let transfer_fee = fee.on(sent)?;
    let gross = pool.gross_usd(sent, fee)?;
    let notional = cents(gross);
    if notional < MIN_TRADE_USD {
        return None;
    }
    let swap_fee = cents(gross.checked_mul(FEE_RATE)?);
    let proceeds = notional
        .checked_sub(swap_fee)?
        .checked_sub(NETWORK_FEE_USD)?;
    Some(Sold {
        sent,
        transfer_fee,
        notional,
        swap_fee,
        price: significant(gross.checked_div(sent)?, RoundingStrategy::ToZero),
        proceeds,
    })
}

/// What one unit of a holding of `quantity` would fetch if the whole of it
/// were sold in one swap now, after the transfer, swap and network fees:
/// 0 without a pool, or when the fees take it all. `None` when a number
/// does not fit.
pub(crate) fn exit_mark(
    pool: Option<&Reserves>,
    quantity: Decimal,
    fee: FeeInForce,
) -> Option<Decimal> {
    let Some(pool) = pool else {
        return Some(Decimal::ZERO);
    };
    if quantity <= Decimal::ZERO {
        return Some(Decimal::ZERO);
    }
    let gross = pool.gross_usd(quantity, fee)?;
    let net = gross
        .checked_mul(Decimal::ONE - FEE_RATE)?
        .checked_sub(NETWORK_FEE_USD)?;
    if net <= Decimal::ZERO {
        return Some(Decimal::ZERO);
    }
    Some(significant(
        net.checked_div(quantity)?,
        RoundingStrategy::ToZero,
    ))
}

/// A fill price against the pair's mid: price / mid − 1, to six decimals;
/// `None` without a mid.
pub(crate) fn impact(price: Decimal, mid: Option<Decimal>) -> Option<Decimal> {
    let mid = mid.filter(|m| *m > Decimal::ZERO)?;
    Some(
        price
            .checked_div(mid)?
            .checked_sub(Decimal::ONE)?
            .round_dp(6),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(text: &str) -> Decimal {
        Decimal::from_str(text).unwrap()
    }

    /// The worked example of docs/scanner.md: 1 000 000 tokens against 500
    /// SOL at $150 (mid $0.075).
    fn pool() -> Reserves {
        Reserves::new(d("1000000"), d("500"), d("150")).unwrap()
    }

    #[test]
    fn a_buy_is_the_constant_product_fill_with_every_fee() {
        let bought = buy(&pool(), d("1000.02"), FeeInForce::NONE).unwrap();
        assert_eq!(bought.notional, d("1000"));
        assert_eq!(bought.swap_fee, d("2.50"));
        // q = 997.50 / 150 = 6.65 SOL; 1 000 000 × 6.65 / 506.65.
        assert_eq!(bought.sent, d("13125.4317576"));
        assert_eq!(bought.received, bought.sent);
        assert_eq!(bought.paid, d("1000.02"));
        // 997.50 / 13125.4317576 = 0.07599750000013…, 1.33 % above the mid.
        assert_eq!(bought.price, d("0.0759975000002"));
        assert_eq!(impact(bought.price, Some(d("0.075"))), Some(d("0.013300")));
    }

    #[test]
    fn a_sell_is_the_constant_product_fill_with_every_fee() {
        let sold = sell(&pool(), d("13125.4317576"), FeeInForce::NONE).unwrap();
        // 500 × 13125.43… / 1 013 125.43… = 6.47766… SOL × 150 = 971.649…
        assert_eq!(sold.notional, d("971.65"));
        assert_eq!(sold.swap_fee, d("2.43"));
        assert_eq!(sold.proceeds, d("969.20"));
        assert_eq!(sold.price, d("0.0740283459964"));
        assert_eq!(impact(sold.price, Some(d("0.075"))), Some(d("-0.012955")));
        // The mark of the holding is what this sell returns, per unit,
        // before rounding to the cent.
        let mark = exit_mark(Some(&pool()), d("13125.4317576"), FeeInForce::NONE).unwrap();
        assert!((mark * d("13125.4317576") - d("969.20")).abs() < d("0.01"));
    }

    #[test]
    fn the_impact_is_r_over_one_plus_r_with_no_cap_on_it() {
        // r = amount in / reserve in; the tokens out fall short of the mid's
        // by r / (1 + r): 1.96 % at 2 %, 9.09 % at 10 %.
        for (share, shortfall) in [("0.02", "0.0196078431"), ("0.1", "0.0909090909")] {
            let q = d("500") * d(share);
            let out = pool().tokens_for(q).unwrap();
            let at_mid = q * d("2000");
            assert_eq!(((at_mid - out) / at_mid).round_dp(10), d(shortfall));
        }
    }

    #[test]
    fn no_fill_takes_more_than_two_percent_of_the_reserve_it_draws_on() {
        let pool = pool();
        // A budget far above 2 % of 500 SOL × $150 = $1 500.
        let bought = buy(&pool, d("9000"), FeeInForce::NONE).unwrap();
        assert_eq!(bought.notional, d("1500"));
        let quote_in = (bought.notional - bought.swap_fee) / pool.quote_usd;
        assert!(quote_in <= pool.quote * MAX_RESERVE_SHARE);
        let sold = sell(&pool, d("500000"), FeeInForce::NONE).unwrap();
        assert_eq!(sold.sent, d("20000"));
    }

    #[test]
    fn a_dead_pool_marks_at_zero_and_fills_nothing() {
        assert_eq!(
            exit_mark(None, d("100"), FeeInForce::NONE),
            Some(Decimal::ZERO)
        );
        for (token, quote, usd) in [("0", "1", "1"), ("1", "0", "1"), ("1", "1", "-1")] {
            assert_eq!(Reserves::new(d(token), d(quote), d(usd)), None);
        }
        // Fees larger than what a sale would fetch: the holding is worth 0.
        let tiny = Reserves::new(d("1000"), d("0.0001"), d("150")).unwrap();
        assert_eq!(
            exit_mark(Some(&tiny), d("1"), FeeInForce::NONE),
            Some(Decimal::ZERO)
        );
        assert_eq!(sell(&tiny, d("1"), FeeInForce::NONE), None);
        assert_eq!(buy(&pool(), d("1.01"), FeeInForce::NONE), None);
    }

    #[test]
    fn extreme_reserves_never_panic() {
        let max = Decimal::MAX;
        let tiny = d("0.0000000000000000000000000001");
        let near = MAX_AMOUNT - Decimal::ONE;
        for (token, quote, usd) in [(near, near, near), (tiny, near, tiny), (near, tiny, near)] {
            let pool = Reserves::new(token, quote, usd).unwrap();
            for amount in [max, near, Decimal::ONE, tiny] {
                let _ = buy(&pool, amount, FeeInForce::NONE);
                let _ = sell(&pool, amount, FeeInForce::NONE);
                let _ = exit_mark(Some(&pool), amount, FeeInForce::NONE);
            }
        }
    }
}
