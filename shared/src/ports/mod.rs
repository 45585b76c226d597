//! The port line: what the domain needs from the outside world, as traits.
//! Adapters (in [`crate::adapters`], each behind a cargo feature) implement
//! them; the use cases ([`crate::service`], and the scanner's run) only
//! ever see the traits. No port imports a use case.
//!
//! - [`ledger_store`]: the append-only Merkle ledger ([`LedgerStore`]).
//! - [`providers`]: the scanner's market data, token risk and chain
//!   accounts ([`providers::MarketData`], [`providers::TokenRisk`], [`providers::ChainAccounts`]).
//! - [`scan_store`]: the scanner's run lock and fenced state ([`ScanStore`]).
//! - [`event_sink`]: events to outside consumers ([`EventSink`]), best effort.
//! - [`signer_memory`]: the largest checkpoint the log's signer has signed,
//!   kept apart from the ledger ([`SignerMemory`]).
//! - [`witness_client`]: how the log reaches a witness ([`witness_client::WitnessClient`]).
//! - [`witness_memory`]: what the log keeps of its witnesses: the size each
//!   last cosigned and the newest witnessed checkpoint ([`WitnessMemory`]).
//! - `conformance` (feature `conformance`): the one suite every store adapter
//!   passes.

pub mod event_sink;
pub mod ledger_store;
pub mod providers;
pub mod scan_store;
pub mod signer_memory;
pub mod witness_client;
pub mod witness_memory;

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;

pub use event_sink::{EventSink, Events, OutsideEvent};
pub use ledger_store::{
    HeadReads, LedgerAppend, LedgerPages, LedgerStore, SeriesReads, StoreError, TileReads,
};
pub(crate) use scan_store::ScanStore;
pub use signer_memory::SignerMemory;
pub(crate) use witness_memory::WitnessMemory;
