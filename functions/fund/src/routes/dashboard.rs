//! The dashboard: `GET /api/freedom-fund[?period=N|all][&strategyId=S…][&after=S]`.
//! Its parameters, its typed query, and its handler; the answer is the
//! dashboard use case's ([`freedom_shared::service::dashboard`]).

use super::{AFTER, Param, STRATEGY_ID, strategy_id};
use crate::state::AppState;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use freedom_shared::record::StrategyId;
use freedom_shared::record::schema::identifier_schema;
use freedom_shared::service::dashboard::{
    ALL, DEFAULT_PERIOD, PERIODS, Period, Selection, SelectionError,
};
use freedom_shared::web::{ApiError, Encoded, QueryParams, client_has, with_etag};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The dashboard's period (also the page's, at `/`).
pub(crate) const PERIOD: Param = Param {
    name: "period",
    required: false,
    repeatable: false,
    description: "the window in trading days (Monday to Friday by UTC date), or all (since inception)",
    schema: || {
        json!({"oneOf": [
            {"type": "integer", "enum": PERIODS},
            {"const": ALL}
        ], "default": DEFAULT_PERIOD})
    },
};

/// Only the strategies named.
const STRATEGY: Param = Param {
    name: STRATEGY_ID,
    required: false,
    repeatable: true,
    description: "only this strategy (repeatable: each one named); with it, the decisions are those of the strategies named",
    schema: || identifier_schema("a strategy id"),
};

/// The cursor.
const AFTER_STRATEGY: Param = Param {
    name: AFTER,
    required: false,
    repeatable: false,
    description: "the cursor: the strategies after this one (an earlier answer's next); strategies come those with a live series first, then the paper-only ones, each by id, and an answer stops before passing 4 MiB",
    schema: || identifier_schema("a strategy id"),
};

/// The dashboard's parameters: the period, and which strategies.
pub(crate) const PARAMS: [Param; 3] = [PERIOD, STRATEGY, AFTER_STRATEGY];

/// A dashboard request: the period and the strategies selected.
pub(crate) struct DashboardQuery {
    /// The window.
    pub period: Period,
    /// Which strategies, from where.
    pub selection: Selection,
}

impl DashboardQuery {
    /// The query `params` (already checked against [`PARAMS`]) asks for.
    pub(crate) fn parse(params: &QueryParams) -> Result<DashboardQuery, ApiError> {
        Ok(DashboardQuery {
            period: period(params)?,
            selection: selection(params)?,
        })
    }
}

/// The period `params` name ([`PERIOD`]; the default when absent).
pub(crate) fn period(params: &QueryParams) -> Result<Period, ApiError> {
    Period::parse(params.get(PERIOD.name))
        .map_err(|e| ApiError::invalid_query(PERIOD.name, e.to_string()))
}

/// The strategies a dashboard request selects: each [`STRATEGY`] given
/// (repeatable), from after the strategy [`AFTER_STRATEGY`] names.
fn selection(params: &QueryParams) -> Result<Selection, ApiError> {
    let named = params
        .get_all(STRATEGY.name)
        .into_iter()
        .map(|text| strategy_id(STRATEGY.name, text).map(|id| id.as_str().to_owned()))
        .collect::<Result<BTreeSet<String>, ApiError>>()?;
    let after = params
        .get(AFTER_STRATEGY.name)
        .map(|text| {
            StrategyId::parse(text)
                .map(|id| id.as_str().to_owned())
                .ok_or_else(|| {
                    ApiError::invalid_query(
                        AFTER_STRATEGY.name,
                        format!(
                            "{} must be a strategy id (an earlier answer's next)",
                            AFTER_STRATEGY.name
                        ),
                    )
                })
        })
        .transpose()?;
    Ok(Selection {
        strategies: (!named.is_empty()).then_some(named),
        after,
    })
}

/// The dashboard for `query`: 304 from the head alone when the client has
/// it; the whole dashboard made and compressed once per head, a page or a
/// filter made for this request.
pub(crate) async fn read(
    state: &AppState,
    params: &QueryParams,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let DashboardQuery { period, selection } = DashboardQuery::parse(params)?;
    // 304 before any work: the head alone decides; a head whose
    // answer is kept is served from memory with no other read.
    let head = state.ledger.head().await?;
    if client_has(headers, &head) {
        return Ok(with_etag(headers, &head, ()));
    }
    let rendered = state.dashboards.get_at(head, period).await?;
    let encoded = if selection.is_everything() {
        // The whole dashboard's answer: made and compressed once per head.
        state
            .dashboard_bodies
            .get_or_compute(rendered.head.root_hash, period, || async {
                let body = rendered.answer(&selection).map_err(cursor_error)?;
                Ok::<_, ApiError>(Arc::new(Encoded::new(body)))
            })
            .await?
    } else {
        // A page or a filter: made for this request, compressed at
        // a bounded cost per byte.
        Arc::new(Encoded::once(
            rendered.answer(&selection).map_err(cursor_error)?,
        ))
    };
    Ok(with_etag(headers, &rendered.head, json_answer(encoded)))
}

/// An unknown cursor names nothing there is: 404, like a page beyond a
/// ledger.
fn cursor_error(error: SelectionError) -> ApiError {
    match error {
        SelectionError::UnknownCursor => ApiError::NoSuchStrategy,
    }
}

/// A JSON answer of `encoded`'s identity bytes, carrying `encoded` for the
/// compression layer (which sends the coding negotiated, made once).
pub(crate) fn json_answer(encoded: Arc<Encoded>) -> Response {
    let mut response = (
        [(header::CONTENT_TYPE, "application/json")],
        encoded.identity().clone(),
    )
        .into_response();
    response.extensions_mut().insert(encoded);
    response
}
