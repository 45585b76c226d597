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

use crate::router::routes;
use crate::state::AppState;
use axum::Router;
use freedom_shared::config::ScannerConfig;
use freedom_shared::lambda::{self, Invocations, LambdaEvent, answer_http};
use freedom_shared::service::{RunError, ScanRunner};
use freedom_shared::web::{not_found, store_not_configured_app};
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

pub use freedom_shared::lambda::is_scheduled;

impl LambdaApp {
    /// From the environment: KV store, write token, providers, event bus.
    pub async fn from_env(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<LambdaApp, lambda::Error> {
        let Some(start) = lambda::start("scanner", &lookup).await? else {
            return Ok(LambdaApp {
                router: store_not_configured_app(),
                runner: None,
            });
        };
        let state = crate::compose::scanner(
            ScannerConfig::from_env(&lookup)?,
            &start.stores,
            start.write_token,
        )
        .with_events(start.events);
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
    pub async fn handle(&self, event: LambdaEvent<Value>) -> Result<Value, lambda::Error> {
        let scheduled = is_scheduled(&event.payload);
        tracing::Span::current().record("scheduled", scheduled);
        if !scheduled {
            return answer_http(&self.router, event).await;
        }
        let Some(runner) = &self.runner else {
            return Err("no store is configured: the scheduled run cannot save anything".into());
        };
        match runner.run().await {
            Ok(report) => Ok(json!({
                "run": "finished", "status": report.status, "reportAt": report.report_at,
            })),
            Err(RunError::Busy) => {
                Ok(json!({"run": "skipped", "reason": "another run holds the lock"}))
            }
            Err(error) => Err(error.into()),
        }
    }
}

impl Invocations for LambdaApp {
    async fn answer(&self, event: LambdaEvent<Value>) -> Result<Value, lambda::Error> {
        self.handle(event).await
    }
}

/// Runs the Lambda runtime loop until the runtime stops it.
pub async fn serve() -> Result<(), lambda::Error> {
    lambda::serve(LambdaApp::from_env).await
}
