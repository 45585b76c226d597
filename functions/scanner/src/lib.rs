//! # scanner
//!
//! The scanner function: `/api/freedom-scanner`. This first version serves
//! the report's shape with empty parts (the state before the first run);
//! collection, checks, paper experiments and the run lock come with the
//! scanner itself. Until then a POST answers 405.

use axum::Router;
use axum::routing::get;
use freedom_shared::http::ApiError;
use freedom_shared::{SCANNER_MODE, SCANNER_VERSION};
use serde_json::{Value, json};

/// The scanner API's path.
pub const SCANNER_PATH: &str = "/api/freedom-scanner";

/// The report before the first run: every named part, empty.
pub fn empty_report() -> Value {
    json!({
        "version": SCANNER_VERSION,
        "mode": SCANNER_MODE,
        "status": null,
        "reportAt": null,
        "observedAt": null,
        "universe": [],
        "links": {},
        "books": [],
        "history": {},
        "events": [],
        "wallets": []
    })
}

async fn read() -> axum::Json<Value> {
    axum::Json(empty_report())
}

/// The scanner's routes, without a fallback (so they merge with the fund's).
pub fn routes() -> Router {
    Router::new().route(
        SCANNER_PATH,
        get(read).fallback(|| async { ApiError::MethodNotAllowed { allow: "GET, HEAD" } }),
    )
}

/// The scanner function's router: its routes plus a JSON 404.
pub fn app() -> Router {
    routes().fallback(freedom_shared::http::not_found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    #[tokio::test]
    async fn get_answers_the_version_mode_and_empty_parts() {
        let response = app()
            .oneshot(Request::get(SCANNER_PATH).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value =
            serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes())
                .unwrap();
        assert_eq!(body["version"], "scanner-1.0");
        assert_eq!(body["mode"], "paper");
        assert_eq!(body["universe"], json!([]));
    }

    #[tokio::test]
    async fn a_run_is_not_available_yet() {
        let response = app()
            .oneshot(Request::post(SCANNER_PATH).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(response.headers()["allow"], "GET, HEAD");
    }
}
