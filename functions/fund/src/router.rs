//! The fund's routes, every one in one place, and the dispatch of
//! `GET /api/freedom-fund` by view.
//!
//! `GET /api/freedom-fund` picks a view from the query: no `view` → the
//! dashboard (`period`), `view=ledger`, `view=contract`, `view=openapi`,
//! `view=proof`, `view=consistency`, `view=series`. Each view accepts only
//! its own parameters (its room's table in `crate::routes`). `POST
//! /api/freedom-fund` appends one record. `GET /` is the page, `GET
//! /feed.atom` the decisions feed, `GET /log/...` the transparency log.

use crate::contract;
use crate::paths::{
    FEED_PATH, FUND_PATH, JSON, checkpoint_path, cosign_path, policy_path, tile_route,
    witnessed_route,
};
use crate::routes::{View, dashboard, exports, ledger, log};
use crate::state::AppState;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use freedom_shared::web::{ApiError, encoded_answer};
use tracing::instrument;

/// The fund's routes, without a fallback (so they can be merged with the
/// scanner's on one local port).
pub fn routes(state: AppState) -> Router {
    freedom_shared::web::catch_panics(every_route(state)).layer(axum::middleware::from_fn(
        freedom_shared::web::compress_answers,
    ))
}

/// The fund function's router: its routes plus a JSON 404 for anything else.
pub fn app(state: AppState) -> Router {
    routes(state).fallback(freedom_shared::web::not_found)
}

/// Every route of the fund, on `state`.
fn every_route(state: AppState) -> Router {
    let only_get = || async { ApiError::MethodNotAllowed { allow: "GET, HEAD" } };
    Router::new()
        .route("/", get(crate::page::show).fallback(only_get))
        .route(
            FUND_PATH,
            get(read).post(ledger::append).fallback(|| async {
                ApiError::MethodNotAllowed {
                    allow: "GET, HEAD, POST",
                }
            }),
        )
        .route(&checkpoint_path(), get(log::checkpoint).fallback(only_get))
        .route(&tile_route(), get(log::tile).fallback(only_get))
        .route(&policy_path(), get(log::policy).fallback(only_get))
        .route(&witnessed_route(), get(log::witnessed).fallback(only_get))
        .route(
            &cosign_path(),
            axum::routing::post(log::cosign)
                .fallback(|| async { ApiError::MethodNotAllowed { allow: "POST" } }),
        )
        .route(FEED_PATH, get(exports::feed).fallback(only_get))
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
        View::Dashboard => dashboard::read(&state, &params, &headers).await,
        View::Ledger => ledger::page(&state, &params, &headers).await,
        View::Contract => {
            // Kept per head (the registrations are ledger records): a warm
            // read is the head alone, compressed at most once per coding.
            let contract = state
                .contracts
                .read(|registrations| {
                    contract::json_bytes(&contract::with_registrations(
                        contract::contract_with_log(&state.log, state.dashboards.benchmarks()),
                        registrations,
                    ))
                })
                .await?;
            Ok(document(encoded_answer(JSON, contract.body)))
        }
        View::OpenApi => Ok(document(encoded_answer(JSON, contract::openapi_body()))),
        View::Proof => log::proof(&state, &params, &headers).await,
        View::Consistency => log::consistency(&state, &params, &headers).await,
        View::Series => exports::series(&state, &params, &headers).await,
    }
}

/// A published document: cached for five minutes.
fn document(body: impl IntoResponse) -> Response {
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}
