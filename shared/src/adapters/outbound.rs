//! Outbound HTTP: the one client wrapper every call to another service goes
//! through (the KV REST store, the scanner's three providers), so sizes are
//! capped and answers classified the same way everywhere.
//!
//! - `client`: the process's one `reqwest` client (one connection pool, one
//!   TLS stack: rustls on *ring* with the operating system's root
//!   certificates, the same provider and roots the EventBridge adapter gives
//!   the AWS SDK), built on first use.
//! - `send`: sends a request with a timeout and reads its answer whole, up
//!   to a size limit, into an `Answer`: status, `Retry-After`, body.
//! - `Answer::class`: what the status means to a caller (`Class`), and
//!   `OutboundError::is_transient` / `Class::Transient`: what is worth a
//!   retry (429, 5xx, timeouts, broken connections).

use bytes::Bytes;
use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use std::sync::OnceLock;
use std::time::Duration;

/// How long setting up a connection may take, whatever the request's timeout.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The `User-Agent` of every outbound request.
pub(crate) const USER_AGENT: &str = concat!("freedom-fund/", env!("CARGO_PKG_VERSION"));

/// Why an outbound request got no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    /// No whole answer within the timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The connection failed or broke.
    #[error("transport failure")]
    Transport(#[source] reqwest::Error),
    /// The answer's body is larger than the caller's limit.
    #[error("the answer is larger than {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The answer's body is not the JSON the caller expects.
    #[error("the answer is not the expected JSON")]
    Malformed(#[source] serde_json::Error),
    /// The HTTP client could not be built (no TLS roots on this machine).
    #[error("the HTTP client cannot be built")]
    NoClient(#[source] reqwest::Error),
}

impl OutboundError {
    /// Whether trying again may help: timeouts and broken connections.
    pub(crate) fn is_transient(&self) -> bool {
        matches!(
            self,
            OutboundError::Timeout(_) | OutboundError::Transport(_)
        )
    }
}

/// What an answer's status means to a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// 2xx.
    Success,
    /// 429 or 5xx: the other side is busy or failing; a retry may help.
    Transient,
    /// Any other status (4xx, or a 1xx/3xx no client here follows).
    Refused,
}

/// An answer read whole.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// The answer's header fields.
    pub headers: reqwest::header::HeaderMap,
    /// `Retry-After` in seconds, when the answer gave one.
    pub retry_after: Option<Duration>,
    /// The body (at most the limit [`send`] was given).
    pub body: Bytes,
}

impl Answer {
    /// What the status means.
    pub(crate) fn class(&self) -> Class {
        if self.status.is_success() {
            Class::Success
        } else if self.status == StatusCode::TOO_MANY_REQUESTS || self.status.is_server_error() {
            Class::Transient
        } else {
            Class::Refused
        }
    }

    /// The body read as JSON of type `T`.
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, OutboundError> {
        serde_json::from_slice(&self.body).map_err(OutboundError::Malformed)
    }
}

/// The process's HTTP client, built on first use (building one loads the
/// root certificates, so it is done once). Timeouts are per request, and
/// redirects are not followed.
pub(crate) fn client() -> Result<reqwest::Client, OutboundError> {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    if let Some(client) = CLIENT.get() {
        return Ok(client.clone());
    }
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(USER_AGENT)
        // A redirect is an answer like any other (a 3xx is refused by
        // `Answer::class`), never followed: a provider must not be able
        // to send a request, or a POST's body, to another host or port.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(OutboundError::NoClient)?;
    Ok(CLIENT.get_or_init(|| client).clone())
}

/// Sends `request`, giving up after `timeout`, and reads the answer whole;
/// a body larger than `limit` bytes is [`OutboundError::TooLarge`] (read no
/// further than the limit).
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    timeout: Duration,
    limit: usize,
) -> Result<Answer, OutboundError> {
    let transport = |error: reqwest::Error| {
        if error.is_timeout() {
            OutboundError::Timeout(timeout)
        } else {
            OutboundError::Transport(error.without_url())
        }
    };
    let mut response = request.timeout(timeout).send().await.map_err(transport)?;
    let status = response.status();
    let headers = std::mem::take(response.headers_mut());
    let retry_after = headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let too_large = OutboundError::TooLarge { limit };
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(too_large);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len().saturating_add(chunk.len()) > limit {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Answer {
        status,
        headers,
        retry_after,
        body: Bytes::from(body),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16) -> Answer {
        Answer {
            status: StatusCode::from_u16(status).unwrap(),
            headers: Default::default(),
            retry_after: None,
            body: Bytes::new(),
        }
    }

    #[test]
    fn statuses_are_classified_once_for_every_caller() {
        assert_eq!(answer(200).class(), Class::Success);
        assert_eq!(answer(204).class(), Class::Success);
        assert_eq!(answer(429).class(), Class::Transient);
        assert_eq!(answer(500).class(), Class::Transient);
        assert_eq!(answer(503).class(), Class::Transient);
        assert_eq!(answer(400).class(), Class::Refused);
        assert_eq!(answer(401).class(), Class::Refused);
        assert_eq!(answer(404).class(), Class::Refused);
        assert_eq!(answer(302).class(), Class::Refused);
    }
}
