//! The checks of one universe entry. Each is `pass`, `fail` or `unknown`
//! (the provider that would tell did not answer); a token is eligible exactly
//! when every check passes.

use super::{Authority, MIN_LIQUIDITY_USD, MarketQuote, MintAccount, RiskReport};
use serde::{Deserialize, Serialize};

/// A check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// The evidence says yes.
    Pass,
    /// The evidence says no.
    Fail,
    /// No evidence (a provider failed or did not answer).
    Unknown,
}

/// One check with a sentence saying why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Check {
    /// The check's fixed name.
    #[cfg_attr(feature = "schema", schemars(schema_with = "check_name_schema"))]
    pub name: &'static str,
    /// Its outcome.
    pub status: CheckStatus,
    /// Why, in a sentence.
    pub detail: String,
}

#[cfg(feature = "schema")]
fn check_name_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"enum": CHECK_NAMES})
}

/// The checks' names, in report order.
pub const CHECK_NAMES: [&str; 5] = [
    "indexed_and_priced",
    "liquidity",
    "mint_authority_revoked",
    "freeze_authority_revoked",
    "no_danger_risk",
];

/// What the providers said of one token. `None` at the outer level means the
/// provider did not answer; the inner value is what it said.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// DexScreener: `Some(None)` = asked, no pairs.
    pub market: Option<Option<&'a MarketQuote>>,
    /// RugCheck (fresh or cached): `None` = no report.
    pub risk: Option<&'a RiskReport>,
    /// Solana RPC: `None` = not asked successfully.
    pub mint: Option<&'a MintAccount>,
}

fn check(name: &'static str, status: CheckStatus, detail: impl Into<String>) -> Check {
    Check {
        name,
        status,
        detail: detail.into(),
    }
}

/// The five checks, in [`CHECK_NAMES`] order.
pub fn evaluate(evidence: &Evidence<'_>) -> Vec<Check> {
    use CheckStatus::{Fail, Pass, Unknown};
    let mut checks = Vec::with_capacity(CHECK_NAMES.len());
    match evidence.market {
        None => {
            checks.push(check(CHECK_NAMES[0], Unknown, "DexScreener did not answer"));
            checks.push(check(CHECK_NAMES[1], Unknown, "DexScreener did not answer"));
        }
        Some(None) => {
            checks.push(check(
                CHECK_NAMES[0],
                Fail,
                "DexScreener indexes no pool for this token",
            ));
            checks.push(check(CHECK_NAMES[1], Fail, "no pool, so no liquidity"));
        }
        Some(Some(quote)) => {
            checks.push(match quote.price_usd {
                Some(price) if price > rust_decimal::Decimal::ZERO => check(
                    CHECK_NAMES[0],
                    Pass,
                    format!("priced at ${price} on its most liquid pool"),
                ),
                _ => check(
                    CHECK_NAMES[0],
                    Fail,
                    "indexed, but its most liquid pool has no USD price",
                ),
            });
            checks.push(match quote.liquidity_usd {
                Some(liquidity) if liquidity >= MIN_LIQUIDITY_USD => check(
                    CHECK_NAMES[1],
                    Pass,
                    format!(
                        "${} of liquidity (at least ${MIN_LIQUIDITY_USD})",
                        liquidity.round_dp(0)
                    ),
                ),
                Some(liquidity) => check(
                    CHECK_NAMES[1],
                    Fail,
                    format!(
                        "${} of liquidity, below ${MIN_LIQUIDITY_USD}",
                        liquidity.round_dp(0)
                    ),
                ),
                None => check(CHECK_NAMES[1], Unknown, "the pool reports no liquidity"),
            });
        }
    }
    let authority =
        |name: &'static str, label: &str, pick: fn(&MintAccount) -> Option<&Authority>| {
            match evidence.mint {
                None => check(name, Unknown, "the Solana RPC did not answer"),
                Some(MintAccount::Missing) => check(name, Fail, "the mint account does not exist"),
                Some(account) => match pick(account) {
                    None => check(name, Unknown, "the account is not a parsed SPL mint"),
                    Some(Authority::Revoked) => {
                        check(name, Pass, format!("{label} authority is revoked"))
                    }
                    Some(Authority::HeldBy(holder)) => check(
                        name,
                        Fail,
                        format!("{label} authority is still held by {holder}"),
                    ),
                    Some(Authority::Unknown) => check(
                        name,
                        Unknown,
                        format!("the mint does not say its {label} authority is revoked (no null)"),
                    ),
                },
            }
        };
    checks.push(authority(CHECK_NAMES[2], "mint", |a| match a {
        MintAccount::Mint { mint_authority, .. } => Some(mint_authority),
        _ => None,
    }));
    checks.push(authority(CHECK_NAMES[3], "freeze", |a| match a {
        MintAccount::Mint {
            freeze_authority, ..
        } => Some(freeze_authority),
        _ => None,
    }));
    checks.push(match evidence.risk {
        None => check(CHECK_NAMES[4], Unknown, "no RugCheck report"),
        Some(report) => {
            let dangers: Vec<&str> = report
                .risks
                .iter()
                .filter(|r| r.level.eq_ignore_ascii_case("danger"))
                .map(|r| r.name.as_str())
                .collect();
            if dangers.is_empty() {
                check(CHECK_NAMES[4], Pass, "RugCheck lists no danger-level risk")
            } else {
                check(
                    CHECK_NAMES[4],
                    Fail,
                    format!("RugCheck danger: {}", dangers.join("; ")),
                )
            }
        }
    });
    checks
}

/// Eligible exactly when every check passes.
pub fn eligible(checks: &[Check]) -> bool {
    !checks.is_empty() && checks.iter().all(|c| c.status == CheckStatus::Pass)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Risk;
    use rust_decimal::Decimal;

    fn quote(liquidity: i64) -> MarketQuote {
        MarketQuote {
            symbol: "TKN".into(),
            price_usd: Some(Decimal::new(125, 2)),
            liquidity_usd: Some(Decimal::from(liquidity)),
            price_change_h24: Some(3.0),
            pair_url: None,
        }
    }

    fn clean_mint() -> MintAccount {
        MintAccount::Mint {
            mint_authority: Authority::Revoked,
            freeze_authority: Authority::Revoked,
        }
    }

    fn report(levels: &[&str]) -> RiskReport {
        RiskReport {
            score: Some(1.0),
            score_normalised: Some(1.0),
            risks: levels
                .iter()
                .map(|l| Risk {
                    name: format!("{l} risk"),
                    level: (*l).into(),
                    score: None,
                })
                .collect(),
        }
    }

    fn statuses(checks: &[Check]) -> Vec<CheckStatus> {
        checks.iter().map(|c| c.status).collect()
    }

    use CheckStatus::{Fail, Pass, Unknown};

    #[test]
    fn a_clean_liquid_token_passes_everything() {
        let (q, m, r) = (quote(250_000), clean_mint(), report(&["info", "warn"]));
        let checks = evaluate(&Evidence {
            market: Some(Some(&q)),
            risk: Some(&r),
            mint: Some(&m),
        });
        assert_eq!(statuses(&checks), vec![Pass; 5]);
        assert!(eligible(&checks));
    }

    #[test]
    fn authorities_danger_and_thin_liquidity_fail_their_own_check() {
        let (q, r) = (quote(250_000), report(&[]));
        let minting = MintAccount::Mint {
            mint_authority: Authority::HeldBy("Auth".into()),
            freeze_authority: Authority::Revoked,
        };
        let checks = evaluate(&Evidence {
            market: Some(Some(&q)),
            risk: Some(&r),
            mint: Some(&minting),
        });
        assert_eq!(statuses(&checks), vec![Pass, Pass, Fail, Pass, Pass]);
        let freezing = MintAccount::Mint {
            mint_authority: Authority::Revoked,
            freeze_authority: Authority::HeldBy("Auth".into()),
        };
        let checks = evaluate(&Evidence {
            market: Some(Some(&q)),
            risk: Some(&r),
            mint: Some(&freezing),
        });
        assert_eq!(statuses(&checks), vec![Pass, Pass, Pass, Fail, Pass]);
        let (m, danger) = (clean_mint(), report(&["warn", "danger"]));
        let checks = evaluate(&Evidence {
            market: Some(Some(&q)),
            risk: Some(&danger),
            mint: Some(&m),
        });
        assert_eq!(statuses(&checks), vec![Pass, Pass, Pass, Pass, Fail]);
        let thin = quote(49_999);
        let checks = evaluate(&Evidence {
            market: Some(Some(&thin)),
            risk: Some(&r),
            mint: Some(&m),
        });
        assert_eq!(statuses(&checks), vec![Pass, Fail, Pass, Pass, Pass]);
        assert!(!eligible(&checks));
    }

    #[test]
    fn a_missing_token_fails_and_silent_providers_are_unknown() {
        let missing = evaluate(&Evidence {
            market: Some(None),
            risk: None,
            mint: Some(&MintAccount::Missing),
        });
        assert_eq!(statuses(&missing), vec![Fail, Fail, Fail, Fail, Unknown]);
        let silent = evaluate(&Evidence {
            market: None,
            risk: None,
            mint: None,
        });
        assert_eq!(statuses(&silent), vec![Unknown; 5]);
        assert!(!eligible(&silent));
        let unparsed = evaluate(&Evidence {
            market: None,
            risk: None,
            mint: Some(&MintAccount::NotAMint),
        });
        assert_eq!(unparsed[2].status, Unknown);
    }
}
