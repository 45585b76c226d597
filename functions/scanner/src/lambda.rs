//! The scanner under AWS Lambda: one runtime loop that tells apart the two
//! kinds of invocation it gets.
//!
//! - An EventBridge scheduled event (`"source": "aws.events"`,
//!   `"detail-type": "Scheduled Event"`, the quarter-hour rule): one run; a
//!   run that finds the lock held is skipped, not an error.
//! - Anything else is read as an API Gateway HTTP API request (payload 2.0)
//!   and answered by the same router as everywhere else.
//!
//! Without the KV REST store's variables, HTTP requests answer `503
//! storage_unavailable` and scheduled runs fail, rather than writing to
//! Lambda's short-lived disk.

use crate::config::ScannerConfig;
use crate::run::{RunError, ScanRunner};
use crate::{AppState, routes};
use axum::Router;
use freedom_shared::adapters::{events, stores::Stores};
use freedom_shared::config;
use freedom_shared::web::{not_found, store_not_configured_app};
use lambda_http::request::LambdaRequest;
use lambda_http::{Adapter, LambdaEvent, Service, service_fn};
use serde_json::{Value, json};
use std::sync::Arc;

/// What the scanner serves under Lambda: its router, and the runner for
/// scheduled runs when a store is configured.
#[derive(Clone)]
pub struct LambdaApp {
    /// The HTTP router.
    pub router: Router,
    /// The runner, `None` when no store is configured.
    pub runner: Option<Arc<ScanRunner>>,
}

/// Whether `event` is EventBridge's scheduled event.
pub fn is_scheduled(event: &Value) -> bool {
    event.get("source").and_then(Value::as_str) == Some("aws.events")
        && event.get("detail-type").and_then(Value::as_str) == Some("Scheduled Event")
}

impl LambdaApp {
    /// From the environment: KV store, write token, providers, event bus.
    pub async fn from_env(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<LambdaApp, Box<dyn std::error::Error + Send + Sync>> {
        let Some(kv) = config::kv_config(&lookup)? else {
            tracing::error!(
                "no KV REST store is configured: HTTP answers 503 and scheduled runs fail"
            );
            return Ok(LambdaApp {
                router: store_not_configured_app(),
                runner: None,
            });
        };
        let stores = Stores::kv_rest(&kv)?;
        tracing::info!(store = %stores.description, "scanner on Lambda");
        let state = AppState::new(
            ScannerConfig::from_env(&lookup)?,
            &stores,
            config::write_token(&lookup)?,
        )
        .with_events(events::from_env(&lookup).await);
        Ok(LambdaApp::new(state))
    }

    /// The app for `state`.
    pub fn new(state: AppState) -> LambdaApp {
        LambdaApp {
            runner: Some(Arc::clone(&state.runner)),
            router: routes(state).fallback(not_found),
        }
    }

    /// Answers one invocation: a scheduled run or an HTTP request. The HTTP
    /// answer is API Gateway's response object.
    #[tracing::instrument(skip_all, fields(scheduled = tracing::field::Empty))]
    pub async fn handle(&self, event: LambdaEvent<Value>) -> Result<Value, lambda_http::Error> {
        let (payload, context) = event.into_parts();
        let scheduled = is_scheduled(&payload);
        tracing::Span::current().record("scheduled", scheduled);
        if scheduled {
            let Some(runner) = &self.runner else {
                return Err(
                    "no store is configured: the scheduled run cannot save anything".into(),
                );
            };
            return match runner.run().await {
                Ok(report) => Ok(json!({
                    "run": "finished", "status": report["status"], "reportAt": report["reportAt"],
                })),
                Err(RunError::Busy) => {
                    Ok(json!({"run": "skipped", "reason": "another run holds the lock"}))
                }
                Err(error) => Err(error.into()),
            };
        }
        let request: LambdaRequest = serde_json::from_value(payload)
            .map_err(|e| format!("neither a scheduled event nor an HTTP API request: {e}"))?;
        let mut adapter = Adapter::from(self.router.clone());
        let response = adapter
            .call(LambdaEvent::new(request, context))
            .await
            .map_err(|never| match never {})?;
        Ok(serde_json::to_value(response)?)
    }
}

/// Runs the Lambda runtime loop until the runtime stops it.
pub async fn serve() -> Result<(), lambda_http::Error> {
    let lookup = |name: &str| std::env::var(name).ok();
    if !config::is_lambda(lookup) {
        return Err(
            "AWS_LAMBDA_RUNTIME_API is not set: this binary is the Lambda package; run freedom-local to serve locally"
                .into(),
        );
    }
    lambda_http::tracing::init_default_subscriber();
    let app = LambdaApp::from_env(lookup).await?;
    lambda_http::lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| {
        let app = app.clone();
        async move { app.handle(event).await }
    }))
    .await
}
