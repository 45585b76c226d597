//! RugCheck's evidence (danger risks, the LP lock) and the holders' spread.

use super::CheckStatus::{Fail, Pass, Unknown};
use super::{
    Check, Evidence, HOLDERS_SPREAD, LIQUIDITY_LOCKED, MIN_LP_LOCKED_PCT, NO_DANGER_RISK, check,
};
use crate::scan::DANGER_LEVEL;
use crate::scan::holders::{MAX_TOP_HOLDERS_SHARE, TOP_HOLDERS, top_share};
use crate::scan::mint::MintAccount;

/// `no_danger_risk`.
pub(super) fn no_danger_risk(evidence: &Evidence<'_>) -> Check {
    let sources = &evidence.sources.risk;
    match evidence.risk {
        None => check(NO_DANGER_RISK, Unknown, "no RugCheck report", sources),
        Some(report) => {
            let dangers: Vec<&str> = report
                .risks
                .iter()
                .filter(|r| r.level == DANGER_LEVEL)
                .map(|r| r.name.as_str())
                .collect();
            if let (true, Some(why)) = (dangers.is_empty(), &report.unreadable) {
                check(
                    NO_DANGER_RISK,
                    Unknown,
                    format!("RugCheck's risks do not read: {why}"),
                    sources,
                )
            } else if dangers.is_empty() {
                check(
                    NO_DANGER_RISK,
                    Pass,
                    "RugCheck lists no danger-level risk",
                    sources,
                )
            } else {
                check(
                    NO_DANGER_RISK,
                    Fail,
                    format!("RugCheck danger: {}", dangers.join("; ")),
                    sources,
                )
            }
        }
    }
}

/// `liquidity_locked`: RugCheck's `lpLockedPct`.
pub(super) fn liquidity_locked(evidence: &Evidence<'_>) -> Check {
    let sources = &evidence.sources.risk;
    match evidence.risk.map(|r| r.lp_locked_pct) {
        None => check(LIQUIDITY_LOCKED, Unknown, "no RugCheck report", sources),
        Some(None) => check(
            LIQUIDITY_LOCKED,
            Unknown,
            "RugCheck gives no LP figure for this token",
            sources,
        ),
        Some(Some(pct)) if !(0.0..=100.0).contains(&pct) => check(
            LIQUIDITY_LOCKED,
            Unknown,
            "RugCheck's LP figure is not a share from 0 to 100 %",
            sources,
        ),
        Some(Some(pct)) if pct >= MIN_LP_LOCKED_PCT => check(
            LIQUIDITY_LOCKED,
            Pass,
            format!("{pct:.1} % of the LP is locked or burned (at least {MIN_LP_LOCKED_PCT} %)"),
            sources,
        ),
        Some(Some(pct)) => check(
            LIQUIDITY_LOCKED,
            Fail,
            format!("{pct:.1} % of the LP is locked or burned, below {MIN_LP_LOCKED_PCT} %"),
            sources,
        ),
    }
}

/// `holders_spread`: the ten largest holders' share of supply.
pub(super) fn holders_spread(evidence: &Evidence<'_>) -> Check {
    let mut sources = evidence.sources.holders.clone();
    let holdings = match evidence.holders {
        None => {
            return check(
                HOLDERS_SPREAD,
                Unknown,
                "the holders were not read this run (the RPC failed, or the run's budget was spent)",
                &sources,
            );
        }
        Some(None) => {
            return check(
                HOLDERS_SPREAD,
                Unknown,
                "the RPC could not list the largest accounts",
                &sources,
            );
        }
        Some(Some(holdings)) => holdings,
    };
    let pools = match evidence.market {
        None => {
            return check(
                HOLDERS_SPREAD,
                Unknown,
                "DexScreener did not answer, so the pools' own accounts are not known",
                &sources,
            );
        }
        Some(None) => Vec::new(),
        Some(Some(quote)) => {
            sources.extend(&evidence.sources.market);
            quote.pools.clone()
        }
    };
    let Some(MintAccount::Mint(mint)) = evidence.mint else {
        return check(
            HOLDERS_SPREAD,
            Unknown,
            "the mint's supply is not known",
            &sources,
        );
    };
    sources.extend(&evidence.sources.mint);
    sources.sort_unstable();
    sources.dedup();
    let Some(supply) = mint.supply else {
        return check(
            HOLDERS_SPREAD,
            Unknown,
            "the mint's supply does not read",
            &sources,
        );
    };
    match top_share(holdings, &pools, supply) {
        None => check(
            HOLDERS_SPREAD,
            Unknown,
            "a large account's owner is not known, or there is no supply",
            &sources,
        ),
        Some(share) => {
            let percent = (share * rust_decimal::Decimal::ONE_HUNDRED).round_dp(1);
            let detail = format!(
                "the {TOP_HOLDERS} largest holders (leaving out the burn address and the pools) have {percent} % of the supply"
            );
            if share > MAX_TOP_HOLDERS_SHARE {
                check(
                    HOLDERS_SPREAD,
                    Fail,
                    format!("{detail}: above 50 %"),
                    &sources,
                )
            } else {
                check(HOLDERS_SPREAD, Pass, detail, &sources)
            }
        }
    }
}
