//! # freedom-tlog
//!
//! The specifications Freedom Fund's log follows, and nothing else: what a
//! reader's verifier (`freedom-verify`) and a witness (`freedom-witness`)
//! need to check the log, without the service's record rules, stores or
//! scanner. The service (`freedom-shared`) builds its log on these.
//!
//! - [`json`]: reading a JSON document exactly (every member in order,
//!   duplicates kept, numbers as written), with bounded nesting;
//! - [`canonical`]: RFC 8785 canonical JSON, the log's leaf bytes;
//! - [`merkle`]: the RFC 9162 Merkle Tree Hash, leaf hashes, the append
//!   frontier;
//! - [`note`]: signed notes (c2sp.org/signed-note) with Ed25519 keys;
//! - [`checkpoint`]: the signed tree head (c2sp.org/tlog-checkpoint);
//! - [`tiles`]: hash tiles and entry bundles (c2sp.org/tlog-tiles);
//! - [`subtree`], [`proof`]: RFC 9162 inclusion and consistency proofs from
//!   the tiles, their verification, and `.tlog-proof` files
//!   (c2sp.org/tlog-proof);
//! - [`cosignature`]: witness cosignatures (c2sp.org/tlog-cosignature);
//! - [`policy`]: witness policies and quorums (c2sp.org/tlog-policy);
//! - [`witness`]: the witness protocol's messages (c2sp.org/tlog-witness);
//! - `strategies` (feature `strategies`): proptest strategies for JSON
//!   documents, for other crates' property tests.

#![deny(unreachable_pub)]

pub mod canonical;
pub mod checkpoint;
pub mod cosignature;
pub mod json;
pub mod merkle;
pub mod note;
pub mod policy;
pub mod proof;
#[cfg(any(test, feature = "strategies"))]
pub mod strategies;
pub mod subtree;
pub mod tiles;
pub mod witness;
