//! The local HTTP/1.1 listener (freedom-local), hardened against slow,
//! idle and hostile clients. Under Lambda none of this runs: API Gateway
//! holds the connections.
//!
//! - **Request-head timeout** ([`ServerLimits::head_timeout`]): from the
//!   moment a connection is ready for a request (accepted, or done with the
//!   previous response) the whole request head must arrive within it. A
//!   client that sent part of a head is answered `408 request_timeout`; an
//!   idle keep-alive connection is closed quietly. Byte-at-a-time senders
//!   are closed on time, not kept forever.
//! - **Body timeout**: the handlers that read a body bound it themselves
//!   ([`crate::service::ledger::BODY_TIMEOUT`], 408 as well).
//! - **Head size** ([`ServerLimits::max_head_bytes`], the request line and
//!   every header field, however many reads they arrive in) and **URL
//!   length** ([`ServerLimits::max_uri_bytes`]): `431` and `414`.
//! - **Connection cap** ([`ServerLimits::max_connections`]), below the
//!   process's file-descriptor limit (raised to its hard limit at start, as
//!   Go's runtime does): past the cap, new connections wait in the kernel's
//!   accept queue instead of exhausting descriptors and memory.
//! - **Bounded graceful shutdown**: when `shutdown` resolves, the listener
//!   closes, in-flight requests get [`ServerLimits::shutdown_grace`] to
//!   finish, and whatever is left (a half-sent request) is dropped.
//! - **Every answer is the JSON error body**, including those hyper gives by
//!   itself for a request it cannot parse (400 for a broken request line,
//!   431, 414): `JsonHttpErrors` rewrites hyper's bare, empty-bodied error
//!   answers as they are written.

use super::error::ApiError;
use super::limits::ServerLimits;
use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::IntoResponse;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// Descriptors kept free beyond the connection cap (store files, the HTTP
/// clients' own connections, logs).
const RESERVED_DESCRIPTORS: u64 = 256;

impl ServerLimits {
    /// These limits with the connection cap lowered, if need be, below the
    /// process's file-descriptor limit, after raising its soft limit to the
    /// hard one. Returns the limits and the descriptor limit found.
    pub fn fitted_to_descriptors(self) -> (ServerLimits, Option<u64>) {
        let limit = rlimit::increase_nofile_limit(u64::MAX).ok();
        let cap = limit.map_or(self.max_connections, |limit| {
            let room = limit.saturating_sub(RESERVED_DESCRIPTORS).max(1);
            self.max_connections
                .min(usize::try_from(room).unwrap_or(usize::MAX))
        });
        (
            ServerLimits {
                max_connections: cap,
                ..self
            },
            limit,
        )
    }
}

/// Serves `app` on `listener` within `limits` until `shutdown` resolves,
/// then shuts down within [`ServerLimits::shutdown_grace`].
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ServerLimits,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let (max_uri_bytes, max_head_bytes) = (limits.max_uri_bytes, limits.max_head_bytes);
    let app = app.layer(axum::middleware::from_fn(
        move |request: Request, next: Next| async move {
            if uri_length(&request) > max_uri_bytes {
                return ApiError::UriTooLong {
                    limit: max_uri_bytes,
                }
                .into_response();
            }
            if head_length(&request) > max_head_bytes {
                return ApiError::HeaderFieldsTooLarge.into_response();
            }
            if let Some(refusal) = strictness(&request) {
                return refusal.into_response();
            }
            next.run(request).await
        },
    ));
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let (stopping, stop) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot.map_err(io::Error::other)?,
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of descriptors or a connection reset before accept:
                    // wait a little instead of spinning, then go on.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let stop = stop.clone();
        connections.spawn(async move {
            serve_connection(stream, service, limits, stop).await;
            drop(slot);
        });
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    let _ = stopping.send(true);
    let drained = tokio::time::timeout(limits.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            left = connections.len(),
            "connections still open after the shutdown grace period are dropped"
        );
    }
    connections.abort_all();
    Ok(())
}

/// What HTTP/1.1 makes ambiguous, refused before any route: a body framed
/// by a `Transfer-Encoding` other than exactly `chunked` (501: hyper reads
/// `gzip, chunked` as chunked), a `Host` missing or given twice, and an
/// absolute-form target whose scheme is not http(s) (400).
fn strictness(request: &Request) -> Option<ApiError> {
    let headers = request.headers();
    let encodings: Vec<_> = headers.get_all(header::TRANSFER_ENCODING).iter().collect();
    if !encodings.is_empty() && !is_chunked_only(&encodings) {
        return Some(ApiError::NotImplemented);
    }
    if headers.get_all(header::HOST).iter().count() != 1 {
        return Some(ApiError::BadRequest);
    }
    match request.uri().scheme_str() {
        None | Some("http" | "https") => None,
        Some(_) => Some(ApiError::BadRequest),
    }
}

/// Whether a request's `Transfer-Encoding` lines say exactly `chunked`.
fn is_chunked_only(values: &[&axum::http::HeaderValue]) -> bool {
    matches!(values, [one] if one.to_str().is_ok_and(|v| v.trim().eq_ignore_ascii_case("chunked")))
}

/// The request head's size as sent: the request line and every header
/// field (`name: value` and its line end). hyper's buffer limit is checked
/// only while a head is still incomplete, so a large head that arrives in
/// one read would pass it: this is the limit itself.
fn head_length(request: &Request) -> usize {
    let line = request.method().as_str().len() + uri_length(request) + " HTTP/1.1\r\n".len() + 1;
    request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + ": \r\n".len())
        .fold(line + 2, usize::saturating_add)
}

fn uri_length(request: &Request) -> usize {
    request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len())
}

async fn serve_connection(
    stream: TcpStream,
    service: TowerToHyperService<Router>,
    limits: ServerLimits,
    mut stop: watch::Receiver<bool>,
) {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head_timeout)
        .max_buf_size(limits.max_head_bytes.max(8192));
    let mut connection =
        builder.serve_connection(TokioIo::new(JsonHttpErrors::new(stream)), service);
    let finished = tokio::select! {
        finished = &mut connection => finished,
        () = stopped(&mut stop) => {
            Pin::new(&mut connection).graceful_shutdown();
            (&mut connection).await
        }
    };
    let Err(error) = finished else {
        return;
    };
    if error.is_timeout() {
        // A head was started but not finished in time: answer 408. An idle
        // keep-alive connection (nothing read) is simply closed.
        let parts = connection.into_parts();
        if !parts.read_buf.is_empty() {
            let mut stream = parts.io.into_inner().inner;
            let answer = raw_error_response(&ApiError::RequestTimeout);
            let _ = tokio::time::timeout(Duration::from_secs(1), async {
                stream.write_all(&answer).await?;
                stream.shutdown().await
            })
            .await;
        }
    } else {
        tracing::debug!(%error, "connection ended with an error");
    }
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM: the binaries' shutdown signal.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT received, shutting down"),
        () = terminate => tracing::info!("SIGTERM received, shutting down"),
    }
}

/// Resolves once the listener is shutting down.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // An error means the listener is gone: that is a stop as well.
    let _ = stop.wait_for(|stopping| *stopping).await;
}

/// An HTTP/1.1 response carrying `error`'s JSON body, ending the connection.
fn raw_error_response(error: &ApiError) -> Vec<u8> {
    let status = error.status();
    let body = error.body().to_string();
    format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{body}",
        status.as_str(),
        status.canonical_reason().unwrap_or(""),
        body.len(),
    )
    .into_bytes()
}

/// The error hyper answers by itself when it cannot parse a request: a bare
/// head with status 400, 414 or 431, no body and no content type (every
/// answer of the routers carries a JSON or HTML body with its type).
fn hyper_error(head: &[u8]) -> Option<ApiError> {
    if !head.starts_with(b"HTTP/1.") {
        return None;
    }
    let mut headers = [httparse::EMPTY_HEADER; 8];
    let mut response = httparse::Response::new(&mut headers);
    let Ok(httparse::Status::Complete(length)) = response.parse(head) else {
        return None;
    };
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    };
    let bare = length == head.len()
        && header("content-type").is_none()
        && header("content-length").is_none_or(|v| v == b"0");
    if !bare {
        return None;
    }
    match StatusCode::from_u16(response.code?).ok()? {
        StatusCode::BAD_REQUEST => Some(ApiError::BadRequest),
        StatusCode::URI_TOO_LONG => Some(ApiError::UriTooLong {
            limit: ServerLimits::default().max_uri_bytes,
        }),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => Some(ApiError::HeaderFieldsTooLarge),
        StatusCode::REQUEST_TIMEOUT => Some(ApiError::RequestTimeout),
        _ => None,
    }
}

/// A connection whose writes pass through unchanged, except hyper's own
/// bare error answers, which become the service's JSON error body.
///
/// hyper writes such an answer as one head-only write just before it closes
/// the connection; this wrapper does not forward vectored writes, so every
/// response head reaches [`AsyncWrite::poll_write`] whole.
pub(crate) struct JsonHttpErrors<T> {
    inner: T,
    /// A rewritten answer and how much of it is written.
    pending: Option<(Vec<u8>, usize)>,
    /// The request head being received (until it is whole), to tell which
    /// of hyper's bare 400s is about a body framing the service does not
    /// take (then the answer is 501).
    head: Option<Vec<u8>>,
    /// Whether the last request head named such a framing.
    unsupported_framing: bool,
}

impl<T> JsonHttpErrors<T> {
    /// Wraps a connection.
    pub(crate) fn new(inner: T) -> JsonHttpErrors<T> {
        JsonHttpErrors {
            inner,
            pending: None,
            head: Some(Vec::new()),
            unsupported_framing: false,
        }
    }

    /// Follows the bytes of a request head as they arrive; once it is
    /// whole, notes whether it frames its body other than by
    /// `Content-Length` or exactly `chunked`.
    fn sniff(&mut self, received: &[u8]) {
        let Some(head) = self.head.as_mut() else {
            return;
        };
        head.extend_from_slice(received);
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(head) {
            Ok(httparse::Status::Complete(_)) => {
                let encodings: Vec<&[u8]> = request
                    .headers
                    .iter()
                    .filter(|h| h.name.eq_ignore_ascii_case("transfer-encoding"))
                    .map(|h| h.value)
                    .collect();
                self.unsupported_framing = !encodings.is_empty()
                    && !matches!(encodings[..], [one] if one.trim_ascii().eq_ignore_ascii_case(b"chunked"));
                self.head = None;
            }
            Ok(httparse::Status::Partial) if head.len() <= MAX_SNIFFED_HEAD => {}
            // Too long or not HTTP: hyper answers it by itself.
            _ => self.head = None,
        }
    }
}

/// Most bytes of a request head followed (hyper refuses larger heads).
const MAX_SNIFFED_HEAD: usize = 64 * 1024;

impl<T: AsyncWrite + Unpin> JsonHttpErrors<T> {
    /// Writes what is left of a rewritten answer.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, written)) = &mut self.pending {
            if *written == bytes.len() {
                self.pending = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for JsonHttpErrors<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = ready!(Pin::new(&mut self.inner).poll_read(cx, buf));
        if read.is_ok() && self.head.is_some() {
            let received = buf.filled()[before..].to_vec();
            self.sniff(&received);
        }
        Poll::Ready(read)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for JsonHttpErrors<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        if let Some(error) = hyper_error(buf) {
            let error = match error {
                ApiError::BadRequest if self.unsupported_framing => ApiError::NotImplemented,
                error => error,
            };
            self.pending = Some((raw_error_response(&error), 0));
            // The bytes are taken: what is left is written on flush.
            if let Poll::Ready(Err(e)) = self.poll_pending(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        if buf.starts_with(b"HTTP/1.") {
            // A response starts: the next bytes received are a new head.
            self.head = Some(Vec::new());
            self.unsupported_framing = false;
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    /// Vectored writes pass through (so hyper writes a body's bytes where
    /// they are, rather than copying them into its buffer first); a first
    /// buffer that is one of hyper's own error answers, or starts a
    /// response, goes the way of `poll_write`.
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        if let Some(first) = bufs.iter().find(|b| !b.is_empty()) {
            if hyper_error(first).is_some() {
                return self.poll_write(cx, first);
            }
            if first.starts_with(b"HTTP/1.") {
                self.head = Some(Vec::new());
                self.unsupported_framing = false;
            }
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_bare_error_heads_are_recognised_and_answers_of_the_routers_are_not() {
        let bare = |status: &str| {
            format!(
                "HTTP/1.1 {status}\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 12:00:00 GMT\r\n\r\n"
            )
        };
        assert!(matches!(
            hyper_error(bare("400 Bad Request").as_bytes()),
            Some(ApiError::BadRequest)
        ));
        assert!(matches!(
            hyper_error(bare("431 Request Header Fields Too Large").as_bytes()),
            Some(ApiError::HeaderFieldsTooLarge)
        ));
        assert!(matches!(
            hyper_error(bare("414 URI Too Long").as_bytes()),
            Some(ApiError::UriTooLong { .. })
        ));
        assert!(hyper_error(bare("200 OK").as_bytes()).is_none());
        assert!(hyper_error(bare("404 Not Found").as_bytes()).is_none());
        let json = "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        assert!(hyper_error(json.as_bytes()).is_none());
        assert!(hyper_error(b"{\"error\": 1}").is_none());
    }

    #[test]
    fn a_raw_error_response_is_http_with_the_json_error_body() {
        let bytes = raw_error_response(&ApiError::RequestTimeout);
        let text = String::from_utf8(bytes).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 408 Request Timeout\r\n"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"]["code"], "request_timeout");
    }
}
