//! The fixed paper experiments. Paper only: nothing here signs, sends or
//! copies anything; a "trade" is arithmetic on a book (`book`).
//!
//! Every experiment starts with `START_CAPITAL_USD` in cash and pays the
//! same costs on every fill (`pool`, docs/scanner.md):
//! - the exact constant-product fill at the reserves DexScreener reports
//!   for the token's deepest pair (price impact r / (1 + r) for r = amount
//!   in / reserve in, with no cap on it), whatever the pool's type;
//! - a swap fee of `FEE_RATE` of the USD the swap moves;
//! - a network fee of `NETWORK_FEE_USD` a fill (a Solana base fee and a
//!   modest priority fee; MEV is not modelled);
//! - the token's Token-2022 transfer fee in force, capped at its maximum,
//!   on the tokens moved by every buy and every sell.
//!
//! A fill takes at most `MAX_RESERVE_SHARE` of the reserve it draws on; a
//! larger move toward the target waits for later runs. A rule decides the
//! target holdings among the eligible tokens (every check passes), as equal
//! shares of the book valued at the pairs' mid prices; the book trades
//! toward them when a holding is off by more than `REBALANCE_BAND` of that
//! value, sells first, and never spends more cash than it has. Holdings are
//! recorded at what selling them now would fetch (`pool::exit_mark`), so a
//! token whose pool is gone is worth 0 in the book, never its last price. A
//! token that is no longer eligible is sold, unless it can no longer be
//! moved: a held token that turns non-transferable, frozen or paused is
//! valued at 0 from then on and never sold.
//!
//! Each experiment's rule, in full (`rule_text`), is published as a
//! decision record before its first paper snapshot, with its SHA-256
//! (`rule_hash`); changing a rule means a new experiment id. Earlier
//! versions are retired (`RETIRED`) and their books stopped: `-v1` checked
//! too little, `-v2` priced fills cheaper than any trader could fill them.

pub(crate) mod book;
pub(crate) mod pool;

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
/// Swap fee per fill: 0.25 % of the USD the swap moves.
pub(crate) const FEE_RATE: Decimal = Decimal::from_parts(25, 0, 0, false, 4);
/// The most a fill takes of the reserve it draws on (the quote reserve for
/// a buy, the token reserve for a sell): 2 %.
pub(crate) const MAX_RESERVE_SHARE: Decimal = Decimal::from_parts(2, 0, 0, false, 2);
/// The network fee every fill pays, in USD: a Solana base fee and a modest
/// priority fee.
pub(crate) const NETWORK_FEE_USD: Decimal = Decimal::from_parts(2, 0, 0, false, 2);
/// Wrapped SOL's mint: what the benchmark experiment holds.
pub(crate) const WRAPPED_SOL: &str = "So11111111111111111111111111111111111111112";
/// USDC's mint: wrapped SOL is priced and bought at its pair with USDC.
pub(crate) const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
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
    /// Holds wrapped SOL, bought at its pair with USDC; exempt from the
    /// checks (a benchmark is not a rule under test).
    HoldSol,
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

/// The benchmark experiment: wrapped SOL held from the first run, with the
/// same costs as every rule; the dashboard's paper benchmark by default.
pub(crate) const HOLD_SOL: Experiment = Experiment {
    id: "scanner-hold-sol-v3",
    name: "Scanner benchmark: hold SOL (paper)",
    rule: Rule::HoldSol,
    description: "holds its start capital in wrapped SOL, bought at the SOL/USDC pair and never sold: the benchmark, exempt from the checks",
    version: 3,
};

/// The experiments, fixed in code.
pub const EXPERIMENTS: [Experiment; 4] = [
    Experiment {
        id: "scanner-control-cash-v3",
        name: "Scanner control: cash only (paper)",
        rule: Rule::Control,
        description: "holds its start capital in cash and never trades: the do-nothing control",
        version: 3,
    },
    Experiment {
        id: "scanner-equal-weight-v3",
        name: "Scanner equal weight of eligible tokens (paper)",
        rule: Rule::EqualWeightEligible,
        description: "equal weight over every eligible token (every check passes); sells a token once it is no longer eligible",
        version: 3,
    },
    Experiment {
        id: "scanner-momentum-top3-v3",
        name: "Scanner momentum top 3 (paper)",
        rule: Rule::MomentumTop,
        description: "equal weight over the eligible tokens with the highest positive 24-hour price change, at most 3; cash otherwise",
        version: 3,
    },
    HOLD_SOL,
];

/// Why the `-v1` experiments were retired.
const V1_RETIRED_BECAUSE: &str = "eligibility is part of every rule: the v2 experiments add the checks a trader relies on (Token-2022 hazards, holders, the LP lock) and pay the transfer fee in force";
/// Why the `-v2` experiments were retired.
const V2_RETIRED_BECAUSE: &str = "the cost model is part of every rule: v2 priced a fill at min(notional / liquidity.usd, 5 %), half the price impact and capped, and marked holdings at the pair's mid price; the v3 experiments fill as the pool would, at most 2 % of a reserve a fill, pay a network fee, and mark holdings at what selling them would fetch";

/// The retired experiments, each with why: their books stopped, their last
/// snapshot stays in the ledger.
pub(crate) const RETIRED: [(&str, &str); 6] = [
    ("scanner-control-cash-v1", V1_RETIRED_BECAUSE),
    ("scanner-equal-weight-v1", V1_RETIRED_BECAUSE),
    ("scanner-momentum-top3-v1", V1_RETIRED_BECAUSE),
    ("scanner-control-cash-v2", V2_RETIRED_BECAUSE),
    ("scanner-equal-weight-v2", V2_RETIRED_BECAUSE),
    ("scanner-momentum-top3-v2", V2_RETIRED_BECAUSE),
];

fn percent(share: Decimal) -> Decimal {
    (share * Decimal::ONE_HUNDRED).normalize()
}

/// The experiment's rule in full: eligibility (every check and its
/// threshold), targets, rebalancing, cost model, valuation and start
/// capital. Its SHA-256 is [`rule_hash`]; the text is the registration's
/// thesis.
pub(crate) fn rule_text(experiment: &Experiment) -> String {
    let eligible = match experiment.rule {
        Rule::HoldSol => format!(
            "Eligible: not applied, a benchmark is not a rule under test: it holds wrapped SOL ({WRAPPED_SOL}) at its deepest pair with USDC ({USDC}), whatever the checks say."
        ),
        _ => format!(
            "Eligible: a token of the configured universe passes every check: {checks}. Thresholds: liquidity at least ${liquidity} in its deepest pool, which reports both reserves; a transfer fee in force of at most {fee_bps} basis points; the {top} largest holders (leaving out the burn address and the pools' own accounts) with at most {holders} % of the supply; at least {lp} % of the LP locked or burned. A check without evidence is unknown, and unknown is never pass.",
            checks = CHECK_NAMES.join(", "),
            liquidity = MIN_LIQUIDITY_USD,
            fee_bps = MAX_TRANSFER_FEE_BPS,
            top = TOP_HOLDERS,
            holders = percent(MAX_TOP_HOLDERS_SHARE),
            lp = MIN_LP_LOCKED_PCT,
        ),
    };
    format!(
        "Experiment {id}, version {version}, paper only: nothing is signed, sent or copied.\n\
Targets: {description}.\n\
{eligible}\n\
Rebalancing: at most once per {minutes} minutes; targets are equal shares of the book valued at the pairs' mid prices (a holding without a pool counts 0); a holding is traded only when it is off its target by more than {band} % of that value; sells first; never more cash than held; swaps below ${min_trade} are not made; a token no longer eligible is sold.\n\
Costs on every fill: the exact constant-product swap (tokens out = B x q / (Q + q) for q in; quote out = Q x t / (B + t) for t in) at the reserves DexScreener reports for the token's deepest pair (liquidity.base and liquidity.quote; the quote side's USD price is priceUsd / priceNative), used for every pool type, with no cap on the price impact; a fill takes at most {share} % of the reserve it draws on (the quote reserve for a buy, the token reserve for a sell), and a larger move toward the target waits for later runs; a swap fee of {fee_rate} % of the USD the swap moves; a network fee of ${network} a fill; the token's transfer fee in force, capped at its maximum, on the tokens moved by every buy and every sell. MEV (front-running, sandwiches) is not modelled. A pair without both reserves positive has unknown liquidity: nothing is bought in it.\n\
Valuation: each holding is marked at what selling all of it in one swap now would return after every fee; a token whose pool is gone, empty or unknown is marked 0 and stays in the book. A held token that becomes non-transferable, frozen or paused is valued at 0 from then on and never sold.\n\
Start capital: ${capital} in cash. Each advance writes the book as a paper snapshot on the 15-minute grid.",
        id = experiment.id,
        version = experiment.version,
        description = experiment.description,
        minutes = DEDUP_WINDOW.num_minutes(),
        band = percent(REBALANCE_BAND),
        min_trade = MIN_TRADE_USD,
        share = percent(MAX_RESERVE_SHARE),
        fee_rate = percent(FEE_RATE),
        network = NETWORK_FEE_USD,
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

/// The cost model's parameters, as the contract and each experiment of
/// the report declare them.
pub(crate) fn cost_model() -> Value {
    json!({
        "pricing": "the exact constant-product swap at the reserves DexScreener reports for the token's deepest pair (liquidity.base, liquidity.quote; the quote side's USD price is priceUsd / priceNative), for every pool type: tokens out = B·q/(Q+q) for q in, quote out = Q·t/(B+t) for t in; no cap on the price impact",
        "swapFeeRate": decimal_json(FEE_RATE),
        "networkFeeUsd": decimal_json(NETWORK_FEE_USD),
        "maxReserveShare": decimal_json(MAX_RESERVE_SHARE),
        "size": "a fill takes at most maxReserveShare of the reserve it draws on (the quote reserve for a buy, the token reserve for a sell); a larger move toward the target waits for later runs",
        "transferFee": "the token's Token-2022 transfer fee in force (newerTransferFee from its epoch on, else olderTransferFee), in basis points of the tokens moved, capped at maximumFee, on every buy and sell",
        "mark": "each holding at what selling all of it in one swap now would return after every fee, per unit; 0 when its pool is gone, empty or unknown (the token stays in the book); the report gives the pair's midMark beside it",
        "impact": "fill price / the pair's mid price - 1, on every fill, with the reserves the fill used and the DexScreener answer they came from",
        "mev": "not modelled",
        "blocked": "a held token that turns non-transferable, frozen by default or paused is valued at 0 from then on and never sold",
        "rebalanceBand": "trade a holding only when it is off its target by more than this share of the book valued at the pairs' mid prices",
        "rebalanceBandShare": decimal_json(REBALANCE_BAND),
        "minTradeUsd": decimal_json(MIN_TRADE_USD),
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
                "benchmark": e.rule == Rule::HoldSol,
            })
        })
        .collect();
    json!({
        "experiments": experiments,
        "retired": RETIRED.iter().map(|(id, reason)| json!({"id": id, "reason": reason})).collect::<Vec<_>>(),
        "costModel": cost_model(),
        "registration": "before an experiment's first paper snapshot the scanner appends a decision (id <experimentId>-registration, action research, mode paper): summary = the rule in one sentence, thesis = the full rule and a last line ruleHash: sha256:<hex of the rule text>, which source.url's fragment also carries. A rule in code whose hash differs from the registered one is not advanced (event experiment_rule_mismatch, the run degraded)",
        "advance": format!("at most once per {} minutes and once per 15-minute ledger slot; each advance appends every experiment's paper snapshot to the fund ledger with asOf on the 15-minute grid, its source.url fragment #report=sha256:<hex> naming the run's report kept as evidence", DEDUP_WINDOW.num_minutes()),
        "paperOnly": "nothing is signed, sent or copied: trades are arithmetic on a paper book",
    })
}

/// A token as the experiments see it in one run: one DexScreener answered
/// for (a token it was not asked about, or whose answer did not come, has
/// none, and a book holding it stands still that run).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TokenMarket {
    /// Mint address.
    pub mint: String,
    /// Ticker, for trades and paper positions.
    pub symbol: String,
    /// The pair's USD price (the mid); `None` when DexScreener gives none.
    pub mid: Option<Decimal>,
    /// The deepest pair's reserves; `None` when the token has no pair, or
    /// its pair does not report both reserves positive (no pool: nothing is
    /// bought, and a holding is worth 0).
    pub pool: Option<pool::Reserves>,
    /// 24-hour price change in percent.
    pub change_h24: Option<f64>,
    /// Every check passed.
    pub eligible: bool,
    /// The transfer fee a move of the token pays ([`FeeInForce::NONE`]
    /// when it has none); `None` when the mint was not read this run, so no
    /// fill is made and a holding of it cannot be valued.
    pub transfer_fee: Option<FeeInForce>,
    /// The evidence says holders can no longer move it (non-transferable,
    /// frozen by default, or paused).
    pub blocked: bool,
    /// The provider answers (by `bodySha256`) its price and fee came from.
    pub evidence: Vec<String>,
    /// The DexScreener answer (by `bodySha256`) its reserves came from.
    pub pool_evidence: Option<String>,
}

impl TokenMarket {
    /// Whether a book could trade it this run: a positive mid and a pool.
    fn tradable(&self) -> bool {
        self.pool.is_some() && self.mid.is_some_and(|mid| mid > Decimal::ZERO)
    }
}

/// The tokens `rule` wants to hold, in a stable order.
fn targets(rule: Rule, market: &[TokenMarket]) -> Vec<&TokenMarket> {
    let mut eligible: Vec<&TokenMarket> = market
        .iter()
        .filter(|t| t.eligible && t.tradable())
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
        Rule::HoldSol => market
            .iter()
            .filter(|t| t.mint == WRAPPED_SOL && t.tradable())
            .take(1)
            .collect(),
    }
}

#[cfg(test)]
mod tests;
