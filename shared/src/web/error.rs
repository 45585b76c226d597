//! The API's error, [`ApiError`], and its one mapping to HTTP.
//!
//! Every error body is `{"error": {"code", "message", "details"}}` with the
//! status and code of the contract (docs/api.md). The client sees a stable code and a
//! plain message; causes (store errors) go to the log, never to the client.

use crate::errors::ErrorChain;
use crate::ports::ledger_store::{Refusal, StoreError};
use crate::record::{FieldIssue, RecordError};
use crate::service::dashboard::{DashboardError, SelectionError};
use crate::service::exports::ExportError;
use crate::service::ledger::AppendError;
use crate::service::log::LogError;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// Everything a request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request itself is not HTTP/1.1 (a broken request line or
    /// header), answered by the HTTP layer before any route.
    #[error("the request could not be read as HTTP/1.1")]
    BadRequest,
    /// 400: the body is not JSON.
    #[error("{0}")]
    MalformedJson(String),
    /// 400: a query parameter is unknown, repeated or invalid.
    #[error("{message}")]
    InvalidQuery {
        /// What is wrong.
        message: String,
        /// One entry per offending parameter.
        details: Vec<Value>,
    },
    /// 401: missing or wrong bearer token (or a token in the URL).
    #[error("{message}")]
    Unauthorized {
        /// What is wrong.
        message: &'static str,
        /// Whether a token was presented (then the challenge says `invalid_token`).
        presented: bool,
    },
    /// 404: no such path.
    #[error("no such resource; the API is at /api/freedom-fund and /api/freedom-scanner")]
    NotFound,
    /// 404: a tile the log's tree does not have (beyond it, or not at
    /// that width).
    #[error("no such tile: the log's tree does not have it at this size")]
    NoSuchTile,
    /// 404: no evidence is kept under this hash (never kept, or expired).
    #[error(
        "no such evidence: nothing is kept under this SHA-256 (never kept, or older than seven days)"
    )]
    NoSuchEvidence,
    /// 404: a record or tree size the log does not have (yet), named in a
    /// proof's query.
    #[error("{message}")]
    BeyondLog {
        /// What is missing, with the log's size.
        message: String,
        /// The parameter at fault.
        parameter: &'static str,
    },
    /// 405: the path exists, the method does not.
    #[error("method not allowed; use {allow}")]
    MethodNotAllowed {
        /// The methods the path accepts.
        allow: &'static str,
    },
    /// 409: the id exists with different content.
    #[error(
        "a record with this id already exists with different content (seq {existing_seq}); records are never changed"
    )]
    IdConflict {
        /// Where the existing record is.
        existing_seq: u64,
    },
    /// 409: a snapshot exists for the same strategy, mode and instant.
    #[error("a snapshot already exists for this strategy, mode and instant (seq {existing_seq})")]
    DuplicateSnapshot {
        /// Where the existing snapshot is.
        existing_seq: u64,
    },
    /// 409: the snapshot is older than the latest of its strategy and mode.
    #[error(
        "this snapshot is older than the latest snapshot of its strategy and mode (seq {latest_seq}{}); snapshots are appended in time order, so send one later than that",
        latest_as_of.as_deref().map(|at| format!(", asOf {at}")).unwrap_or_default()
    )]
    OutOfOrder {
        /// Where the latest snapshot is.
        latest_seq: u64,
        /// Its `asOf` as written (`None` when it could not be read).
        latest_as_of: Option<String>,
    },
    /// 409: a scanner run is in progress.
    #[error("a scanner run is already in progress; try again after it finishes")]
    ScannerBusy,
    /// 501: the request's body is framed in a way the service does not take
    /// (a `Transfer-Encoding` other than exactly `chunked`): its length
    /// cannot be known, so nothing of it is read and the connection closes.
    #[error(
        "the service reads request bodies with Content-Length or Transfer-Encoding: chunked only"
    )]
    NotImplemented,
    /// 408: the client did not send its request (head or body) in time.
    #[error("the request was not received in time; send it whole, promptly")]
    RequestTimeout,
    /// 414: the request target is longer than the limit.
    #[error("the URL is longer than {limit} bytes")]
    UriTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// 431: the request head is larger than the limit.
    #[error("the request's header fields are larger than the limit")]
    HeaderFieldsTooLarge,
    /// 413: body over the limit.
    #[error("the body is larger than {limit} bytes")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// 415: not `application/json`.
    #[error("send the record with Content-Type: application/json")]
    UnsupportedMediaType,
    /// 415: the body has a `Content-Encoding` (compressed): it is not read.
    #[error("send the record uncompressed: a body with Content-Encoding is not read")]
    EncodedBody,
    /// 422: fields break the contract's rules.
    #[error("the record breaks the contract's rules; see details")]
    ValidationFailed(Vec<FieldIssue>),
    /// 422: fields carry credentials or private data.
    #[error(
        "the record carries content that must never be public (credentials, keys or private identifiers); see details"
    )]
    SensitiveContent(Vec<FieldIssue>),
    /// 503: the service is computing as many answers of this kind as it
    /// computes at once (series exports); try again in a second.
    #[error("the service is busy with other exports; try again in a second")]
    Busy,
    /// 404: the dashboard's `after` names no strategy of this dashboard.
    #[error("after names no strategy of this dashboard; pass the next of an earlier answer")]
    NoSuchStrategy,
    /// 406: the request accepts no coding the answer can be sent in
    /// (`identity;q=0` without br or gzip).
    #[error(
        "the answer can be sent as br, gzip or identity, and the request's Accept-Encoding accepts none of them"
    )]
    NotAcceptable,
    /// 503: no write token configured.
    #[error(
        "writes are disabled: the service has no write token configured (set FF_AGENT_WRITE_TOKEN and restart it)"
    )]
    WritesDisabled,
    /// 503: the log has no signing key, so it cannot sign checkpoints or
    /// proofs.
    #[error(
        "the log has no signing key configured, so it cannot sign checkpoints or proofs; tiles and every other view still work"
    )]
    SigningUnavailable,
    /// 503: the log serves only witnessed checkpoints and none has met the
    /// witness policy's quorum yet.
    #[error(
        "no checkpoint of the log has been cosigned by a quorum of its witnesses yet; GET /log/checkpoint?head=1 answers the log-signed head"
    )]
    NotWitnessed,
    /// 503: the store is not configured or failing.
    #[error("the store is unavailable; nothing was stored, try again later")]
    StorageUnavailable(#[source] StoreError),
    /// 503: no store is configured where one is required (Lambda without
    /// the KV REST variables: its disk does not last).
    #[error(
        "no store is configured for this deployment: set the KV REST store's variables; nothing was stored"
    )]
    StoreNotConfigured,
    /// 500: the service hit a fault of its own (stored data it cannot read,
    /// a script or programming error, a panic). Not worth retrying: no
    /// `Retry-After`; the cause goes to the log, never to the client.
    #[error("the service hit a fault of its own; it is logged, and nothing was stored")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    /// One answer of every kind the API gives, for the published tables of
    /// statuses and codes (the contract view and the OpenAPI document).
    pub(crate) fn every_kind() -> Vec<ApiError> {
        vec![
            ApiError::BadRequest,
            ApiError::MalformedJson(String::new()),
            ApiError::InvalidQuery {
                message: String::new(),
                details: Vec::new(),
            },
            ApiError::Unauthorized {
                message: "",
                presented: false,
            },
            ApiError::NotFound,
            ApiError::NoSuchTile,
            ApiError::NoSuchEvidence,
            ApiError::BeyondLog {
                message: String::new(),
                parameter: "",
            },
            ApiError::MethodNotAllowed { allow: "" },
            ApiError::IdConflict { existing_seq: 0 },
            ApiError::DuplicateSnapshot { existing_seq: 0 },
            ApiError::OutOfOrder {
                latest_seq: 0,
                latest_as_of: None,
            },
            ApiError::ScannerBusy,
            ApiError::NotImplemented,
            ApiError::RequestTimeout,
            ApiError::UriTooLong { limit: 0 },
            ApiError::HeaderFieldsTooLarge,
            ApiError::PayloadTooLarge { limit: 0 },
            ApiError::UnsupportedMediaType,
            ApiError::EncodedBody,
            ApiError::ValidationFailed(Vec::new()),
            ApiError::SensitiveContent(Vec::new()),
            ApiError::NoSuchStrategy,
            ApiError::NotAcceptable,
            ApiError::Busy,
            ApiError::WritesDisabled,
            ApiError::SigningUnavailable,
            ApiError::NotWitnessed,
            ApiError::StorageUnavailable(StoreError::unavailable_now("")),
            ApiError::StoreNotConfigured,
            ApiError::Internal("".into()),
        ]
    }

    /// Each code the API answers, once, in the order first met (several
    /// kinds share a code): the one list the contract view and the OpenAPI
    /// document publish.
    pub fn codes() -> Vec<&'static str> {
        let mut seen = std::collections::HashSet::new();
        ApiError::every_kind()
            .iter()
            .map(ApiError::code)
            .filter(|code| seen.insert(*code))
            .collect()
    }

    /// The variant's place in the declaration: an exhaustive match, so a
    /// new variant does not compile until it has one, and the test
    /// `every_kind_lists_every_variant` then fails until [`Self::every_kind`]
    /// lists it.
    #[cfg(test)]
    fn variant(&self) -> usize {
        match self {
            ApiError::BadRequest => 0,
            ApiError::MalformedJson(_) => 1,
            ApiError::InvalidQuery { .. } => 2,
            ApiError::Unauthorized { .. } => 3,
            ApiError::NotFound => 4,
            ApiError::NoSuchTile => 5,
            ApiError::NoSuchEvidence => 6,
            ApiError::BeyondLog { .. } => 7,
            ApiError::MethodNotAllowed { .. } => 8,
            ApiError::IdConflict { .. } => 9,
            ApiError::DuplicateSnapshot { .. } => 10,
            ApiError::OutOfOrder { .. } => 11,
            ApiError::ScannerBusy => 12,
            ApiError::NotImplemented => 13,
            ApiError::RequestTimeout => 14,
            ApiError::UriTooLong { .. } => 15,
            ApiError::HeaderFieldsTooLarge => 16,
            ApiError::PayloadTooLarge { .. } => 17,
            ApiError::UnsupportedMediaType => 18,
            ApiError::EncodedBody => 19,
            ApiError::ValidationFailed(_) => 20,
            ApiError::SensitiveContent(_) => 21,
            ApiError::Busy => 22,
            ApiError::NoSuchStrategy => 23,
            ApiError::NotAcceptable => 24,
            ApiError::WritesDisabled => 25,
            ApiError::SigningUnavailable => 26,
            ApiError::NotWitnessed => 27,
            ApiError::StorageUnavailable(_) => 28,
            ApiError::StoreNotConfigured => 29,
            ApiError::Internal(_) => 30,
        }
    }

    /// When the API gives this answer, in words: the published tables' text.
    pub fn when(&self) -> &'static str {
        match self {
            ApiError::BadRequest => {
                "the request is not HTTP/1.1 (a broken request line or header), has no Host or two, or an absolute-form target whose scheme is not http(s)"
            }
            ApiError::MalformedJson(_) => {
                "the body is not JSON (RFC 8259, UTF-8), or nests arrays and objects deeper than 64 levels"
            }
            ApiError::InvalidQuery { .. } => {
                "a query parameter is unknown to the view, repeated or invalid"
            }
            ApiError::Unauthorized { .. } => {
                "no bearer token, another scheme, the wrong token, or a token in the URL (with WWW-Authenticate: Bearer)"
            }
            ApiError::NotFound => "no such path",
            ApiError::NoSuchTile => {
                "the log's tree does not have this tile (beyond the tree, or not at this width)"
            }
            ApiError::BeyondLog { .. } => {
                "a proof names a record or tree size beyond the log's head (details name the parameter)"
            }
            ApiError::NoSuchEvidence => {
                "no evidence is kept under this SHA-256 (never kept, or older than seven days)"
            }
            ApiError::MethodNotAllowed { .. } => "the path does not take this method (with Allow)",
            ApiError::IdConflict { .. } => "the id exists with different content",
            ApiError::DuplicateSnapshot { .. } => {
                "a snapshot exists for the same strategy, mode and instant"
            }
            ApiError::OutOfOrder { .. } => {
                "the snapshot is older than the latest of its strategy and mode"
            }
            ApiError::ScannerBusy => "a scanner run holds the lock",
            ApiError::RequestTimeout => {
                "the request (head or body) did not arrive in time; the connection is closed"
            }
            ApiError::NotImplemented => {
                "a Transfer-Encoding other than exactly chunked; the connection is closed"
            }
            ApiError::UriTooLong { .. } => "the URL is longer than the HTTP layer's limit",
            ApiError::HeaderFieldsTooLarge => {
                "the request head is larger than the HTTP layer's limit"
            }
            ApiError::PayloadTooLarge { .. } => "the body is larger than the limit",
            ApiError::UnsupportedMediaType => {
                "Content-Type is not application/json (a charset=utf-8 parameter is allowed)"
            }
            ApiError::EncodedBody => "the body has a Content-Encoding (send it uncompressed)",
            ApiError::ValidationFailed(_) => {
                "fields break the rules; details list each field path and rule (at most 100; a last more_issues entry counts the rest)"
            }
            ApiError::SensitiveContent(_) => {
                "fields carry credentials or private identifiers; details name the field and rule, never the value"
            }
            ApiError::Busy => {
                "as many series exports are being computed as the service computes at once (with Retry-After: 1)"
            }
            ApiError::NoSuchStrategy => {
                "the dashboard's after names no strategy the dashboard holds (details name the parameter)"
            }
            ApiError::NotAcceptable => {
                "Accept-Encoding accepts none of br, gzip and identity for an answer of 1 KiB or more"
            }
            ApiError::WritesDisabled => "the service has no write token configured",
            ApiError::SigningUnavailable => {
                "the log has no signing key configured (checkpoints and proofs only); no Retry-After"
            }
            ApiError::NotWitnessed => {
                "the log has a witness policy and no checkpoint has met its quorum yet (with Retry-After: 60)"
            }
            ApiError::StorageUnavailable(_) | ApiError::StoreNotConfigured => {
                "the store is not configured, down, slow or busy; nothing was stored (with Retry-After)"
            }
            ApiError::Internal(_) => {
                "the service hit a fault of its own (stored data it cannot read, a script or programming error, a panic); no Retry-After"
            }
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest | ApiError::MalformedJson(_) | ApiError::InvalidQuery { .. } => {
                StatusCode::BAD_REQUEST
            }
            ApiError::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::NotImplemented => StatusCode::NOT_IMPLEMENTED,
            ApiError::UriTooLong { .. } => StatusCode::URI_TOO_LONG,
            ApiError::HeaderFieldsTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ApiError::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            ApiError::NotFound
            | ApiError::NoSuchTile
            | ApiError::NoSuchEvidence
            | ApiError::NoSuchStrategy
            | ApiError::BeyondLog { .. } => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::NotAcceptable => StatusCode::NOT_ACCEPTABLE,
            ApiError::IdConflict { .. }
            | ApiError::DuplicateSnapshot { .. }
            | ApiError::OutOfOrder { .. }
            | ApiError::ScannerBusy => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType | ApiError::EncodedBody => {
                StatusCode::UNSUPPORTED_MEDIA_TYPE
            }
            ApiError::ValidationFailed(_) | ApiError::SensitiveContent(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::WritesDisabled
            | ApiError::Busy
            | ApiError::SigningUnavailable
            | ApiError::NotWitnessed
            | ApiError::StorageUnavailable(_)
            | ApiError::StoreNotConfigured => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable error code.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest => "bad_request",
            ApiError::RequestTimeout => "request_timeout",
            ApiError::NotImplemented => "not_implemented",
            ApiError::UriTooLong { .. } => "uri_too_long",
            ApiError::HeaderFieldsTooLarge => "header_fields_too_large",
            ApiError::MalformedJson(_) => "malformed_json",
            ApiError::InvalidQuery { .. } => "invalid_query",
            ApiError::Unauthorized { .. } => "unauthorized",
            ApiError::NotFound
            | ApiError::NoSuchTile
            | ApiError::NoSuchEvidence
            | ApiError::NoSuchStrategy
            | ApiError::BeyondLog { .. } => "not_found",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
            ApiError::NotAcceptable => "not_acceptable",
            ApiError::IdConflict { .. } => "id_conflict",
            ApiError::DuplicateSnapshot { .. } => "duplicate_snapshot",
            ApiError::OutOfOrder { .. } => "out_of_order",
            ApiError::ScannerBusy => "scanner_busy",
            ApiError::PayloadTooLarge { .. } => "payload_too_large",
            ApiError::UnsupportedMediaType | ApiError::EncodedBody => "unsupported_media_type",
            ApiError::ValidationFailed(_) => "validation_failed",
            ApiError::SensitiveContent(_) => "sensitive_content",
            ApiError::Busy => "busy",
            ApiError::WritesDisabled => "writes_disabled",
            ApiError::SigningUnavailable => "signing_unavailable",
            ApiError::NotWitnessed => "not_witnessed",
            ApiError::StorageUnavailable(_) | ApiError::StoreNotConfigured => "storage_unavailable",
            ApiError::Internal(_) => "internal_error",
        }
    }

    fn details(&self) -> Vec<Value> {
        let issues = |list: &[FieldIssue]| list.iter().map(|i| json!(i)).collect();
        match self {
            ApiError::InvalidQuery { details, .. } => details.clone(),
            ApiError::BeyondLog { parameter, .. } => vec![json!({"parameter": parameter})],
            ApiError::NoSuchStrategy => vec![json!({"parameter": "after"})],
            ApiError::ValidationFailed(list) | ApiError::SensitiveContent(list) => issues(list),
            ApiError::IdConflict { existing_seq }
            | ApiError::DuplicateSnapshot { existing_seq } => {
                vec![json!({"existingSeq": existing_seq})]
            }
            ApiError::OutOfOrder {
                latest_seq,
                latest_as_of: Some(at),
            } => vec![json!({"latestSeq": latest_seq, "latestAsOf": at})],
            ApiError::OutOfOrder {
                latest_seq,
                latest_as_of: None,
            } => vec![json!({"latestSeq": latest_seq})],
            _ => Vec::new(),
        }
    }

    /// The error body: `{"error": {"code", "message", "details"}}`.
    pub(crate) fn body(&self) -> Value {
        json!({"error": {"code": self.code(), "message": self.to_string(), "details": self.details()}})
    }

    /// A 400 `invalid_query` about one parameter.
    pub fn invalid_query(parameter: &str, message: impl Into<String>) -> ApiError {
        let message = message.into();
        ApiError::InvalidQuery {
            details: vec![json!({"parameter": parameter, "message": message})],
            message,
        }
    }
}

impl From<StoreError> for ApiError {
    /// A store that is down, slow or busy is `503`; corrupt data or a fault
    /// the store reports in the service's own operation is `500`.
    fn from(error: StoreError) -> ApiError {
        if error.is_transient() {
            ApiError::StorageUnavailable(error)
        } else {
            ApiError::Internal(Box::new(error))
        }
    }
}

impl From<LogError> for ApiError {
    fn from(error: LogError) -> ApiError {
        match error {
            LogError::SigningUnavailable => ApiError::SigningUnavailable,
            LogError::NoSuchTile => ApiError::NoSuchTile,
            LogError::BeyondLog { parameter, message } => {
                ApiError::BeyondLog { message, parameter }
            }
            LogError::OutOfRange { parameter, message } => {
                ApiError::invalid_query(parameter, message)
            }
            LogError::NotWitnessed => ApiError::NotWitnessed,
            LogError::Store(error) => error.into(),
            // The reason is logged (and published) where the log refused.
            refused @ LogError::RefusedToSign(_) => ApiError::Internal(Box::new(refused)),
        }
    }
}

impl From<AppendError> for ApiError {
    fn from(error: AppendError) -> ApiError {
        match error {
            AppendError::Record(RecordError::Malformed(e)) => {
                ApiError::MalformedJson(e.to_string())
            }
            AppendError::Record(RecordError::Invalid(list)) => ApiError::ValidationFailed(list),
            AppendError::Record(RecordError::Sensitive(list)) => ApiError::SensitiveContent(list),
            AppendError::Refused(Refusal::IdConflict { existing_seq }) => {
                ApiError::IdConflict { existing_seq }
            }
            AppendError::Refused(Refusal::DuplicateSnapshot { existing_seq }) => {
                ApiError::DuplicateSnapshot { existing_seq }
            }
            AppendError::Refused(Refusal::OutOfOrder { latest_seq }) => ApiError::OutOfOrder {
                latest_seq,
                latest_as_of: None,
            },
            AppendError::OutOfOrder {
                latest_seq,
                latest_as_of,
            } => ApiError::OutOfOrder {
                latest_seq,
                latest_as_of,
            },
            AppendError::Store(e) => e.into(),
        }
    }
}

impl From<DashboardError> for ApiError {
    /// An unknown cursor names nothing there is: 404, like a page beyond a
    /// ledger.
    fn from(error: DashboardError) -> ApiError {
        match error {
            DashboardError::Selection(SelectionError::UnknownCursor) => ApiError::NoSuchStrategy,
            DashboardError::Store(error) => error.into(),
        }
    }
}

impl From<ExportError> for ApiError {
    /// Too many exports computed at once is `503 busy`.
    fn from(error: ExportError) -> ApiError {
        match error {
            ExportError::Busy => ApiError::Busy,
            ExportError::Store(error) => error.into(),
        }
    }
}

#[cfg(feature = "scanner")]
impl From<crate::service::scan::RunError> for ApiError {
    /// A run that finds the lock held, or loses it, is `409 scanner_busy`.
    fn from(error: crate::service::scan::RunError) -> ApiError {
        use crate::service::scan::RunError;
        match error {
            RunError::Busy | RunError::LockLost => ApiError::ScannerBusy,
            RunError::Store(error) => error.into(),
            RunError::Panicked => ApiError::Internal("the scanner run panicked".into()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if let ApiError::StorageUnavailable(cause) = &self {
            tracing::error!(error = %ErrorChain(cause), "store unavailable");
        } else if let ApiError::Internal(cause) = &self {
            tracing::error!(error = %ErrorChain(cause.as_ref()), "internal error");
        } else if status.is_client_error() {
            tracing::info!(code = self.code(), "request refused");
        }
        let mut response = (status, axum::Json(self.body())).into_response();
        let headers = response.headers_mut();
        match &self {
            ApiError::Unauthorized { presented, .. } => {
                let challenge = if *presented {
                    "Bearer realm=\"freedom-fund\", error=\"invalid_token\""
                } else {
                    "Bearer realm=\"freedom-fund\""
                };
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(challenge),
                );
            }
            ApiError::MethodNotAllowed { allow } => {
                headers.insert(header::ALLOW, HeaderValue::from_static(allow));
            }
            ApiError::StorageUnavailable(_) | ApiError::StoreNotConfigured => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            }
            ApiError::Busy => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            ApiError::NotWitnessed => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
            }
            // The rest of the request was never read: this connection is done.
            ApiError::RequestTimeout | ApiError::NotImplemented => {
                headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// A router answering every request `503 storage_unavailable` because no
/// store is configured (Lambda without the KV REST variables).
pub fn store_not_configured_app() -> axum::Router {
    axum::Router::new().fallback(|| async { ApiError::StoreNotConfigured })
}

/// The fallback handler: a JSON 404.
pub async fn not_found() -> ApiError {
    ApiError::NotFound
}

#[cfg(test)]
mod tests {

    /// Round 4 (the review): the hand list missed a variant; every variant
    /// is now listed exactly once, and each code is published once.
    #[test]
    fn every_kind_lists_every_variant_once_and_codes_are_unique() {
        let mut seen: Vec<usize> = ApiError::every_kind()
            .iter()
            .map(ApiError::variant)
            .collect();
        seen.sort_unstable();
        let count = seen.len();
        seen.dedup();
        assert_eq!(seen.len(), count, "a variant listed twice");
        assert_eq!(seen, (0..=30).collect::<Vec<_>>(), "a variant missing");
        let codes = ApiError::codes();
        let unique: std::collections::BTreeSet<_> = codes.iter().collect();
        assert_eq!(unique.len(), codes.len());
        assert_eq!(codes.iter().filter(|c| **c == "not_found").count(), 1);
    }

    use super::*;

    #[test]
    fn busy_is_503_with_a_retry_after_one_second_and_a_stable_code() {
        let response = ApiError::Busy.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        assert_eq!(ApiError::Busy.code(), "busy");
    }
}
