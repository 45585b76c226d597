//! The fixed paper experiments. Paper only: nothing here signs, sends or
//! copies anything; a "trade" is arithmetic on a book (`book`).
//!
//! Every experiment starts with `START_CAPITAL_USD` in cash and pays the
//! same costs on every fill:
//! - a swap fee of `FEE_RATE` of the traded notional (a typical DEX fee);
//! - slippage from liquidity: `min(notional / poolLiquidityUsd, MAX_SLIPPAGE)`,
//!   paid as a worse price (buys at `mark × (1 + s)`, sells at `mark × (1 − s)`),
//!   the first-order price impact of a constant-product pool;
//! - the token's Token-2022 transfer fee in force, capped at its maximum,
//!   on the tokens moved by every buy and every sell.
//!
//! A rule decides the target holdings among the eligible tokens (every
//! check passes); the book trades toward them when a holding is off by more
//! than `REBALANCE_BAND` of equity, sells first, and never spends more
//! cash than it has. A token that is no longer eligible is sold, unless it
//! can no longer be moved: a held token that turns non-transferable, frozen
//! or paused is valued at 0 from then on and never sold.
//!
//! Each experiment's rule, in full (`rule_text`), is published as a
//! decision record before its first paper snapshot, with its SHA-256
//! (`rule_hash`); changing a rule means a new experiment id. The first
//! experiments (`-v1`) did not check what a trader relies on beyond five
//! checks; they are retired (`RETIRED`) and their books stopped.

pub(crate) mod book;

use super::checks::CHECK_NAMES;
use super::holders::{MAX_TOP_HOLDERS_SHARE, TOP_HOLDERS};
use super::mint::{FeeInForce, MAX_TRANSFER_FEE_BPS};
use super::provenance::sha256_hex;
use super::{DEDUP_WINDOW, MIN_LIQUIDITY_USD};
use crate::clock::rfc3339;
use crate::record::decimal_json;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde_json::{Value, json};

pub(crate) use book::{Book, Side, Trade};

/// Start capital of every experiment, in USD.
pub(crate) const START_CAPITAL_USD: Decimal = Decimal::from_parts(10_000, 0, 0, false, 0);
/// Swap fee per fill: 0.25 % of notional.
pub(crate) const FEE_RATE: Decimal = Decimal::from_parts(25, 0, 0, false, 4);
/// Largest slippage a fill pays: 5 %.
pub(crate) const MAX_SLIPPAGE: Decimal = Decimal::from_parts(5, 0, 0, false, 2);
/// A holding is traded when it is off its target by more than 2 % of equity.
pub(crate) const REBALANCE_BAND: Decimal = Decimal::from_parts(2, 0, 0, false, 2);
/// Fills below one dollar are not made.
pub(crate) const MIN_TRADE_USD: Decimal = Decimal::ONE;
/// The momentum rule holds at most this many tokens.
pub(crate) const MOMENTUM_TOKENS: usize = 3;
/// The least share of a token's LP locked or burned for `liquidity_locked`.
pub(crate) const MIN_LP_LOCKED_PCT: f64 = super::checks::MIN_LP_LOCKED_PCT;

/// What an experiment holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Holds its cash; never trades. The baseline every rule must beat.
    Control,
    /// Equal weight over every eligible token.
    EqualWeightEligible,
    /// Equal weight over the eligible tokens with the highest positive 24-hour
    /// price change, at most `MOMENTUM_TOKENS`.
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
    /// The rule in one sentence (the registration's summary).
    pub description: &'static str,
    /// Its version (the suffix of its id).
    pub version: u32,
}

/// The experiments, fixed in code.
pub const EXPERIMENTS: [Experiment; 3] = [
    Experiment {
        id: "scanner-control-cash-v2",
        name: "Scanner control: cash only (paper)",
        rule: Rule::Control,
        description: "holds its start capital in cash and never trades: the do-nothing control",
        version: 2,
    },
    Experiment {
        id: "scanner-equal-weight-v2",
        name: "Scanner equal weight of eligible tokens (paper)",
        rule: Rule::EqualWeightEligible,
        description: "equal weight over every eligible token (every check passes); sells a token once it is no longer eligible",
        version: 2,
    },
    Experiment {
        id: "scanner-momentum-top3-v2",
        name: "Scanner momentum top 3 (paper)",
        rule: Rule::MomentumTop,
        description: "equal weight over the eligible tokens with the highest positive 24-hour price change, at most 3; cash otherwise",
        version: 2,
    },
];

/// The retired experiments: their books stopped, their last snapshot stays
/// in the ledger. They checked only the first five checks, so their paper
/// results could hold tokens no trader could sell.
pub(crate) const RETIRED: [&str; 3] = [
    "scanner-control-cash-v1",
    "scanner-equal-weight-v1",
    "scanner-momentum-top3-v1",
];

/// Why the `-v1` experiments were retired.
pub(crate) const RETIRED_BECAUSE: &str = "eligibility is part of every rule: the v2 experiments add the checks a trader relies on (Token-2022 hazards, holders, the LP lock) and pay the transfer fee in force";

fn percent(share: Decimal) -> Decimal {
    (share * Decimal::ONE_HUNDRED).normalize()
}

/// The experiment's rule in full: eligibility (every check and its
/// threshold), targets, rebalancing, cost model and start capital. Its
/// SHA-256 is [`rule_hash`]; the text is the registration's thesis.
pub(crate) fn rule_text(experiment: &Experiment) -> String {
    format!(
        "Experiment {id}, version {version}, paper only: nothing is signed, sent or copied.\n\
Targets: {description}.\n\
Eligible: a token of the configured universe passes every check: {checks}. Thresholds: liquidity at least ${liquidity} in its deepest pool; a transfer fee in force of at most {fee_bps} basis points; the {top} largest holders (leaving out the burn address and the pools' own accounts) with at most {holders} % of the supply; at least {lp} % of the LP locked or burned. A check without evidence is unknown, and unknown is never pass.\n\
Rebalancing: at most once per {minutes} minutes; a holding is traded only when it is off its target by more than {band} % of equity; sells first; never more cash than held; fills below ${min_trade} are not made; a token no longer eligible is sold.\n\
Costs on every fill: a swap fee of {fee_rate} % of notional; slippage min(notional / pool liquidity, {max_slippage} %) as a worse price; the token's transfer fee in force, capped at its maximum, on the tokens moved by every buy and every sell. A held token that becomes non-transferable, frozen or paused is valued at 0 from then on and never sold.\n\
Start capital: ${capital} in cash. Each advance writes the book as a paper snapshot on the 15-minute grid.",
        id = experiment.id,
        version = experiment.version,
        description = experiment.description,
        checks = CHECK_NAMES.join(", "),
        liquidity = MIN_LIQUIDITY_USD,
        fee_bps = MAX_TRANSFER_FEE_BPS,
        top = TOP_HOLDERS,
        holders = percent(MAX_TOP_HOLDERS_SHARE),
        lp = MIN_LP_LOCKED_PCT,
        minutes = DEDUP_WINDOW.num_minutes(),
        band = percent(REBALANCE_BAND),
        min_trade = MIN_TRADE_USD,
        fee_rate = percent(FEE_RATE),
        max_slippage = percent(MAX_SLIPPAGE),
        capital = START_CAPITAL_USD,
    )
}

/// `sha256:<hex>` of [`rule_text`].
pub(crate) fn rule_hash(experiment: &Experiment) -> String {
    format!("sha256:{}", sha256_hex(rule_text(experiment).as_bytes()))
}

/// The id of an experiment's registration decision.
pub(crate) fn registration_id(experiment: &Experiment) -> String {
    format!("{}-registration", experiment.id)
}

/// The line of a registration's thesis that names the rule's hash.
const RULE_HASH_LABEL: &str = "ruleHash: ";

/// The decision that pre-registers `experiment` at `at`: its rule in one
/// sentence (summary) and in full (thesis), with the rule's hash, which
/// its `source.url` also carries.
pub fn registration_record(experiment: &Experiment, at: DateTime<Utc>) -> Value {
    let hash = rule_hash(experiment);
    json!({
        "id": registration_id(experiment),
        "type": "decision", "visibility": "public", "mode": "paper",
        "strategyId": experiment.id, "strategyName": experiment.name,
        "asOf": rfc3339(at),
        "source": {
            "name": "freedom-scanner pre-registration",
            "url": format!("https://dexscreener.com/solana#rule={hash}"),
        },
        "action": "research",
        "summary": format!("Pre-registered rule: {}.", experiment.description),
        "thesis": format!("{}\n{RULE_HASH_LABEL}{hash}", rule_text(experiment)),
    })
}

/// The rule hash a registration decision's thesis names, if it names one.
pub(crate) fn registered_hash(thesis: &str) -> Option<&str> {
    thesis
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix(RULE_HASH_LABEL))
        .filter(|hash| {
            hash.strip_prefix("sha256:")
                .is_some_and(super::provenance::is_sha256_hex)
        })
}

/// The experiments as the contract view declares them.
pub(crate) fn declaration() -> Value {
    let experiments: Vec<Value> = EXPERIMENTS
        .iter()
        .map(|e| {
            json!({
                "id": e.id, "name": e.name, "version": e.version, "rule": e.description,
                "startCapitalUsd": decimal_json(START_CAPITAL_USD),
                "ruleHash": rule_hash(e),
                "registrationId": registration_id(e),
            })
        })
        .collect();
    json!({
        "experiments": experiments,
        "retired": RETIRED.iter().map(|id| json!({"id": id, "reason": RETIRED_BECAUSE})).collect::<Vec<_>>(),
        "costModel": {
            "feeRate": decimal_json(FEE_RATE),
            "slippage": "min(notional / poolLiquidityUsd, maxSlippage) as a worse fill price",
            "maxSlippage": decimal_json(MAX_SLIPPAGE),
            "transferFee": "the token's Token-2022 transfer fee in force (newerTransferFee from its epoch on, else olderTransferFee), in basis points of the tokens moved, capped at maximumFee, on every buy and sell",
            "blocked": "a held token that turns non-transferable, frozen by default or paused is valued at 0 from then on and never sold (its mark stays in the book)",
            "rebalanceBand": "trade a holding only when it is off its target by more than this share of equity",
            "rebalanceBandShare": decimal_json(REBALANCE_BAND),
            "minTradeUsd": decimal_json(MIN_TRADE_USD),
        },
        "registration": "before an experiment's first paper snapshot the scanner appends a decision (id <experimentId>-registration, action research, mode paper): summary = the rule in one sentence, thesis = the full rule and a last line ruleHash: sha256:<hex of the rule text>, which source.url's fragment also carries. A rule in code whose hash differs from the registered one is not advanced (event experiment_rule_mismatch, the run degraded)",
        "advance": format!("at most once per {} minutes and once per 15-minute ledger slot; each advance appends every experiment's paper snapshot to the fund ledger with asOf on the 15-minute grid, its source.url fragment #report=sha256:<hex> naming the run's report kept as evidence", DEDUP_WINDOW.num_minutes()),
        "paperOnly": "nothing is signed, sent or copied: trades are arithmetic on a paper book",
    })
}

/// A token as the experiments see it in one run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TokenMarket {
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
    /// The transfer fee a move of the token pays ([`FeeInForce::NONE`]
    /// when it has none); `None` when the mint was not read this run, so no
    /// fill is made (as without a price).
    pub transfer_fee: Option<FeeInForce>,
    /// The evidence says holders can no longer move it (non-transferable,
    /// frozen by default, or paused).
    pub blocked: bool,
    /// The provider answers (by `bodySha256`) its price and fee came from.
    pub evidence: Vec<String>,
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
