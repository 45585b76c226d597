//! The three public providers (PROVIDERS.md), each its own client with a base
//! URL, a timeout per request, retries with backoff on 429, 5xx and
//! timeouts, a response size cap, and a limiter that keeps to the provider's
//! documented rate (bounded concurrency plus a minimum spacing between
//! request starts).
//!
//! - [`dexscreener::DexScreener`]: market data, at most 30 mints a request;
//! - [`rugcheck::RugCheck`]: token risk, one mint a request, no credentials;
//! - [`solana::SolanaRpc`]: `getMultipleAccounts`, at most 100 keys a call.

pub mod dexscreener;
pub mod rugcheck;
pub mod solana;

use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, Semaphore};
use tokio::time::Instant;

/// The largest response body a provider may send.
pub const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// How a provider is reached and paced.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// Base URL (no trailing slash).
    pub base_url: String,
    /// Timeout of one request.
    pub timeout: Duration,
    /// Retries after the first attempt (429, 5xx, timeouts, transport).
    pub retries: u32,
    /// First backoff; doubled each retry (a `Retry-After` is honoured up to 5 s).
    pub backoff: Duration,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Minimum time between two request starts (the documented rate).
    pub spacing: Duration,
}

/// Why a provider call failed (after its retries).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// No answer within the timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The connection failed.
    #[error("transport failure: {0}")]
    Transport(String),
    /// An HTTP status other than success.
    #[error("HTTP {0}")]
    Status(u16),
    /// The body was larger than [`MAX_RESPONSE_BYTES`].
    #[error("the answer is larger than {MAX_RESPONSE_BYTES} bytes")]
    TooLarge,
    /// The body was not the expected JSON.
    #[error("malformed answer: {0}")]
    Malformed(String),
    /// A JSON-RPC error object.
    #[error("RPC error {code}: {message}")]
    Rpc {
        /// The JSON-RPC code.
        code: i64,
        /// Its message.
        message: String,
    },
}

impl ProviderError {
    fn retryable(&self) -> bool {
        match self {
            ProviderError::Timeout(_) | ProviderError::Transport(_) => true,
            ProviderError::Status(status) => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}

/// The HTTP side every client shares: pacing, retries, the size cap.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
    config: ProviderConfig,
    permits: Arc<Semaphore>,
    next_start: Arc<Mutex<Instant>>,
}

impl Http {
    /// A paced HTTP client for one provider, with its own connection pool.
    pub fn new(config: ProviderConfig) -> Http {
        Http::sharing(shared_client(), config)
    }

    /// A paced client for one provider on `client`'s connection pool (the
    /// providers share one: building a TLS client costs start-up time).
    pub fn sharing(client: reqwest::Client, config: ProviderConfig) -> Http {
        Http {
            client,
            permits: Arc::new(Semaphore::new(config.concurrency.max(1))),
            next_start: Arc::new(Mutex::new(Instant::now())),
            config,
        }
    }

    /// The provider's base URL.
    pub fn base_url(&self) -> &str {
        &self.config.base_url
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

    /// GETs `url` and reads JSON.
    pub async fn get_json(&self, url: &str) -> Result<Value, ProviderError> {
        self.send(|| self.client.get(url).timeout(self.config.timeout))
            .await
    }

    /// POSTs `body` as JSON to `url` and reads JSON.
    pub async fn post_json(&self, url: &str, body: &Value) -> Result<Value, ProviderError> {
        self.send(|| {
            self.client
                .post(url)
                .json(body)
                .timeout(self.config.timeout)
        })
        .await
    }

    async fn send(
        &self,
        request: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<Value, ProviderError> {
        let _permit = self.permits.acquire().await.expect("never closed");
        let mut attempt = 0;
        loop {
            self.pace().await;
            let (result, retry_after) = self.once(request()).await;
            match result {
                Err(error) if error.retryable() && attempt < self.config.retries => {
                    let backoff = self.config.backoff * 2u32.pow(attempt);
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

    async fn once(
        &self,
        request: reqwest::RequestBuilder,
    ) -> (Result<Value, ProviderError>, Option<Duration>) {
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(error) => return (Err(self.transport(error)), None),
        };
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        if response
            .content_length()
            .is_some_and(|l| l > MAX_RESPONSE_BYTES as u64)
        {
            return (Err(ProviderError::TooLarge), retry_after);
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                        return (Err(ProviderError::TooLarge), retry_after);
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(error) => return (Err(self.transport(error)), retry_after),
            }
        }
        if !status.is_success() {
            return (Err(ProviderError::Status(status.as_u16())), retry_after);
        }
        let parsed = serde_json::from_slice(&body)
            .map_err(|e| ProviderError::Malformed(format!("not JSON: {e}")));
        (parsed, retry_after)
    }

    fn transport(&self, error: reqwest::Error) -> ProviderError {
        if error.is_timeout() {
            ProviderError::Timeout(self.config.timeout)
        } else {
            ProviderError::Transport(error.without_url().to_string())
        }
    }
}

/// The HTTP client the providers share (timeouts are set per request).
pub fn shared_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .user_agent(concat!("freedom-fund-scanner/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("an HTTP client with rustls builds")
}

/// Reads a decimal that may come as a JSON string (`"0.00004687"`) or number.
pub fn decimal(value: Option<&Value>) -> Option<rust_decimal::Decimal> {
    use std::str::FromStr;
    match value? {
        Value::String(text) => rust_decimal::Decimal::from_str(text.trim())
            .or_else(|_| rust_decimal::Decimal::from_scientific(text.trim()))
            .ok(),
        Value::Number(number) => {
            let text = number.to_string();
            rust_decimal::Decimal::from_str(&text)
                .or_else(|_| rust_decimal::Decimal::from_scientific(&text))
                .ok()
        }
        _ => None,
    }
}
