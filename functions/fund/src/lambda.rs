//! The fund under AWS Lambda: the same router behind API Gateway's HTTP API
//! (payload 2.0), started by the start-up both functions share
//! ([`freedom_shared::lambda`]). Without the KV REST store's variables every
//! request answers `503 storage_unavailable`.
//!
//! The fund also gets EventBridge's scheduled event once a minute (the
//! `LogCosign` rule): with a witness policy (`FF_LOG_POLICY`) it runs one
//! cosigning round, which asks no witness unless the head moved or a
//! witness is behind; without one it does nothing. While the witnessed
//! checkpoint is behind the head, a new instance runs one such round as it
//! starts, so a new deployment is witnessed at once.

use crate::compose::{self, LogParts};
use crate::router::app;
use axum::Router;
use freedom_shared::config;
use freedom_shared::lambda::{
    self, Invocations, LambdaEvent, StartError, answer_http, is_scheduled,
};
use freedom_shared::service::{BenchmarkCheckError, Log, UNWITNESSED_CUSTODY, check_benchmarks};
use freedom_shared::web::store_not_configured_app;
use serde_json::{Value, json};
use std::sync::Arc;

/// What the fund serves under Lambda: its router, and its log for the
/// scheduled cosigning round.
#[derive(Clone)]
pub struct FundLambda {
    /// The HTTP router.
    pub router: Router,
    /// The log, `None` when no store is configured.
    pub log: Option<Arc<Log>>,
}

impl FundLambda {
    /// The fund's function from the environment.
    pub async fn from_env(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<FundLambda, StartError> {
        let Some(start) = lambda::start("fund", &lookup).await? else {
            return Ok(FundLambda {
                router: store_not_configured_app(),
                log: None,
            });
        };
        let log_config = config::log_config(&lookup)?;
        let verifier = log_config.signing_key.as_ref().map(|key| key.verifier());
        let log = LogParts {
            policy: config::log_policy(&lookup, verifier.as_ref())?,
            config: log_config,
            key_memory: None,
        };
        let benchmarks = config::benchmarks(&lookup)?;
        check_benchmarks(&benchmarks, start.stores.ledger.as_ref())
            .await
            .map_err(|error| match error {
                BenchmarkCheckError::Config(error) => StartError::Config(error),
                BenchmarkCheckError::Store(error) => StartError::Store(error),
            })?;
        let state = compose::fund(&start.stores, log, start.write_token, start.events)
            .with_benchmarks(benchmarks);
        if state.log.verifier_key().is_none() {
            tracing::warn!(
                "no FF_LOG_SIGNING_KEY: checkpoints and proofs answer 503 signing_unavailable"
            );
        } else {
            if state.log.policy().is_none() {
                tracing::warn!("{UNWITNESSED_CUSTODY}");
            }
            match state.log.custody_status().await {
                Ok(status) => tracing::info!(custody = %status, "the log's signer"),
                Err(error) => tracing::warn!(%error, "cannot read the log's memory yet"),
            }
            // While the witnessed checkpoint is behind the head (a new
            // deployment, a new policy, an append since the last round),
            // one round as the instance starts, as freedom-local does:
            // /log/checkpoint serves the head witnessed at once rather than
            // after the next minute's rule. When the head is witnessed, a
            // cold start asks no witness, so one that is down never slows
            // it (each gets 5 s, inside Lambda's 10 s start-up).
            if state.log.policy().is_some() && witnessed_behind(&state.log).await {
                match state.log.cosign(false).await {
                    Ok(round) => tracing::info!(
                        tree_size = round.tree_size,
                        asked = round.asked,
                        quorum_met = round.quorum_met,
                        "start-up cosigning round"
                    ),
                    Err(error) => {
                        tracing::warn!(%error, "the start-up cosigning round failed; the scheduled one retries")
                    }
                }
            }
        }
        Ok(FundLambda {
            log: Some(Arc::clone(&state.log)),
            router: app(state),
        })
    }

    /// Answers one invocation: the scheduled cosigning round, or an HTTP
    /// request (API Gateway's response object).
    pub async fn handle(&self, event: LambdaEvent<Value>) -> Result<Value, lambda::Error> {
        if !is_scheduled(&event.payload) {
            return answer_http(&self.router, event).await;
        }
        let Some(log) = self.log.as_ref().filter(|log| log.policy().is_some()) else {
            return Ok(json!({"cosign": "no witness policy"}));
        };
        let round = log.cosign(false).await?;
        tracing::info!(
            tree_size = round.tree_size,
            asked = round.asked,
            quorum_met = round.quorum_met,
            witnessed_size = round.witnessed_size,
            "scheduled cosigning round"
        );
        Ok(serde_json::to_value(round)?)
    }
}

/// Whether the log's witnessed checkpoint is missing or smaller than its
/// head (false when either cannot be read: the scheduled round retries).
async fn witnessed_behind(log: &Log) -> bool {
    match (log.witnessed().await, log.head().await) {
        (Ok(witnessed), Ok(head)) => witnessed.is_none_or(|w| w.size < head.size),
        _ => false,
    }
}

impl Invocations for FundLambda {
    async fn answer(&self, event: LambdaEvent<Value>) -> Result<Value, lambda::Error> {
        self.handle(event).await
    }
}

/// The fund's router as Lambda serves it, from the environment.
pub async fn app_from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Router, StartError> {
    Ok(FundLambda::from_env(lookup).await?.router)
}

/// Runs the Lambda runtime loop until the runtime stops it.
pub async fn serve() -> Result<(), lambda::Error> {
    lambda::serve(|env| async move { Ok(FundLambda::from_env(env).await?) }).await
}
