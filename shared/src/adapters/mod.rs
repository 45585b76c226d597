//! The adapters: the ports' implementations at the edge, each behind a cargo
//! feature so a binary links only the ones it uses.
//!
//! - `outbound` (`outbound`): the one outbound HTTP client every outside
//!   call goes through (the KV REST store, the scanner's providers), and
//!   `witness_http`, the log's witnesses over it; `providers`
//!   (`providers`): the scanner's DexScreener, RugCheck and Solana RPC
//!   clients over it.
//! - `kv_rest` (`kv`): the production store, Redis behind the Upstash REST
//!   protocol: its client, the ledger store and the scan store.
//! - `embedded` (`embedded`): the local store, SQLite in the data dir: the
//!   ledger store and the scan store, on one connection helper.
//! - `eventbridge` (`eventbridge`): the event sink on Amazon EventBridge;
//!   `events`: the sink a process uses, chosen from configuration.
//! - `stores`: which stores a process uses, chosen once at start-up from
//!   the adapters compiled in.

#[cfg(feature = "embedded")]
pub(crate) mod embedded;
#[cfg(feature = "embedded")]
pub use embedded::*;
#[cfg(feature = "eventbridge")]
pub(crate) mod eventbridge;
#[cfg(feature = "eventbridge")]
pub(crate) mod events;
#[cfg(feature = "eventbridge")]
pub use events::from_env;
#[cfg(feature = "kv")]
pub(crate) mod kv_rest;
#[cfg(feature = "kv")]
pub use kv_rest::*;
#[cfg(feature = "outbound")]
pub(crate) mod outbound;
#[cfg(feature = "outbound")]
pub use outbound::OutboundError;
#[cfg(feature = "providers")]
pub(crate) mod providers;
#[cfg(feature = "providers")]
pub use providers::*;
pub(crate) mod stores;
pub use stores::Stores;
#[cfg(feature = "outbound")]
pub(crate) mod witness_http;
#[cfg(feature = "outbound")]
pub use witness_http::HttpWitnesses;
