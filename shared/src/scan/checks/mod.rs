//! The checks of one universe entry. Each is `pass`, `fail` or `unknown`
//! (the provider that would tell did not answer, or its answer does not
//! read); a token is eligible exactly when every check passes, so unknown
//! is never pass. Each check names the provenance entries (by index in
//! the run's report) its verdict rests on.
//!
//! - `market`: DexScreener's price and liquidity;
//! - `mint`: the mint account's program, authorities and Token-2022
//!   extensions (what a holder can do with the token);
//! - `risk`: RugCheck's danger risks and LP lock, and the holders' spread.

mod market;
mod mint;
mod risk;

use super::holders::Holding;
use super::mint::MintAccount;
use super::{MarketQuote, RiskReport};
use serde::{Deserialize, Serialize};

/// A check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum CheckStatus {
    /// The evidence says yes.
    Pass,
    /// The evidence says no.
    Fail,
    /// No evidence (a provider failed or did not answer, or its answer does
    /// not say).
    Unknown,
}

/// One check with a sentence saying why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(crate) struct Check {
    /// The check's fixed name.
    #[cfg_attr(feature = "schema", schemars(schema_with = "check_name_schema"))]
    pub name: &'static str,
    /// Its outcome.
    pub status: CheckStatus,
    /// Why, in a sentence.
    pub detail: String,
    /// The provenance entries (indices in the report's `provenance`) the
    /// verdict rests on; empty when no answer was had.
    #[serde(default)]
    pub evidence: Vec<usize>,
}

#[cfg(feature = "schema")]
fn check_name_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"enum": CHECK_NAMES})
}

/// `indexed_and_priced`: DexScreener indexes a pool with a USD price.
pub(crate) const INDEXED_AND_PRICED: &str = "indexed_and_priced";
/// `liquidity`: the deepest pool holds at least the minimum.
pub(crate) const LIQUIDITY: &str = "liquidity";
/// `mint_authority_revoked`: nobody can mint more.
pub(crate) const MINT_AUTHORITY_REVOKED: &str = "mint_authority_revoked";
/// `freeze_authority_revoked`: nobody can freeze holders' accounts.
pub(crate) const FREEZE_AUTHORITY_REVOKED: &str = "freeze_authority_revoked";
/// `no_danger_risk`: RugCheck lists no danger-level risk.
pub(crate) const NO_DANGER_RISK: &str = "no_danger_risk";
/// `token_program_known`: the mint belongs to SPL Token or Token-2022.
pub(crate) const TOKEN_PROGRAM_KNOWN: &str = "token_program_known";
/// `no_permanent_delegate`: nobody can move or burn anyone's tokens.
pub(crate) const NO_PERMANENT_DELEGATE: &str = "no_permanent_delegate";
/// `no_transfer_hook`: no program is called on (and can refuse) transfers.
pub(crate) const NO_TRANSFER_HOOK: &str = "no_transfer_hook";
/// `transfer_fee_low`: the transfer fee in force is at most 1 %.
pub(crate) const TRANSFER_FEE_LOW: &str = "transfer_fee_low";
/// `transferable`: not non-transferable, not frozen by default, not paused.
pub(crate) const TRANSFERABLE: &str = "transferable";
/// `no_mint_close_authority`: nobody can close the mint.
pub(crate) const NO_MINT_CLOSE_AUTHORITY: &str = "no_mint_close_authority";
/// `extensions_understood`: every extension is checked or known harmless.
pub(crate) const EXTENSIONS_UNDERSTOOD: &str = "extensions_understood";
/// `holders_spread`: the ten largest holders have at most half the supply.
pub(crate) const HOLDERS_SPREAD: &str = "holders_spread";
/// `liquidity_locked`: at least 90 % of the LP is locked or burned.
pub(crate) const LIQUIDITY_LOCKED: &str = "liquidity_locked";

/// The least share of the LP that must be locked or burned for
/// `liquidity_locked`, in percent.
pub(crate) const MIN_LP_LOCKED_PCT: f64 = 90.0;

/// The checks' names, in report order.
pub const CHECK_NAMES: [&str; 14] = [
    INDEXED_AND_PRICED,
    LIQUIDITY,
    MINT_AUTHORITY_REVOKED,
    FREEZE_AUTHORITY_REVOKED,
    NO_DANGER_RISK,
    TOKEN_PROGRAM_KNOWN,
    NO_PERMANENT_DELEGATE,
    NO_TRANSFER_HOOK,
    TRANSFER_FEE_LOW,
    TRANSFERABLE,
    NO_MINT_CLOSE_AUTHORITY,
    EXTENSIONS_UNDERSTOOD,
    HOLDERS_SPREAD,
    LIQUIDITY_LOCKED,
];

/// Which provenance entries (indices) each provider's evidence came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Sources {
    /// DexScreener's answer that held (or lacked) the token.
    pub market: Vec<usize>,
    /// RugCheck's answer (fresh or cached).
    pub risk: Vec<usize>,
    /// The RPC answer that held the mint account.
    pub mint: Vec<usize>,
    /// The RPC answers of the largest accounts and their owners.
    pub holders: Vec<usize>,
}

/// What the providers said of one token. `None` at the outer level means
/// the provider did not answer; the inner value is what it said.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Evidence<'a> {
    /// DexScreener: `Some(None)` = asked, no pairs.
    pub market: Option<Option<&'a MarketQuote>>,
    /// RugCheck (fresh or cached): `None` = no report.
    pub risk: Option<&'a RiskReport>,
    /// Solana RPC: `None` = not asked successfully.
    pub mint: Option<&'a MintAccount>,
    /// The largest accounts: `None` = not read (the run's budget, or the
    /// RPC failed); `Some(None)` = the RPC answered it cannot list them.
    pub holders: Option<Option<&'a [Holding]>>,
    /// The current epoch (from the RPC's slot), for the transfer fee.
    pub epoch: Option<u64>,
    /// Where each part came from.
    pub sources: &'a Sources,
}

fn check(
    name: &'static str,
    status: CheckStatus,
    detail: impl Into<String>,
    evidence: &[usize],
) -> Check {
    Check {
        name,
        status,
        detail: detail.into(),
        evidence: evidence.to_vec(),
    }
}

/// Every check, in [`CHECK_NAMES`] order.
pub(crate) fn evaluate(evidence: &Evidence<'_>) -> Vec<Check> {
    let mut checks = Vec::with_capacity(CHECK_NAMES.len());
    checks.extend(market::checks(evidence));
    checks.extend(mint::authorities(evidence));
    checks.push(risk::no_danger_risk(evidence));
    checks.extend(mint::extensions(evidence));
    checks.push(risk::holders_spread(evidence));
    checks.push(risk::liquidity_locked(evidence));
    debug_assert!(
        checks.iter().map(|c| c.name).eq(CHECK_NAMES),
        "checks in their fixed order"
    );
    checks
}

/// Eligible exactly when every check passes.
pub(crate) fn eligible(checks: &[Check]) -> bool {
    !checks.is_empty() && checks.iter().all(|c| c.status == CheckStatus::Pass)
}

/// The status of the check called `name`, when it is among `checks`.
pub(crate) fn status_of(checks: &[Check], name: &str) -> Option<CheckStatus> {
    checks.iter().find(|c| c.name == name).map(|c| c.status)
}

#[cfg(test)]
mod tests;
