//! The bearer check of the write endpoints (POSTs): the write token from
//! configuration, compared in constant time; a token in the URL is refused
//! (URLs end up in logs).

use super::error::ApiError;
use crate::config::WriteToken;
use axum::http::{HeaderMap, header};

/// Parameters whose name says they carry a credential: never accepted in a URL.
const CREDENTIAL_PARAMETERS: &[&str] = &[
    "token",
    "access_token",
    "auth",
    "authorization",
    "bearer",
    "api_key",
    "apikey",
    "key",
];

/// Checks a write request's bearer token (constant-time comparison).
///
/// Order: no token configured → 503 `writes_disabled`; a credential in the
/// URL's query → 401 (URLs end up in logs); no `Authorization`, another
/// scheme, or the wrong token → 401.
pub fn authorize(
    headers: &HeaderMap,
    raw_query: Option<&str>,
    token: Option<&WriteToken>,
) -> Result<(), ApiError> {
    let Some(token) = token else {
        return Err(ApiError::WritesDisabled);
    };
    let in_query = url::form_urlencoded::parse(raw_query.unwrap_or("").as_bytes())
        .any(|(name, _)| CREDENTIAL_PARAMETERS.contains(&name.to_ascii_lowercase().as_str()));
    if in_query {
        return Err(ApiError::Unauthorized {
            message: "send the token in the Authorization header (Bearer), never in the URL",
            presented: true,
        });
    }
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(ApiError::Unauthorized {
            message: "this endpoint needs Authorization: Bearer <token>",
            presented: false,
        });
    };
    let text = value.to_str().unwrap_or("");
    let (scheme, credential) = text.trim().split_once(' ').unwrap_or((text, ""));
    if !scheme.eq_ignore_ascii_case("bearer") || credential.trim().is_empty() {
        return Err(ApiError::Unauthorized {
            message: "use the Bearer scheme: Authorization: Bearer <token>",
            presented: true,
        });
    }
    if !token.verify(credential.trim()) {
        return Err(ApiError::Unauthorized {
            message: "the bearer token is not valid",
            presented: true,
        });
    }
    Ok(())
}
