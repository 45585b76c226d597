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
//! - [`json`]: reading bodies exactly (duplicate keys kept, numbers as text).
//! - [`canonical`]: RFC 8785 canonical JSON, the ledger's leaf bytes.
//! - [`record`]: snapshot and decision records, parsed with every contract
//!   rule, and the sensitive-content guard ([`record::guard`]).
//! - [`merkle`]: RFC 9162 Merkle Tree Hash, leaf hashes, the append frontier.
//! - [`tlog`]: the same tree as a C2SP transparency log: signed
//!   checkpoints, tiles, inclusion and consistency proofs.
//! - [`ports`]: what the domain needs from the outside, as traits: the ledger
//!   store, the scan store (the scanner's lock and state), the event sink;
//!   and the conformance suite every store adapter runs (feature
//!   `conformance`).
//! - [`ledger`]: the append and read use cases on a ledger store.
//! - [`analytics`]: the dashboard's formulas as pure functions (TWR net of
//!   flows, drawdown, volatility, Sharpe, Sortino, the trading-day window).
//! - [`dashboard`]: the dashboard read model: period, window, response, cache.
//! - [`export`]: a series' every snapshot as CSV or JSON pages, and the
//!   Atom feed of the latest decisions.
//! - [`head_cache`]: answers kept per ledger head, each computed once
//!   however many ask at the same time (single flight).
//! - [`scan`]: the scanner's domain: checks, fixed paper experiments, state
//!   and report.
//! - [`config`]: configuration from the environment, secrets wrapped.
//! - [`errors`]: an error's cause chain as one line, for logs and start-up.
//!
//! The **adapters**, each behind a cargo feature, so a binary links only
//! what it uses:
//!
//! - [`adapters::outbound`] (`outbound`): the one outbound HTTP client.
//! - [`adapters::kv_rest`] (`kv`): the KV REST store (Upstash protocol):
//!   client, ledger store, scan store.
//! - [`adapters::embedded`] (`embedded`): the embedded store (SQLite):
//!   ledger store, scan store.
//! - [`adapters::eventbridge`] (`eventbridge`): the event sink on EventBridge.
//! - [`adapters::stores`]: choosing the stores from configuration.
//! - [`web`] (`web`): the functions' HTTP side on axum: the API error and
//!   its one mapping to HTTP, query parameters, the bearer check, ETags; and
//!   [`web::listener`] (`listener`), the hardened local HTTP listener.

pub mod adapters;
pub mod analytics;
pub mod canonical;
pub mod clock;
pub mod config;
pub mod dashboard;
pub mod errors;
pub mod export;
pub mod head_cache;
pub mod json;
pub mod ledger;
pub mod merkle;
pub mod ports;
pub mod record;
pub mod scan;
#[cfg(test)]
mod test_support;
pub mod tlog;
#[cfg(feature = "web")]
pub mod web;

/// The fund interface's schema version (`schemaVersion`).
pub const SCHEMA_VERSION: u32 = 1;
/// The scanner's version string.
pub const SCANNER_VERSION: &str = "scanner-1.0";
/// The scanner's mode: it only ever runs paper experiments.
pub const SCANNER_MODE: &str = "paper";
