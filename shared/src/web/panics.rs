//! A handler that panics must still answer with the service's error body:
//! `500 internal_error`, no `Retry-After` (a retry meets the same fault),
//! the panic's message in the log and never in the answer.

use super::error::ApiError;
use axum::Router;
use axum::response::{IntoResponse, Response};
use std::any::Any;
use tower_http::catch_panic::CatchPanicLayer;

/// `router` with every handler's panic answered `500 internal_error`.
pub fn catch_panics(router: Router) -> Router {
    router.layer(CatchPanicLayer::custom(answer_panic))
}

fn answer_panic(payload: Box<dyn Any + Send + 'static>) -> Response {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    ApiError::Internal(format!("a handler panicked: {message}").into()).into_response()
}
