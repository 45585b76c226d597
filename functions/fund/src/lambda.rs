//! The fund under AWS Lambda: the same router on `lambda_http::run`, behind
//! API Gateway's HTTP API (payload 2.0). Logging is the runtime's: it honours
//! `AWS_LAMBDA_LOG_FORMAT=JSON` and `AWS_LAMBDA_LOG_LEVEL` (default `info`).
//!
//! Lambda's disk does not last, so without the KV REST store's variables
//! every request answers `503 storage_unavailable` saying so, and nothing is
//! ever written locally.

use crate::AppState;
use axum::Router;
use freedom_shared::adapters::{events, stores::Stores};
use freedom_shared::config::{self, ConfigError};
use freedom_shared::ports::StoreError;
use freedom_shared::web::{not_found, store_not_configured_app};
use std::sync::Arc;

/// Why the Lambda app could not be built.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A configuration mistake (e.g. half a KV pair).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The store could not be set up.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// This process is not under the Lambda runtime.
    #[error(
        "AWS_LAMBDA_RUNTIME_API is not set: this binary is the Lambda package; run freedom-local to serve locally"
    )]
    NotLambda,
}

/// The fund's router as Lambda serves it, from the environment.
pub async fn app_from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Router, StartError> {
    let Some(kv) = config::kv_config(&lookup)? else {
        tracing::error!("no KV REST store is configured: every request answers 503");
        return Ok(store_not_configured_app());
    };
    let stores = Stores::kv_rest(&kv)?;
    tracing::info!(store = %stores.description, "fund on Lambda");
    let events = events::from_env(&lookup).await;
    let mut log = config::log_config(&lookup)?
        .into_log(Arc::clone(&stores.ledger))
        .with_events(events.clone());
    if let Some(memory) = stores.signer_memory {
        log = log.with_memory(memory);
    }
    if log.verifier_key().is_none() {
        tracing::warn!(
            "no FF_LOG_SIGNING_KEY: checkpoints and proofs answer 503 signing_unavailable"
        );
    }
    let state = AppState::new(stores.ledger, config::write_token(&lookup)?)
        .with_events(events)
        .with_log(log);
    Ok(crate::routes(state).fallback(not_found))
}

/// Runs the Lambda runtime loop until the runtime stops it.
pub async fn serve() -> Result<(), lambda_http::Error> {
    let lookup = |name: &str| std::env::var(name).ok();
    if !config::is_lambda(lookup) {
        return Err(StartError::NotLambda.into());
    }
    lambda_http::tracing::init_default_subscriber();
    let app = app_from_env(lookup).await?;
    lambda_http::run(app).await
}
