//! The port line: what the domain needs from the outside world, as traits.
//! Adapters (in [`crate::adapters`], each behind a cargo feature) implement
//! them; the use cases ([`crate::service`], and the scanner's run) only
//! ever see the traits. No port imports a use case.
//!
//! - `ledger_store`: the append-only Merkle ledger ([`LedgerStore`]).
//! - `providers`: the scanner's market data, token risk and chain
//!   accounts ([`providers::MarketData`], [`providers::TokenRisk`], [`providers::ChainAccounts`]).
//! - `scan_store`: the scanner's run lock and fenced state ([`ScanStore`]).
//! - `event_sink`: events to outside consumers ([`EventSink`]), best effort.
//! - `signer_memory`: the largest checkpoint the log's signer has signed,
//!   kept apart from the ledger ([`SignerMemory`]).
//! - `witness_client`: how the log reaches a witness ([`witness_client::WitnessClient`]).
//! - `witness_memory`: what the log keeps of its witnesses: the size each
//!   last cosigned and the newest witnessed checkpoint ([`WitnessMemory`]).
//! - `conformance` (feature `conformance`): the one suite every store adapter
//!   passes.

pub(crate) mod event_sink;
pub use event_sink::EventSink;
pub use event_sink::Events;
pub use event_sink::NoEvents;
pub use event_sink::OutsideEvent;
pub use event_sink::Recorded;
pub use event_sink::no_events;
pub(crate) mod ledger_store;
pub use ledger_store::AppendOutcome;
pub use ledger_store::Candidate;
pub use ledger_store::Entry;
pub use ledger_store::EntryRun;
pub use ledger_store::HeadReads;
pub use ledger_store::LatestSnapshots;
pub use ledger_store::LedgerAppend;
pub use ledger_store::LedgerPages;
pub use ledger_store::LedgerStore;
pub use ledger_store::MAX_PAGE_BYTES;
pub use ledger_store::PAGE_ENTRY_OVERHEAD_BYTES;
pub use ledger_store::Page;
pub use ledger_store::PageBuilder;
pub use ledger_store::PageQuery;
pub use ledger_store::Refusal;
pub use ledger_store::Rollup;
pub use ledger_store::SeriesReads;
pub use ledger_store::SeriesSince;
pub use ledger_store::SinceInception;
pub use ledger_store::StoreError;
pub use ledger_store::TileRead;
pub use ledger_store::TileReads;
pub use ledger_store::WindowEntries;
pub(crate) mod providers;
pub use providers::Accounts;
pub use providers::ChainAccounts;
pub use providers::Largest;
pub use providers::MarketData;
pub use providers::MarketQuotes;
pub use providers::ProviderError;
pub use providers::Received;
pub use providers::RiskAnswer;
pub use providers::TokenRisk;
pub(crate) mod scan_store;
pub use scan_store::LockToken;
pub use scan_store::ScanStore;
pub(crate) mod signer_memory;
pub use signer_memory::InProcess;
pub use signer_memory::SignerMemory;
pub(crate) mod witness_client;
pub use witness_client::WitnessClient;
pub use witness_client::WitnessReply;
pub(crate) mod witness_memory;
pub use witness_memory::InProcessWitnesses;
pub use witness_memory::WitnessMemory;
pub use witness_memory::WitnessState;

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
