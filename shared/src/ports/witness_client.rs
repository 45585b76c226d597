//! How the log reaches a witness ([`WitnessClient`]): one `add-checkpoint`
//! request (c2sp.org/tlog-witness), or the monitoring read of the latest
//! checkpoint it cosigned, answered with its status, content type and
//! body. The protocol's meaning of each answer is the log use case's;
//! the adapter only carries bytes (`adapters::witness_http`, on the one
//! outbound HTTP client).

use async_trait::async_trait;
use std::time::Duration;

/// A witness's answer to `add-checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WitnessReply {
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type`, without parameters, when given.
    pub content_type: Option<String>,
    /// The body (at most 16 KiB read; a longer one is a failure).
    pub body: String,
}

/// Sends add-checkpoint requests to witnesses.
#[async_trait]
pub trait WitnessClient: Send + Sync + 'static {
    /// `POST <prefix>/add-checkpoint` with `body`, given up after
    /// `timeout`; `Err` (a sentence, never a secret) when no answer came.
    async fn add_checkpoint(
        &self,
        prefix: &str,
        body: &str,
        timeout: Duration,
    ) -> Result<WitnessReply, String>;

    /// `GET <prefix>/<origin_hash>/checkpoint`, the monitoring read: the
    /// latest checkpoint the witness cosigned for the origin whose
    /// SHA-256 is `origin_hash` (hex). A witness that does not serve it
    /// answers 404, which is what this default gives.
    async fn latest_checkpoint(
        &self,
        prefix: &str,
        origin_hash: &str,
        timeout: Duration,
    ) -> Result<WitnessReply, String> {
        let _ = (prefix, origin_hash, timeout);
        Ok(WitnessReply {
            status: 404,
            content_type: None,
            body: String::new(),
        })
    }
}
