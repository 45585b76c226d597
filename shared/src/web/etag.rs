//! ETags on the ledger's reads: every view of the ledger (the dashboard, a
//! ledger page, the page at `/`) is a function of the head, so its ETag is
//! the head's root hash, and a client that has it gets `304`.

use crate::merkle::Head;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Answers `304 Not Modified` when `If-None-Match` names the head's root (or
/// is `*`), else `body`; both carry `ETag: "<rootHash>"` and
/// `Cache-Control: no-cache` (revalidate every time: the head moves).
pub fn with_etag(headers: &HeaderMap, head: &Head, body: impl IntoResponse) -> Response {
    let etag = format!("\"{}\"", head.root_hash);
    let mut response = if client_has(headers, head) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        body.into_response()
    };
    let response_headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response_headers.insert(header::ETAG, value);
    }
    response_headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Whether `If-None-Match` names the head's root (or is `*`): the answer
/// will be `304`, so a handler can skip building a body it would drop.
pub fn client_has(headers: &HeaderMap, head: &Head) -> bool {
    let etag = format!("\"{}\"", head.root_hash);
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .map(without_coding)
        .any(|tag| tag == etag || tag == "*")
}

/// `tag` (quoted) without the suffix a compressed representation's tag
/// carries (`-br`, `-gz`): every representation of a head matches it.
fn without_coding(tag: &str) -> String {
    let inner = tag.trim_matches('"');
    let base = inner
        .strip_suffix("-br")
        .or_else(|| inner.strip_suffix("-gz"))
        .unwrap_or(inner);
    if tag == "*" {
        return "*".to_owned();
    }
    format!("\"{base}\"")
}
