//! The fund's routes, every one in one place, and the dispatch of
//! `GET /api/freedom-fund` by view.
//!
//! `GET /api/freedom-fund` picks a view from the query: no `view` → the
//! dashboard (`period`), `view=ledger`, `view=contract`, `view=openapi`,
//! `view=proof`, `view=consistency`, `view=series`. Each view accepts only
//! its own parameters ([`crate::contract::views`]). `POST
//! /api/freedom-fund` appends one record. `GET /` is the page, `GET
//! /feed.atom` the decisions feed, `GET /log/...` the transparency log.

use crate::contract::{
    self,
    views::{PERIOD, View},
};
use crate::handlers::{exports, ledger, log};
use crate::params::dashboard_selection;
use crate::paths::{FEED_PATH, FUND_PATH, checkpoint_path, cosign_path, policy_path, tile_route};
use crate::state::AppState;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use freedom_shared::scan::experiments::EXPERIMENTS;
use freedom_shared::service::dashboard::{Period, SelectionError};
use freedom_shared::web::{ApiError, Encoded, client_has, with_etag};
use std::sync::Arc;
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
        View::Dashboard => {
            let period = Period::parse(params.get(PERIOD.name))
                .map_err(|e| ApiError::invalid_query(PERIOD.name, e.to_string()))?;
            let selection = dashboard_selection(&params)?;
            // 304 before any work: the head alone decides; a head whose
            // answer is kept is served from memory with no other read.
            let head = state.ledger.head().await?;
            if client_has(&headers, &head) {
                return Ok(with_etag(&headers, &head, ()));
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
            Ok(with_etag(&headers, &rendered.head, json_answer(encoded)))
        }
        View::Ledger => ledger::page(&state, &params, &headers).await,
        View::Contract => {
            // Kept per head (the registrations are ledger records): a warm
            // read is the head alone, compressed at most once per coding.
            let head = state.ledger.head().await?;
            let encoded = state
                .contract_bodies
                .get_or_compute(head.root_hash, (), || async {
                    let mut registrations = Vec::new();
                    for experiment in &EXPERIMENTS {
                        registrations
                            .push((experiment.id, state.ledger.registration(experiment).await?));
                    }
                    let contract = contract::contract_with_log(&state.log);
                    Ok::<_, ApiError>(contract::json_body(&contract::with_registrations(
                        contract,
                        &registrations,
                    )))
                })
                .await?;
            Ok(document(json_answer(encoded)))
        }
        View::OpenApi => Ok(document(json_answer(contract::openapi_body()))),
        View::Proof => log::proof(&state, &params, &headers).await,
        View::Consistency => log::consistency(&state, &params, &headers).await,
        View::Series => exports::series(&state, &params, &headers).await,
    }
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
fn json_answer(encoded: Arc<Encoded>) -> Response {
    let mut response = (
        [(header::CONTENT_TYPE, "application/json")],
        encoded.identity().clone(),
    )
        .into_response();
    response.extensions_mut().insert(encoded);
    response
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
