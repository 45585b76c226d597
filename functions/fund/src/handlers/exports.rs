//! The record taken out: `GET /api/freedom-fund?view=series` (one series'
//! every snapshot as CSV or JSON, paged) and `GET /feed.atom` (the latest
//! decisions as an Atom feed). The work is
//! [`freedom_shared::service::exports`]'s; these handlers translate HTTP.
//!
//! A series nobody has written is an empty export (the CSV header alone,
//! or no rows), as a ledger filter that matches nothing is an empty page.

use crate::params::{export_format, mode_param, strategy_id_param, whole};
use crate::paths::{ATOM, FUND_PATH};
use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use freedom_shared::service::exports::{ExportError, SeriesExport};
use freedom_shared::web::{ApiError, QueryParams, client_has, with_etag};

/// `?view=series&strategyId=S&mode=M[&format=csv|json][&after=SEQ]`.
pub(crate) async fn series(
    state: &AppState,
    params: &QueryParams,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    // Both are required: `View::parse` refused a query without them.
    let strategy_id = strategy_id_param(params.get("strategyId").unwrap_or_default())?;
    let mode = mode_param(params.get("mode").unwrap_or_default())?;
    let format = export_format(params)?;
    let after = whole(
        params,
        "after",
        "after must be a sequence number (0 or more)",
    )?;
    let head = state.exports.head().await?;
    if client_has(headers, &head) {
        // 304: the series is not read at all.
        return Ok(with_etag(headers, &head, ()));
    }
    let export = SeriesExport {
        strategy_id: &strategy_id,
        mode,
        head,
    };
    let page = state
        .exports
        .series_page(&export, after, format)
        .await
        .map_err(|error| match error {
            ExportError::Busy => ApiError::Busy,
            ExportError::Store(error) => error.into(),
        })?;
    let mut response = with_etag(
        headers,
        &head,
        ([(header::CONTENT_TYPE, format.content_type())], page.body),
    );
    if let Some(next) = page.next {
        let link = format!(
            "<{FUND_PATH}?view=series&strategyId={}&mode={}&format={}&after={next}>; rel=\"next\"",
            strategy_id.as_str(),
            mode.as_str(),
            format.name()
        );
        if let Ok(value) = HeaderValue::from_str(&link) {
            response.headers_mut().insert(header::LINK, value);
        }
    }
    Ok(response)
}

/// `GET /feed.atom`: the latest [`freedom_shared::service::exports::FEED_ENTRIES`]
/// decisions, newest first.
pub(crate) async fn feed(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    QueryParams::parse(query.as_deref(), &[])?;
    let (body, head) = state.exports.feed("/", FUND_PATH).await?;
    Ok(with_etag(
        &headers,
        &head,
        ([(header::CONTENT_TYPE, ATOM)], body),
    ))
}
