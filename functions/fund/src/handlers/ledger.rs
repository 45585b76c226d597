//! The ledger over HTTP: `GET ?view=ledger` (a page, newest first) and
//! `POST` (append one record: writes enabled → bearer token → no query →
//! JSON content type → no content coding → size → the ledger's own checks).

use crate::params::page_query;
use crate::state::AppState;
use crate::views::{AppendBody, LedgerView};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use freedom_shared::service::ledger::{AppendStatus, BODY_TIMEOUT, MAX_BODY_BYTES};
use freedom_shared::web::{ApiError, QueryParams, authorize, with_etag};
use http_body_util::BodyExt;
use tracing::instrument;

/// `?view=ledger[&before=SEQ][&limit=N][&strategyId=S][&type=T][&mode=M]`.
pub(crate) async fn page(
    state: &AppState,
    params: &QueryParams,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let query = page_query(params)?;
    let page = state.ledger.page(&query).await?;
    let head = page.head;
    let body = LedgerView::new(head, page.entries, page.next)?;
    Ok(with_etag(headers, &head, axum::Json(body)))
}

fn is_json_content_type(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
        && parts.all(|parameter| {
            let (name, value) = parameter.split_once('=').unwrap_or((parameter, ""));
            !name.trim().eq_ignore_ascii_case("charset")
                || value.trim().trim_matches('"').eq_ignore_ascii_case("utf-8")
        })
}

/// The body, whole, within [`MAX_BODY_BYTES`] and [`BODY_TIMEOUT`].
async fn read_body(body: Body, headers: &HeaderMap) -> Result<axum::body::Bytes, ApiError> {
    let too_large = ApiError::PayloadTooLarge {
        limit: MAX_BODY_BYTES,
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(too_large);
    }
    let collected = tokio::time::timeout(
        BODY_TIMEOUT,
        http_body_util::Limited::new(body, MAX_BODY_BYTES).collect(),
    )
    .await
    .map_err(|_| ApiError::RequestTimeout)?;
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error)
            if error
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(too_large)
        }
        Err(_) => Err(ApiError::MalformedJson(
            "the body could not be read completely".into(),
        )),
    }
}

/// `POST /api/freedom-fund`: appends one record.
#[instrument(skip_all, fields(seq = tracing::field::Empty))]
pub(crate) async fn append(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let query = parts.uri.query();
    authorize(&parts.headers, query, state.write_token.as_ref())?;
    QueryParams::parse(query, &[])?;
    if !is_json_content_type(&parts.headers) {
        return Err(ApiError::UnsupportedMediaType);
    }
    // A compressed body is not read as if it were plain JSON.
    if parts.headers.contains_key(header::CONTENT_ENCODING) {
        return Err(ApiError::EncodedBody);
    }
    let bytes = read_body(body, &parts.headers).await?;
    let receipt = state.ledger.append(&bytes).await?;
    let status = match receipt.status {
        AppendStatus::Created => StatusCode::CREATED,
        AppendStatus::Unchanged => StatusCode::OK,
    };
    let body = AppendBody::new(receipt)?;
    tracing::Span::current().record("seq", body.seq());
    tracing::info!(status = body.status(), "append");
    Ok((status, axum::Json(body)).into_response())
}
