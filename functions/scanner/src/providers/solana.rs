//! Solana JSON-RPC `getMultipleAccounts` with `jsonParsed`: at most 100 keys
//! a call (100 requests per 10 s, 40 per 10 s for one method). Accounts come
//! back in input order, `null` for one that does not exist.

use super::wire::{AccountSlot, Parsed, RpcAnswer, RpcError, TokenAccountInfo};
use super::{Http, ProviderError};
use freedom_shared::scan::{Authority, MintAccount, WalletToken, WalletView};
use futures_util::future::join_all;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use tokio::time::Instant;

/// Keys per call (the method's limit).
pub const BATCH: usize = 100;

/// The Solana RPC client.
#[derive(Debug, Clone)]
pub struct SolanaRpc {
    http: Http,
}

/// Accounts of the keys whose batch answered, and the batches that failed.
#[derive(Debug, Default)]
pub struct Accounts {
    /// Per answered key: its account, or [`AccountSlot::Missing`].
    pub accounts: BTreeMap<String, AccountSlot>,
    /// One entry per failed batch.
    pub failures: Vec<ProviderError>,
}

impl SolanaRpc {
    /// A client on `http` (its base URL is the RPC endpoint itself).
    pub fn new(http: Http) -> SolanaRpc {
        SolanaRpc { http }
    }

    /// The accounts of `keys`, in batches of [`BATCH`]; the batches that
    /// answer by `deadline` are kept.
    pub async fn accounts(&self, keys: &[String], deadline: Instant) -> Accounts {
        let calls = keys.chunks(BATCH).map(|batch| async move {
            let body = json!({
                "jsonrpc": "2.0", "id": 1, "method": "getMultipleAccounts",
                "params": [batch, {"encoding": "jsonParsed", "commitment": "confirmed"}]
            });
            let answer = self
                .http
                .by(deadline, self.http.post_json(self.http.base_url(), &body))
                .await;
            (
                batch,
                answer.and_then(|a| parse_accounts(&a.body, batch.len())),
            )
        });
        let mut result = Accounts::default();
        for (batch, answer) in join_all(calls).await {
            match answer {
                Ok(values) => result.accounts.extend(batch.iter().cloned().zip(values)),
                Err(error) => result.failures.push(error),
            }
        }
        result
    }
}

/// The accounts in a `getMultipleAccounts` answer's body, checked for length.
pub fn parse_accounts(body: &[u8], expected: usize) -> Result<Vec<AccountSlot>, ProviderError> {
    let answer: RpcAnswer = serde_json::from_slice(body)
        .map_err(|_| ProviderError::Malformed("not a JSON-RPC answer"))?;
    if let Some(error) = answer.error.get() {
        let error = RpcError::deserialize(error).unwrap_or_default();
        return Err(ProviderError::Rpc {
            code: error.code.get().copied().unwrap_or(0),
            message: error
                .message
                .get()
                .map_or("", String::as_str)
                .chars()
                .take(200)
                .collect(),
        });
    }
    let Some(result) = answer.result.0 else {
        return Err(ProviderError::Malformed("no result.value array"));
    };
    if result.value.len() != expected {
        return Err(ProviderError::Malformed(
            "not one account per key asked for",
        ));
    }
    Ok(result.value)
}

/// The parsed form of an account, when the RPC had a parser for it.
fn parsed(slot: &AccountSlot) -> Option<&Parsed> {
    match slot {
        AccountSlot::Present(account) => account.data.get().map(|data| &data.parsed),
        AccountSlot::Missing => None,
    }
}

/// What a mint's account says of its authorities.
pub fn mint_account(slot: &AccountSlot) -> MintAccount {
    if *slot == AccountSlot::Missing {
        return MintAccount::Missing;
    }
    match parsed(slot) {
        Some(parsed) if parsed.kind == "mint" => MintAccount::Mint {
            mint_authority: Authority::from_field(parsed.info.get("mintAuthority")),
            freeze_authority: Authority::from_field(parsed.info.get("freezeAuthority")),
        },
        _ => MintAccount::NotAMint,
    }
}

/// A configured public account as the report shows it (`None`: its batch
/// did not answer).
pub fn wallet_view(address: &str, slot: Option<&AccountSlot>) -> WalletView {
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
