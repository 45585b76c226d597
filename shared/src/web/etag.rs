//! ETags on the ledger's reads: every view of the ledger (the dashboard, a
//! ledger page, the page at `/`) is a function of the head, so its ETag is
//! the head's root hash, and a client that has it gets `304`. A proof is a
//! function of more than the head (the witnessed checkpoint it is served
//! against gathers cosignatures): its ETag is the hash of its bytes
//! ([`with_content_etag`]). Only entity tags in their quoted form match
//! (RFC 9110 §8.8.3): `If-None-Match: abc` names no tag.

use crate::merkle::Head;
use crate::service::read::{ClientTags, Read};
use crate::web::encoding::encoded_answer;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest as _, Sha256};

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

/// The answer to a read use case's `Read`: `304` with the head's tag,
/// or the body (as `content_type`) with it.
pub fn read_answer(headers: &HeaderMap, read: Read, content_type: &'static str) -> Response {
    match read {
        Read::NotModified(head) => with_etag(headers, &head, ()),
        Read::Fresh(answer) => with_etag(
            headers,
            &answer.head,
            encoded_answer(content_type, answer.body),
        ),
    }
}

/// Whether `If-None-Match` names the head's root (or is `*`): the answer
/// will be `304`, so a handler can skip building a body it would drop.
pub fn client_has(headers: &HeaderMap, head: &Head) -> bool {
    client_tags(headers).holds_head(head)
}

/// The entity tags `If-None-Match` names, for a read use case to compare.
pub fn client_tags(headers: &HeaderMap) -> ClientTags {
    ClientTags::parse(
        headers
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    )
}

/// Answers `body` (of `content_type`) with an ETag that is the hash of its
/// bytes (the first 16 bytes of SHA-256, hex), or `304 Not Modified` when
/// `If-None-Match` names it; both with `Cache-Control: no-cache`. For
/// answers that are not a function of the head alone (proofs).
pub fn with_content_etag(
    headers: &HeaderMap,
    content_type: &'static str,
    body: Vec<u8>,
) -> Response {
    let tag = hex::encode(&Sha256::digest(&body)[..16]);
    let mut response = if client_tags(headers).holds(&tag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, content_type)], body).into_response()
    };
    let response_headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&format!("\"{tag}\"")) {
        response_headers.insert(header::ETAG, value);
    }
    response_headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn a_content_tag_names_the_bytes() {
        let fresh = with_content_etag(&HeaderMap::new(), "text/plain", b"proof".to_vec());
        assert_eq!(fresh.status(), StatusCode::OK);
        let tag = fresh.headers()[header::ETAG].to_str().unwrap().to_owned();
        let again = with_content_etag(&asking(&tag), "text/plain", b"proof".to_vec());
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        let changed = with_content_etag(&asking(&tag), "text/plain", b"proof 2".to_vec());
        assert_eq!(changed.status(), StatusCode::OK);
    }
}
