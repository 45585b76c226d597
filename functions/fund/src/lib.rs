//! # fund
//!
//! The fund function: `/api/freedom-fund`, the page at `/`, the decisions
//! feed and the transparency log. One router factory, [`app`], serves the
//! local listener, the tests and (with Lambda packaging) the Lambda
//! runtime. Handlers are thin: they translate HTTP to the shared crate's
//! use cases ([`freedom_shared::service`]) and their errors back through
//! [`freedom_shared::web::ApiError`].
//!
//! The modules read top-down; each uses only those below it:
//!
//! - [`lambda`]: the same router under AWS Lambda.
//! - [`compose`]: the composition root the Lambda start-up and
//!   freedom-local share: the log assembled once, the use cases on the
//!   same store.
//! - `router`: every route, and the dispatch of `GET /api/freedom-fund`
//!   by view.
//! - [`page`]: the public page at `GET /`, server-rendered HTML.
//! - [`contract`]: the contract view and the OpenAPI 3.1 document, made
//!   from the routes' tables and answer types.
//! - `routes`: one room per view, each with its parameter table, typed
//!   query, handler and answer type: the dashboard; the ledger (page,
//!   append); the log (proofs, checkpoint, tiles, policy, cosign); the
//!   exports (series, feed).
//! - [`paths`], [`state`]: the public paths and media types, and what the
//!   handlers share ([`AppState`]).

pub mod compose;
pub mod contract;
#[cfg(feature = "lambda")]
pub mod lambda;
pub mod page;
pub mod paths;
mod router;
mod routes;
pub mod state;

pub use paths::FUND_PATH;
pub use router::{app, routes};
pub use state::AppState;
