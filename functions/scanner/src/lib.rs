//! # scanner
//!
//! The scanner function: `/api/freedom-scanner`. `GET` answers the latest
//! report with one store read (every named part empty before the first run)
//! and never starts a run. `POST` (with the write token) runs the scanner
//! once and answers the new report, or `409 scanner_busy` while another run
//! holds the lock. The schedule (EventBridge, or freedom-local's timer)
//! calls the same [`run::ScanRunner::run`].
//!
//! - [`providers`]: DexScreener, RugCheck and Solana RPC clients;
//! - [`run`]: one run, under the lock;
//! - `lambda` (feature `lambda`, the default): the Lambda runtime loop
//!   (HTTP and the schedule), the `scanner` binary;
//! - [`config`]: the universe, wallets and provider URLs.
//!
//! The checks, experiments, state and report are in
//! [`freedom_shared::scan`].

pub mod config;
#[cfg(feature = "lambda")]
pub mod lambda;
pub mod providers;
pub mod run;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use freedom_shared::adapters::stores::Stores;
use freedom_shared::clock::Clock;
use freedom_shared::config::WriteToken;
use freedom_shared::ports::event_sink::Events;
use freedom_shared::record::guard::Guard;
use freedom_shared::service::ledger::Ledger;
use freedom_shared::web::{ApiError, QueryParams, authorize};
use run::{RunError, ScanRunner};
use std::sync::Arc;

pub use freedom_shared::scan::report::empty_report;

/// The scanner API's path.
pub const SCANNER_PATH: &str = "/api/freedom-scanner";

/// What the scanner handlers share.
#[derive(Clone)]
pub struct AppState {
    /// What runs scans.
    pub runner: Arc<ScanRunner>,
    /// The write token; `None` disables runs by POST (503 `writes_disabled`).
    pub write_token: Option<WriteToken>,
}

impl AppState {
    /// The scanner on `stores` (its lock and state, and the fund ledger its
    /// paper snapshots go to), reading the wall clock.
    pub fn new(
        config: config::ScannerConfig,
        stores: &Stores,
        write_token: Option<WriteToken>,
    ) -> AppState {
        AppState::with_clock(
            config,
            stores,
            write_token,
            freedom_shared::clock::system_clock(),
        )
    }

    /// The same with an injected clock (tests).
    pub fn with_clock(
        config: config::ScannerConfig,
        stores: &Stores,
        write_token: Option<WriteToken>,
        clock: Clock,
    ) -> AppState {
        let guard = Guard::new(write_token.as_ref().map(WriteToken::expose));
        let ledger = Ledger::new(Arc::clone(&stores.ledger), guard).with_clock(clock.clone());
        let runner = ScanRunner::new(config, Arc::clone(&stores.scan), ledger, clock);
        AppState {
            runner: Arc::new(runner),
            write_token,
        }
    }

    /// The same state publishing to `events`.
    pub fn with_events(self, events: Events) -> AppState {
        let runner = ScanRunner::clone(&self.runner).with_events(events);
        AppState {
            runner: Arc::new(runner),
            write_token: self.write_token,
        }
    }
}

impl From<RunError> for ApiError {
    fn from(error: RunError) -> ApiError {
        match error {
            RunError::Busy | RunError::LockLost => ApiError::ScannerBusy,
            RunError::Store(error) => error.into(),
            RunError::Panicked => ApiError::Internal("the scanner run panicked".into()),
        }
    }
}

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

#[tracing::instrument(skip_all)]
async fn read(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    QueryParams::parse(query.as_deref(), &[])?;
    let report = state.runner.latest_report().await?;
    Ok(json_body(
        report.unwrap_or_else(|| empty_report().to_string()),
    ))
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
    Ok(json_body(report.to_string()))
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
    freedom_shared::web::catch_panics(router)
}

/// The scanner function's router: its routes plus a JSON 404.
pub fn app(state: AppState) -> Router {
    routes(state).fallback(freedom_shared::web::not_found)
}
