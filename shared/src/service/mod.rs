//! The use cases: the floor between the specifications (records, the
//! Merkle tree, the transparency log's formats, the analytics) and the
//! edge (HTTP handlers, Lambda, freedom-local). Each use case owns the
//! store it reads through a port and does its own side effects; handlers
//! hold use cases, never stores, and only translate HTTP to calls and back.
//!
//! - `ledger`: append a record from a request body (and publish its
//!   event); read ledger pages.
//! - `log`: the ledger as a C2SP transparency log: the checkpoint, tiles,
//!   proofs, and never signing two histories.
//! - `dashboard`: the dashboard read model by period, since inception
//!   from monthly roll-ups.
//! - `exports`: a series as CSV or JSON pages from any cursor, and the
//!   Atom feed of decisions.
//! - `head_cache`: answers kept per ledger head, each computed once
//!   however many ask at the same time (single flight).
//! - `page`: the public page's data (dashboard, newest entries, how to
//!   verify), its HTML kept per head; `contract`: the contract view's
//!   registrations, its JSON kept per head.
//! - `scan` (feature `scanner`): one scanner run under the scan store's
//!   lock, asking the providers through their ports.
//! - `read`: what a read use case takes (the client's tags) and answers
//!   (not modified, or the bytes); `encoded`: those bytes, compressed
//!   at most once per coding.

pub(crate) mod contract;
pub use contract::*;
pub(crate) mod dashboard;
pub use dashboard::*;
pub(crate) mod encoded;
pub use encoded::Coding;
pub use encoded::Effort;
pub use encoded::Encoded;
pub use encoded::brotli;
pub use encoded::brotli_at;
pub use encoded::gzip;
pub use encoded::gzip_at;
pub(crate) mod exports;
pub use exports::*;
pub(crate) mod head_cache;
pub(crate) mod ledger;
pub use ledger::AppendError;
pub use ledger::AppendStatus;
pub use ledger::BODY_TIMEOUT;
pub use ledger::DEFAULT_PAGE_LIMIT;
pub use ledger::Ledger;
pub use ledger::MAX_BODY_BYTES;
pub use ledger::MAX_PAGE_LIMIT;
pub use ledger::Receipt;
pub(crate) mod log;
pub use log::CosignRound;
pub use log::CustodyStatus;
pub use log::Log;
pub use log::LogError;
pub use log::REFUSED_TO_SIGN;
pub use log::SignedCheckpoint;
pub use log::TileBody;
pub use log::WITNESS_ALARM;
pub use log::WITNESS_TIMEOUT;
pub use log::WitnessOutcome;
pub use log::WitnessSignature;
pub use log::Witnessed;
pub(crate) mod page;
pub use page::LATEST_ENTRIES;
pub use page::LatestEntry;
pub use page::PageData;
pub use page::Pages;
pub use page::Verification;
pub use page::Witnesses;
pub(crate) mod read;
pub use read::Answer;
pub use read::ClientTags;
pub use read::Read;
#[cfg(feature = "scanner")]
pub(crate) mod scan;
#[cfg(feature = "scanner")]
pub use scan::Providers;
#[cfg(feature = "scanner")]
pub use scan::RunError;
#[cfg(feature = "scanner")]
pub use scan::ScanRunner;
