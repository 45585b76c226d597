//! A paper book: cash, holdings and the latest fills, and how a fill is
//! priced (see the module above for the cost model).

use super::{
    Experiment, FEE_RATE, MAX_SLIPPAGE, MIN_TRADE_USD, REBALANCE_BAND, START_CAPITAL_USD,
    TokenMarket, targets,
};
use crate::clock::rfc3339;
use crate::record::{MAX_AMOUNT, decimal_json};
use crate::scan::TRADES_PER_BOOK;
use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A paper holding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Position {
    /// Mint address.
    pub mint: String,
    /// Symbol (what the ledger shows).
    pub symbol: String,
    /// Quantity held (> 0).
    pub quantity: Decimal,
    /// Average fill price paid, fees included.
    pub cost: Decimal,
    /// Latest price.
    pub mark: Decimal,
    /// The token can no longer be moved (it turned non-transferable,
    /// frozen or paused): valued at 0 from then on, never sold.
    #[serde(default)]
    pub blocked: bool,
}

impl Position {
    /// Quantity × mark, to the cent (0 once blocked); `None` when it does
    /// not fit a decimal.
    pub(crate) fn value(&self) -> Option<Decimal> {
        self.worth().map(cents)
    }

    /// Quantity × mark, exactly (0 once blocked).
    fn worth(&self) -> Option<Decimal> {
        if self.blocked {
            Some(Decimal::ZERO)
        } else {
            value_of(self.quantity, self.mark)
        }
    }
}

/// Buy or sell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum Side {
    /// Cash into the token.
    Buy,
    /// The token into cash.
    Sell,
}

/// One paper fill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Trade {
    /// When the fill happened (the run's start).
    pub at: DateTime<Utc>,
    /// Which experiment.
    pub experiment_id: String,
    /// Mint address.
    pub mint: String,
    /// Ticker at the time of the fill.
    pub symbol: String,
    /// Buy or sell.
    pub side: Side,
    /// Quantity filled.
    pub quantity: Decimal,
    /// The market price.
    pub mark: Decimal,
    /// The fill price after slippage.
    pub price: Decimal,
    /// Slippage as a share of the mark.
    pub slippage: Decimal,
    /// Swap fee paid in USD.
    pub fee: Decimal,
    /// The token's transfer fee on the tokens moved, in tokens (0 for a
    /// token without one).
    #[serde(default)]
    pub transfer_fee: Decimal,
    /// Cash after the fill.
    pub cash_after: Decimal,
    /// The provider answers (by `bodySha256`) the fill's price and fee
    /// came from; each is served as evidence for seven days.
    #[serde(default)]
    pub evidence: Vec<String>,
}

/// An experiment's paper book.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Book {
    /// Which experiment.
    pub experiment_id: String,
    /// Cash in USD (cents).
    pub cash: Decimal,
    /// Paper holdings, one per token held.
    pub positions: Vec<Position>,
    /// The latest fills, newest last (at most [`TRADES_PER_BOOK`]).
    pub trades: Vec<Trade>,
    /// When it last advanced.
    pub advanced_at: Option<DateTime<Utc>>,
}

fn cents(value: Decimal) -> Decimal {
    value.round_dp_with_strategy(2, RoundingStrategy::MidpointNearestEven)
}

/// Prices and quantities keep 12 significant digits, so every number the
/// ledger gets is exact as a double.
fn significant(value: Decimal, strategy: RoundingStrategy) -> Decimal {
    value
        .round_sf_with_strategy(12, strategy)
        .unwrap_or(value)
        .normalize()
}

fn slippage(notional: Decimal, liquidity: Decimal) -> Decimal {
    if liquidity <= Decimal::ZERO {
        return MAX_SLIPPAGE;
    }
    notional
        .checked_div(liquidity)
        .map_or(MAX_SLIPPAGE, |s| s.min(MAX_SLIPPAGE))
}

/// quantity × mark, or `None` when it does not fit a decimal.
fn value_of(quantity: Decimal, mark: Decimal) -> Option<Decimal> {
    quantity.checked_mul(mark)
}

/// Largest cash or equity a paper snapshot carries: to the cent, 10^13 has
/// 15 significant digits, the most a double keeps exactly.
pub(crate) const MAX_BOOK_USD: Decimal = Decimal::from_parts(0x4E72_A000, 0x0918, 0, false, 0);

impl Book {
    /// A fresh book with the start capital.
    pub(crate) fn new(experiment: &Experiment) -> Book {
        Book {
            experiment_id: experiment.id.to_owned(),
            cash: START_CAPITAL_USD,
            positions: Vec::new(),
            trades: Vec::new(),
            advanced_at: None,
        }
    }

    /// Cash plus every holding at its mark, to the cent; `None` when the
    /// holdings' value does not fit a decimal (the book cannot be valued).
    pub(crate) fn equity(&self) -> Option<Decimal> {
        let holdings = self
            .positions
            .iter()
            .try_fold(Decimal::ZERO, |sum, p| sum.checked_add(p.worth()?))?;
        Some(cents(self.cash.checked_add(holdings)?))
    }

    /// Marks holdings to `market` (a token without a price keeps its mark);
    /// a holding whose token the evidence says can no longer be moved is
    /// blocked for good.
    pub(crate) fn mark(&mut self, market: &[TokenMarket]) {
        for position in &mut self.positions {
            if let Some(token) = market.iter().find(|t| t.mint == position.mint) {
                position.mark = significant(token.price, RoundingStrategy::MidpointNearestEven);
                position.blocked |= token.blocked;
            }
        }
    }

    /// Marks to `market`, then trades toward the rule's targets. Returns the
    /// fills made (also kept in the book). Every step is checked arithmetic:
    /// a book that cannot be valued does not trade, and a fill whose numbers
    /// do not fit (or would not fit the ledger) is not made.
    pub(crate) fn advance(
        &mut self,
        experiment: &Experiment,
        market: &[TokenMarket],
        at: DateTime<Utc>,
    ) -> Vec<Trade> {
        self.mark(market);
        self.advanced_at = Some(at);
        let targets = targets(experiment.rule, market);
        let Some(equity) = self.equity() else {
            return Vec::new();
        };
        let target_value = if targets.is_empty() {
            Decimal::ZERO
        } else {
            // Dividing by a count of at least one cannot overflow.
            equity / Decimal::from(targets.len())
        };
        // Multiplying by a share below one cannot overflow either.
        let band = equity * REBALANCE_BAND;
        let mut fills = Vec::new();
        // Sells first: holdings off the target list, then overweights.
        for index in (0..self.positions.len()).rev() {
            let position = self.positions[index].clone();
            if position.blocked {
                continue; // it cannot be moved: it is never sold
            }
            let Some(token) = market.iter().find(|t| t.mint == position.mint) else {
                continue; // no price this run: hold
            };
            let Some(value) = value_of(position.quantity, position.mark) else {
                continue;
            };
            let quantity = if !targets.iter().any(|t| t.mint == token.mint) {
                position.quantity
            } else if value - target_value > band {
                let Some(excess) = (value - target_value).checked_div(position.mark) else {
                    continue;
                };
                significant(excess, RoundingStrategy::ToZero).min(position.quantity)
            } else {
                continue;
            };
            if let Some(fill) = self.sell(index, token, quantity, at) {
                fills.push(fill);
            }
        }
        for token in &targets {
            if token.blocked {
                continue;
            }
            let held = match self.positions.iter().find(|p| p.mint == token.mint) {
                Some(p) if p.blocked => continue,
                Some(p) => value_of(p.quantity, p.mark),
                None => Some(Decimal::ZERO),
            };
            let Some(held) = held else {
                continue;
            };
            // Both are at most the equity: the difference fits.
            let wanted = (target_value - held).min(self.cash);
            if target_value - held > band
                && wanted >= MIN_TRADE_USD
                && let Some(fill) = self.buy(token, cents(wanted), at)
            {
                fills.push(fill);
            }
        }
        self.trades.extend(fills.iter().cloned());
        let excess = self.trades.len().saturating_sub(TRADES_PER_BOOK);
        self.trades.drain(..excess);
        fills
    }

    fn sell(
        &mut self,
        index: usize,
        token: &TokenMarket,
        quantity: Decimal,
        at: DateTime<Utc>,
    ) -> Option<Trade> {
        let mark = significant(token.price, RoundingStrategy::MidpointNearestEven);
        let notional = value_of(quantity, mark)?;
        if quantity <= Decimal::ZERO || notional < MIN_TRADE_USD {
            return None;
        }
        let slip = slippage(notional, token.liquidity);
        let price = significant(
            mark.checked_mul(Decimal::ONE - slip)?,
            RoundingStrategy::ToZero,
        );
        // The pool receives what is left after the token's transfer fee.
        let transfer_fee = token.transfer_fee?.on(quantity)?;
        let received = quantity.checked_sub(transfer_fee)?;
        let gross = value_of(received, price)?;
        let fee = cents(gross.checked_mul(FEE_RATE)?);
        let cash = cents(self.cash.checked_add(gross)?.checked_sub(fee)?);
        let left = self.positions[index].quantity.checked_sub(quantity)?;
        // Computed in full before the book changes.
        self.cash = cash;
        if left <= Decimal::ZERO {
            self.positions.remove(index);
        } else {
            self.positions[index].quantity = left;
        }
        Some(self.fill(
            token,
            Side::Sell,
            quantity,
            (mark, price, slip),
            (fee, transfer_fee),
            at,
        ))
    }

    fn buy(&mut self, token: &TokenMarket, spend: Decimal, at: DateTime<Utc>) -> Option<Trade> {
        let mark = significant(token.price, RoundingStrategy::MidpointNearestEven);
        if mark <= Decimal::ZERO || spend < MIN_TRADE_USD {
            return None;
        }
        let fee = cents(spend.checked_mul(FEE_RATE)?);
        let slip = slippage(spend, token.liquidity);
        let price = significant(
            mark.checked_mul(Decimal::ONE + slip)?,
            RoundingStrategy::AwayFromZero,
        );
        // What the pool sends; the buyer receives it less the token's
        // transfer fee.
        let sent = significant(
            spend.checked_sub(fee)?.checked_div(price)?,
            RoundingStrategy::ToZero,
        );
        let transfer_fee = token.transfer_fee?.on(sent)?;
        let quantity = sent.checked_sub(transfer_fee)?;
        if quantity <= Decimal::ZERO {
            return None;
        }
        let paid = cents(value_of(sent, price)?.checked_add(fee)?);
        let cash = cents(self.cash.checked_sub(paid)?);
        let held = self.positions.iter().position(|p| p.mint == token.mint);
        let (total, cost) = match held.map(|i| &self.positions[i]) {
            Some(position) => {
                let total = position.quantity.checked_add(quantity)?;
                let spent = value_of(position.cost, position.quantity)?.checked_add(paid)?;
                (total, spent.checked_div(total)?)
            }
            None => (quantity, paid.checked_div(quantity)?),
        };
        // A holding the ledger could not record (1e15 units or more) is not bought.
        if total >= MAX_AMOUNT {
            return None;
        }
        let cost = significant(cost, RoundingStrategy::MidpointNearestEven);
        // Computed in full before the book changes.
        self.cash = cash;
        match held {
            Some(i) => {
                let position = &mut self.positions[i];
                position.quantity = total;
                position.cost = cost;
                position.mark = mark;
            }
            None => self.positions.push(Position {
                mint: token.mint.clone(),
                symbol: token.symbol.clone(),
                quantity,
                cost,
                mark,
                blocked: false,
            }),
        }
        Some(self.fill(
            token,
            Side::Buy,
            quantity,
            (mark, price, slip),
            (fee, transfer_fee),
            at,
        ))
    }

    /// The trade a fill made: `prices` are (mark, fill price, slippage),
    /// `fees` (swap fee in USD, transfer fee in tokens).
    fn fill(
        &self,
        token: &TokenMarket,
        side: Side,
        quantity: Decimal,
        (mark, price, slippage): (Decimal, Decimal, Decimal),
        (fee, transfer_fee): (Decimal, Decimal),
        at: DateTime<Utc>,
    ) -> Trade {
        Trade {
            at,
            experiment_id: self.experiment_id.clone(),
            mint: token.mint.clone(),
            symbol: token.symbol.clone(),
            side,
            quantity,
            mark,
            price,
            slippage: slippage.round_dp(6),
            fee,
            transfer_fee: transfer_fee.normalize(),
            cash_after: self.cash,
            evidence: token.evidence.clone(),
        }
    }

    /// The book as a paper snapshot for the fund ledger at `as_of` (a grid
    /// instant), its `source.url` naming the run's report (`report`,
    /// `sha256:<hex>`). It reconciles: equity is cash plus holdings to the cent.
    /// `None` when the book cannot be valued or holds a number the ledger
    /// cannot record exactly (cash or equity of 10^13 USD or more, a
    /// quantity, cost or mark of 10^15 or more).
    pub(crate) fn snapshot_record(
        &self,
        experiment: &Experiment,
        as_of: DateTime<Utc>,
        report: &str,
    ) -> Option<Value> {
        let equity = self.equity()?;
        let recordable = equity < MAX_BOOK_USD
            && self.cash < MAX_BOOK_USD
            && self
                .positions
                .iter()
                .all(|p| p.quantity < MAX_AMOUNT && p.cost < MAX_AMOUNT && p.mark < MAX_AMOUNT);
        if !recordable {
            return None;
        }
        let positions: Vec<Value> = self
            .positions
            .iter()
            .map(|p| {
                // A blocked holding is worth nothing: its mark in the record is 0.
                let mark = if p.blocked { Decimal::ZERO } else { p.mark };
                json!({
                    "symbol": p.symbol, "quantity": decimal_json(p.quantity),
                    "cost": decimal_json(p.cost), "mark": decimal_json(mark),
                })
            })
            .collect();
        Some(json!({
            "id": format!("{}-{}", experiment.id, as_of.format("%Y%m%dT%H%MZ")),
            "type": "snapshot", "visibility": "public", "mode": "paper",
            "strategyId": experiment.id, "strategyName": experiment.name,
            "asOf": rfc3339(as_of),
            "source": {"name": "freedom-scanner paper book (DexScreener prices)", "url": format!("https://dexscreener.com/solana#report={report}")},
            "currency": "USD",
            "equity": decimal_json(equity),
            "flowSincePrevious": 0,
            "cash": decimal_json(self.cash),
            "positions": positions,
        }))
    }
}
