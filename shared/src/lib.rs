//! # freedom-shared
//!
//! The common crate of Freedom Fund's two functions (fund and scanner) and of
//! the local runner. Everything the functions decide lives here; the handlers
//! only translate HTTP.
//!
//! With its default features the crate is the **domain** alone: no async
//! runtime, HTTP client, database, web framework or cloud SDK.
//!
//! - [`clock`]: where "now" comes from (injected in tests), and the one way
//!   instants are written.
//! - [`json`], [`canonical`], [`merkle`]: from [`freedom_tlog`], the crate
//!   of the log's specifications: reading bodies exactly (duplicate keys
//!   kept, numbers as text), RFC 8785 canonical JSON (the ledger's leaf
//!   bytes), the RFC 9162 Merkle Tree Hash and the append frontier.
//! - [`record`]: snapshot and decision records, parsed with every contract
//!   rule, and the sensitive-content guard (`record::guard`).
//! - [`tlog`]: the same tree as a C2SP transparency log: the formats of
//!   signed notes, checkpoints, tiles, inclusion and consistency proofs
//!   (from [`freedom_tlog`]), the default origin and the log's URL prefix.
//! - [`ports`]: what the use cases need from the outside, as traits: the
//!   ledger store (cut by reader), the scan store (the scanner's lock and
//!   state), the event sink, the log signer's memory; and the conformance
//!   suites every adapter runs (feature `conformance`).
//! - [`analytics`]: the dashboard's formulas as one resumable fold (TWR net
//!   of flows, drawdown, volatility, Sharpe, Sortino, the trading-day window).
//! - [`service`]: the use cases, each owning its store: the ledger (append
//!   and pages), the log, the dashboard read model, the exports, and the
//!   per-head cache with single flight.
//! - [`scan`]: the scanner's domain: checks, fixed paper experiments, state
//!   and report.
//! - [`config`]: configuration from the environment, secrets wrapped.
//! - [`errors`]: an error's cause chain as one line, for logs and start-up.
//!
//! The **adapters**, each behind a cargo feature, so a binary links only
//! what it uses:
//!
//! - `adapters::outbound` (`outbound`): the one outbound HTTP client.
//! - `adapters::kv_rest` (`kv`): the KV REST store (Upstash protocol):
//!   client, ledger store, scan store.
//! - `adapters::embedded` (`embedded`): the embedded store (SQLite):
//!   ledger store, scan store.
//! - `adapters::eventbridge` (`eventbridge`): the event sink on EventBridge.
//! - `adapters::stores`: choosing the stores from configuration.
//! - [`web`] (`web`): the functions' HTTP side on axum: the API error and
//!   its one mapping to HTTP, query parameters, the bearer check, ETags; and
//!   `web::listener` (`listener`), the hardened local HTTP listener.

#![deny(unreachable_pub)]
// Each adapter and use case is behind a feature; with only some features on,
// the crate-private helpers that serve the others are unused, by design.
#![cfg_attr(
    not(all(
        feature = "scanner",
        feature = "providers",
        feature = "web",
        feature = "kv",
        feature = "embedded",
        feature = "conformance"
    )),
    allow(dead_code, unused_imports)
)]

pub mod adapters;
pub use freedom_tlog::canonical;
pub(crate) use freedom_tlog::json;
pub use freedom_tlog::merkle;
pub mod analytics;
pub mod clock;
pub mod config;
pub mod errors;
#[cfg(feature = "lambda")]
pub mod lambda;
pub mod ports;
pub mod record;
pub mod scan;
pub mod service;
pub mod tlog;
#[cfg(feature = "web")]
pub mod web;

pub use record::SCHEMA_VERSION;
pub(crate) use scan::{SCANNER_MODE, SCANNER_VERSION};
