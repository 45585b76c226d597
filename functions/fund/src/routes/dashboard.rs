//! The dashboard: `GET /api/freedom-fund[?period=N|all][&strategyId=S…][&after=S]`.
//! Its parameters, its typed query, and its handler; the answer is the
//! dashboard use case's ([`freedom_shared::service::dashboard`]).

use super::{AFTER, Param, STRATEGY_ID, strategy_id};
use crate::paths::JSON;
use crate::state::AppState;
use axum::http::HeaderMap;
use axum::response::Response;
use freedom_shared::record::StrategyId;
use freedom_shared::record::identifier_schema;
use freedom_shared::service::{Period, Selection};
use freedom_shared::web::{ApiError, QueryParams, client_tags, read_answer};
use std::collections::BTreeSet;

/// The dashboard's period (also the page's, at `/`).
pub(crate) const PERIOD: Param = Param {
    name: "period",
    required: false,
    repeatable: false,
    description: "the window in trading days (Monday to Friday by UTC date), or all (since inception)",
    schema: Period::query_schema,
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

/// The dashboard for the query: one call to the dashboard use case,
/// which answers 304 from the head alone when the client has it, the
/// whole dashboard made and compressed once per head, a page or a filter
/// made for this request.
pub(crate) async fn read(
    state: &AppState,
    params: &QueryParams,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let DashboardQuery { period, selection } = DashboardQuery::parse(params)?;
    let read = state
        .dashboards
        .read(&client_tags(headers), period, &selection)
        .await?;
    Ok(read_answer(headers, read, JSON))
}
