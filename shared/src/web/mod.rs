//! The functions' HTTP side on axum (feature `web`): how the domain's
//! answers and errors become HTTP, in one place for both functions.
//!
//! - `error`: [`ApiError`], every error a request can end in, and its one
//!   mapping to a status, a stable code and the JSON error body.
//! - `query`: strict query parameters ([`QueryParams`]).
//! - `auth`: the bearer check of the write endpoints ([`authorize`]).
//! - `etag`: the root hash as ETag, and `304` ([`with_etag`]).
//! - `encoding`: content negotiation, bodies compressed once, a tag per
//!   representation ([`compress_answers`]).
//! - `limits`: the HTTP layer's limits ([`ServerLimits`]).
//! - `panics`: a handler that panics answers `500 internal_error`
//!   ([`catch_panics`]).
//! - `listener` (feature `listener`): the hardened local HTTP/1.1 listener
//!   freedom-local serves on.

pub(crate) mod auth;
pub(crate) mod encoding;
pub use encoding::{Effort, Encoded, brotli_at, compress_answers, encoded_answer, gzip_at};
pub(crate) mod error;
pub(crate) mod etag;
pub(crate) mod limits;
#[cfg(feature = "listener")]
pub(crate) mod listener;
#[cfg(feature = "listener")]
pub use listener::serve;
#[cfg(feature = "listener")]
pub use listener::shutdown_signal;
pub(crate) mod panics;
pub(crate) mod query;

pub use auth::authorize;
pub use error::{ApiError, not_found, store_not_configured_app};
pub use etag::{client_has, client_tags, read_answer, with_content_etag, with_etag};
pub use limits::ServerLimits;
pub use panics::catch_panics;
pub use query::QueryParams;
