//! The start-up both functions share under AWS Lambda: the check that the
//! process runs under the Lambda runtime, the runtime's tracing (it
//! honours `AWS_LAMBDA_LOG_FORMAT=JSON` and `AWS_LAMBDA_LOG_LEVEL`, default
//! `info`), the configuration every function reads (the KV REST store, the
//! event bus, the agent's write token), and the runtime loop.
//!
//! Lambda's disk does not last, so a function without the KV REST store's
//! variables starts anyway and answers every HTTP request `503
//! storage_unavailable` saying so (see [`start`]); nothing is ever written
//! locally.

use crate::adapters::{events, stores::Stores};
use crate::config::{self, ConfigError, WriteToken};
use crate::ports::StoreError;
use crate::ports::event_sink::Events;
use axum::Router;
use lambda_http::request::LambdaRequest;
use lambda_http::{Adapter, Service, service_fn};
use serde_json::Value;
use std::future::Future;

pub use lambda_http::LambdaEvent;

/// The error type of an invocation and of the runtime loop.
pub type Error = lambda_http::Error;

/// Why a function could not start.
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

/// What every function starts from under Lambda.
pub struct Start {
    /// The KV REST store's ledger, scan store and signer memory.
    pub stores: Stores,
    /// The event bus (`FF_EVENT_BUS_NAME`), or no events.
    pub events: Events,
    /// The agent's write token (`FF_AGENT_WRITE_TOKEN`), when set.
    pub write_token: Option<WriteToken>,
}

/// Reads `function`'s configuration from `lookup`: `None` when no KV REST
/// store is configured (logged as an error; the caller answers 503), an
/// error for a configuration mistake.
pub async fn start(
    function: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Option<Start>, StartError> {
    let Some(kv) = config::kv_config(&lookup)? else {
        tracing::error!(
            function,
            "no KV REST store is configured: every request answers 503"
        );
        return Ok(None);
    };
    let stores = Stores::kv_rest(&kv)?;
    tracing::info!(function, store = %stores.description, "on Lambda");
    let write_token = config::write_token(&lookup)?;
    Ok(Some(Start {
        stores,
        events: events::from_env(&lookup).await,
        write_token,
    }))
}

/// Whether `event` is EventBridge's scheduled event (`"source":
/// "aws.events"`, `"detail-type": "Scheduled Event"`), rather than an
/// HTTP API request.
pub fn is_scheduled(event: &Value) -> bool {
    event.get("source").and_then(Value::as_str) == Some("aws.events")
        && event.get("detail-type").and_then(Value::as_str) == Some("Scheduled Event")
}

/// A function's answer to its invocations.
pub trait Invocations: Clone + Send + Sync + 'static {
    /// Answers one invocation, the event as Lambda sent it. (The runtime
    /// runs one invocation at a time, so the answer need not be `Send`.)
    fn answer(&self, event: LambdaEvent<Value>) -> impl Future<Output = Result<Value, Error>>;
}

/// A router answers API Gateway HTTP API requests (payload 2.0).
impl Invocations for Router {
    async fn answer(&self, event: LambdaEvent<Value>) -> Result<Value, Error> {
        answer_http(self, event).await
    }
}

/// Answers an API Gateway HTTP API request (payload 2.0) with `router`;
/// an error when the event is no such request.
pub async fn answer_http(router: &Router, event: LambdaEvent<Value>) -> Result<Value, Error> {
    let (payload, context) = event.into_parts();
    let request: LambdaRequest = serde_json::from_value(payload)
        .map_err(|e| format!("neither a scheduled event nor an HTTP API request: {e}"))?;
    let mut adapter = Adapter::from(router.clone());
    let response = adapter
        .call(LambdaEvent::new(request, context))
        .await
        .map_err(|never| match never {})?;
    Ok(serde_json::to_value(response)?)
}

/// Starts a function: refuses to run outside the Lambda runtime, installs
/// the runtime's tracing, builds the function with `build` from the
/// process environment, and answers its invocations until the runtime
/// stops it.
pub async fn serve<F, Build>(build: impl FnOnce(Env) -> Build) -> Result<(), Error>
where
    F: Invocations,
    Build: Future<Output = Result<F, Error>>,
{
    if !config::is_lambda(env) {
        return Err(StartError::NotLambda.into());
    }
    lambda_http::tracing::init_default_subscriber();
    let function = build(env).await?;
    lambda_http::lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| {
        let function = function.clone();
        async move { function.answer(event).await }
    }))
    .await
}

/// How a function reads the process environment.
pub(crate) type Env = fn(&str) -> Option<String>;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}
