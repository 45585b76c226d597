//! The fund under AWS Lambda: the same router behind API Gateway's HTTP API
//! (payload 2.0), started by the start-up both functions share
//! ([`freedom_shared::lambda`]). Without the KV REST store's variables every
//! request answers `503 storage_unavailable`.

use crate::router::app;
use crate::state::AppState;
use axum::Router;
use freedom_shared::config;
use freedom_shared::lambda::{self, StartError};
use freedom_shared::service::log::Log;
use freedom_shared::web::store_not_configured_app;
use std::sync::Arc;

/// The fund's router as Lambda serves it, from the environment.
pub async fn app_from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Router, StartError> {
    let Some(start) = lambda::start("fund", &lookup).await? else {
        return Ok(store_not_configured_app());
    };
    let stores = start.stores;
    let mut log = Log::configured(Arc::clone(&stores.ledger), config::log_config(&lookup)?)
        .with_events(start.events.clone());
    if let Some(memory) = stores.signer_memory {
        log = log.with_memory(memory);
    }
    if log.verifier_key().is_none() {
        tracing::warn!(
            "no FF_LOG_SIGNING_KEY: checkpoints and proofs answer 503 signing_unavailable"
        );
    }
    let state = AppState::new(stores.ledger, start.write_token)
        .with_events(start.events)
        .with_log(log);
    Ok(app(state))
}

/// Runs the Lambda runtime loop until the runtime stops it.
pub async fn serve() -> Result<(), lambda::Error> {
    lambda::serve(|env| async move { Ok(app_from_env(env).await?) }).await
}
