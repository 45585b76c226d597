//! The three public providers (docs/providers.md), each its own client with a base
//! URL, a timeout per request, retries with backoff on 429, 5xx and
//! timeouts, a response size cap, and a limiter that keeps to the provider's
//! documented rate (bounded concurrency plus a minimum spacing between
//! request starts). Requests go through the shared crate's one outbound
//! client ([`freedom_shared::adapters::outbound`]), which caps sizes and
//! classifies answers for the KV store too; answers are read into typed
//! shapes ([`wire`]) that tolerate what the providers are known to vary.
//!
//! - [`dexscreener::DexScreener`]: market data, at most 30 mints a request;
//! - [`rugcheck::RugCheck`]: token risk, one mint a request, no credentials;
//! - [`solana::SolanaRpc`]: `getMultipleAccounts`, at most 100 keys a call.

pub mod dexscreener;
pub mod rugcheck;
pub mod solana;
pub mod wire;

use bytes::Bytes;
use freedom_shared::adapters::outbound::{self, Answer, Class, OutboundError};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, Semaphore};
use tokio::time::Instant;

/// The largest response body a provider may send.
pub const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// DexScreener's name in provenance.
pub const DEXSCREENER: &str = "dexscreener";
/// RugCheck's name in provenance.
pub const RUGCHECK: &str = "rugcheck";
/// The Solana RPC's name in provenance.
pub const SOLANA_RPC: &str = "solana-rpc";

/// One answer as provenance records it: what was asked (without
/// secrets), the status, the exact bytes received and when.
#[derive(Debug, Clone)]
pub struct Received {
    /// The provider ([`DEXSCREENER`], [`RUGCHECK`], [`SOLANA_RPC`]).
    pub provider: &'static str,
    /// What was asked, as provenance shows it.
    pub request: String,
    /// The HTTP status.
    pub status: u16,
    /// The exact bytes received.
    pub body: Bytes,
    /// When they were received.
    pub at: Instant,
    /// The RPC's `context.slot`, when the answer gives one.
    pub slot: Option<u64>,
}

impl Received {
    fn new(provider: &'static str, request: String, answer: &Answer) -> Received {
        Received {
            provider,
            request,
            status: answer.status.as_u16(),
            body: answer.body.clone(),
            at: Instant::now(),
            slot: None,
        }
    }
}

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
    /// How long into a run this provider's requests may go on (within the
    /// run's collection budget): what has answered by then is kept, what
    /// has not is a failure of this provider alone.
    pub deadline: Duration,
}

/// Why a provider call failed (after its retries).
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// No whole answer: a timeout, a broken connection, a body over
    /// [`MAX_RESPONSE_BYTES`], or a body that is not the expected JSON.
    #[error(transparent)]
    Outbound(#[from] OutboundError),
    /// An HTTP status other than success.
    #[error("HTTP {0}")]
    Status(u16),
    /// The answer is JSON of the wrong shape.
    #[error("malformed answer: {0}")]
    Malformed(&'static str),
    /// No answer before the provider's deadline in this run.
    #[error("no answer before this provider's deadline in the run")]
    Deadline,
    /// The owners of a token's largest accounts were not read (their
    /// batch failed), so its holders are not known this run.
    #[error("the owners of the largest accounts were not read: {0}")]
    OwnersUnread(String),
    /// A JSON-RPC error object.
    #[error("RPC error {code}: {message}")]
    Rpc {
        /// The JSON-RPC code.
        code: i64,
        /// Its message (at most 200 characters).
        message: String,
    },
}

impl ProviderError {
    fn is_transient(&self) -> bool {
        match self {
            ProviderError::Outbound(error) => error.is_transient(),
            ProviderError::Status(status) => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}

/// The HTTP side every provider client shares: pacing and retries on the
/// outbound client.
#[derive(Debug, Clone)]
pub struct Http {
    config: ProviderConfig,
    permits: Arc<Semaphore>,
    next_start: Arc<Mutex<Instant>>,
}

impl Http {
    /// A paced client for one provider (on the process's one HTTP client).
    pub fn new(config: ProviderConfig) -> Http {
        Http {
            permits: Arc::new(Semaphore::new(config.concurrency.max(1))),
            next_start: Arc::new(Mutex::new(Instant::now())),
            config,
        }
    }

    /// The provider's base URL.
    pub fn base_url(&self) -> &str {
        &self.config.base_url
    }

    /// `request`'s answer if it comes before `deadline`, else
    /// [`ProviderError::Deadline`] (pacing and retries included).
    pub async fn by<T>(
        &self,
        deadline: Instant,
        request: impl std::future::Future<Output = Result<T, ProviderError>>,
    ) -> Result<T, ProviderError> {
        tokio::time::timeout_at(deadline, request)
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
    pub async fn get(&self, url: &str) -> Result<Answer, ProviderError> {
        let answer = self.fetch(url).await?;
        match answer.class() {
            Class::Success => Ok(answer),
            _ => Err(ProviderError::Status(answer.status.as_u16())),
        }
    }

    /// GETs `url`; a successful answer or a refusal (a 4xx other than
    /// 429), read whole; transient failures are retried.
    pub async fn fetch(&self, url: &str) -> Result<Answer, ProviderError> {
        let client = outbound::client()?;
        self.send(|| client.get(url)).await
    }

    /// POSTs `body` as JSON to `url`; a successful answer, read whole.
    pub async fn post_json(
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
