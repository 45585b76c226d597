//! Solana JSON-RPC: `getMultipleAccounts` with `jsonParsed` (at most 100
//! keys a call; accounts come back in input order, `null` for one that does
//! not exist) and `getTokenLargestAccounts` (a token's 20 largest token
//! accounts). The public endpoint allows 100 requests per 10 s, 40 per 10 s
//! for one method; every call goes through the same pacing.

use super::wire::{LargestAnswer, RpcAnswer, RpcError};
use super::{Http, received};
use crate::ports::providers::{
    Accounts, ChainAccounts, Largest, ProviderError, Received, SOLANA_RPC,
};
use crate::scan::accounts::{AccountSlot, Balance};
use crate::scan::holders::MAX_LARGEST_ACCOUNTS;
use crate::scan::provenance::rpc_request;
use async_trait::async_trait;
use futures_util::future::join_all;
use serde::Deserialize;
use serde_json::json;
use std::time::Instant;

/// Keys per call (the method's limit).
pub(crate) const BATCH: usize = 100;

/// The Solana RPC client.
#[derive(Debug, Clone)]
pub(crate) struct SolanaRpc {
    http: Http,
}

/// The configuration every call asks for.
fn config() -> serde_json::Value {
    json!({"encoding": "jsonParsed", "commitment": "confirmed"})
}

impl SolanaRpc {
    /// A client on `http` (its base URL is the RPC endpoint itself).
    pub(crate) fn new(http: Http) -> SolanaRpc {
        SolanaRpc { http }
    }

    /// One JSON-RPC call, its answer as provenance records it.
    async fn call(
        &self,
        method: &str,
        params: &serde_json::Value,
        deadline: Instant,
    ) -> Result<Received, ProviderError> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let answer = self
            .http
            .by(deadline, self.http.post_json(self.http.base_url(), &body))
            .await?;
        Ok(received(SOLANA_RPC, rpc_request(method, params), &answer))
    }
}

#[async_trait]
impl ChainAccounts for SolanaRpc {
    /// The accounts of `keys`, in batches of `BATCH`; the batches that
    /// answer by `deadline` are kept.
    async fn accounts(&self, keys: &[String], deadline: Instant) -> Accounts {
        let calls = keys.chunks(BATCH).map(|batch| async move {
            let params = json!([batch, config()]);
            let answer = self.call("getMultipleAccounts", &params, deadline).await;
            (
                batch,
                answer.and_then(|mut received| {
                    let (values, slot) = parse_accounts(&received.body, batch.len())?;
                    received.slot = slot;
                    Ok((values, received))
                }),
            )
        });
        let mut result = Accounts::default();
        for (batch, answer) in join_all(calls).await {
            match answer {
                Ok((values, received)) => {
                    let index = result.answers.len();
                    result.answers.push(received);
                    result
                        .sources
                        .extend(batch.iter().map(|key| (key.clone(), index)));
                    result.accounts.extend(batch.iter().cloned().zip(values));
                }
                Err(error) => result.failures.push(error),
            }
        }
        result
    }

    /// The 20 largest token accounts of `mint`, if the RPC answers by
    /// `deadline`.
    async fn largest(&self, mint: &str, deadline: Instant) -> Result<Largest, ProviderError> {
        let params = json!([mint, {"commitment": "confirmed"}]);
        let mut received = self
            .call("getTokenLargestAccounts", &params, deadline)
            .await?;
        let (accounts, slot) = parse_largest(&received.body)?;
        received.slot = slot;
        Ok(Largest { accounts, received })
    }
}

/// An RPC error object as the provider error it is.
fn rpc_error(error: &serde_json::Value) -> ProviderError {
    let error = RpcError::deserialize(error).unwrap_or_default();
    ProviderError::Rpc {
        code: error.code.get().copied().unwrap_or(0),
        message: error
            .message
            .get()
            .map_or("", String::as_str)
            .chars()
            .take(200)
            .collect(),
    }
}

/// The accounts in a `getMultipleAccounts` answer's body, checked for
/// length, and the slot it was read at.
pub(crate) fn parse_accounts(
    body: &[u8],
    expected: usize,
) -> Result<(Vec<AccountSlot>, Option<u64>), ProviderError> {
    let answer: RpcAnswer = super::wire::read(body, "not a JSON-RPC answer")?;
    if let Some(error) = answer.error.get() {
        return Err(rpc_error(error));
    }
    let Some(result) = answer.result.0 else {
        return Err(ProviderError::Malformed("no result.value array"));
    };
    if result.value.len() != expected {
        return Err(ProviderError::Malformed(
            "not one account per key asked for",
        ));
    }
    Ok((result.value, result.context.0.map(|c| c.slot)))
}

/// The accounts in a `getTokenLargestAccounts` answer's body (`None` for an
/// error object), and the slot it was read at. Every account must read: an
/// address and an amount that is a non-negative integer as a string of
/// digits; one that does not (a JSON number, an exponent, a sign) makes the
/// whole answer malformed, so the holders are unknown rather than counted
/// without it. The accounts are sorted here, largest first, and at most
/// [`MAX_LARGEST_ACCOUNTS`] kept, whatever the answer's length or order.
pub(crate) fn parse_largest(
    body: &[u8],
) -> Result<(Option<Vec<Balance>>, Option<u64>), ProviderError> {
    let answer: LargestAnswer = super::wire::read(body, "not a JSON-RPC answer")?;
    if answer.error.get().is_some() {
        return Ok((None, None));
    }
    let Some(result) = answer.result.0 else {
        return Err(ProviderError::Malformed("no result.value array"));
    };
    let mut accounts = result
        .value
        .iter()
        .map(|account| {
            let account = account.get()?;
            let digits =
                !account.amount.is_empty() && account.amount.bytes().all(|b| b.is_ascii_digit());
            let amount = account.amount.parse().ok().filter(|_| digits)?;
            Some((account.address.clone(), amount))
        })
        .collect::<Option<Vec<Balance>>>()
        .ok_or(ProviderError::Malformed(
            "a largest account without an address and a whole amount as a string of digits",
        ))?;
    accounts.sort_by_key(|(_, amount)| std::cmp::Reverse(*amount));
    accounts.truncate(MAX_LARGEST_ACCOUNTS);
    Ok((Some(accounts), result.context.0.map(|c| c.slot)))
}
