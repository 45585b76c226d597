//! # freedom-shared
//!
//! The common crate of Freedom Fund's two functions (fund and scanner) and of
//! the local runner. Everything the functions decide lives here; the handlers
//! only translate HTTP.
//!
//! - [`clock`]: where "now" comes from (injected in tests).
//! - [`json`]: reading bodies exactly (duplicate keys kept, numbers as text).
//! - [`canonical`]: RFC 8785 canonical JSON, the ledger's leaf bytes.
//! - [`record`]: snapshot and decision records, parsed with every contract
//!   rule, and the sensitive-content guard ([`record::guard`]).
//! - [`merkle`]: RFC 9162 Merkle Tree Hash, leaf hashes, the append frontier.
//! - [`store`]: the storage port ([`store::LedgerStore`]), its embedded SQLite
//!   adapter, and the conformance suite every adapter runs.
//! - [`kv`]: the Upstash-protocol REST client of the production KV store.
//! - [`ledger`]: the append and read use cases on top of a store.
//! - [`analytics`]: the dashboard's formulas as pure functions (TWR net of flows,
//!   drawdown, volatility, Sharpe, Sortino, the trading-day window).
//! - [`dashboard`]: the dashboard read model: period, window, response.
//! - [`scanner`]: the scanner's checks, paper experiments, state and report.
//! - [`events`]: best-effort EventBridge events to outside consumers.
//! - [`http`]: the API error type and its one mapping to HTTP statuses and codes.
//! - [`config`]: configuration from the environment, secrets wrapped.
//! - [`server`]: the local HTTP listener, hardened against slow and hostile
//!   clients (timeouts, a connection cap, bounded shutdown, JSON errors).

pub mod analytics;
pub mod canonical;
pub mod clock;
pub mod config;
pub mod dashboard;
pub mod events;
pub mod http;
pub mod json;
pub mod kv;
pub mod ledger;
pub mod merkle;
pub mod record;
pub mod scanner;
pub mod server;
pub mod store;
#[cfg(test)]
mod test_support;

/// The fund interface's schema version (`schemaVersion`).
pub const SCHEMA_VERSION: u32 = 1;
/// The scanner's version string.
pub const SCANNER_VERSION: &str = "scanner-1.0";
/// The scanner's mode: it only ever runs paper experiments.
pub const SCANNER_MODE: &str = "paper";
