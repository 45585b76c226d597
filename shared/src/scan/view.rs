//! The scanner's report as types: what `GET /api/freedom-scanner` answers.
//! The report is serialised from these types, and (with the `schema`
//! feature) its published JSON Schema is generated from them, so the two
//! cannot drift apart.
//!
//! Amounts are exact decimals written as JSON numbers
//! ([`crate::record::decimal_json`]); instants are RFC 3339 in UTC.

use super::checks::Check;
use super::experiments::{Book, START_CAPITAL_USD, Side};
use super::provenance::ProvenanceEntry;
use super::{SCANNER_MODE, SCANNER_VERSION, WalletView};
use crate::clock::rfc3339;
use crate::record::decimal_json;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;

/// A decimal amount, written as a JSON number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Amount(pub Decimal);

impl Serialize for Amount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        decimal_json(self.0).serialize(serializer)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Amount {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Amount".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "number"})
    }
}

/// An instant, written as RFC 3339 in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instant(pub DateTime<Utc>);

impl Serialize for Instant {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&rfc3339(self.0))
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Instant {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Instant".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "date-time"})
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Every provider answered.
    Ok,
    /// Some provider failed; the run went on with what it had.
    Degraded,
}

impl RunStatus {
    /// `ok` or `degraded`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Degraded => "degraded",
        }
    }
}

/// The scanner's report: every named part, empty before the first run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "ScannerReport"))]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The scanner's version.
    #[cfg_attr(feature = "schema", schemars(schema_with = "version_schema"))]
    pub version: &'static str,
    /// Always `paper`: the scanner only runs paper experiments.
    #[cfg_attr(feature = "schema", schemars(schema_with = "mode_schema"))]
    pub mode: &'static str,
    /// How the latest run ended; null before the first run.
    pub status: Option<RunStatus>,
    /// When the latest report was written; null before the first run.
    pub report_at: Option<Instant>,
    /// When its data was observed (the run's start); null before the first run.
    pub observed_at: Option<Instant>,
    /// When a run last ended `ok` (every provider answered, the experiments
    /// could advance); null when none has yet.
    pub last_ok_at: Option<Instant>,
    /// The tokens watched, with their checks.
    pub(crate) universe: Vec<UniverseView>,
    /// The providers' pages of each token, by mint.
    pub(crate) links: BTreeMap<String, Vec<LinkView>>,
    /// One paper book per experiment, in the experiments' order.
    pub(crate) books: Vec<BookView>,
    /// Each token's observations, oldest first, by mint.
    pub(crate) history: BTreeMap<String, Vec<ObservationView>>,
    /// The latest events, oldest first.
    pub(crate) events: Vec<EventView>,
    /// The public accounts observed (read-only, never copied).
    pub(crate) wallets: Vec<WalletView>,
    /// Each experiment's pre-registered rule and where its registration is.
    pub(crate) experiments: Vec<ExperimentView>,
    /// The retired experiments this ledger holds snapshots of, with their
    /// last paper snapshot (none on a fresh ledger).
    pub(crate) retired: Vec<RetiredView>,
    /// Every provider answer the run used, each named by the SHA-256 of the
    /// exact bytes received (served as evidence for seven days); checks
    /// name these by index, fills by `bodySha256`.
    pub(crate) provenance: Vec<ProvenanceEntry>,
}

/// Where an experiment stands this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(crate) enum ExperimentStatus {
    /// Registered under the rule in code: it advances.
    Active,
    /// Not registered yet (the ledger could not be read or written): it
    /// does not advance.
    Unregistered,
    /// The rule in code differs from the registered one: it does not
    /// advance (event `experiment_rule_mismatch`).
    RuleMismatch,
}

/// An experiment's rule and registration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExperimentView {
    /// Its id (its `strategyId` in the ledger).
    pub experiment_id: String,
    /// `sha256:<hex>` of its rule text, as the code has it.
    pub rule_hash: String,
    /// The ledger seq of its registration decision, when registered.
    pub registered_seq: Option<u64>,
    /// Where it stands.
    pub status: ExperimentStatus,
    /// The cost model its rule declares (every experiment pays the same).
    pub cost_model: CostModelView,
}

/// The cost model's parameters, as each experiment of the report declares
/// them (the contract's `scanner.paper.costModel` says the same in words).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct CostModelView {
    /// `constant-product`: the exact x · y = k fill at the pair's reported
    /// reserves, for every pool type, with no cap on the price impact.
    pub pricing: &'static str,
    /// The swap fee, as a share of the USD the swap moves.
    pub swap_fee_rate: Amount,
    /// The network fee every fill pays, in USD.
    pub network_fee_usd: Amount,
    /// The most a fill takes of the reserve it draws on.
    pub max_reserve_share: Amount,
    /// `exit-value`: holdings marked at what selling all of each now would
    /// fetch after every fee; 0 without a pool.
    pub mark: &'static str,
    /// Whether MEV is modelled: never.
    pub mev_modelled: bool,
}

impl CostModelView {
    /// The cost model in code.
    pub(crate) fn current() -> CostModelView {
        use super::experiments::{FEE_RATE, MAX_RESERVE_SHARE, NETWORK_FEE_USD};
        CostModelView {
            pricing: "constant-product",
            swap_fee_rate: Amount(FEE_RATE),
            network_fee_usd: Amount(NETWORK_FEE_USD),
            max_reserve_share: Amount(MAX_RESERVE_SHARE),
            mark: "exit-value",
            mev_modelled: false,
        }
    }
}

/// A retired experiment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct RetiredView {
    /// Its id.
    pub experiment_id: String,
    /// The seq of its last paper snapshot in the ledger (a retired
    /// experiment is listed only once that is found, so never null).
    pub last_snapshot_seq: Option<u64>,
}

#[cfg(feature = "schema")]
fn version_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"const": SCANNER_VERSION})
}

#[cfg(feature = "schema")]
fn mode_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"const": SCANNER_MODE})
}

impl Report {
    /// The report's JSON text as it is stored, served and hashed: its keys
    /// sorted at every level (every report ever stored was written so, and
    /// the evidence hash a paper snapshot names is of these bytes).
    pub fn to_json_text(&self) -> String {
        serde_json::to_value(self)
            .expect("a report serialises")
            .to_string()
    }

    /// The report before the first run: every named part, empty.
    pub fn empty() -> Report {
        Report {
            version: SCANNER_VERSION,
            mode: SCANNER_MODE,
            status: None,
            report_at: None,
            observed_at: None,
            last_ok_at: None,
            universe: Vec::new(),
            links: BTreeMap::new(),
            books: Vec::new(),
            history: BTreeMap::new(),
            events: Vec::new(),
            wallets: Vec::new(),
            experiments: Vec::new(),
            retired: Vec::new(),
            provenance: Vec::new(),
        }
    }
}

/// One token of the universe.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct UniverseView {
    /// Mint address.
    pub mint: String,
    /// Ticker: DexScreener's, else the configured one.
    pub symbol: String,
    /// USD price, when known.
    pub price_usd: Option<Amount>,
    /// USD liquidity, when known.
    pub liquidity_usd: Option<Amount>,
    /// True exactly when every check passes.
    pub eligible: bool,
    /// The checks, in their fixed order.
    pub checks: Vec<Check>,
}

/// A provider's page of a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct LinkView {
    /// The provider.
    pub provider: String,
    /// Its page of the token.
    pub url: String,
}

/// One observation of a token.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct ObservationView {
    /// When the run observed it.
    pub observed_at: Instant,
    /// USD price, when known.
    pub price_usd: Option<Amount>,
    /// USD liquidity, when known.
    pub liquidity_usd: Option<Amount>,
}

/// Something a run did or met.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct EventView {
    /// When it happened.
    pub at: Instant,
    /// e.g. `run`, `provider`, `trade`, `ledger`.
    pub kind: String,
    /// What happened, in a sentence.
    pub message: String,
}

/// An experiment's paper book.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct BookView {
    /// Which experiment.
    pub experiment_id: String,
    /// Cash in USD.
    pub cash: Amount,
    /// Cash plus holdings at their marks, to the cent; null when the
    /// holdings cannot be valued.
    pub equity: Option<Amount>,
    /// What every experiment starts with, in USD.
    pub start_capital: Amount,
    /// Paper holdings.
    pub positions: Vec<PositionView>,
    /// The latest fills, newest last.
    pub trades: Vec<TradeView>,
    /// When it last advanced; null before its first advance.
    pub advanced_at: Option<Instant>,
}

/// A paper holding.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct PositionView {
    /// Mint address.
    pub mint: String,
    /// Ticker.
    pub symbol: String,
    /// Quantity held.
    pub quantity: Amount,
    /// Average fill price paid, fees included.
    pub cost: Amount,
    /// What one unit would fetch if the whole holding were sold now in one
    /// swap at the pair's reserves, after every fee; 0 when its pool is
    /// gone, empty or unknown. The paper snapshot's mark.
    pub mark: Amount,
    /// The pair's USD price at the same moment (0 when it gave none).
    pub mid_mark: Amount,
    /// Quantity × mark, to the cent (0 once blocked); null when it does
    /// not fit.
    pub value: Option<Amount>,
    /// The token can no longer be moved (non-transferable, frozen or
    /// paused): valued at 0 from then on, never sold.
    pub blocked: bool,
}

/// A paper fill.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct TradeView {
    /// When it happened.
    pub at: Instant,
    /// Mint address.
    pub mint: String,
    /// Ticker at the time of the fill.
    pub symbol: String,
    /// Buy or sell.
    pub side: Side,
    /// Tokens the book received (a buy) or sent (a sell).
    pub quantity: Amount,
    /// The pair's USD price at the fill; null when it gave none.
    pub mid_mark: Option<Amount>,
    /// The fill price: USD swapped after the swap fee per token received
    /// (a buy), USD paid out before the swap fee per token sent (a sell).
    pub price: Amount,
    /// price / midMark − 1: what the pool's depth cost (with the transfer
    /// fee, if any); null without a mid.
    pub impact: Option<f64>,
    /// USD the swap moved: paid in with the swap fee (a buy), paid out
    /// before it (a sell).
    pub notional: Amount,
    /// Swap fee paid in USD.
    pub fee: Amount,
    /// Network fee paid in USD.
    pub network_fee: Amount,
    /// The token's transfer fee on the tokens moved, in tokens.
    pub transfer_fee: Amount,
    /// Cash after the fill.
    pub cash_after: Amount,
    /// The pool's reserves the fill was priced at, and the answer they came
    /// from.
    pub reserves: Option<ReservesView>,
    /// The provider answers (by `bodySha256`) the fill's price and fee
    /// came from.
    pub evidence: Vec<String>,
}

/// The reserves a fill was priced at, oriented to the token.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReservesView {
    /// The token's reserve, in whole tokens (B).
    pub token: Amount,
    /// The other side's reserve, in its whole units (Q).
    pub quote: Amount,
    /// USD per unit of the other side.
    pub quote_usd: Amount,
    /// The DexScreener answer (by `bodySha256`) they came from.
    pub evidence: Option<String>,
}

impl From<&Book> for BookView {
    fn from(book: &Book) -> BookView {
        BookView {
            experiment_id: book.experiment_id.clone(),
            cash: Amount(book.cash),
            equity: book.equity().map(Amount),
            start_capital: Amount(START_CAPITAL_USD),
            positions: book
                .positions
                .iter()
                .map(|p| PositionView {
                    mint: p.mint.clone(),
                    symbol: p.symbol.clone(),
                    quantity: Amount(p.quantity),
                    cost: Amount(p.cost),
                    mark: Amount(p.mark),
                    mid_mark: Amount(p.mid_mark),
                    value: p.value().map(Amount),
                    blocked: p.blocked,
                })
                .collect(),
            trades: book
                .trades
                .iter()
                .map(|t| TradeView {
                    at: Instant(t.at),
                    mint: t.mint.clone(),
                    symbol: t.symbol.clone(),
                    side: t.side,
                    quantity: Amount(t.quantity),
                    mid_mark: t.mid.map(Amount),
                    price: Amount(t.price),
                    impact: t.impact.and_then(|i| i.to_f64()),
                    notional: Amount(t.notional),
                    fee: Amount(t.fee),
                    network_fee: Amount(t.network_fee),
                    transfer_fee: Amount(t.transfer_fee),
                    cash_after: Amount(t.cash_after),
                    reserves: t.reserves.map(|r| ReservesView {
                        token: Amount(r.token),
                        quote: Amount(r.quote),
                        quote_usd: Amount(r.quote_usd),
                        evidence: t.reserves_evidence.clone(),
                    }),
                    evidence: t.evidence.clone(),
                })
                .collect(),
            advanced_at: book.advanced_at.map(Instant),
        }
    }
}

/// The scan store's entry the public page reads: the last run's
/// [`ScannerHealth`], saved with its report.
pub(crate) const HEALTH: &str = "health";

/// Most reasons a [`ScannerHealth`] keeps.
const MAX_HEALTH_REASONS: usize = 5;

/// What the public page says of the scanner beside its experiments: how
/// its last run ended, when, why it was degraded, and when a run last
/// succeeded. Saved with each report (the scan store's `health` entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScannerHealth {
    /// How the last run ended.
    pub status: RunStatus,
    /// When it ended.
    pub at: DateTime<Utc>,
    /// When a run last ended `ok`; `None` when none has.
    pub last_ok_at: Option<DateTime<Utc>>,
    /// Why the last run was degraded (at most five reasons; empty when ok).
    pub why: Vec<String>,
}

impl ScannerHealth {
    /// The health of a run that ended `status` at `at`, with its reasons.
    pub(crate) fn of(
        status: RunStatus,
        at: DateTime<Utc>,
        last_ok_at: Option<DateTime<Utc>>,
        why: &[String],
    ) -> ScannerHealth {
        ScannerHealth {
            status,
            at,
            last_ok_at,
            // A reason can quote a provider: cleaned as events are.
            why: why
                .iter()
                .take(MAX_HEALTH_REASONS)
                .map(|reason| super::text::visible(reason, super::MAX_EVENT_CHARS))
                .collect(),
        }
    }
}

#[cfg(test)]
mod health_tests {
    use super::*;

    /// A reason can quote a provider's answer: the page shows it, so it is
    /// cleaned as an event's message is (no hidden characters, bounded),
    /// and at most five are kept.
    #[test]
    fn a_health_reason_carries_no_hidden_character_and_no_endless_text() {
        let at = DateTime::from_timestamp(1_777_896_000, 0).unwrap();
        let mut why = vec![format!(
            "RPC said: \u{202E}gnp.exe\u{2066}{}",
            "x".repeat(5000)
        )];
        why.extend((0..9).map(|i| format!("reason {i}")));
        let health = ScannerHealth::of(RunStatus::Degraded, at, None, &why);
        assert_eq!(health.why.len(), 5);
        let first = &health.why[0];
        assert!(first.starts_with("RPC said: gnp.exe"), "{first}");
        assert!(!first.chars().any(crate::scan::text::is_hidden));
        assert!(first.chars().count() <= crate::scan::MAX_EVENT_CHARS);
    }
}
