//! The ledger as a C2SP transparency log over HTTP: `GET /log/checkpoint`,
//! `GET /log/tile/...`, `GET /log/policy`, `POST /log/cosign`, and the
//! proof views of `GET /api/freedom-fund`
//! (`view=proof`, `view=consistency`). The work is
//! [`freedom_shared::service::log::Log`]'s; these handlers only translate
//! HTTP.

use crate::params::{ProofFormat, positive, proof_format, whole};
use crate::paths::TEXT_PLAIN;
use crate::state::AppState;
use crate::views::{ConsistencyView, ProofView};
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use freedom_shared::tlog::proof::TlogProof;
use freedom_shared::tlog::tiles::TilePath;
use freedom_shared::web::{ApiError, QueryParams, authorize, with_content_etag};

fn with_cache_control(response: impl IntoResponse, value: &'static str) -> Response {
    let mut response = response.into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    response
}

/// `GET /log/checkpoint[?head=1]`: with a witness policy, the newest
/// checkpoint that meets its quorum, with its cosignatures (503
/// `not_witnessed` before any has); without one, or with `head=1`, the
/// log-signed checkpoint of the current head.
pub(crate) async fn checkpoint(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let params = QueryParams::parse(query.as_deref(), &["head"])?;
    let head = match params.get("head") {
        None => false,
        Some("1") => true,
        Some(_) => return Err(ApiError::invalid_query("head", "head must be 1")),
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
    // Required: `View::parse` refused a query without it.
    let seq = positive(params, "seq")?.unwrap_or_default();
    let size = positive(params, "size")?;
    let format = proof_format(params)?;
    let (inclusion, checkpoint) = state.log.inclusion(seq, size).await?;
    Ok(match format {
        ProofFormat::TlogProof => {
            let text = TlogProof {
                index: inclusion.leaf_index,
                path: inclusion.path,
                checkpoint: checkpoint.to_string(),
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
    let from = whole(params, "from", "from must be a whole number, 0 or more")?.unwrap_or_default();
    let to = positive(params, "to")?;
    let (proof, checkpoint) = state.log.consistency(from, to).await?;
    json_with_content_etag(headers, &ConsistencyView::new(proof, &checkpoint))
}
