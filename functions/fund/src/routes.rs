//! The fund's handlers.
//!
//! `GET /api/freedom-fund` picks a view from the query: no `view` → the
//! dashboard (`period`), `view=ledger`, `view=contract`, `view=openapi`,
//! `view=proof`, `view=consistency` (these two in [`crate::transparency`]),
//! `view=series` (in [`crate::exports`]).
//! Each view accepts only its own parameters. `POST /api/freedom-fund`
//! appends one record: writes enabled → bearer token → no query → JSON
//! content type → size → the ledger's own checks.

use crate::contract::{
    self,
    views::{PERIOD, View},
};
use crate::{AppState, FUND_PATH};
use axum::Router;
use axum::body::Body;
use axum::extract::{RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use freedom_shared::merkle::{Digest, Head};
use freedom_shared::ports::ledger_store::{Entry, PageQuery, StoreError};
use freedom_shared::record::{Mode, RecordKind, StrategyId};
use freedom_shared::service::dashboard::Period;
use freedom_shared::service::ledger::{
    AppendStatus, BODY_TIMEOUT, DEFAULT_PAGE_LIMIT, MAX_BODY_BYTES, MAX_PAGE_LIMIT,
};
use freedom_shared::web::{ApiError, QueryParams, authorize, with_etag};
use http_body_util::BodyExt;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::value::RawValue;
use tracing::instrument;

pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .route(
            "/",
            get(crate::page::show)
                .fallback(|| async { ApiError::MethodNotAllowed { allow: "GET, HEAD" } }),
        )
        .route(
            FUND_PATH,
            get(read).post(append).fallback(|| async {
                ApiError::MethodNotAllowed {
                    allow: "GET, HEAD, POST",
                }
            }),
        )
        .with_state(state)
}

/// The query is never a span field (it is the client's text); the view,
/// once parsed, is.
#[instrument(skip_all, fields(view = tracing::field::Empty))]
async fn read(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (view, params) = View::parse(query.as_deref())?;
    tracing::Span::current().record("view", view.name().unwrap_or("dashboard"));
    match view {
        View::Dashboard => {
            let period = Period::parse(params.get(PERIOD.name))
                .map_err(|e| ApiError::invalid_query(PERIOD.name, e.to_string()))?;
            let rendered = state.dashboards.get(period).await?;
            let body = ([(header::CONTENT_TYPE, "application/json")], rendered.json);
            Ok(with_etag(&headers, &rendered.head, body))
        }
        View::Ledger => ledger(&state, &params, &headers).await,
        View::Contract => Ok(document(axum::Json(contract::contract_with_log(
            &state.log,
        )))),
        View::OpenApi => Ok(document(axum::Json(contract::openapi()))),
        View::Proof => crate::transparency::proof(&state, &params).await,
        View::Consistency => crate::transparency::consistency(&state, &params).await,
        View::Series => crate::exports::series(&state, &params, &headers).await,
    }
}

fn document(body: impl IntoResponse) -> Response {
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// A page of the ledger (`?view=ledger`), newest first.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerView {
    /// Always 1.
    schema_version: u32,
    /// The head the page was read at.
    head: Head,
    /// Entries, newest first: at most `limit`, and at most 1 MiB of body.
    entries: Vec<EntryView>,
    /// The cursor for the next page (`before`), or null on the last page.
    next: Option<u64>,
}

/// One ledger entry: a record with its place in the log.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntryView {
    /// Its position, 1-based (leaf index + 1).
    seq: u64,
    /// `SHA-256(0x00 || canonical record)`.
    leaf_hash: Digest,
    /// The record, in its canonical form (the leaf bytes).
    #[schemars(schema_with = "freedom_shared::record::schema::record_ref")]
    record: Box<RawValue>,
}

impl EntryView {
    fn new(entry: Entry) -> Result<EntryView, ApiError> {
        let record = RawValue::from_string(entry.canonical).map_err(|e| {
            ApiError::from(StoreError::Corrupt(format!(
                "stored record {} is not JSON: {e}",
                entry.seq
            )))
        })?;
        Ok(EntryView {
            seq: entry.seq,
            leaf_hash: entry.leaf_hash,
            record,
        })
    }
}

/// A `strategyId` query value, or 400 `invalid_query` naming the rule.
pub(crate) fn strategy_id_param(text: &str) -> Result<StrategyId, ApiError> {
    StrategyId::parse(text).ok_or_else(|| {
        ApiError::invalid_query(
            "strategyId",
            "strategyId must be 1 to 128 characters of A-Z a-z 0-9 . _ : -",
        )
    })
}

/// A `mode` query value, or 400 `invalid_query`.
pub(crate) fn mode_param(text: &str) -> Result<Mode, ApiError> {
    Mode::parse(text).ok_or_else(|| ApiError::invalid_query("mode", "mode must be live or paper"))
}

fn page_query(params: &QueryParams) -> Result<PageQuery, ApiError> {
    let limit = match params.get("limit") {
        None => DEFAULT_PAGE_LIMIT,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_PAGE_LIMIT).contains(n))
            .ok_or_else(|| {
                ApiError::invalid_query(
                    "limit",
                    format!("limit must be a whole number from 1 to {MAX_PAGE_LIMIT}"),
                )
            })?,
    };
    let before = params
        .get("before")
        .map(|text| {
            text.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                ApiError::invalid_query("before", "before must be a sequence number (1 or more)")
            })
        })
        .transpose()?;
    let strategy_id = params
        .get("strategyId")
        .map(strategy_id_param)
        .transpose()?;
    let kind = params
        .get("type")
        .map(|text| {
            RecordKind::parse(text)
                .ok_or_else(|| ApiError::invalid_query("type", "type must be snapshot or decision"))
        })
        .transpose()?;
    let mode = params.get("mode").map(mode_param).transpose()?;
    Ok(PageQuery {
        before,
        limit,
        strategy_id,
        kind,
        mode,
    })
}

async fn ledger(
    state: &AppState,
    params: &QueryParams,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let query = page_query(params)?;
    let page = state.ledger.page(&query).await?;
    let entries = page
        .entries
        .into_iter()
        .map(EntryView::new)
        .collect::<Result<Vec<_>, _>>()?;
    let body = LedgerView {
        schema_version: freedom_shared::SCHEMA_VERSION,
        head: page.head,
        entries,
        next: page.next,
    };
    Ok(with_etag(headers, &page.head, axum::Json(body)))
}

/// What an append answers (201 created, 200 unchanged).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "AppendReceipt")]
pub struct AppendBody {
    /// `created` (a new leaf) or `unchanged` (identical content stored already).
    #[schemars(schema_with = "append_status")]
    status: &'static str,
    /// The record's position.
    seq: u64,
    /// The record's leaf hash.
    leaf_hash: Digest,
    /// The head after the append.
    head: Head,
    /// The record as stored (its canonical form).
    #[schemars(schema_with = "freedom_shared::record::schema::record_ref")]
    record: Box<RawValue>,
}

/// The words an append answers with, by outcome.
const CREATED: &str = "created";
const UNCHANGED: &str = "unchanged";

fn append_status(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"enum": [CREATED, UNCHANGED]})
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

#[instrument(skip_all, fields(seq = tracing::field::Empty))]
async fn append(State(state): State<AppState>, request: Request) -> Result<Response, ApiError> {
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
    let (status, word) = match receipt.status {
        AppendStatus::Created => (StatusCode::CREATED, CREATED),
        AppendStatus::Unchanged => (StatusCode::OK, UNCHANGED),
    };
    tracing::Span::current().record("seq", receipt.entry.seq);
    tracing::info!(status = word, "append");
    let entry = EntryView::new(receipt.entry)?;
    let body = AppendBody {
        status: word,
        seq: entry.seq,
        leaf_hash: entry.leaf_hash,
        head: receipt.head,
        record: entry.record,
    };
    Ok((status, axum::Json(body)).into_response())
}
