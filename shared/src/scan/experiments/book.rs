//! A paper book: cash, holdings and the latest fills, and how the book
//! trades toward its targets (the fills themselves are priced in `pool`).

use super::pool::{self, Reserves, cents, significant};
use super::{
    Experiment, MIN_TRADE_USD, NETWORK_FEE_USD, REBALANCE_BAND, START_CAPITAL_USD, TokenMarket,
    targets,
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
#[serde(rename_all = "camelCase")]
pub(crate) struct Position {
    /// Mint address.
    pub mint: String,
    /// Symbol (what the ledger shows).
    pub symbol: String,
    /// Quantity held (> 0).
    pub quantity: Decimal,
    /// Average fill price paid, fees included.
    pub cost: Decimal,
    /// What one unit would fetch if the whole holding were sold now, after
    /// every fee (0 without a pool): the paper snapshot's mark.
    pub mark: Decimal,
    /// The pair's USD price at the last mark (0 when it gave none).
    #[serde(default)]
    pub mid_mark: Decimal,
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
            self.quantity.checked_mul(self.mark)
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
    /// Tokens the book received (a buy) or sent (a sell).
    pub quantity: Decimal,
    /// The pair's USD price at the fill, when it gave one.
    #[serde(default)]
    pub mid: Option<Decimal>,
    /// The fill price: USD swapped after the swap fee per token received
    /// (a buy), USD out before the swap fee per token sent (a sell).
    pub price: Decimal,
    /// Price / mid − 1, when there is a mid.
    #[serde(default)]
    pub impact: Option<Decimal>,
    /// USD the swap moved: paid in, swap fee included (a buy), or paid out
    /// before the swap fee (a sell).
    #[serde(default)]
    pub notional: Decimal,
    /// Swap fee paid in USD.
    pub fee: Decimal,
    /// Network fee paid in USD.
    #[serde(default)]
    pub network_fee: Decimal,
    /// The token's transfer fee on the tokens moved, in tokens (0 for a
    /// token without one).
    #[serde(default)]
    pub transfer_fee: Decimal,
    /// Cash after the fill.
    pub cash_after: Decimal,
    /// The reserves the fill was priced at.
    #[serde(default)]
    pub reserves: Option<Reserves>,
    /// The DexScreener answer (by `bodySha256`) the reserves came from.
    #[serde(default)]
    pub reserves_evidence: Option<String>,
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

    /// Marks every holding `market` has an answer for: at what selling all
    /// of it now would fetch (0 without a pool), the pair's mid beside it; a
    /// holding whose token the evidence says can no longer be moved is
    /// blocked for good. A holding whose token's transfer fee is not known
    /// this run keeps its mark (its book is not recorded that run).
    pub(crate) fn mark(&mut self, market: &[TokenMarket]) {
        for position in &mut self.positions {
            let Some(token) = market.iter().find(|t| t.mint == position.mint) else {
                continue;
            };
            position.blocked |= token.blocked;
            position.mid_mark = token.mid.map_or(Decimal::ZERO, |mid| {
                significant(mid, RoundingStrategy::MidpointNearestEven)
            });
            let fee = match token.pool {
                None => Some(super::FeeInForce::NONE),
                Some(_) => token.transfer_fee,
            };
            if let Some(fee) = fee {
                // A value that does not fit a decimal is none a trader
                // could fetch.
                position.mark = pool::exit_mark(token.pool.as_ref(), position.quantity, fee)
                    .unwrap_or(Decimal::ZERO);
            }
        }
    }

    /// What `position` counts toward the rule's targets: quantity × the
    /// pair's mid while the token can be traded; 0 when it is blocked, has
    /// no pool or no mid. `None` when it does not fit a decimal.
    fn value_at_mid(position: &Position, market: &[TokenMarket]) -> Option<Decimal> {
        let tradable = market
            .iter()
            .find(|t| t.mint == position.mint && t.tradable())
            .and_then(|t| t.mid);
        match tradable {
            Some(mid) if !position.blocked => position.quantity.checked_mul(mid),
            _ => Some(Decimal::ZERO),
        }
    }

    /// Marks to `market`, then trades toward the rule's targets, then
    /// marks the holdings as they now stand. Returns the fills made (also
    /// kept in the book). Every step is checked arithmetic: a book that
    /// cannot be valued does not trade, and a fill whose numbers do not fit
    /// (or would not fit the ledger) is not made.
    pub(crate) fn advance(
        &mut self,
        experiment: &Experiment,
        market: &[TokenMarket],
        at: DateTime<Utc>,
    ) -> Vec<Trade> {
        self.mark(market);
        self.advanced_at = Some(at);
        let fills = self.rebalance(experiment, market, at).unwrap_or_default();
        self.mark(market);
        self.trades.extend(fills.iter().cloned());
        let excess = self.trades.len().saturating_sub(TRADES_PER_BOOK);
        self.trades.drain(..excess);
        fills
    }

    /// The fills toward the rule's targets: equal shares of the book valued
    /// at the pairs' mids; holdings off the list sold, then overweights
    /// trimmed, then underweights bought, each only when more than
    /// [`REBALANCE_BAND`] of that value off. `None` when the book cannot be
    /// valued.
    fn rebalance(
        &mut self,
        experiment: &Experiment,
        market: &[TokenMarket],
        at: DateTime<Utc>,
    ) -> Option<Vec<Trade>> {
        let targets = targets(experiment.rule, market);
        let value = self.positions.iter().try_fold(self.cash, |sum, p| {
            sum.checked_add(Book::value_at_mid(p, market)?)
        })?;
        let target_value = if targets.is_empty() {
            Decimal::ZERO
        } else {
            // Dividing by a count of at least one cannot overflow.
            value / Decimal::from(targets.len())
        };
        // Multiplying by a share below one cannot overflow either.
        let band = value * REBALANCE_BAND;
        let mut fills = Vec::new();
        // The benchmark holds what it bought: it never sells.
        let sells = experiment.rule != super::Rule::HoldSol;
        for index in (0..self.positions.len()).rev().filter(|_| sells) {
            let position = &self.positions[index];
            if position.blocked {
                continue; // it cannot be moved: it is never sold
            }
            let Some(token) = market.iter().find(|t| t.mint == position.mint) else {
                continue; // no answer this run: hold
            };
            let quantity = if !targets.iter().any(|t| t.mint == token.mint) {
                position.quantity
            } else {
                let held = Book::value_at_mid(position, market)?;
                let Some(excess) = held.checked_sub(target_value).filter(|e| *e > band) else {
                    continue;
                };
                let Some(tokens) = token.mid.and_then(|mid| excess.checked_div(mid)) else {
                    continue;
                };
                significant(tokens, RoundingStrategy::ToZero).min(position.quantity)
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
                Some(p) => Book::value_at_mid(p, market)?,
                None => Decimal::ZERO,
            };
            let Some(short) = target_value.checked_sub(held).filter(|s| *s > band) else {
                continue;
            };
            let budget = short.min(self.cash);
            if budget >= MIN_TRADE_USD + NETWORK_FEE_USD
                && let Some(fill) = self.buy(token, budget, at)
            {
                fills.push(fill);
            }
        }
        Some(fills)
    }

    /// A fill of `token` with what every fill records; the caller sets the
    /// side and the amounts.
    fn fill_of(&self, token: &TokenMarket, pool: &Reserves, at: DateTime<Utc>) -> Trade {
        Trade {
            at,
            experiment_id: self.experiment_id.clone(),
            mint: token.mint.clone(),
            symbol: token.symbol.clone(),
            side: Side::Buy,
            quantity: Decimal::ZERO,
            mid: token.mid,
            price: Decimal::ZERO,
            impact: None,
            notional: Decimal::ZERO,
            fee: Decimal::ZERO,
            network_fee: NETWORK_FEE_USD,
            transfer_fee: Decimal::ZERO,
            cash_after: self.cash,
            reserves: Some(*pool),
            reserves_evidence: token.pool_evidence.clone(),
            evidence: token.evidence.clone(),
        }
    }

    /// Sells up to `quantity` of the holding at `index` into the token's
    /// pool (at most its share of the token reserve); none without a pool
    /// or a known transfer fee.
    fn sell(
        &mut self,
        index: usize,
        token: &TokenMarket,
        quantity: Decimal,
        at: DateTime<Utc>,
    ) -> Option<Trade> {
        let pool = token.pool.as_ref()?;
        let sold = pool::sell(pool, quantity, token.transfer_fee?)?;
        let cash = self.cash.checked_add(sold.proceeds)?;
        let left = self.positions[index].quantity.checked_sub(sold.sent)?;
        // Computed in full before the book changes.
        self.cash = cash;
        if left <= Decimal::ZERO {
            self.positions.remove(index);
        } else {
            self.positions[index].quantity = left;
        }
        Some(Trade {
            side: Side::Sell,
            quantity: sold.sent,
            price: sold.price,
            impact: pool::impact(sold.price, token.mid),
            notional: sold.notional,
            fee: sold.swap_fee,
            transfer_fee: sold.transfer_fee.normalize(),
            ..self.fill_of(token, pool, at)
        })
    }

    /// Buys `token` with at most `budget` USD of cash (network fee
    /// included), at most its share of the quote reserve.
    fn buy(&mut self, token: &TokenMarket, budget: Decimal, at: DateTime<Utc>) -> Option<Trade> {
        let pool = token.pool.as_ref()?;
        let bought = pool::buy(pool, budget, token.transfer_fee?)?;
        let cash = self.cash.checked_sub(bought.paid)?;
        if cash < Decimal::ZERO {
            return None;
        }
        let held = self.positions.iter().position(|p| p.mint == token.mint);
        let (total, spent) = match held.map(|i| &self.positions[i]) {
            Some(position) => (
                position.quantity.checked_add(bought.received)?,
                position
                    .cost
                    .checked_mul(position.quantity)?
                    .checked_add(bought.paid)?,
            ),
            None => (bought.received, bought.paid),
        };
        // A holding the ledger could not record (1e15 units or more) is not bought.
        if total >= MAX_AMOUNT {
            return None;
        }
        let cost = significant(
            spent.checked_div(total)?,
            RoundingStrategy::MidpointNearestEven,
        );
        // Computed in full before the book changes.
        self.cash = cash;
        match held {
            Some(i) => {
                let position = &mut self.positions[i];
                position.quantity = total;
                position.cost = cost;
            }
            // Marked when the advance ends, with the whole holding.
            None => self.positions.push(Position {
                mint: token.mint.clone(),
                symbol: token.symbol.clone(),
                quantity: total,
                cost,
                mark: Decimal::ZERO,
                mid_mark: Decimal::ZERO,
                blocked: false,
            }),
        }
        Some(Trade {
            side: Side::Buy,
            quantity: bought.received,
            price: bought.price,
            impact: pool::impact(bought.price, token.mid),
            notional: bought.notional,
            fee: bought.swap_fee,
            transfer_fee: bought.transfer_fee.normalize(),
            ..self.fill_of(token, pool, at)
        })
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
            "source": {"name": "freedom-scanner paper book (DexScreener reserves, marked at exit value)", "url": format!("https://dexscreener.com/solana#report={report}")},
            "currency": "USD",
            "equity": decimal_json(equity),
            "flowSincePrevious": 0,
            "cash": decimal_json(self.cash),
            "positions": positions,
        }))
    }
}
