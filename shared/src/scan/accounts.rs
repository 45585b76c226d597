//! Solana accounts as the JSON-RPC's `jsonParsed` encoding gives them
//! (docs/providers.md), and what the scanner reads from them: a mint's
//! account ([`mint_account`]), an observed wallet ([`wallet_view`]) and the
//! owners of a token's largest accounts (`holdings`).
//!
//! Providers vary in what they send (fields missing, `null`, numbers as
//! strings), so a field the scanner can do without is [`Loose`]: absent,
//! `null` or of another type reads as unknown instead of refusing the whole
//! answer.

use crate::scan::holders::Holding;
use crate::scan::{MintAccount, WalletToken, WalletView};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// A value that reads as unknown (`None`) when it is absent, `null`, or not
/// a `T`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Loose<T>(pub Option<T>);

impl<T> Default for Loose<T> {
    fn default() -> Loose<T> {
        Loose(None)
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Loose<T>, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Loose(serde_json::from_value(value).ok()))
    }
}

impl<T> Loose<T> {
    /// The value, when known.
    pub(crate) fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

/// What the RPC says of one key: no account (`null`), or an account (one
/// whose fields cannot be read still exists).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AccountSlot {
    /// There is no account at the key.
    Missing,
    /// The account.
    Present(Account),
}

impl<'de> Deserialize<'de> for AccountSlot {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<AccountSlot, D::Error> {
        Ok(match Value::deserialize(deserializer)? {
            Value::Null => AccountSlot::Missing,
            value => AccountSlot::Present(serde_json::from_value(value).unwrap_or_default()),
        })
    }
}

/// An account.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct Account {
    /// Its balance in lamports (`rentEpoch` is often u64::MAX; it is not read).
    pub lamports: Loose<u64>,
    /// The program that owns it.
    pub owner: Loose<String>,
    /// Its data: parsed (`jsonParsed` had a parser) or raw (`["…", "base64"]`).
    pub data: Loose<ParsedData>,
}

/// Account data a parser understood.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct ParsedData {
    /// `{type, info}`.
    pub parsed: Parsed,
}

/// The parsed account: its kind and its fields.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Parsed {
    /// `mint` or `account` (a token account), among others.
    #[serde(rename = "type")]
    pub kind: String,
    /// The kind's fields.
    #[serde(default)]
    pub info: Value,
}

/// A parsed token account's mint, owner and balance.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct TokenAccountInfo {
    /// The token it holds.
    mint: Loose<String>,
    /// Who owns the token account.
    owner: Loose<String>,
    /// How much of it.
    token_amount: Loose<TokenAmount>,
}

/// A token balance as the RPC writes it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct TokenAmount {
    /// The amount in whole tokens, as text.
    ui_amount_string: Loose<String>,
}

/// A token account's address and balance (in the token's smallest units).
pub(crate) type Balance = (String, u128);

/// The largest accounts with their owners (from `owners`, the token
/// accounts' parsed forms, by address): an owner not read is unknown.
pub(crate) fn holdings(
    largest: &[Balance],
    owners: &BTreeMap<String, AccountSlot>,
) -> Vec<Holding> {
    largest
        .iter()
        .map(|(address, amount)| Holding {
            address: address.clone(),
            owner: owners.get(address).and_then(owner_of),
            amount: *amount,
        })
        .collect()
}

/// The owner of a parsed token account.
fn owner_of(slot: &AccountSlot) -> Option<String> {
    match parsed(slot) {
        Some(parsed) if parsed.kind == "account" => {
            TokenAccountInfo::deserialize(&parsed.info).ok()?.owner.0
        }
        _ => None,
    }
}

/// The parsed form of an account, when the RPC had a parser for it.
fn parsed(slot: &AccountSlot) -> Option<&Parsed> {
    match slot {
        AccountSlot::Present(account) => account.data.get().map(|data| &data.parsed),
        AccountSlot::Missing => None,
    }
}

/// What a mint's account says: its program, authorities, supply and
/// extensions.
pub(crate) fn mint_account(slot: &AccountSlot) -> MintAccount {
    let AccountSlot::Present(account) = slot else {
        return MintAccount::Missing;
    };
    let program = account.owner.get().map(String::as_str);
    match parsed(slot) {
        Some(parsed) => MintAccount::parsed(program, &parsed.kind, &parsed.info),
        None => MintAccount::NotAMint {
            program: program.map(str::to_owned),
        },
    }
}

/// A configured public account as the report shows it (`None`: its batch
/// did not answer).
pub(crate) fn wallet_view(address: &str, slot: Option<&AccountSlot>) -> WalletView {
    let Some(slot) = slot else {
        return WalletView {
            address: address.to_owned(),
            exists: None,
            lamports: None,
            owner: None,
            tokens: Vec::new(),
        };
    };
    let tokens = match parsed(slot) {
        Some(parsed) if parsed.kind == "account" => {
            let info = TokenAccountInfo::deserialize(&parsed.info).unwrap_or_default();
            info.mint
                .0
                .map(|mint| WalletToken {
                    mint,
                    amount: info
                        .token_amount
                        .get()
                        .and_then(|a| a.ui_amount_string.get().cloned())
                        .unwrap_or_else(|| "0".to_owned()),
                })
                .into_iter()
                .collect()
        }
        _ => Vec::new(),
    };
    let account = match slot {
        AccountSlot::Present(account) => Some(account),
        AccountSlot::Missing => None,
    };
    WalletView {
        address: address.to_owned(),
        exists: Some(account.is_some()),
        lamports: account.and_then(|a| a.lamports.get().copied()),
        owner: account.and_then(|a| a.owner.get().cloned()),
        tokens,
    }
}
