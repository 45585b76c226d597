//! Answers on the wire: content negotiation by `Accept-Encoding` (`br`
//! preferred, then `gzip`; q-values honoured, `identity;q=0` respected),
//! bodies compressed once and kept ([`Encoded`]), an entity tag per
//! representation (`"<tag>"`, `"<tag>-br"`, `"<tag>-gz"`), and one layer
//! ([`compress_answers`]) that applies it to every answer of a router.
//!
//! What is compressed: JSON, HTML, CSV and Atom answers of 1 KiB or more.
//! Never tiles (`application/octet-stream`), checkpoints, policies or
//! `.tlog-proof` files (`text/plain`), nor anything already encoded. A
//! handler whose answer is cached puts the cached [`Encoded`] in the
//! response's extensions, so a warm read compresses nothing: each coding
//! is made once, on its first request, and kept beside the identity bytes.
//! Every answer that could differ by encoding says `Vary: Accept-Encoding`.
//! A request that accepts none of br, gzip and identity (e.g.
//! `identity;q=0` alone) gets the body uncompressed anyway when it is
//! below 1 KiB, else `406 not_acceptable`.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

pub(crate) use crate::service::encoded::Coding;
pub use crate::service::encoded::{Effort, Encoded, brotli_at, gzip_at};

/// Bodies smaller than this are sent as they are.
pub(crate) const MIN_COMPRESSED_BYTES: usize = 1024;
/// Most bytes of an answer the layer reads to compress it (larger ones,
/// which the service never makes, pass through as they are).
const MAX_COMPRESSED_BYTES: usize = 64 * 1024 * 1024;
/// The q-value of each coding the request accepts, by `Accept-Encoding`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Accepted {
    br: f32,
    gzip: f32,
    identity: f32,
}

/// Reads `Accept-Encoding` (RFC 9110 §12.5.3): no header accepts identity
/// only; a coding not listed takes `*`'s q, else 0 (identity: acceptable
/// unless excluded, but preferred to no coding the request lists).
fn accepted(headers: &HeaderMap) -> Accepted {
    let values: Vec<&str> = headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if values.is_empty() {
        return Accepted {
            br: 0.0,
            gzip: 0.0,
            identity: 1.0,
        };
    }
    let (mut br, mut gzip, mut identity, mut any) = (None, None, None, None);
    for item in values.iter().flat_map(|v| v.split(',')) {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        if coding.is_empty() {
            continue;
        }
        let mut q = 1.0f32;
        for parameter in parts {
            if let Some((name, value)) = parameter.split_once('=')
                && name.trim().eq_ignore_ascii_case("q")
            {
                q = value
                    .trim()
                    .parse::<f32>()
                    .ok()
                    .filter(|q| (0.0..=1.0).contains(q))
                    .unwrap_or(0.0);
            }
        }
        let slot = match coding.as_str() {
            "br" => &mut br,
            "gzip" | "x-gzip" => &mut gzip,
            "identity" => &mut identity,
            "*" => &mut any,
            _ => continue,
        };
        *slot = Some(slot.map_or(q, |kept: f32| kept.max(q)));
    }
    Accepted {
        br: br.or(any).unwrap_or(0.0),
        gzip: gzip.or(any).unwrap_or(0.0),
        // Acceptable unless excluded, and below any coding listed.
        identity: identity.or(any).unwrap_or(f32::MIN_POSITIVE),
    }
}

/// The coding to send a body of `length` bytes in, for a request with
/// `headers`: the acceptable one of highest q (br, then gzip, then identity
/// on a tie); identity for bodies under 1 KiB; `None` when nothing is
/// acceptable.
pub(crate) fn negotiate(headers: &HeaderMap, length: usize) -> Option<Coding> {
    let accepted = accepted(headers);
    if length < MIN_COMPRESSED_BYTES {
        return Some(Coding::Identity);
    }
    [
        (Coding::Br, accepted.br),
        (Coding::Gzip, accepted.gzip),
        (Coding::Identity, accepted.identity),
    ]
    .into_iter()
    .filter(|(_, q)| *q > 0.0)
    .fold(
        None,
        |best: Option<(Coding, f32)>, (coding, q)| match best {
            Some((_, best_q)) if best_q >= q => best,
            _ => Some((coding, q)),
        },
    )
    .map(|(coding, _)| coding)
}

/// An answer of `encoded`'s identity bytes as `content_type`, carrying
/// `encoded` for [`compress_answers`] (which sends the coding negotiated,
/// made once).
pub fn encoded_answer(content_type: &'static str, encoded: Arc<Encoded>) -> Response {
    let mut response = (
        [(header::CONTENT_TYPE, content_type)],
        encoded.identity().clone(),
    )
        .into_response();
    response.extensions_mut().insert(encoded);
    response
}

/// Whether answers of this content type are compressed.
fn compressible(headers: &HeaderMap) -> bool {
    let Some(content_type) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let media = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    matches!(
        media.as_str(),
        "application/json" | "text/html" | "text/csv" | "application/atom+xml"
    )
}

/// The entity tag `tag` (quoted) for `coding`'s representation.
fn tag_for(tag: &str, coding: Coding) -> Option<HeaderValue> {
    let inner = tag.trim_start_matches("W/").trim_matches('"');
    HeaderValue::from_str(&format!("\"{inner}{}\"", coding.tag_suffix())).ok()
}

/// The layer every router's answers go through (see the module's doc).
pub async fn compress_answers(request: Request, next: Next) -> Response {
    // Only what negotiation reads is kept of the request.
    let mut request_headers = HeaderMap::new();
    for value in request.headers().get_all(header::ACCEPT_ENCODING) {
        request_headers.append(header::ACCEPT_ENCODING, value.clone());
    }
    let mut response = next.run(request).await;
    let vary = HeaderValue::from_static("accept-encoding");
    if response.status() == StatusCode::NOT_MODIFIED {
        // The tag of the representation a 200 would have carried.
        let coding = negotiate(&request_headers, usize::MAX).unwrap_or(Coding::Identity);
        let headers = response.headers_mut();
        headers.append(header::VARY, vary);
        if let Some(tag) = headers.get(header::ETAG).and_then(|v| v.to_str().ok())
            && let Some(value) = tag_for(tag, coding)
        {
            headers.insert(header::ETAG, value);
        }
        return response;
    }
    if !compressible(response.headers())
        || response.headers().contains_key(header::CONTENT_ENCODING)
    {
        return response;
    }
    let cached = response.extensions_mut().remove::<Arc<Encoded>>();
    let (parts, body) = response.into_parts();
    let encoded = match cached {
        Some(encoded) => encoded,
        None => match axum::body::to_bytes(body, MAX_COMPRESSED_BYTES).await {
            Ok(bytes) => Arc::new(Encoded::once(bytes)),
            Err(_) => {
                return crate::web::ApiError::Internal("an answer too large to send".into())
                    .into_response();
            }
        },
    };
    let mut response = Response::from_parts(parts, Body::empty());
    response.headers_mut().append(header::VARY, vary.clone());
    let Some(coding) = negotiate(&request_headers, encoded.identity().len()) else {
        let mut refused = crate::web::ApiError::NotAcceptable.into_response();
        refused.headers_mut().append(header::VARY, vary);
        return refused;
    };
    let body = encoded.body(coding);
    let headers = response.headers_mut();
    if let Some(token) = coding.token() {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(token));
        if let Some(tag) = headers.get(header::ETAG).and_then(|v| v.to_str().ok())
            && let Some(value) = tag_for(tag, coding)
        {
            headers.insert(header::ETAG, value);
        }
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    *response.body_mut() = Body::from(body);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(accept: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(accept).unwrap(),
        );
        headers
    }

    #[test]
    fn negotiation_follows_q_values_and_prefers_br_then_gzip() {
        let big = 4096;
        assert_eq!(negotiate(&HeaderMap::new(), big), Some(Coding::Identity));
        assert_eq!(negotiate(&with("gzip, deflate, br"), big), Some(Coding::Br));
        assert_eq!(negotiate(&with("gzip"), big), Some(Coding::Gzip));
        assert_eq!(
            negotiate(&with("br;q=0.5, gzip;q=0.8"), big),
            Some(Coding::Gzip)
        );
        assert_eq!(
            negotiate(&with("br;q=0, gzip;q=0"), big),
            Some(Coding::Identity)
        );
        assert_eq!(negotiate(&with("*"), big), Some(Coding::Br));
        assert_eq!(
            negotiate(&with("deflate, zstd"), big),
            Some(Coding::Identity)
        );
        assert_eq!(negotiate(&with("identity;q=0"), big), None);
        assert_eq!(
            negotiate(&with("identity;q=0, gzip"), big),
            Some(Coding::Gzip)
        );
        assert_eq!(negotiate(&with("*;q=0"), big), None);
        assert_eq!(negotiate(&with("GZIP;Q=1"), big), Some(Coding::Gzip));
        assert_eq!(
            negotiate(&with("gzip;q=nonsense"), big),
            Some(Coding::Identity)
        );
        assert_eq!(
            negotiate(&with("identity;q=0"), 100),
            Some(Coding::Identity),
            "small"
        );
        assert_eq!(
            negotiate(&with("br"), 1023),
            Some(Coding::Identity),
            "small"
        );
    }

    #[test]
    fn compressed_bodies_decode_to_the_identity_bytes_and_are_made_once() {
        use std::io::Read as _;
        let identity: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("{{\"n\":{i}}},").into_bytes())
            .collect();
        let encoded = Encoded::new(identity.clone());
        let br = encoded.body(Coding::Br);
        assert!(
            br.as_ptr() == encoded.body(Coding::Br).as_ptr(),
            "made once"
        );
        let mut decoded = Vec::new();
        brotli::Decompressor::new(&br[..], 4096)
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, identity);
        let gz = encoded.body(Coding::Gzip);
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut decoded)
            .unwrap();
        assert_eq!(decoded, identity);
        assert!(br.len() * 5 < identity.len());
    }
}
