//! The ledger's tree as a transparency log to the C2SP standard: the
//! specifications alone, so that the standard tooling can read and verify
//! it. Nothing here reads a store (the log use case is
//! [`crate::service::log`]):
//!
//! - [`note`]: signed notes (c2sp.org/signed-note) with Ed25519 keys;
//! - [`checkpoint`]: the signed tree head (c2sp.org/tlog-checkpoint);
//! - [`tiles`]: hash tiles and entry bundles (c2sp.org/tlog-tiles);
//! - [`cosignature`]: witness cosignatures (c2sp.org/tlog-cosignature);
//! - [`policy`]: witness policies and quorums (c2sp.org/tlog-policy);
//! - [`witness`]: the witness protocol's messages (c2sp.org/tlog-witness);
//! - [`proof`]: RFC 9162 inclusion and consistency proofs from the tiles,
//!   their verification, and `.tlog-proof` files (c2sp.org/tlog-proof).

pub mod checkpoint;
pub mod cosignature;
pub mod note;
pub mod policy;
pub mod proof;
pub mod subtree;
pub mod tiles;
pub mod witness;

/// The log's origin when none is configured.
pub const DEFAULT_ORIGIN: &str = "freedom-fund.local/log";
/// Where the log's static resources are served (the tlog-tiles prefix).
pub const LOG_PREFIX: &str = "/log";
