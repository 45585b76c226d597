//! The fixed paper experiments and their books. Paper only: nothing here
//! signs, sends or copies anything; a "trade" is arithmetic on a book.
//!
//! Every experiment starts with [`START_CAPITAL_USD`] in cash and pays the
//! same costs on every fill:
//! - a fee of [`FEE_RATE`] of the traded notional (a typical DEX swap fee);
//! - slippage from liquidity: `min(notional / poolLiquidityUsd, MAX_SLIPPAGE)`,
//!   paid as a worse price (buys at `mark × (1 + s)`, sells at `mark × (1 − s)`),
//!   the first-order price impact of a constant-product pool.
//!
//! A rule decides the target holdings; the book trades toward them when a
//! holding is off by more than [`REBALANCE_BAND`] of equity, sells first, and
//! never spends more cash than it has. A token that is no longer eligible is
//! sold. Changing a rule means a new experiment id.

use super::{DEDUP_WINDOW, TRADES_PER_BOOK};
use crate::clock::rfc3339;
use crate::record::{MAX_AMOUNT, decimal_json};
use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Start capital of every experiment, in USD.
pub const START_CAPITAL_USD: Decimal = Decimal::from_parts(10_000, 0, 0, false, 0);
/// Fee per fill: 0.25 % of notional.
pub const FEE_RATE: Decimal = Decimal::from_parts(25, 0, 0, false, 4);
/// Largest slippage a fill pays: 5 %.
pub(crate) const MAX_SLIPPAGE: Decimal = Decimal::from_parts(5, 0, 0, false, 2);
/// A holding is traded when it is off its target by more than 2 % of equity.
pub const REBALANCE_BAND: Decimal = Decimal::from_parts(2, 0, 0, false, 2);
/// Fills below one dollar are not made.
pub(crate) const MIN_TRADE_USD: Decimal = Decimal::ONE;
/// The momentum rule holds at most this many tokens.
pub const MOMENTUM_TOKENS: usize = 3;

/// What an experiment holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Holds its cash; never trades. The baseline every rule must beat.
    Control,
    /// Equal weight over every eligible token.
    EqualWeightEligible,
    /// Equal weight over the eligible tokens with the highest positive 24-hour
    /// price change, at most [`MOMENTUM_TOKENS`].
    MomentumTop,
}

/// A fixed experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Experiment {
    /// Its id, also its `strategyId` in the fund ledger.
    pub id: &'static str,
    /// Its name in the ledger.
    pub name: &'static str,
    /// Its rule.
    pub rule: Rule,
    /// The rule in words, for the contract view.
    pub description: &'static str,
    /// Its version (a changed rule is a new id, so this stays 1).
    pub version: u32,
}

/// The experiments, fixed in code.
pub const EXPERIMENTS: [Experiment; 3] = [
    Experiment {
        id: "scanner-control-cash-v1",
        name: "Scanner control: cash only (paper)",
        rule: Rule::Control,
        description: "holds its start capital in cash and never trades: the do-nothing control",
        version: 1,
    },
    Experiment {
        id: "scanner-equal-weight-v1",
        name: "Scanner equal weight of eligible tokens (paper)",
        rule: Rule::EqualWeightEligible,
        description: "equal weight over every eligible token (all checks pass); sells a token once it is no longer eligible",
        version: 1,
    },
    Experiment {
        id: "scanner-momentum-top3-v1",
        name: "Scanner momentum top 3 (paper)",
        rule: Rule::MomentumTop,
        description: "equal weight over the eligible tokens with the highest positive 24-hour price change, at most 3; cash otherwise",
        version: 1,
    },
];

/// The experiments as the contract view declares them.
pub fn declaration() -> Value {
    let experiments: Vec<Value> = EXPERIMENTS
        .iter()
        .map(|e| {
            json!({
                "id": e.id, "name": e.name, "version": e.version, "rule": e.description,
                "startCapitalUsd": decimal_json(START_CAPITAL_USD),
            })
        })
        .collect();
    json!({
        "experiments": experiments,
        "costModel": {
            "feeRate": decimal_json(FEE_RATE),
            "slippage": "min(notional / poolLiquidityUsd, maxSlippage) as a worse fill price",
            "maxSlippage": decimal_json(MAX_SLIPPAGE),
            "rebalanceBand": "trade a holding only when it is off its target by more than this share of equity",
            "rebalanceBandShare": decimal_json(REBALANCE_BAND),
            "minTradeUsd": decimal_json(MIN_TRADE_USD),
        },
        "advance": format!("at most once per {} minutes and once per 15-minute ledger slot; each advance appends every experiment's paper snapshot to the fund ledger with asOf on the 15-minute grid", DEDUP_WINDOW.num_minutes()),
        "paperOnly": "nothing is signed, sent or copied: trades are arithmetic on a paper book",
    })
}

/// A token as the experiments see it in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenMarket {
    /// Mint address.
    pub mint: String,
    /// Ticker, for trades and paper positions.
    pub symbol: String,
    /// USD price.
    pub price: Decimal,
    /// USD liquidity of its most liquid pool.
    pub liquidity: Decimal,
    /// 24-hour price change in percent.
    pub change_h24: Option<f64>,
    /// Every check passed.
    pub eligible: bool,
}

/// A paper holding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Position {
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
}

impl Position {
    /// Quantity × mark, to the cent; `None` when it does not fit a decimal.
    pub fn value(&self) -> Option<Decimal> {
        value_of(self.quantity, self.mark).map(cents)
    }
}

/// Buy or sell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// Cash into the token.
    Buy,
    /// The token into cash.
    Sell,
}

/// One paper fill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trade {
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
    /// Fee paid in USD.
    pub fee: Decimal,
    /// Cash after the fill.
    pub cash_after: Decimal,
}

/// An experiment's paper book.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Book {
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
const MAX_BOOK_USD: Decimal = Decimal::from_parts(0x4E72_A000, 0x0918, 0, false, 0);

impl Book {
    /// A fresh book with the start capital.
    pub fn new(experiment: &Experiment) -> Book {
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
    pub fn equity(&self) -> Option<Decimal> {
        let holdings = self.positions.iter().try_fold(Decimal::ZERO, |sum, p| {
            sum.checked_add(value_of(p.quantity, p.mark)?)
        })?;
        Some(cents(self.cash.checked_add(holdings)?))
    }

    /// Marks holdings to `market` (a token without a price keeps its mark).
    pub fn mark(&mut self, market: &[TokenMarket]) {
        for position in &mut self.positions {
            if let Some(token) = market.iter().find(|t| t.mint == position.mint) {
                position.mark = significant(token.price, RoundingStrategy::MidpointNearestEven);
            }
        }
    }

    /// Marks to `market`, then trades toward the rule's targets. Returns the
    /// fills made (also kept in the book). Every step is checked arithmetic:
    /// a book that cannot be valued does not trade, and a fill whose numbers
    /// do not fit (or would not fit the ledger) is not made.
    pub fn advance(
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
            let held = match self.positions.iter().find(|p| p.mint == token.mint) {
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
        let gross = value_of(quantity, price)?;
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
        Some(self.fill(token, Side::Sell, quantity, mark, price, slip, fee, at))
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
        let quantity = significant(
            spend.checked_sub(fee)?.checked_div(price)?,
            RoundingStrategy::ToZero,
        );
        if quantity <= Decimal::ZERO {
            return None;
        }
        let paid = cents(value_of(quantity, price)?.checked_add(fee)?);
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
            }),
        }
        Some(self.fill(token, Side::Buy, quantity, mark, price, slip, fee, at))
    }

    #[allow(clippy::too_many_arguments)]
    fn fill(
        &self,
        token: &TokenMarket,
        side: Side,
        quantity: Decimal,
        mark: Decimal,
        price: Decimal,
        slippage: Decimal,
        fee: Decimal,
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
            cash_after: self.cash,
        }
    }

    /// The book as a paper snapshot for the fund ledger at `as_of` (a grid
    /// instant). It reconciles: equity is cash plus holdings to the cent.
    /// `None` when the book cannot be valued or holds a number the ledger
    /// cannot record exactly (cash or equity of 10^13 USD or more, a
    /// quantity, cost or mark of 10^15 or more).
    pub fn snapshot_record(&self, experiment: &Experiment, as_of: DateTime<Utc>) -> Option<Value> {
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
                json!({
                    "symbol": p.symbol, "quantity": decimal_json(p.quantity),
                    "cost": decimal_json(p.cost), "mark": decimal_json(p.mark),
                })
            })
            .collect();
        Some(json!({
            "id": format!("{}-{}", experiment.id, as_of.format("%Y%m%dT%H%MZ")),
            "type": "snapshot", "visibility": "public", "mode": "paper",
            "strategyId": experiment.id, "strategyName": experiment.name,
            "asOf": rfc3339(as_of),
            "source": {"name": "freedom-scanner paper book (DexScreener prices)", "url": "https://dexscreener.com/solana"},
            "currency": "USD",
            "equity": decimal_json(equity),
            "flowSincePrevious": 0,
            "cash": decimal_json(self.cash),
            "positions": positions,
        }))
    }
}

/// The tokens `rule` wants to hold, in a stable order.
fn targets(rule: Rule, market: &[TokenMarket]) -> Vec<&TokenMarket> {
    let mut eligible: Vec<&TokenMarket> = market
        .iter()
        .filter(|t| t.eligible && t.price > Decimal::ZERO)
        .collect();
    eligible.sort_by(|a, b| a.mint.cmp(&b.mint));
    match rule {
        Rule::Control => Vec::new(),
        Rule::EqualWeightEligible => eligible,
        Rule::MomentumTop => {
            let mut rising: Vec<&TokenMarket> = eligible
                .into_iter()
                .filter(|t| t.change_h24.is_some_and(|c| c > 0.0))
                .collect();
            rising.sort_by(|a, b| {
                b.change_h24
                    .partial_cmp(&a.change_h24)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then_with(|| a.mint.cmp(&b.mint))
            });
            rising.truncate(MOMENTUM_TOKENS);
            rising
        }
    }
}

#[cfg(test)]
mod tests;
