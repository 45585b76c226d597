//! ETags on the ledger's reads: every view of the ledger (the dashboard, a
//! ledger page, the page at `/`) is a function of the head, so its ETag is
//! the head's root hash, and a client that has it gets `304`. A proof is a
//! function of more than the head (the witnessed checkpoint it is served
//! against gathers cosignatures): its ETag is the hash of its bytes
//! ([`with_content_etag`]). Only entity tags in their quoted form match
//! (RFC 9110 §8.8.3): `If-None-Match: abc` names no tag.

use crate::merkle::Head;
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

/// Whether `If-None-Match` names the head's root (or is `*`): the answer
/// will be `304`, so a handler can skip building a body it would drop.
pub fn client_has(headers: &HeaderMap, head: &Head) -> bool {
    names_tag(headers, &head.root_hash.to_hex())
}

/// Whether `If-None-Match` is `*` or names the entity tag whose opaque part
/// is `tag`, in any of its representations (`-br`, `-gz` appended), weakly
/// or not. Tags not in their quoted form name nothing.
fn names_tag(headers: &HeaderMap, tag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|named| named == "*" || opaque(named).is_some_and(|o| without_coding(o) == tag))
}

/// The opaque part of an entity tag (`"x"` or `W/"x"`), when it is one.
fn opaque(tag: &str) -> Option<&str> {
    let quoted = tag.strip_prefix("W/").unwrap_or(tag);
    quoted
        .strip_prefix('"')?
        .strip_suffix('"')
        .filter(|inner| !inner.contains('"'))
}

/// An opaque tag without the suffix a compressed representation's tag
/// carries (`-br`, `-gz`): every representation matches it.
fn without_coding(opaque: &str) -> &str {
    opaque
        .strip_suffix("-br")
        .or_else(|| opaque.strip_suffix("-gz"))
        .unwrap_or(opaque)
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
    let mut response = if names_tag(headers, &tag) {
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

    /// Round 4: an unquoted tag matched. Only the quoted form names a tag.
    #[test]
    fn only_quoted_entity_tags_match() {
        let head = Head::empty();
        let hex = head.root_hash.to_hex();
        for (value, matches) in [
            (format!("\"{hex}\""), true),
            (format!("W/\"{hex}\""), true),
            (format!("\"{hex}-br\""), true),
            (format!("\"other\", W/\"{hex}-gz\""), true),
            ("*".to_owned(), true),
            (hex.clone(), false),
            (format!("{hex}-br"), false),
            (format!("\"{hex}"), false),
            (format!("W/{hex}"), false),
            (format!("\"\"{hex}\"\""), false),
        ] {
            assert_eq!(client_has(&asking(&value), &head), matches, "{value}");
        }
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
