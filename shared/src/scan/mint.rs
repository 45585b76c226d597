//! What a token's mint account says, read from the Solana RPC's
//! `jsonParsed` form: which program owns it, its authorities, its supply,
//! and its Token-2022 extensions (`info.extensions`, a list of
//! `{"extension": <name>, "state": {...}}`, absent when empty; the names
//! and fields are those of Solana's account decoder for `spl-token-2022`).
//!
//! Only an explicit JSON `null` is a revoked authority or an unset
//! extension field: an absent field, or one of another type, is unknown
//! (fail closed), so no reading of a malformed answer can pass a check.
//! Names and enumerations are matched exactly, byte for byte: an extension
//! whose name is a known one with a hidden character, another case or
//! white space is not that extension (and not understood), and an
//! extension listed twice is read as neither entry.

use super::Authority;
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The SPL Token program.
pub(crate) const SPL_TOKEN_PROGRAM: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
/// The Token-2022 program (SPL Token with extensions).
pub(crate) const TOKEN_2022_PROGRAM: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
/// Slots per epoch on Solana's mainnet (its epoch schedule has no warm-up),
/// so a slot's epoch is `slot / SLOTS_PER_EPOCH`.
pub(crate) const SLOTS_PER_EPOCH: u64 = 432_000;
/// The highest transfer fee the `transfer_fee_low` check passes, in basis
/// points (1 %).
pub(crate) const MAX_TRANSFER_FEE_BPS: u16 = 100;

/// Extensions known to change nothing a holder can do with the token:
/// metadata, groups, display and memo rules.
pub(crate) const HARMLESS_EXTENSIONS: [&str; 9] = [
    "metadataPointer",
    "tokenMetadata",
    "groupPointer",
    "groupMemberPointer",
    "interestBearingConfig",
    "scaledUiAmountConfig",
    "immutableOwner",
    "memoTransfer",
    "cpiGuard",
];

/// The extensions a check reads (each has its own check).
#[cfg(test)]
pub(crate) const CHECKED_EXTENSIONS: [&str; 7] = [
    "permanentDelegate",
    "transferHook",
    "transferFeeConfig",
    "nonTransferable",
    "defaultAccountState",
    "pausableConfig",
    "mintCloseAuthority",
];

/// One transfer fee setting of `transferFeeConfig`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TransferFee {
    /// The first epoch it applies in.
    pub epoch: u64,
    /// The most one transfer pays, in the token's smallest units.
    pub maximum_fee: u64,
    /// The fee, in basis points of the amount transferred.
    pub transfer_fee_basis_points: u16,
}

/// What a reading of a mint field gave: a value, `null` (none), or
/// something that is neither (unknown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Field<T> {
    /// The field is `null`.
    Null,
    /// The field's value.
    Set(T),
    /// The field is absent or of another type.
    Unknown,
}

impl Field<String> {
    /// A field holding an address (a non-empty string) or `null`.
    fn address(state: &Value, name: &str) -> Field<String> {
        match state.get(name) {
            Some(Value::Null) => Field::Null,
            Some(Value::String(text)) if !text.is_empty() => Field::Set(text.clone()),
            _ => Field::Unknown,
        }
    }
}

/// A Token-2022 extension of a mint, as far as the checks read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(crate) enum Extension {
    /// `permanentDelegate`: who may move or burn anyone's tokens.
    PermanentDelegate {
        /// `delegate`.
        delegate: Field<String>,
    },
    /// `transferHook`: a program every transfer calls (it may refuse).
    TransferHook {
        /// `programId`.
        program_id: Field<String>,
    },
    /// `transferFeeConfig`: a fee on every transfer; `None` where the
    /// state does not read as one.
    TransferFeeConfig {
        /// `olderTransferFee`.
        older: Option<TransferFee>,
        /// `newerTransferFee` (in force from its epoch on).
        newer: Option<TransferFee>,
    },
    /// `nonTransferable`: no holder can ever send the token.
    NonTransferable,
    /// `defaultAccountState`: the state new token accounts start in.
    DefaultAccountState {
        /// `accountState` (`initialized`, `frozen`, or anything else the
        /// answer says), `None` when not a string.
        account_state: Option<String>,
    },
    /// `pausableConfig`: an authority may pause every transfer.
    PausableConfig {
        /// `authority`: who may pause transfers (`null`: nobody).
        #[serde(default = "unknown_field")]
        authority: Field<String>,
        /// `paused`, `None` when unreadable.
        paused: Option<bool>,
    },
    /// `mintCloseAuthority`: who may close the mint.
    MintCloseAuthority {
        /// `closeAuthority`.
        close_authority: Field<String>,
    },
    /// Any other extension, by its name (`unparseableExtension` when the
    /// decoder could not read it).
    Other {
        /// The extension's name, its hidden characters removed for display.
        name: String,
        /// Whether the name as sent is exactly one of the
        /// [`HARMLESS_EXTENSIONS`].
        #[serde(default)]
        harmless: bool,
    },
}

fn unknown_field() -> Field<String> {
    Field::Unknown
}

impl Extension {
    /// The extension a `{"extension": <name>, "state": {...}}` entry says.
    pub(crate) fn from_entry(entry: &Value) -> Extension {
        let name = entry
            .get("extension")
            .and_then(Value::as_str)
            .unwrap_or("unnamed");
        let state = entry.get("state").unwrap_or(&Value::Null);
        match name {
            "permanentDelegate" => Extension::PermanentDelegate {
                delegate: Field::address(state, "delegate"),
            },
            "transferHook" => Extension::TransferHook {
                program_id: Field::address(state, "programId"),
            },
            "transferFeeConfig" => Extension::TransferFeeConfig {
                older: fee(state.get("olderTransferFee")),
                newer: fee(state.get("newerTransferFee")),
            },
            "nonTransferable" => Extension::NonTransferable,
            "defaultAccountState" => Extension::DefaultAccountState {
                account_state: state
                    .get("accountState")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            },
            "pausableConfig" => Extension::PausableConfig {
                authority: Field::address(state, "authority"),
                paused: state.get("paused").and_then(Value::as_bool),
            },
            "mintCloseAuthority" => Extension::MintCloseAuthority {
                close_authority: Field::address(state, "closeAuthority"),
            },
            other => Extension::Other {
                name: super::text::visible(other, 64),
                harmless: HARMLESS_EXTENSIONS.contains(&other),
            },
        }
    }
}

fn fee(value: Option<&Value>) -> Option<TransferFee> {
    value.and_then(|v| TransferFee::deserialize(v).ok())
}

/// The transfer fee a transfer pays at a given time: basis points, capped
/// per transfer at a maximum in the token's smallest units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FeeInForce {
    /// Basis points of the amount transferred.
    pub basis_points: u16,
    /// The cap per transfer, in whole tokens.
    pub maximum: Decimal,
    /// The token's decimals: a fee is a whole number of its smallest units.
    pub decimals: u8,
}

impl FeeInForce {
    /// No fee.
    pub(crate) const NONE: FeeInForce = FeeInForce {
        basis_points: 0,
        maximum: Decimal::ZERO,
        decimals: 0,
    };

    /// The fee on a transfer of `quantity` whole tokens, in whole tokens:
    /// `min(quantity × bps / 10 000, maximum)`, rounded up to the token's
    /// precision as the program does (`None` when it does not fit).
    pub(crate) fn on(&self, quantity: Decimal) -> Option<Decimal> {
        if self.basis_points == 0 {
            return Some(Decimal::ZERO);
        }
        let fee = quantity
            .checked_mul(Decimal::from(self.basis_points))?
            .checked_div(Decimal::from(10_000))?
            .round_dp_with_strategy(u32::from(self.decimals), RoundingStrategy::AwayFromZero);
        Some(fee.min(self.maximum))
    }
}

/// What the RPC says of a mint account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(crate) enum MintAccount {
    /// The account does not exist.
    Missing,
    /// The account exists but is not a parsed SPL mint.
    NotAMint {
        /// The program that owns the account, when given.
        #[serde(default)]
        program: Option<String>,
    },
    /// A parsed SPL Token or Token-2022 mint.
    Mint(Box<Mint>),
}

/// A parsed mint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Mint {
    /// The program that owns the account.
    pub program: Option<String>,
    /// `mintAuthority`.
    pub mint_authority: Authority,
    /// `freezeAuthority`.
    pub freeze_authority: Authority,
    /// `supply`, in the smallest units.
    pub supply: Option<u128>,
    /// `decimals`.
    pub decimals: Option<u8>,
    /// `extensions` (absent means none); `None` when present but not a list.
    pub extensions: Option<Vec<Extension>>,
}

impl MintAccount {
    /// The mint account of a `jsonParsed` answer: the owning `program`,
    /// the parsed `kind` (`mint` for a mint) and its `info`.
    pub(crate) fn parsed(program: Option<&str>, kind: &str, info: &Value) -> MintAccount {
        if kind != "mint" {
            return MintAccount::NotAMint {
                program: program.map(str::to_owned),
            };
        }
        let extensions = match info.get("extensions") {
            None => Some(Vec::new()),
            Some(Value::Array(entries)) => {
                Some(entries.iter().map(Extension::from_entry).collect())
            }
            Some(_) => None,
        };
        MintAccount::Mint(Box::new(Mint {
            program: program.map(str::to_owned),
            mint_authority: Authority::from_field(info.get("mintAuthority")),
            freeze_authority: Authority::from_field(info.get("freezeAuthority")),
            supply: info
                .get("supply")
                .and_then(Value::as_str)
                .and_then(|s| s.parse().ok()),
            decimals: info
                .get("decimals")
                .and_then(Value::as_u64)
                .and_then(|d| u8::try_from(d).ok()),
            extensions,
        }))
    }
}

/// What a mint's extension list says of one extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed<'a> {
    /// It is not in the list.
    Absent,
    /// It is, once.
    Once(&'a Extension),
    /// It is more than once: which entry holds is not known.
    Repeated,
}

impl Mint {
    /// The mint's extension called `name` (in the checks' reading).
    pub(crate) fn extension(&self, name: &str) -> Option<&Extension> {
        match self.listed(name) {
            Listed::Once(extension) => Some(extension),
            Listed::Absent | Listed::Repeated => None,
        }
    }

    /// Whether the extension called `name` is listed, once or more.
    pub(crate) fn listed(&self, name: &str) -> Listed<'_> {
        let mut found = self
            .extensions
            .as_deref()
            .unwrap_or_default()
            .iter()
            .filter(|e| e.name() == name);
        match (found.next(), found.next()) {
            (None, _) => Listed::Absent,
            (Some(extension), None) => Listed::Once(extension),
            (Some(_), Some(_)) => Listed::Repeated,
        }
    }

    /// The names listed more than once.
    pub(crate) fn repeated(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .extensions
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(Extension::name)
            .collect();
        names.sort_unstable();
        let mut repeated: Vec<&str> = names
            .windows(2)
            .filter(|pair| pair[0] == pair[1])
            .map(|pair| pair[0])
            .collect();
        repeated.dedup();
        repeated
    }

    /// The transfer fee in force at `epoch` (`newerTransferFee` once its
    /// epoch has come, else `olderTransferFee`); when the epoch is not
    /// known, the higher of the two. `Some(None)`: no fee extension;
    /// `None`: a fee extension that does not read (or is listed twice).
    pub(crate) fn fee_in_force(&self, epoch: Option<u64>) -> Option<Option<FeeInForce>> {
        let (older, newer) = match self.listed("transferFeeConfig") {
            Listed::Absent => return Some(None),
            Listed::Repeated => return None,
            Listed::Once(Extension::TransferFeeConfig { older, newer }) => (older, newer),
            Listed::Once(_) => return None,
        };
        let (older, newer) = ((*older)?, (*newer)?);
        let fee = match epoch {
            Some(epoch) if epoch >= newer.epoch => newer,
            Some(_) => older,
            None if newer.transfer_fee_basis_points >= older.transfer_fee_basis_points => newer,
            None => older,
        };
        let decimals = self.decimals?;
        let maximum = Decimal::from(fee.maximum_fee)
            .checked_div(Decimal::from(10u64.checked_pow(u32::from(decimals))?))?;
        Some(Some(FeeInForce {
            basis_points: fee.transfer_fee_basis_points,
            maximum,
            decimals,
        }))
    }
}

impl Extension {
    /// The extension's name as the decoder writes it.
    pub(crate) fn name(&self) -> &str {
        match self {
            Extension::PermanentDelegate { .. } => "permanentDelegate",
            Extension::TransferHook { .. } => "transferHook",
            Extension::TransferFeeConfig { .. } => "transferFeeConfig",
            Extension::NonTransferable => "nonTransferable",
            Extension::DefaultAccountState { .. } => "defaultAccountState",
            Extension::PausableConfig { .. } => "pausableConfig",
            Extension::MintCloseAuthority { .. } => "mintCloseAuthority",
            Extension::Other { name, .. } => name,
        }
    }
}

impl Mint {
    /// The transfer fee scheduled for a later epoch than `epoch`, in basis
    /// points (`newerTransferFee` whose epoch has not come): a holder pays
    /// it when selling then, so it is judged now. `None` when none is
    /// scheduled or the epoch is not known (then the higher of the two is
    /// already the fee in force).
    pub(crate) fn scheduled_fee_bps(&self, epoch: Option<u64>) -> Option<(u16, u64)> {
        let epoch = epoch?;
        match self.extension("transferFeeConfig") {
            Some(Extension::TransferFeeConfig {
                newer: Some(newer), ..
            }) if newer.epoch > epoch => Some((newer.transfer_fee_basis_points, newer.epoch)),
            _ => None,
        }
    }
}

/// The epoch of `slot` on mainnet's epoch schedule.
pub(crate) fn epoch_of(slot: u64) -> u64 {
    slot / SLOTS_PER_EPOCH
}

#[cfg(test)]
mod tests;
