//! The log over HTTP: the proof views of `GET /api/freedom-fund`
//! (`view=proof`, `view=consistency`), with their parameters, typed
//! queries and answer types, and `GET /log/checkpoint`, `GET /log/tile/...`,
//! `GET /log/policy`, `POST /log/cosign`. The work is
//! [`freedom_shared::service::Log`]'s; these handlers only translate
//! HTTP.

use super::{FORMAT, Param, positive, whole};
use crate::paths::TEXT_PLAIN;
use crate::state::AppState;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use freedom_shared::merkle::Digest;
use freedom_shared::tlog::proof::{Consistency, Inclusion, TlogProof};
use freedom_shared::tlog::tiles::TilePath;
use freedom_shared::web::{ApiError, QueryParams, authorize, with_content_etag};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

/// The record.
pub(crate) const SEQ: Param = Param {
    name: "seq",
    required: true,
    repeatable: false,
    description: "the record's sequence number (1 to the tree's size)",
    schema: || json!({"type": "integer", "minimum": 1, "maximum": u64::MAX}),
};

/// The tree.
const SIZE: Param = Param {
    name: "size",
    required: false,
    repeatable: false,
    description: "the tree the proof is for (default: the head); at most the head's size",
    schema: || json!({"type": "integer", "minimum": 1, "maximum": u64::MAX}),
};

/// The `format` of a proof as a c2sp.org/tlog-proof file.
pub(crate) const TLOG_PROOF: &str = "tlog-proof";

/// The `format` values of `view=proof`.
const PROOF_FORMATS: [&str; 2] = ["json", TLOG_PROOF];

/// How a proof answers.
const PROOF_FORMAT: Param = Param {
    name: FORMAT,
    required: false,
    repeatable: false,
    description: "json (default), or tlog-proof for a c2sp.org/tlog-proof file (text/plain)",
    schema: || json!({"enum": PROOF_FORMATS, "default": PROOF_FORMATS[0]}),
};

/// The one value of [`AT`].
const WITNESSED: &str = "witnessed";

/// Which checkpoint a proof is against.
const AT: Param = Param {
    name: "at",
    required: false,
    repeatable: false,
    description: "witnessed: the proof against the earliest witnessed checkpoint that holds the record (the one its witnessed time is read from; with size, the earliest of at least that size), with its cosignatures; as a tlog-proof, the file's extra data holds the consistency proof from it to the served checkpoint",
    schema: || json!({"enum": [WITNESSED]}),
};

/// An inclusion proof's parameters.
pub(crate) const PROOF_PARAMS: [Param; 4] = [SEQ, SIZE, PROOF_FORMAT, AT];

/// The older tree.
const FROM: Param = Param {
    name: "from",
    required: true,
    repeatable: false,
    description: "the older tree size (0 to the newer)",
    schema: || json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
};

/// The newer tree.
const TO: Param = Param {
    name: "to",
    required: false,
    repeatable: false,
    description: "the newer tree size (default: the head); at most the head's size",
    schema: || json!({"type": "integer", "minimum": 1, "maximum": u64::MAX}),
};

/// A consistency proof's parameters.
pub(crate) const CONSISTENCY_PARAMS: [Param; 2] = [FROM, TO];

/// How `view=proof` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ProofFormat {
    /// A [`ProofView`] (the default).
    Json,
    /// A C2SP `.tlog-proof` file.
    TlogProof,
}

/// An inclusion proof request.
struct ProofQuery {
    seq: u64,
    size: Option<u64>,
    format: ProofFormat,
    /// Against the earliest witnessed checkpoint that holds the record.
    at_witnessed: bool,
}

impl ProofQuery {
    /// The proof `params` (already checked against [`PROOF_PARAMS`]) asks for.
    fn parse(params: &QueryParams) -> Result<ProofQuery, ApiError> {
        let format = match params.get(PROOF_FORMAT.name) {
            None => ProofFormat::Json,
            Some(text) if text == PROOF_FORMATS[0] => ProofFormat::Json,
            Some(text) if text == PROOF_FORMATS[1] => ProofFormat::TlogProof,
            Some(_) => {
                return Err(ApiError::invalid_query(
                    PROOF_FORMAT.name,
                    format!(
                        "{} must be one of {}",
                        PROOF_FORMAT.name,
                        PROOF_FORMATS.join(", ")
                    ),
                ));
            }
        };
        let size = positive(params, &SIZE)?;
        let at_witnessed = match params.get(AT.name) {
            None => false,
            Some(WITNESSED) => true,
            Some(_) => {
                return Err(ApiError::invalid_query(
                    AT.name,
                    format!("{} must be {WITNESSED}", AT.name),
                ));
            }
        };
        Ok(ProofQuery {
            // Required: `View::parse` refused a query without it.
            seq: positive(params, &SEQ)?.unwrap_or_default(),
            size,
            format,
            at_witnessed,
        })
    }
}

fn with_cache_control(response: impl IntoResponse, value: &'static str) -> Response {
    let mut response = response.into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    response
}

/// The parameter of `GET /log/checkpoint` that asks for the log-signed
/// head rather than the witnessed checkpoint.
const HEAD: &str = "head";

/// `GET /log/checkpoint[?head=1]`: with a witness policy, the newest
/// checkpoint that meets its quorum, with its cosignatures (503
/// `not_witnessed` before any has); without one, or with `head=1`, the
/// log-signed checkpoint of the current head.
pub(crate) async fn checkpoint(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let params = QueryParams::parse(query.as_deref(), &[HEAD])?;
    let head = match params.get(HEAD) {
        None => false,
        Some("1") => true,
        Some(_) => {
            return Err(ApiError::invalid_query(HEAD, format!("{HEAD} must be 1")));
        }
    };
    let note = if state.log.serves_witnessed() && !head {
        // The signer is checked first: an unsigned log says so.
        state
            .log
            .verifier_key()
            .ok_or(ApiError::SigningUnavailable)?;
        state
            .log
            .witnessed()
            .await?
            .ok_or(ApiError::NotWitnessed)?
            .note
    } else {
        state.log.checkpoint().await?.note
    };
    let body = ([(header::CONTENT_TYPE, TEXT_PLAIN)], note.to_string());
    Ok(with_cache_control(body, "no-cache"))
}

/// `GET /log/witnessed/<n>`: the earliest witnessed checkpoint of size ≥ n
/// with its cosignatures (immutable once it exists; one store read); 404
/// while none is kept (or the log has no witness policy with a quorum).
pub(crate) async fn witnessed(
    State(state): State<AppState>,
    Path(size): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    QueryParams::parse(query.as_deref(), &[])?;
    let size = size
        .parse::<u64>()
        .ok()
        .filter(|n| *n >= 1 && !size.starts_with('0') && size.len() <= 20)
        .ok_or(ApiError::NotFound)?;
    if state.log.policy().is_none() {
        return Err(ApiError::NotFound);
    }
    let kept = state
        .log
        .witnessed_checkpoint(size)
        .await?
        .ok_or(ApiError::NotFound)?;
    let body = ([(header::CONTENT_TYPE, TEXT_PLAIN)], kept.note);
    Ok(with_cache_control(
        body,
        "public, max-age=31536000, immutable",
    ))
}

/// `GET /log/policy`: the witness policy's text (404 when the log has none).
pub(crate) async fn policy(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    QueryParams::parse(query.as_deref(), &[])?;
    let policy = state.log.policy().ok_or(ApiError::NotFound)?;
    let body = (
        [(header::CONTENT_TYPE, TEXT_PLAIN)],
        policy.text().to_owned(),
    );
    Ok(with_cache_control(body, "public, max-age=300"))
}

/// `POST /log/cosign` (write token): runs a cosigning round at once (after
/// one already running) and answers what each witness did.
pub(crate) async fn cosign(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    authorize(&headers, query.as_deref(), state.write_token.as_ref())?;
    QueryParams::parse(query.as_deref(), &[])?;
    if state.log.policy().is_none() {
        return Err(ApiError::NotFound);
    }
    let round = state.log.cosign(false).await?;
    Ok(with_cache_control(axum::Json(round), "no-store"))
}

/// `GET /log/tile/<L>/<N>[.p/<W>]` and `GET /log/tile/entries/<N>[.p/<W>]`,
/// at their canonical paths only: a percent-encoded path names no tile.
pub(crate) async fn tile(
    State(state): State<AppState>,
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
    uri: Uri,
) -> Result<Response, ApiError> {
    QueryParams::parse(query.as_deref(), &[])?;
    if uri.path().contains('%') {
        return Err(ApiError::NoSuchTile);
    }
    let tile = TilePath::parse(&path).ok_or(ApiError::NoSuchTile)?;
    let body = state.log.tile(&tile).await?;
    let cache = if body.immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let response = (
        [(header::CONTENT_TYPE, "application/octet-stream")],
        body.bytes,
    );
    Ok(with_cache_control(response, cache))
}

/// `?view=proof&seq=N[&size=M][&format=json|tlog-proof]`, with an ETag of
/// its bytes (304 to a matching `If-None-Match`).
pub(crate) async fn proof(
    state: &AppState,
    params: &QueryParams,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let ProofQuery {
        seq,
        size,
        format,
        at_witnessed,
    } = ProofQuery::parse(params)?;
    if at_witnessed {
        let proof = state.log.witnessed_inclusion(seq, size).await?;
        return Ok(match format {
            ProofFormat::TlogProof => {
                let text = TlogProof {
                    index: proof.inclusion.leaf_index,
                    path: proof.inclusion.path,
                    checkpoint: proof.checkpoint,
                    extra: proof.extra,
                }
                .to_text();
                with_content_etag(headers, TEXT_PLAIN, text.into_bytes())
            }
            ProofFormat::Json => json_with_content_etag(
                headers,
                &ProofView::new(seq, proof.inclusion, &proof.checkpoint),
            )?,
        });
    }
    let (inclusion, checkpoint) = state.log.inclusion(seq, size).await?;
    Ok(match format {
        ProofFormat::TlogProof => {
            let text = TlogProof {
                index: inclusion.leaf_index,
                path: inclusion.path,
                checkpoint: checkpoint.to_string(),
                extra: None,
            }
            .to_text();
            with_content_etag(headers, TEXT_PLAIN, text.into_bytes())
        }
        ProofFormat::Json => {
            json_with_content_etag(headers, &ProofView::new(seq, inclusion, &checkpoint))?
        }
    })
}

/// `value` as JSON with an ETag of its bytes.
fn json_with_content_etag(
    headers: &HeaderMap,
    value: &impl serde::Serialize,
) -> Result<Response, ApiError> {
    let body = serde_json::to_vec(value).map_err(|error| ApiError::Internal(error.into()))?;
    Ok(with_content_etag(headers, "application/json", body))
}

/// `?view=consistency&from=A[&to=B]`, with an ETag of its bytes.
pub(crate) async fn consistency(
    state: &AppState,
    params: &QueryParams,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    // Required: `View::parse` refused a query without it.
    let from = whole(params, &FROM, "a whole number, 0 or more")?.unwrap_or_default();
    let to = positive(params, &TO)?;
    let (proof, checkpoint) = state.log.consistency(from, to).await?;
    json_with_content_etag(headers, &ConsistencyView::new(proof, &checkpoint))
}

/// The inclusion proof of one record (`?view=proof`).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProofView {
    /// The record's position, 1-based.
    seq: u64,
    /// Its leaf index (`seq - 1`).
    leaf_index: u64,
    /// The size of the tree the proof is for.
    tree_size: u64,
    /// The record's leaf hash.
    leaf_hash: Digest,
    /// RFC 9162 §2.1.3 audit path, from the leaf's sibling up.
    inclusion: Vec<Digest>,
    /// The signed checkpoint of that tree (c2sp.org/tlog-checkpoint).
    checkpoint: String,
}

impl ProofView {
    /// Record `seq`'s proof, under the signed `checkpoint`.
    pub(crate) fn new(seq: u64, inclusion: Inclusion, checkpoint: &str) -> ProofView {
        ProofView {
            seq,
            leaf_index: inclusion.leaf_index,
            tree_size: inclusion.tree_size,
            leaf_hash: inclusion.leaf_hash,
            inclusion: inclusion.path,
            checkpoint: checkpoint.to_owned(),
        }
    }
}

/// A consistency proof between two sizes of the log (`?view=consistency`).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConsistencyView {
    /// The older size.
    from: u64,
    /// The newer size.
    to: u64,
    /// RFC 9162 §2.1.4 proof (empty when `from` is 0 or equals `to`).
    consistency: Vec<Digest>,
    /// The signed checkpoint of the tree of `to` leaves.
    checkpoint: String,
}

impl ConsistencyView {
    /// The proof, under the signed `checkpoint` of its newer size.
    pub(crate) fn new(proof: Consistency, checkpoint: &str) -> ConsistencyView {
        ConsistencyView {
            from: proof.from,
            to: proof.to,
            consistency: proof.path,
            checkpoint: checkpoint.to_owned(),
        }
    }
}
