//! Who holds a token: its largest token accounts (the RPC's
//! `getTokenLargestAccounts`, the top 20) with the owner of each (read with
//! `getMultipleAccounts`), and how much of the supply the ten largest
//! holders have, leaving out tokens that no one can sell (the burn address)
//! and the pools' own reserves (accounts owned by a pool DexScreener lists
//! for the token).

use super::provenance::ProvenanceEntry;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// Solana's burn address ("incinerator"): tokens sent there are gone.
pub(crate) const BURN_ADDRESS: &str = "1nc1nerator11111111111111111111111111111111";
/// How many of a token's largest accounts are kept (what
/// `getTokenLargestAccounts` answers); a longer answer is cut to its largest.
pub(crate) const MAX_LARGEST_ACCOUNTS: usize = 20;
/// Holders the concentration counts.
pub(crate) const TOP_HOLDERS: usize = 10;
/// The largest share of supply the top holders may have for the
/// `holders_spread` check to pass (50 %).
pub(crate) const MAX_TOP_HOLDERS_SHARE: Decimal = Decimal::from_parts(5, 0, 0, false, 1);
/// The way the largest accounts are read now: holders cached by an older,
/// looser reading (without this number) are fetched again.
pub(crate) const HOLDERS_READING: u8 = 2;

/// How many tokens' holders one run reads at most (each one
/// `getTokenLargestAccounts` call).
pub const MAX_HOLDER_FETCHES: usize = 20;

/// One of a token's largest accounts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Holding {
    /// The token account.
    pub address: String,
    /// Who owns the token account, when the RPC said.
    pub owner: Option<String>,
    /// Its balance in the token's smallest units.
    pub amount: u128,
}

/// A token's largest accounts as a run read them, kept (like a risk
/// report) for [`super::RISK_CACHE_TTL`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CachedHolders {
    /// When the RPC answered.
    pub fetched_at: DateTime<Utc>,
    /// The largest accounts, largest first; `None` when the RPC answered
    /// that it cannot list them (an error object: e.g. no such mint).
    pub holdings: Option<Vec<Holding>>,
    /// The answers they were read from.
    pub provenance: Vec<ProvenanceEntry>,
    /// How they were read ([`HOLDERS_READING`]; 0 in holders cached
    /// before).
    #[serde(default)]
    pub reading: u8,
}

impl CachedHolders {
    /// Whether the cached answer is still fresh at `now`: younger than
    /// [`super::RISK_CACHE_TTL`] and read the way holders are read now.
    pub(crate) fn is_fresh(&self, now: DateTime<Utc>) -> bool {
        now - self.fetched_at < super::RISK_CACHE_TTL && self.reading == HOLDERS_READING
    }
}

/// The share of `supply` the [`TOP_HOLDERS`] largest holders have, leaving
/// out the burn address and accounts owned by one of `pools`; `None` when
/// an owner is not known (it could be a pool or a holder), the list is
/// empty, or there is no supply. The list is sorted here, largest first:
/// the order of the provider's answer is never trusted.
pub(crate) fn top_share(holdings: &[Holding], pools: &[String], supply: u128) -> Option<Decimal> {
    if supply == 0 || holdings.is_empty() {
        return None;
    }
    let mut sorted: Vec<&Holding> = holdings.iter().collect();
    sorted.sort_by_key(|holding| std::cmp::Reverse(holding.amount));
    let mut counted: u128 = 0;
    let mut holders = 0usize;
    for holding in sorted {
        let owner = holding.owner.as_deref()?;
        if owner == BURN_ADDRESS || pools.iter().any(|pool| pool == owner) {
            continue;
        }
        if holders == TOP_HOLDERS {
            break;
        }
        counted = counted.checked_add(holding.amount)?;
        holders += 1;
    }
    let counted = Decimal::try_from_i128_with_scale(i128::try_from(counted).ok()?, 0).ok()?;
    let supply = Decimal::try_from_i128_with_scale(i128::try_from(supply).ok()?, 0).ok()?;
    counted.checked_div(supply)
}
