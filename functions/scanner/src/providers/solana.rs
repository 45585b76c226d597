//! Solana JSON-RPC `getMultipleAccounts` with `jsonParsed`: at most 100 keys
//! a call (100 requests per 10 s, 40 per 10 s for one method). Accounts come
//! back in input order, `null` for one that does not exist.

use super::{Http, ProviderError};
use freedom_shared::scanner::{MintAccount, WalletToken, WalletView};
use futures_util::future::join_all;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Keys per call (the method's limit).
pub const BATCH: usize = 100;

/// The Solana RPC client.
#[derive(Debug, Clone)]
pub struct SolanaRpc {
    http: Http,
}

/// Accounts of the keys whose batch answered (`Value::Null` = no account),
/// and the batches that failed.
#[derive(Debug, Default)]
pub struct Accounts {
    /// Per answered key: its account or null.
    pub accounts: BTreeMap<String, Value>,
    /// One entry per failed batch.
    pub failures: Vec<ProviderError>,
}

impl SolanaRpc {
    /// A client on `http` (its base URL is the RPC endpoint itself).
    pub fn new(http: Http) -> SolanaRpc {
        SolanaRpc { http }
    }

    /// The accounts of `keys`, in batches of [`BATCH`].
    pub async fn accounts(&self, keys: &[String]) -> Accounts {
        let calls = keys.chunks(BATCH).map(|batch| async move {
            let body = json!({
                "jsonrpc": "2.0", "id": 1, "method": "getMultipleAccounts",
                "params": [batch, {"encoding": "jsonParsed", "commitment": "confirmed"}]
            });
            let answer = self.http.post_json(self.http.base_url(), &body).await;
            (batch, answer.and_then(|a| parse_accounts(&a, batch.len())))
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

/// The `value` array of a `getMultipleAccounts` answer, checked for length.
pub fn parse_accounts(answer: &Value, expected: usize) -> Result<Vec<Value>, ProviderError> {
    if let Some(error) = answer.get("error") {
        return Err(ProviderError::Rpc {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .chars()
                .take(200)
                .collect(),
        });
    }
    let values = answer
        .pointer("/result/value")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::Malformed("no result.value array".into()))?;
    if values.len() != expected {
        return Err(ProviderError::Malformed(format!(
            "{} accounts for {expected} keys",
            values.len()
        )));
    }
    Ok(values.clone())
}

fn parsed(account: &Value) -> Option<(&str, &Value)> {
    let kind = account.pointer("/data/parsed/type")?.as_str()?;
    Some((kind, account.pointer("/data/parsed/info")?))
}

/// What a mint's account says of its authorities.
pub fn mint_account(account: &Value) -> MintAccount {
    if account.is_null() {
        return MintAccount::Missing;
    }
    match parsed(account) {
        Some(("mint", info)) => {
            let authority =
                |field: &str| info.get(field).and_then(Value::as_str).map(str::to_owned);
            MintAccount::Mint {
                mint_authority: authority("mintAuthority"),
                freeze_authority: authority("freezeAuthority"),
            }
        }
        _ => MintAccount::NotAMint,
    }
}

/// A configured public account as the report shows it.
pub fn wallet_view(address: &str, account: Option<&Value>) -> WalletView {
    let Some(account) = account else {
        return WalletView {
            address: address.to_owned(),
            exists: None,
            lamports: None,
            owner: None,
            tokens: Vec::new(),
        };
    };
    let tokens = match parsed(account) {
        Some(("account", info)) => info
            .get("mint")
            .and_then(Value::as_str)
            .map(|mint| WalletToken {
                mint: mint.to_owned(),
                amount: info
                    .pointer("/tokenAmount/uiAmountString")
                    .and_then(Value::as_str)
                    .unwrap_or("0")
                    .to_owned(),
            })
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    WalletView {
        address: address.to_owned(),
        exists: Some(!account.is_null()),
        lamports: account.get("lamports").and_then(Value::as_u64),
        owner: account
            .get("owner")
            .and_then(Value::as_str)
            .map(str::to_owned),
        tokens,
    }
}
