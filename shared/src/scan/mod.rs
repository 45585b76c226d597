//! The scanner's domain (docs/design.md, "The scanner"): what was collected, the checks
//! per universe entry, the fixed paper experiments and their books, the
//! persisted state and the report. Everything here is pure; the providers'
//! ports are in `crate::ports::providers`, their HTTP clients in
//! `adapters::providers`, and the run is a use case (`service::scan`).
//!
//! - `accounts`: Solana accounts as the RPC's `jsonParsed` gives them,
//!   and the mint, wallet and holders read from them;
//! - `checks`: the checks and eligibility;
//! - `mint`: the mint account, its Token-2022 extensions and transfer fee;
//! - `holders`: the largest holders and their share of supply;
//! - `provenance`: the provider answers a run used, by the hash of their bytes;
//! - `experiments`: the fixed experiments, their cost model and paper books;
//! - `report`: the persisted state (bounded) and the report's named parts;
//! - `text`: provider text made fit for a book, a record and the report.

pub(crate) mod accounts;
pub(crate) mod checks;
pub use checks::*;
pub(crate) mod experiments;
pub use experiments::{EXPERIMENTS, registration_record};
pub(crate) mod holders;
pub use holders::MAX_HOLDER_FETCHES;
pub(crate) mod mint;
pub(crate) mod provenance;
pub use provenance::{
    EVIDENCE_BYTES_PER_RUN, EVIDENCE_BYTES_TOTAL, EVIDENCE_TTL, bodies_to_keep, evidence_room,
    is_sha256_hex, pack_evidence, sha256_hex,
};
pub(crate) mod report;
pub(crate) mod text;
pub(crate) mod view;
pub use view::*;

pub(crate) use mint::MintAccount;

/// The scanner's version string.
pub(crate) const SCANNER_VERSION: &str = "scanner-1.0";
/// The scanner's mode: it only ever runs paper experiments.
pub(crate) const SCANNER_MODE: &str = "paper";

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// Observations of a token closer together than this are one observation,
/// and experiments advance at most once in it.
pub(crate) const DEDUP_WINDOW: TimeDelta = TimeDelta::minutes(10);
/// The ledger grid: paper snapshots are dated at :00, :15, :30 and :45.
pub(crate) const LEDGER_GRID: TimeDelta = TimeDelta::minutes(15);
/// How long a RugCheck report is reused before it is fetched again.
pub(crate) const RISK_CACHE_TTL: TimeDelta = TimeDelta::hours(6);
/// Observations kept per token (24 hours at the 15-minute schedule).
pub(crate) const HISTORY_PER_TOKEN: usize = 96;
/// Events kept (newest last).
pub(crate) const MAX_EVENTS: usize = 200;
/// Longest event message (or health reason) kept, in characters.
pub(crate) const MAX_EVENT_CHARS: usize = 600;
/// Trades kept per paper book (newest last).
pub(crate) const TRADES_PER_BOOK: usize = 100;
/// Liquidity a token's best pool must have for the liquidity check.
pub(crate) const MIN_LIQUIDITY_USD: Decimal = Decimal::from_parts(50_000, 0, 0, false, 0);

/// The first quarter hour of the ledger grid after `instant`: when the
/// scheduled scanner runs next.
pub fn next_grid_slot(instant: DateTime<Utc>) -> DateTime<Utc> {
    grid_slot(instant) + LEDGER_GRID
}

/// `instant` floored to the 15-minute ledger grid.
pub(crate) fn grid_slot(instant: DateTime<Utc>) -> DateTime<Utc> {
    instant
        .duration_trunc(LEDGER_GRID)
        .expect("a 15-minute grid is representable")
}

/// One token of the universe: its mint address and a fallback symbol.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UniverseToken {
    /// Base58 mint address.
    pub mint: String,
    /// Symbol to show until DexScreener names it.
    pub symbol: String,
}

/// What DexScreener says of one token: its most liquid pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MarketQuote {
    /// The token's symbol on that pool.
    pub symbol: String,
    /// USD price of the token (either side of the pair), when known.
    pub price_usd: Option<Decimal>,
    /// USD liquidity of the pool, when reported.
    pub liquidity_usd: Option<Decimal>,
    /// Price change over 24 hours in percent, when reported.
    pub price_change_h24: Option<f64>,
    /// The pool's DexScreener page.
    pub pair_url: Option<String>,
    /// The addresses of every pool DexScreener lists for the token (their
    /// own token accounts are not holders).
    #[serde(default)]
    pub pools: Vec<String>,
    /// That pool's reserves oriented to the token, when it reports both
    /// positive (and the other side's USD price is known).
    #[serde(default)]
    pub reserves: Option<experiments::pool::Reserves>,
}

/// One risk RugCheck lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Risk {
    /// e.g. "Mint Authority still enabled".
    pub name: String,
    /// `info`, `warn` or `danger`.
    pub level: String,
    /// RugCheck's score for this risk.
    #[serde(default)]
    pub score: Option<f64>,
}

/// The way RugCheck's reports are read now: a report cached by an older,
/// looser reading (without this number) is fetched again.
pub(crate) const RISK_READING: u8 = 2;

/// RugCheck's risk levels known to be no danger, matched byte for byte.
pub(crate) const SAFE_RISK_LEVELS: [&str; 2] = ["info", "warn"];

/// RugCheck's risk level that fails `no_danger_risk`.
pub(crate) const DANGER_LEVEL: &str = "danger";

/// Most bytes a token's cached report takes in the scanner's state, as
/// JSON (with its provenance entry).
pub(crate) const MAX_RISK_BYTES: usize = 16 * 1024;
/// Of [`MAX_RISK_BYTES`], what the danger risks kept may take (the rest is
/// the report's other fields and its provenance).
const MAX_RISK_LIST_BYTES: usize = 12 * 1024;
/// Longest risk name kept, in characters.
pub(crate) const MAX_RISK_NAME_CHARS: usize = 200;

/// A RugCheck report summary as the scanner keeps it: the score, and the
/// risks the checks use (danger level), their names cleaned and bounded
/// (`RiskReport::bounded`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RiskReport {
    /// RugCheck's raw score.
    pub score: Option<f64>,
    /// `score_normalised`.
    pub score_normalised: Option<f64>,
    /// Its listed risks.
    pub risks: Vec<Risk>,
    /// `lpLockedPct`: the share of the LP locked or burned, in percent;
    /// `None` where RugCheck gives no figure.
    #[serde(default)]
    pub lp_locked_pct: Option<f64>,
    /// Why the risks cannot be read, when they cannot (no `risks` list, a
    /// risk without a readable name and level, a level not known):
    /// `no_danger_risk` is then unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// How the report was read (`RISK_READING`; 0 in reports cached
    /// before).
    #[serde(default)]
    pub reading: u8,
}

impl RiskReport {
    /// The report keeping only what the checks use: the danger-level risks,
    /// their names without hidden characters and cut to
    /// [`MAX_RISK_NAME_CHARS`], as many as fit 12 KiB of JSON (each risk
    /// counted as it is stored, not its name alone), so no answer, however
    /// large or however many its risks, makes a token's cached report
    /// pass [`MAX_RISK_BYTES`]. One danger is enough to fail the check; the
    /// ones kept are shown.
    pub(crate) fn bounded(self) -> RiskReport {
        let mut bytes = 0usize;
        let risks = self
            .risks
            .into_iter()
            .filter(|risk| risk.level == DANGER_LEVEL)
            .map(|risk| Risk {
                name: text::visible(&risk.name, MAX_RISK_NAME_CHARS),
                level: DANGER_LEVEL.to_owned(),
                score: risk.score,
            })
            .take_while(|risk| {
                let stored = serde_json::to_vec(risk).map_or(usize::MAX, |json| json.len() + 1);
                bytes = bytes.saturating_add(stored);
                bytes <= MAX_RISK_LIST_BYTES
            })
            .collect();
        RiskReport { risks, ..self }
    }
}

/// A cached RugCheck answer: a report, or the knowledge that there is none
/// (both are kept for [`RISK_CACHE_TTL`], so unknown tokens do not use up
/// the per-run budget).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CachedRisk {
    /// When RugCheck answered.
    pub fetched_at: DateTime<Utc>,
    /// Its report; `None` when it has none for the token.
    pub report: Option<RiskReport>,
    /// The answer it was read from (absent in reports cached before
    /// provenance was kept: those are fetched again).
    #[serde(default)]
    pub provenance: Vec<provenance::ProvenanceEntry>,
}

impl CachedRisk {
    /// Whether the cached answer is still fresh at `now`: younger than
    /// [`RISK_CACHE_TTL`], with its provenance, and read the way reports
    /// are read now ([`RISK_READING`]).
    pub(crate) fn is_fresh(&self, now: DateTime<Utc>) -> bool {
        !self.provenance.is_empty()
            && now - self.fetched_at < RISK_CACHE_TTL
            && self
                .report
                .as_ref()
                .is_none_or(|report| report.reading == RISK_READING)
    }
}

/// What a parsed mint says of one of its authorities. Only an explicit
/// JSON `null` is revoked: an absent field, or one of another type, is
/// unknown (fail closed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Authority {
    /// The field is `null`: nobody holds it.
    Revoked,
    /// The field names who holds it.
    HeldBy(String),
    /// The field is absent or not an address.
    Unknown,
}

impl Authority {
    /// The authority a parsed mint's field says: `null` revoked, a
    /// non-empty string held, anything else (or absent) unknown.
    pub(crate) fn from_field(field: Option<&serde_json::Value>) -> Authority {
        match field {
            Some(serde_json::Value::Null) => Authority::Revoked,
            Some(serde_json::Value::String(holder)) if !holder.is_empty() => {
                Authority::HeldBy(holder.clone())
            }
            _ => Authority::Unknown,
        }
    }
}

/// A public account observed for `FF_SCANNER_WALLETS` (read-only, never copied).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct WalletView {
    /// The address as configured.
    pub address: String,
    /// Whether the account exists (null when the RPC could not be asked).
    pub exists: Option<bool>,
    /// Its lamports.
    pub lamports: Option<u64>,
    /// The program that owns it.
    pub owner: Option<String>,
    /// Token balances it holds, when it is a token account.
    pub tokens: Vec<WalletToken>,
}

/// A token balance of an observed account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct WalletToken {
    /// The token's mint.
    pub mint: String,
    /// `uiAmountString`.
    pub amount: String,
}
