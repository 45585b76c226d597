//! The port line: what the domain needs from the outside world, as traits.
//! Adapters (in [`crate::adapters`], each behind a cargo feature) implement
//! them; the use cases ([`crate::service`], and the scanner's run) only
//! ever see the traits. No port imports a use case.
//!
//! - `ledger_store`: the append-only Merkle ledger ([`LedgerStore`]).
//! - `providers`: the scanner's market data, token risk and chain
//!   accounts (`providers::MarketData`, `providers::TokenRisk`, `providers::ChainAccounts`).
//! - `scan_store`: the scanner's run lock and fenced state ([`ScanStore`]).
//! - `event_sink`: events to outside consumers ([`EventSink`]), best effort.
//! - `signer_memory`: the largest checkpoint the log's signer has signed,
//!   kept apart from the ledger ([`SignerMemory`]).
//! - `witness_client`: how the log reaches a witness ([`witness_client::WitnessClient`]).
//! - `witness_memory`: what the log keeps of its witnesses: the size each
//!   last cosigned, the newest witnessed checkpoint and the witnessed
//!   history ([`WitnessMemory`]).
//! - `conformance` (feature `conformance`): the one suite every store adapter
//!   passes.

pub(crate) mod event_sink;
pub use event_sink::{EventSink, Events, NoEvents, OutsideEvent, Recorded, no_events};
pub(crate) mod ledger_store;
pub use ledger_store::{
    AppendOutcome, Candidate, Entry, EntryRun, HeadReads, LatestSnapshots, LedgerAppend,
    LedgerPages, LedgerStore, Page, PageQuery, SeriesReads, StoreError, TileRead, TileReads,
};
pub(crate) mod providers;
pub(crate) mod scan_store;
pub use scan_store::{LockToken, ScanStore};
pub(crate) mod signer_memory;
pub use signer_memory::{InProcess, SignerMemory};
pub(crate) mod witness_client;
pub use witness_client::{WitnessClient, WitnessReply};
pub(crate) mod witness_memory;
pub use witness_memory::{InProcessWitnesses, KeptCheckpoint, WitnessMemory, WitnessState};

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
