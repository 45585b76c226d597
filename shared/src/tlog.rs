//! The ledger's tree as a transparency log to the C2SP standard: the
//! specifications themselves live in their own crate, [`freedom_tlog`]
//! (what a verifier and a witness use alone); this module names them where
//! the service's code has always found them, and holds what belongs to the
//! service: its default origin and where it serves the log. Nothing here
//! reads a store (the log use case is `crate::service::log`).

pub use freedom_tlog::{checkpoint, cosignature, note, policy, proof, tiles, witness};

/// The log's origin when none is configured.
pub const DEFAULT_ORIGIN: &str = "freedom-fund.local/log";
/// Where the log's static resources are served (the tlog-tiles prefix).
pub const LOG_PREFIX: &str = "/log";
