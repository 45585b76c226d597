//! The record taken out: `GET /api/freedom-fund?view=series` (one series'
//! every snapshot as CSV or JSON, paged), with its parameters and typed
//! query, and `GET /feed.atom` (the latest decisions as an Atom feed). The
//! work is [`freedom_shared::service::exports`]'s; these handlers translate
//! HTTP.
//!
//! A series nobody has written is an empty export (the CSV header alone,
//! or no rows), as a ledger filter that matches nothing is an empty page.

use super::{AFTER, FORMAT, MODE, Param, STRATEGY_ID, mode, strategy_id, whole};
use crate::paths::{ATOM, FUND_PATH};
use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use freedom_shared::record::Mode;
use freedom_shared::record::identifier_schema;
use freedom_shared::service::{ExportFormat, SeriesExport};
use freedom_shared::web::{ApiError, QueryParams, client_has, with_etag};
use serde_json::json;

/// The series' strategy.
const STRATEGY: Param = Param {
    name: STRATEGY_ID,
    required: true,
    repeatable: false,
    description: "the series' strategy",
    schema: || identifier_schema("a strategy id"),
};

/// The series' mode.
const IN_MODE: Param = Param {
    name: MODE,
    required: true,
    repeatable: false,
    description: "the series' mode",
    schema: || json!({"enum": [Mode::Live.as_str(), Mode::Paper.as_str()]}),
};

/// CSV or JSON.
const EXPORT_FORMAT: Param = Param {
    name: FORMAT,
    required: false,
    repeatable: false,
    description: "json (default) or csv (RFC 4180, header asOf,equity,flowSincePrevious,cash,index,drawdown,seq,leafHash)",
    schema: || json!({"enum": ExportFormat::NAMES, "default": "json"}),
};

/// The cursor.
const AFTER_SEQ: Param = Param {
    name: AFTER,
    required: false,
    repeatable: false,
    description: "the cursor: only snapshots with a larger seq (a page's `next`, also in its Link header)",
    schema: || json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
};

/// A series export's parameters.
pub(crate) const PARAMS: [Param; 4] = [STRATEGY, IN_MODE, EXPORT_FORMAT, AFTER_SEQ];

/// `?view=series&strategyId=S&mode=M[&format=csv|json][&after=SEQ]`.
pub(crate) async fn series(
    state: &AppState,
    params: &QueryParams,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    // Both are required: `View::parse` refused a query without them.
    let strategy_id = strategy_id(STRATEGY.name, params.get(STRATEGY.name).unwrap_or_default())?;
    let mode = mode(params.get(IN_MODE.name).unwrap_or_default())?;
    let format = match params.get(EXPORT_FORMAT.name) {
        None => ExportFormat::Json,
        Some(text) => ExportFormat::parse(text).ok_or_else(|| {
            ApiError::invalid_query(
                EXPORT_FORMAT.name,
                format!("{} must be json or csv", EXPORT_FORMAT.name),
            )
        })?,
    };
    let after = whole(params, &AFTER_SEQ, "a sequence number (0 or more)")?;
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
    let page = state.exports.series_page(&export, after, format).await?;
    let mut response = with_etag(
        headers,
        &head,
        ([(header::CONTENT_TYPE, format.content_type())], page.body),
    );
    if let Some(next) = page.next {
        let next = next.to_string();
        let link = format!(
            "<{}>; rel=\"next\"",
            super::link(
                super::View::Series,
                &[
                    (STRATEGY.name, strategy_id.as_str()),
                    (IN_MODE.name, mode.as_str()),
                    (EXPORT_FORMAT.name, format.name()),
                    (AFTER_SEQ.name, &next),
                ],
            )
        );
        if let Ok(value) = HeaderValue::from_str(&link) {
            response.headers_mut().insert(header::LINK, value);
        }
    }
    Ok(response)
}

/// `GET /feed.atom`: the latest [`freedom_shared::service::FEED_ENTRIES`]
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
