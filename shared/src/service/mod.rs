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
pub use encoded::{Effort, Encoded, brotli_at, gzip_at};
pub(crate) mod exports;
pub use exports::*;
pub(crate) mod head_cache;
pub(crate) mod ledger;
pub use ledger::{
    AppendStatus, BODY_TIMEOUT, DEFAULT_PAGE_LIMIT, EntryRecording, Ledger, MAX_BODY_BYTES,
    MAX_PAGE_LIMIT, Receipt, WitnessedPage,
};
pub(crate) mod log;
pub use log::{
    CONSISTENCY_EXTRA, CosignRound, CosignSchedule, CustodyStatus, Log, LogError,
    RECORDING_WINDOW_SECONDS, REFUSED_TO_SIGN, Recorded, UNWITNESSED_CUSTODY, WITNESS_ALARM,
    WITNESS_TIMEOUT_SECONDS, WitnessTable, WitnessedAt, WitnessedInclusion, WitnessedTimes,
    lag_seconds,
};
pub(crate) mod page;
pub use page::{LATEST_ENTRIES, LatestEntry, PageData, Pages, Verification, Witnesses};
pub(crate) mod read;
#[cfg(feature = "scanner")]
pub(crate) mod scan;
#[cfg(feature = "scanner")]
pub(crate) use scan::Providers;
#[cfg(feature = "scanner")]
pub use scan::RunError;
#[cfg(feature = "scanner")]
pub use scan::ScanRunner;
