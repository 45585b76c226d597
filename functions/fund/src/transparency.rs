//! The ledger as a C2SP transparency log (DESIGN.md "The log to the C2SP
//! standard"): `GET /log/checkpoint`, `GET /log/tile/...`, and the proof
//! views of `GET /api/freedom-fund` (`view=proof`, `view=consistency`).
//! The work is [`freedom_shared::service::log::Log`]'s; these handlers only
//! translate HTTP.

use crate::AppState;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use freedom_shared::merkle::Digest;
use freedom_shared::tlog::LOG_PREFIX;
use freedom_shared::tlog::proof::TlogProof;
use freedom_shared::tlog::tiles::TilePath;
use freedom_shared::web::{ApiError, QueryParams};
use schemars::JsonSchema;
use serde::Serialize;

/// The content type of checkpoints and `.tlog-proof` files.
pub const TEXT_PLAIN: &str = "text/plain; charset=utf-8";

/// The path of the signed checkpoint.
pub fn checkpoint_path() -> String {
    format!("{LOG_PREFIX}/checkpoint")
}

/// The log's routes, under [`LOG_PREFIX`].
pub(crate) fn router(state: AppState) -> axum::Router {
    let only_get = || async { ApiError::MethodNotAllowed { allow: "GET, HEAD" } };
    axum::Router::new()
        .route(
            &checkpoint_path(),
            axum::routing::get(checkpoint).fallback(only_get),
        )
        .route(
            &format!("{LOG_PREFIX}/tile/{{*path}}"),
            axum::routing::get(tile).fallback(only_get),
        )
        .with_state(state)
}

fn with_cache_control(response: impl IntoResponse, value: &'static str) -> Response {
    let mut response = response.into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    response
}

/// `GET /log/checkpoint`: the signed checkpoint of the current head.
async fn checkpoint(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    QueryParams::parse(query.as_deref(), &[])?;
    let signed = state.log.checkpoint().await?;
    let body = (
        [(header::CONTENT_TYPE, TEXT_PLAIN)],
        signed.note.to_string(),
    );
    Ok(with_cache_control(body, "no-cache"))
}

/// `GET /log/tile/<L>/<N>[.p/<W>]` and `GET /log/tile/entries/<N>[.p/<W>]`,
/// at their canonical paths only: a percent-encoded path names no tile.
async fn tile(
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

/// The inclusion proof of one record (`?view=proof`).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProofView {
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

/// A consistency proof between two sizes of the log (`?view=consistency`).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsistencyView {
    /// The older size.
    from: u64,
    /// The newer size.
    to: u64,
    /// RFC 9162 §2.1.4 proof (empty when `from` is 0 or equals `to`).
    consistency: Vec<Digest>,
    /// The signed checkpoint of the tree of `to` leaves.
    checkpoint: String,
}

/// A whole number parameter, 1 or more.
fn positive(params: &QueryParams, name: &'static str) -> Result<Option<u64>, ApiError> {
    params
        .get(name)
        .map(|text| {
            text.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                ApiError::invalid_query(name, format!("{name} must be a whole number, 1 or more"))
            })
        })
        .transpose()
}

/// The `format` values of `view=proof`.
pub const PROOF_FORMATS: [&str; 2] = ["json", "tlog-proof"];

/// `?view=proof&seq=N[&size=M][&format=json|tlog-proof]`.
pub(crate) async fn proof(state: &AppState, params: &QueryParams) -> Result<Response, ApiError> {
    // Required: `View::parse` refused a query without it.
    let seq = positive(params, "seq")?.unwrap_or_default();
    let size = positive(params, "size")?;
    let tlog_proof = match params.get("format") {
        None | Some("json") => false,
        Some("tlog-proof") => true,
        Some(_) => {
            return Err(ApiError::invalid_query(
                "format",
                format!("format must be one of {}", PROOF_FORMATS.join(", ")),
            ));
        }
    };
    let (inclusion, checkpoint) = state.log.inclusion(seq, size).await?;
    if tlog_proof {
        let text = TlogProof {
            index: inclusion.leaf_index,
            path: inclusion.path,
            checkpoint: checkpoint.to_string(),
        }
        .to_text();
        return Ok(([(header::CONTENT_TYPE, TEXT_PLAIN)], text).into_response());
    }
    Ok(axum::Json(ProofView {
        seq,
        leaf_index: inclusion.leaf_index,
        tree_size: inclusion.tree_size,
        leaf_hash: inclusion.leaf_hash,
        inclusion: inclusion.path,
        checkpoint: checkpoint.to_string(),
    })
    .into_response())
}

/// `?view=consistency&from=A[&to=B]`.
pub(crate) async fn consistency(
    state: &AppState,
    params: &QueryParams,
) -> Result<Response, ApiError> {
    let from = params
        .get("from")
        .map(|text| {
            text.parse::<u64>().map_err(|_| {
                ApiError::invalid_query("from", "from must be a whole number, 0 or more")
            })
        })
        .transpose()?
        .unwrap_or_default(); // required: `View::parse` refused a query without it
    let to = positive(params, "to")?;
    let (proof, checkpoint) = state.log.consistency(from, to).await?;
    Ok(axum::Json(ConsistencyView {
        from: proof.from,
        to: proof.to,
        consistency: proof.path,
        checkpoint: checkpoint.to_string(),
    })
    .into_response())
}
