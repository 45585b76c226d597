//! The scanner's route, `/api/freedom-scanner`: `GET` answers the latest
//! report, `GET ?view=evidence&sha256=<hex>` the bytes kept under that hash
//! (a provider body or a report, for seven days), `POST` (with the write
//! token) runs the scanner once.

use crate::state::AppState;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use freedom_shared::scan::Report;
use freedom_shared::scan::is_sha256_hex;
use freedom_shared::web::{ApiError, QueryParams, authorize};

/// The scanner API's path.
pub const SCANNER_PATH: &str = "/api/freedom-scanner";

fn json_body(text: String) -> Response {
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The only view besides the report.
pub const EVIDENCE_VIEW: &str = "evidence";

#[tracing::instrument(skip_all)]
async fn read(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let params = QueryParams::parse(query.as_deref(), &["view", "sha256"])?;
    match params.get("view") {
        None if params.is_empty() => {}
        Some(EVIDENCE_VIEW) => return evidence(&state, &params).await,
        None => {
            return Err(ApiError::invalid_query(
                "sha256",
                "sha256 is a parameter of view=evidence",
            ));
        }
        Some(_) => {
            return Err(ApiError::invalid_query(
                "view",
                "view must be evidence, or absent for the report",
            ));
        }
    }
    let report = state.runner.latest_report().await?;
    Ok(json_body(
        report.unwrap_or_else(|| Report::empty().to_json_text()),
    ))
}

/// `?view=evidence&sha256=<64 lowercase hex>`: the exact bytes, which
/// never change (they are named by their hash), while they are kept.
async fn evidence(state: &AppState, params: &QueryParams) -> Result<Response, ApiError> {
    let sha256 = params
        .get("sha256")
        .filter(|hash| is_sha256_hex(hash))
        .ok_or_else(|| {
            ApiError::invalid_query("sha256", "sha256 must be 64 lowercase hex digits")
        })?;
    let bytes = state
        .runner
        .evidence(sha256)
        .await?
        .ok_or(ApiError::NoSuchEvidence)?;
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=604800, immutable"),
    );
    Ok(response)
}

#[tracing::instrument(skip_all)]
async fn run(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    authorize(&headers, query.as_deref(), state.write_token.as_ref())?;
    QueryParams::parse(query.as_deref(), &[])?;
    let report = state.runner.run().await?;
    Ok(json_body(report.to_json_text()))
}

/// The scanner's routes, without a fallback (so they merge with the fund's).
pub fn routes(state: AppState) -> Router {
    let router = Router::new()
        .route(
            SCANNER_PATH,
            get(read).post(run).fallback(|| async {
                ApiError::MethodNotAllowed {
                    allow: "GET, HEAD, POST",
                }
            }),
        )
        .with_state(state);
    freedom_shared::web::catch_panics(router).layer(axum::middleware::from_fn(
        freedom_shared::web::compress_answers,
    ))
}

/// The scanner function's router: its routes plus a JSON 404.
pub fn app(state: AppState) -> Router {
    routes(state).fallback(freedom_shared::web::not_found)
}
