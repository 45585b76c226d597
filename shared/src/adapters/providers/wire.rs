//! The providers' answers as typed shapes (docs/providers.md),
//! read with `serde` straight from the answer's bytes.
//!
//! Providers vary in what they send (fields missing, `null`, numbers as
//! strings, one odd element in a list), so a field the scanner can do
//! without is [`Loose`]: absent, `null` or of another type reads as unknown
//! instead of refusing the whole answer. Only what the scanner cannot read
//! around (the envelope itself) makes an answer malformed.

use crate::ports::providers::ProviderError;
use crate::scan::accounts::{AccountSlot, Loose};
use rust_decimal::Decimal;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::str::FromStr;

/// Reads a provider's answer as `T`: a body that is not JSON, or whose
/// objects name a key twice (which a reader would take the last of
/// silently), is malformed (`what` says what was expected).
pub(crate) fn read<T: DeserializeOwned>(
    body: &[u8],
    what: &'static str,
) -> Result<T, ProviderError> {
    match crate::json::parse_exact(body) {
        Ok(tree) if tree.repeats_a_key() => {
            return Err(ProviderError::Malformed("an object names a key twice"));
        }
        Ok(_) => {}
        Err(_) => return Err(ProviderError::Malformed(what)),
    }
    serde_json::from_slice(body).map_err(|_| ProviderError::Malformed(what))
}

/// A decimal sent as a JSON string (`"0.00004687"`, DexScreener's prices) or
/// number, in plain or scientific notation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DecimalText(pub Decimal);

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
    pub(crate) fn pairs(&self) -> impl Iterator<Item = &Pair> {
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
pub(crate) struct Pair {
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
pub(crate) struct PairToken {
    /// The token's mint address.
    pub address: String,
    /// Its ticker as the pool names it.
    #[serde(default)]
    pub symbol: Loose<String>,
}

/// A pool's liquidity.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Liquidity {
    /// In USD.
    pub usd: Loose<DecimalText>,
    /// The base token's reserve, in whole tokens.
    pub base: Loose<DecimalText>,
    /// The quote token's reserve, in whole tokens.
    pub quote: Loose<DecimalText>,
}

/// A pool's price changes.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PriceChange {
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
