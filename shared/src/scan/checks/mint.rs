//! The mint account's evidence: who can mint or freeze, which program owns
//! it, and its Token-2022 extensions (what a holder can really do with the
//! token: sell it, keep it, pay what to move it).

use super::CheckStatus::{self, Fail, Pass, Unknown};
use super::{
    Check, EXTENSIONS_UNDERSTOOD, Evidence, FREEZE_AUTHORITY_REVOKED, MINT_AUTHORITY_REVOKED,
    NO_MINT_CLOSE_AUTHORITY, NO_PERMANENT_DELEGATE, NO_TRANSFER_HOOK, TOKEN_PROGRAM_KNOWN,
    TRANSFER_FEE_LOW, TRANSFERABLE, check,
};
use crate::scan::Authority;
use crate::scan::mint::{
    Extension, Field, Listed, MAX_TRANSFER_FEE_BPS, Mint, MintAccount, SPL_TOKEN_PROGRAM,
    TOKEN_2022_PROGRAM,
};

/// `mint_authority_revoked` and `freeze_authority_revoked`.
pub(super) fn authorities(evidence: &Evidence<'_>) -> [Check; 2] {
    let sources = &evidence.sources.mint;
    let authority = |name: &'static str, label: &str, pick: fn(&Mint) -> &Authority| match evidence
        .mint
    {
        None => check(name, Unknown, "the Solana RPC did not answer", &[]),
        Some(MintAccount::Missing) => check(name, Fail, "the mint account does not exist", sources),
        Some(MintAccount::NotAMint { .. }) => check(
            name,
            Unknown,
            "the account is not a parsed SPL mint",
            sources,
        ),
        Some(MintAccount::Mint(mint)) => match pick(mint) {
            Authority::Revoked => {
                check(name, Pass, format!("{label} authority is revoked"), sources)
            }
            Authority::HeldBy(holder) => check(
                name,
                Fail,
                format!("{label} authority is still held by {holder}"),
                sources,
            ),
            Authority::Unknown => check(
                name,
                Unknown,
                format!("the mint does not say its {label} authority is revoked (no null)"),
                sources,
            ),
        },
    };
    [
        authority(MINT_AUTHORITY_REVOKED, "mint", |m| &m.mint_authority),
        authority(FREEZE_AUTHORITY_REVOKED, "freeze", |m| &m.freeze_authority),
    ]
}

fn program_name(program: &str) -> Option<&'static str> {
    match program {
        SPL_TOKEN_PROGRAM => Some("SPL Token"),
        TOKEN_2022_PROGRAM => Some("Token-2022"),
        _ => None,
    }
}

/// The seven checks of the mint's program and extensions.
pub(super) fn extensions(evidence: &Evidence<'_>) -> Vec<Check> {
    const NAMES: [&str; 7] = [
        TOKEN_PROGRAM_KNOWN,
        NO_PERMANENT_DELEGATE,
        NO_TRANSFER_HOOK,
        TRANSFER_FEE_LOW,
        TRANSFERABLE,
        NO_MINT_CLOSE_AUTHORITY,
        EXTENSIONS_UNDERSTOOD,
    ];
    let sources = &evidence.sources.mint;
    let all = |status: CheckStatus, detail: &str, sources: &[usize]| {
        NAMES
            .iter()
            .map(|name| check(name, status, detail, sources))
            .collect()
    };
    let mint = match evidence.mint {
        None => return all(Unknown, "the Solana RPC did not answer", &[]),
        Some(MintAccount::Missing) => {
            return all(Fail, "the mint account does not exist", sources);
        }
        Some(MintAccount::NotAMint { program }) => {
            let mut checks: Vec<Check> =
                all(Unknown, "the account is not a parsed SPL mint", sources);
            if let Some(program) = program.as_deref()
                && program_name(program).is_none()
            {
                checks[0] = check(
                    TOKEN_PROGRAM_KNOWN,
                    Fail,
                    format!("owned by {program}, neither SPL Token nor Token-2022"),
                    sources,
                );
            }
            return checks;
        }
        Some(MintAccount::Mint(mint)) => mint,
    };
    let program = match mint.program.as_deref() {
        None => {
            return all(
                Unknown,
                "the RPC does not say which program owns the mint",
                sources,
            );
        }
        Some(program) => match program_name(program) {
            Some(name) => check(TOKEN_PROGRAM_KNOWN, Pass, format!("a {name} mint"), sources),
            None => {
                return all(
                    Fail,
                    &format!("owned by {program}, neither SPL Token nor Token-2022"),
                    sources,
                );
            }
        },
    };
    if mint.extensions.is_none() {
        let mut checks = all(Unknown, "the mint's extension list does not read", sources);
        checks[0] = program;
        return checks;
    }
    vec![
        program,
        delegate(mint, sources),
        hook(mint, sources),
        fee(mint, evidence.epoch, sources),
        transferable(mint, sources),
        close_authority(mint, sources),
        understood(mint, sources),
    ]
}

/// A check on one address field of an extension: absent extension or
/// `null` field passes, an address fails, anything else (a field of
/// another type, the extension listed twice) is unknown.
fn address_check(
    name: &'static str,
    listed: Listed<'_>,
    field: fn(&Extension) -> Option<&Field<String>>,
    what: &str,
    sources: &[usize],
) -> Check {
    let field = match listed {
        Listed::Absent => return check(name, Pass, format!("no {what}"), sources),
        Listed::Repeated => {
            return check(
                name,
                Unknown,
                format!("the mint lists the extension of its {what} twice"),
                sources,
            );
        }
        Listed::Once(extension) => field(extension),
    };
    match field {
        Some(Field::Null) => check(name, Pass, format!("the {what} is not set"), sources),
        Some(Field::Set(address)) => check(name, Fail, format!("{what}: {address}"), sources),
        Some(Field::Unknown) | None => check(
            name,
            Unknown,
            format!("the mint has the extension, but its {what} does not read"),
            sources,
        ),
    }
}

fn delegate(mint: &Mint, sources: &[usize]) -> Check {
    address_check(
        NO_PERMANENT_DELEGATE,
        mint.listed("permanentDelegate"),
        |e| match e {
            Extension::PermanentDelegate { delegate } => Some(delegate),
            _ => None,
        },
        "permanent delegate (it can move or burn anyone's tokens)",
        sources,
    )
}

fn hook(mint: &Mint, sources: &[usize]) -> Check {
    address_check(
        NO_TRANSFER_HOOK,
        mint.listed("transferHook"),
        |e| match e {
            Extension::TransferHook { program_id } => Some(program_id),
            _ => None,
        },
        "transfer hook program (it can refuse sells)",
        sources,
    )
}

fn close_authority(mint: &Mint, sources: &[usize]) -> Check {
    address_check(
        NO_MINT_CLOSE_AUTHORITY,
        mint.listed("mintCloseAuthority"),
        |e| match e {
            Extension::MintCloseAuthority { close_authority } => Some(close_authority),
            _ => None,
        },
        "mint close authority",
        sources,
    )
}

fn fee(mint: &Mint, epoch: Option<u64>, sources: &[usize]) -> Check {
    match mint.fee_in_force(epoch) {
        Some(None) => check(TRANSFER_FEE_LOW, Pass, "no transfer fee", sources),
        None => check(
            TRANSFER_FEE_LOW,
            Unknown,
            "the mint has a transfer fee that does not read",
            sources,
        ),
        Some(Some(fee)) => {
            let when = if epoch.is_some() {
                "in force this epoch"
            } else {
                "the higher of its two settings (the epoch is not known)"
            };
            let detail = format!(
                "a transfer fee of {} basis points (at most {} tokens a transfer), {when}",
                fee.basis_points,
                fee.maximum.normalize()
            );
            if fee.basis_points > MAX_TRANSFER_FEE_BPS {
                check(
                    TRANSFER_FEE_LOW,
                    Fail,
                    format!("{detail}: above {MAX_TRANSFER_FEE_BPS}"),
                    sources,
                )
            } else if let Some((bps, from)) = mint
                .scheduled_fee_bps(epoch)
                .filter(|(bps, _)| *bps > MAX_TRANSFER_FEE_BPS)
            {
                check(
                    TRANSFER_FEE_LOW,
                    Fail,
                    format!(
                        "{detail}, but {bps} basis points are scheduled from epoch {from}: above {MAX_TRANSFER_FEE_BPS}, and a holder selling then pays it"
                    ),
                    sources,
                )
            } else {
                check(
                    TRANSFER_FEE_LOW,
                    Pass,
                    format!("{detail}; paper fills pay it"),
                    sources,
                )
            }
        }
    }
}

fn transferable(mint: &Mint, sources: &[usize]) -> Check {
    let mut blocked: Vec<String> = Vec::new();
    let mut unread: Vec<&str> = Vec::new();
    if mint.listed("nonTransferable") != Listed::Absent {
        blocked.push("non-transferable".into());
    }
    match mint.listed("defaultAccountState") {
        Listed::Absent => {}
        Listed::Once(Extension::DefaultAccountState {
            account_state: Some(state),
        }) if state == "initialized" => {}
        Listed::Once(Extension::DefaultAccountState {
            account_state: Some(state),
        }) if state == "frozen" => blocked.push("new accounts start frozen".into()),
        _ => unread.push("the default account state (only exactly initialized is known safe)"),
    }
    match mint.listed("pausableConfig") {
        Listed::Absent => {}
        Listed::Once(Extension::PausableConfig { authority, paused }) => {
            if let Field::Set(holder) = authority {
                blocked.push(format!(
                    "a pause authority ({holder}) can stop every transfer at will"
                ));
            }
            if *paused == Some(true) {
                blocked.push("transfers are paused".into());
            }
            if *authority == Field::Unknown {
                unread.push("the pause authority");
            }
            if paused.is_none() {
                unread.push("whether it is paused");
            }
        }
        _ => unread.push("the pausable configuration"),
    }
    if !blocked.is_empty() {
        check(TRANSFERABLE, Fail, blocked.join("; "), sources)
    } else if !unread.is_empty() {
        check(
            TRANSFERABLE,
            Unknown,
            format!("{} does not read", unread.join(" and ")),
            sources,
        )
    } else {
        check(
            TRANSFERABLE,
            Pass,
            "transferable: not frozen by default, nobody can pause it",
            sources,
        )
    }
}

fn understood(mint: &Mint, sources: &[usize]) -> Check {
    let repeated = mint.repeated();
    if !repeated.is_empty() {
        return check(
            EXTENSIONS_UNDERSTOOD,
            Fail,
            format!(
                "extension(s) listed more than once: {}",
                repeated.join(", ")
            ),
            sources,
        );
    }
    let unknown: Vec<&str> = mint
        .extensions
        .iter()
        .flatten()
        .filter(|e| match e {
            Extension::Other { harmless, .. } => !harmless,
            _ => false,
        })
        .map(Extension::name)
        .collect();
    if unknown.is_empty() {
        check(
            EXTENSIONS_UNDERSTOOD,
            Pass,
            match mint.extensions.as_deref().map_or(0, <[Extension]>::len) {
                0 => "no extensions".to_owned(),
                n => format!("{n} extension(s), each checked or known harmless"),
            },
            sources,
        )
    } else {
        check(
            EXTENSIONS_UNDERSTOOD,
            Fail,
            format!(
                "extension(s) not understood (names are matched exactly): {}",
                unknown.join(", ")
            ),
            sources,
        )
    }
}
