//! The scanner's three providers, as the run needs them (docs/providers.md):
//! market data ([`MarketData`]: each token's best pool), token risk
//! ([`TokenRisk`]: a token's risk report) and chain accounts
//! ([`ChainAccounts`]: accounts by key, a token's largest accounts). The
//! HTTP clients (DexScreener, RugCheck, the Solana RPC) are their adapters
//! (`adapters::providers`).
//!
//! Every answer comes with what provenance records of it ([`Received`]):
//! what was asked (without secrets), the status, the exact bytes and when.
//! Each call takes a deadline: what has not answered by then is a failure
//! of that provider alone ([`ProviderError::Deadline`]).

use crate::scan::accounts::{AccountSlot, Balance};
use crate::scan::{MarketQuote, RiskReport};
use async_trait::async_trait;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// DexScreener's name in provenance.
pub(crate) const DEXSCREENER: &str = "dexscreener";
/// RugCheck's name in provenance.
pub(crate) const RUGCHECK: &str = "rugcheck";
/// The Solana RPC's name in provenance.
pub(crate) const SOLANA_RPC: &str = "solana-rpc";

/// One answer as provenance records it: what was asked (without
/// secrets), the status, the exact bytes received and when.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    /// The provider (`DEXSCREENER`, `RUGCHECK`, `SOLANA_RPC`).
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

/// Why a provider call failed (after its retries).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProviderError {
    /// No whole answer within one request's timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// No whole answer: a broken connection, a body over the size limit,
    /// a body that is not the expected JSON, or no HTTP client (the
    /// message is the cause chain).
    #[error("{message}")]
    Unreachable {
        /// Why, as one line.
        message: String,
        /// Whether trying again may help (a broken connection).
        transient: bool,
    },
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
    /// Whether trying again may help: timeouts, broken connections, 429
    /// and 5xx.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            ProviderError::Timeout(_) => true,
            ProviderError::Unreachable { transient, .. } => *transient,
            ProviderError::Status(status) => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}

/// What one collection of quotes got: a quote for every mint of the
/// batches that answered (`None` = not indexed), the answers they came
/// from, and the batches that failed.
#[derive(Debug, Default)]
pub(crate) struct MarketQuotes {
    /// Per answered mint: its best pool, or `None` when not indexed.
    pub quotes: BTreeMap<String, Option<MarketQuote>>,
    /// The answers, one per batch that answered.
    pub answers: Vec<Received>,
    /// Per answered mint: the index in `answers` of its batch's answer.
    pub sources: BTreeMap<String, usize>,
    /// One entry per failed batch.
    pub failures: Vec<ProviderError>,
}

/// What asking for one risk report gave.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RiskAnswer {
    /// A report.
    Report(RiskReport),
    /// The provider has no report for this token (a 4xx other than 429).
    NoReport,
}

/// Accounts of the keys whose batch answered, the answers they came from,
/// and the batches that failed.
#[derive(Debug, Default)]
pub(crate) struct Accounts {
    /// Per answered key: its account, or [`AccountSlot::Missing`].
    pub accounts: BTreeMap<String, AccountSlot>,
    /// The answers, one per batch that answered.
    pub answers: Vec<Received>,
    /// Per answered key: the index in `answers` of its batch's answer.
    pub sources: BTreeMap<String, usize>,
    /// One entry per failed batch.
    pub failures: Vec<ProviderError>,
}

/// A token's largest accounts, as the chain gave them.
#[derive(Debug)]
pub(crate) struct Largest {
    /// Address and balance, largest first; `None` when the RPC answered an
    /// error object (it cannot list them: e.g. there is no such mint).
    pub accounts: Option<Vec<Balance>>,
    /// The answer they came from.
    pub received: Received,
}

/// Market data: each token's most liquid pool.
#[async_trait]
pub(crate) trait MarketData: Send + Sync {
    /// Quotes for `mints`; the batches that answer by `deadline` are kept.
    async fn quotes(&self, mints: &[String], deadline: Instant) -> MarketQuotes;
}

/// Token risk: a token's risk report.
#[async_trait]
pub(crate) trait TokenRisk: Send + Sync {
    /// The risk report of `mint`, if the provider answers by `deadline`,
    /// with the answer it was read from.
    async fn report(
        &self,
        mint: &str,
        deadline: Instant,
    ) -> Result<(RiskAnswer, Received), ProviderError>;
}

/// Chain accounts: accounts by key, and a token's largest accounts.
#[async_trait]
pub(crate) trait ChainAccounts: Send + Sync {
    /// The accounts of `keys`; the batches that answer by `deadline` are
    /// kept.
    async fn accounts(&self, keys: &[String], deadline: Instant) -> Accounts;

    /// The largest token accounts of `mint`, if the chain answers by
    /// `deadline`.
    async fn largest(&self, mint: &str, deadline: Instant) -> Result<Largest, ProviderError>;
}
