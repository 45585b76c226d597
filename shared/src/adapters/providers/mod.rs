//! The scanner's three providers over HTTP (docs/providers.md), the
//! adapters of [`crate::ports::providers`], each its own client with a base
//! URL, a timeout per request, retries with backoff on 429, 5xx and
//! timeouts, a response size cap, and a limiter that keeps to the provider's
//! documented rate (bounded concurrency plus a minimum spacing between
//! request starts). Requests go through the shared crate's one outbound
//! client (`crate::adapters::outbound`), which caps sizes and
//! classifies answers for the KV store too; answers are read into typed
//! shapes (`wire`) that tolerate what the providers are known to vary.
//!
//! - [`dexscreener::DexScreener`] ([`MarketData`](crate::ports::providers::MarketData)):
//!   at most 30 mints a request;
//! - [`rugcheck::RugCheck`] ([`TokenRisk`](crate::ports::providers::TokenRisk)): one
//!   mint a request, no credentials;
//! - [`solana::SolanaRpc`] ([`ChainAccounts`](crate::ports::providers::ChainAccounts)):
//!   `getMultipleAccounts`, at most 100 keys a call, and
//!   `getTokenLargestAccounts`.

pub(crate) mod dexscreener;
pub(crate) use dexscreener::DexScreener;
pub(crate) mod rugcheck;
pub(crate) use rugcheck::RugCheck;
pub(crate) mod solana;
pub(crate) use solana::SolanaRpc;
pub(crate) mod wire;

#[cfg(test)]
mod readings;
#[cfg(test)]
mod standin_tests;
#[cfg(test)]
mod tests;

pub(crate) use crate::config::scanner::ProviderConfig;

use crate::config::ScannerConfig;
use crate::service::Providers;

/// The scanner's providers over HTTP, each at its configured base URL and
/// pace: what the composition roots hand the scanner's run.
pub fn http_providers(config: &ScannerConfig) -> Providers {
    Providers {
        market: Arc::new(DexScreener::new(Http::new(config.dexscreener.clone()))),
        risk: Arc::new(RugCheck::new(Http::new(config.rugcheck.clone()))),
        chain: Arc::new(SolanaRpc::new(Http::new(config.solana.clone()))),
    }
}

use crate::adapters::outbound::{self, Answer, Class, OutboundError};
use crate::errors::ErrorChain;
use crate::ports::providers::{ProviderError, Received};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, Semaphore};
use tokio::time::Instant;

/// The largest response body a provider may send.
pub(crate) const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// `answer` as provenance records it, received now.
fn received(provider: &'static str, request: String, answer: &Answer) -> Received {
    Received {
        provider,
        request,
        status: answer.status.as_u16(),
        body: answer.body.clone(),
        at: std::time::Instant::now(),
        slot: None,
    }
}

impl From<OutboundError> for ProviderError {
    fn from(error: OutboundError) -> ProviderError {
        match error {
            OutboundError::Timeout(after) => ProviderError::Timeout(after),
            other => ProviderError::Unreachable {
                transient: other.is_transient(),
                message: ErrorChain(&other).to_string(),
            },
        }
    }
}

/// The HTTP side every provider client shares: pacing and retries on the
/// outbound client.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    config: ProviderConfig,
    permits: Arc<Semaphore>,
    next_start: Arc<Mutex<Instant>>,
}

impl Http {
    /// A paced client for one provider (on the process's one HTTP client).
    pub(crate) fn new(config: ProviderConfig) -> Http {
        Http {
            permits: Arc::new(Semaphore::new(config.concurrency.max(1))),
            next_start: Arc::new(Mutex::new(Instant::now())),
            config,
        }
    }

    /// The provider's base URL.
    pub(crate) fn base_url(&self) -> &str {
        &self.config.base_url
    }

    /// `request`'s answer if it comes before `deadline`, else
    /// [`ProviderError::Deadline`] (pacing and retries included).
    pub(crate) async fn by<T>(
        &self,
        deadline: std::time::Instant,
        request: impl std::future::Future<Output = Result<T, ProviderError>>,
    ) -> Result<T, ProviderError> {
        tokio::time::timeout_at(Instant::from_std(deadline), request)
            .await
            .unwrap_or(Err(ProviderError::Deadline))
    }

    /// Waits for this request's slot in the provider's rate.
    async fn pace(&self) {
        let start = {
            let mut next = self.next_start.lock().await;
            let start = (*next).max(Instant::now());
            *next = start + self.config.spacing;
            start
        };
        tokio::time::sleep_until(start).await;
    }

    /// GETs `url`; a successful answer, read whole.
    pub(crate) async fn get(&self, url: &str) -> Result<Answer, ProviderError> {
        let answer = self.fetch(url).await?;
        match answer.class() {
            Class::Success => Ok(answer),
            _ => Err(ProviderError::Status(answer.status.as_u16())),
        }
    }

    /// GETs `url`; a successful answer or a refusal (a 4xx other than
    /// 429), read whole; transient failures are retried.
    pub(crate) async fn fetch(&self, url: &str) -> Result<Answer, ProviderError> {
        let client = outbound::client()?;
        self.send(|| client.get(url)).await
    }

    /// POSTs `body` as JSON to `url`; a successful answer, read whole.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        body: &serde_json::Value,
    ) -> Result<Answer, ProviderError> {
        let client = outbound::client()?;
        let payload = body.to_string();
        let answer = self
            .send(|| {
                client
                    .post(url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(payload.clone())
            })
            .await?;
        match answer.class() {
            Class::Success => Ok(answer),
            _ => Err(ProviderError::Status(answer.status.as_u16())),
        }
    }

    async fn send(
        &self,
        request: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<Answer, ProviderError> {
        // The semaphore is never closed, so acquiring only waits.
        let _permit = self.permits.acquire().await.ok();
        let mut attempt = 0;
        loop {
            self.pace().await;
            let (result, retry_after) = self.once(request()).await;
            match result {
                Err(error) if error.is_transient() && attempt < self.config.retries => {
                    let backoff = self
                        .config
                        .backoff
                        .saturating_mul(2u32.saturating_pow(attempt));
                    let wait = retry_after
                        .map(|r| r.min(Duration::from_secs(5)))
                        .unwrap_or(backoff)
                        .max(backoff);
                    tracing::debug!(%error, ?wait, "provider call failed, retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// One attempt: the answer when it is a success or a refusal, else why
    /// not, with the answer's `Retry-After`.
    async fn once(
        &self,
        request: reqwest::RequestBuilder,
    ) -> (Result<Answer, ProviderError>, Option<Duration>) {
        match outbound::send(request, self.config.timeout, MAX_RESPONSE_BYTES).await {
            Err(error) => (Err(error.into()), None),
            Ok(answer) => {
                let retry_after = answer.retry_after;
                match answer.class() {
                    Class::Success | Class::Refused => (Ok(answer), retry_after),
                    Class::Transient => (
                        Err(ProviderError::Status(answer.status.as_u16())),
                        retry_after,
                    ),
                }
            }
        }
    }
}
