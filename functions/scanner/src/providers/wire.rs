//! The providers' answers as typed shapes (docs/providers.md),
//! read with `serde` straight from the answer's bytes.
//!
//! Providers vary in what they send (fields missing, `null`, numbers as
//! strings, one odd element in a list), so a field the scanner can do
//! without is [`Loose`]: absent, `null` or of another type reads as unknown
//! instead of refusing the whole answer. Only what the scanner cannot read
//! around (the envelope itself) makes an answer malformed.

use super::ProviderError;
use rust_decimal::Decimal;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::str::FromStr;

/// Reads a provider's answer as `T`: a body that is not JSON, or whose
/// objects name a key twice (which a reader would take the last of
/// silently), is malformed (`what` says what was expected).
pub fn read<T: DeserializeOwned>(body: &[u8], what: &'static str) -> Result<T, ProviderError> {
    match freedom_shared::json::parse_exact(body) {
        Ok(tree) if tree.repeats_a_key() => {
            return Err(ProviderError::Malformed("an object names a key twice"));
        }
        Ok(_) => {}
        Err(_) => return Err(ProviderError::Malformed(what)),
    }
    serde_json::from_slice(body).map_err(|_| ProviderError::Malformed(what))
}

/// A value that reads as unknown (`None`) when it is absent, `null`, or not
/// a `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct Loose<T>(pub Option<T>);

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
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

/// A decimal sent as a JSON string (`"0.00004687"`, DexScreener's prices) or
/// number, in plain or scientific notation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecimalText(pub Decimal);

impl<'de> Deserialize<'de> for DecimalText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<DecimalText, D::Error> {
        let text = match Value::deserialize(deserializer)? {
            Value::String(text) => text.trim().to_owned(),
            Value::Number(number) => number.to_string(),
            _ => return Err(serde::de::Error::custom("not a decimal")),
        };
        Decimal::from_str(&text)
            .or_else(|_| Decimal::from_scientific(&text))
            .map(DecimalText)
            .map_err(|_| serde::de::Error::custom("not a decimal"))
    }
}

// ------------------------------------------------------------ DexScreener

/// `GET /tokens/v1/{chain}/{mints}`: a flat array of pairs; the older
/// `/latest/dex/tokens/...` wraps them as `{"pairs": [...] | null}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum PairsAnswer {
    /// The array of pairs (an element that is not a pair is skipped).
    Pairs(Vec<Loose<Pair>>),
    /// The older envelope.
    Envelope {
        /// Its pairs; `null` or absent for a token with none.
        #[serde(default)]
        pairs: Option<Vec<Loose<Pair>>>,
    },
}

impl PairsAnswer {
    /// The pairs it holds, whichever form it came in.
    pub fn pairs(&self) -> impl Iterator<Item = &Pair> {
        let list = match self {
            PairsAnswer::Pairs(pairs) => pairs.as_slice(),
            PairsAnswer::Envelope { pairs } => pairs.as_deref().unwrap_or_default(),
        };
        list.iter().filter_map(Loose::get)
    }
}

/// One pool.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Pair {
    /// The pool's DexScreener page.
    pub url: Loose<String>,
    /// The pool's address.
    pub pair_address: Loose<String>,
    /// The base side (the token priced by `priceUsd`).
    pub base_token: Loose<PairToken>,
    /// The quote side (the token `priceNative` is counted in).
    pub quote_token: Loose<PairToken>,
    /// The base token's USD price.
    pub price_usd: Loose<DecimalText>,
    /// The base token's price in quote tokens.
    pub price_native: Loose<DecimalText>,
    /// The pool's liquidity.
    pub liquidity: Loose<Liquidity>,
    /// Price changes by window, in percent.
    pub price_change: Loose<PriceChange>,
}

/// One side of a pool.
#[derive(Debug, Deserialize)]
pub struct PairToken {
    /// The token's mint address.
    pub address: String,
    /// Its ticker as the pool names it.
    #[serde(default)]
    pub symbol: Loose<String>,
}

/// A pool's liquidity.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Liquidity {
    /// In USD.
    pub usd: Loose<DecimalText>,
}

/// A pool's price changes.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PriceChange {
    /// Over 24 hours, in percent.
    pub h24: Loose<f64>,
}

// ---------------------------------------------------------------- RugCheck

/// `GET /v1/tokens/{mint}/report/summary`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RiskSummary {
    /// Present when RugCheck answers an error with a success status.
    pub error: Loose<Value>,
    /// The listed risks (`null` or absent: not read; another type:
    /// malformed).
    pub risks: Option<Vec<Loose<RiskEntry>>>,
    /// The raw score.
    pub score: Loose<f64>,
    /// The score scaled by RugCheck (British spelling, as sent).
    pub score_normalised: Loose<f64>,
    /// The share of the LP locked or burned, in percent (`null` where
    /// RugCheck has no figure, e.g. concentrated-liquidity pools).
    #[serde(rename = "lpLockedPct")]
    pub lp_locked_pct: Loose<f64>,
}

/// One risk.
#[derive(Debug, Deserialize)]
pub(crate) struct RiskEntry {
    /// e.g. "Mint Authority still enabled".
    pub name: String,
    /// `info`, `warn` or `danger`.
    pub level: String,
    /// RugCheck's score for this risk.
    #[serde(default)]
    pub score: Loose<f64>,
}

// -------------------------------------------------------------- Solana RPC

/// A JSON-RPC answer to `getMultipleAccounts`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RpcAnswer {
    /// The error object, when the call failed.
    pub error: Loose<Value>,
    /// The result, when it succeeded.
    pub result: Loose<RpcResult>,
}

/// A JSON-RPC error object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct RpcError {
    /// e.g. -32602.
    pub code: Loose<i64>,
    /// What went wrong.
    pub message: Loose<String>,
}

/// The result of `getMultipleAccounts`.
#[derive(Debug, Deserialize)]
pub(crate) struct RpcResult {
    /// The slot the answer was read at.
    #[serde(default)]
    pub context: Loose<RpcContext>,
    /// One slot per key asked for, in order.
    pub value: Vec<AccountSlot>,
}

/// An RPC answer's context.
#[derive(Debug, Deserialize)]
pub(crate) struct RpcContext {
    /// The slot.
    pub slot: u64,
}

/// A JSON-RPC answer to `getTokenLargestAccounts`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct LargestAnswer {
    /// The error object, when the call failed.
    pub error: Loose<Value>,
    /// The result, when it succeeded.
    pub result: Loose<LargestResult>,
}

/// The result of `getTokenLargestAccounts`.
#[derive(Debug, Deserialize)]
pub(crate) struct LargestResult {
    /// The slot the answer was read at.
    #[serde(default)]
    pub context: Loose<RpcContext>,
    /// The largest token accounts, largest first (an element that does not
    /// read is skipped).
    pub value: Vec<Loose<LargestAccount>>,
}

/// One of the largest token accounts.
#[derive(Debug, Deserialize)]
pub(crate) struct LargestAccount {
    /// The token account's address.
    pub address: String,
    /// Its balance in the token's smallest units, as text.
    pub amount: String,
}

/// What the RPC says of one key: no account (`null`), or an account (one
/// whose fields cannot be read still exists).
#[derive(Debug, Clone, PartialEq)]
pub enum AccountSlot {
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
pub struct Account {
    /// Its balance in lamports (`rentEpoch` is often u64::MAX; it is not read).
    pub lamports: Loose<u64>,
    /// The program that owns it.
    pub owner: Loose<String>,
    /// Its data: parsed (`jsonParsed` had a parser) or raw (`["…", "base64"]`).
    pub data: Loose<ParsedData>,
}

/// Account data a parser understood.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ParsedData {
    /// `{type, info}`.
    pub parsed: Parsed,
}

/// The parsed account: its kind and its fields.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Parsed {
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
pub(crate) struct TokenAccountInfo {
    /// The token it holds.
    pub mint: Loose<String>,
    /// Who owns the token account.
    pub owner: Loose<String>,
    /// How much of it.
    pub token_amount: Loose<TokenAmount>,
}

/// A token balance as the RPC writes it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct TokenAmount {
    /// The amount in whole tokens, as text.
    pub ui_amount_string: Loose<String>,
}
