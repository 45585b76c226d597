//! The ledger published as a transparency log to the C2SP standard, so
//! that the standard tooling can read and verify it:
//!
//! - [`note`]: signed notes (c2sp.org/signed-note) with Ed25519 keys;
//! - [`checkpoint`]: the signed tree head (c2sp.org/tlog-checkpoint);
//! - [`tiles`]: hash tiles and entry bundles (c2sp.org/tlog-tiles);
//! - [`proof`]: RFC 9162 inclusion and consistency proofs from the tiles,
//!   their verification, and `.tlog-proof` files (c2sp.org/tlog-proof).
//!
//! [`Log`] is the use cases on a ledger store: the checkpoint, a tile, a
//! proof. A proof reads the head, then exactly the tiles its hashes live
//! in (two store reads, O(log n) hashes); a tile is one read.

pub mod checkpoint;
pub mod note;
pub mod proof;
pub mod tiles;

use crate::merkle::Head;
use crate::ports::ledger_store::{LedgerStore, StoreError};
use checkpoint::CheckpointSigner;
use note::{NoteError, SigningKey, VerifierKey};
use proof::{Consistency, Inclusion, ProofError, TileHashes};
use std::sync::Arc;
use tiles::{TileId, TileKind, TilePath};

/// The log's origin when none is configured.
pub const DEFAULT_ORIGIN: &str = "freedom-fund.local/log";
/// Where the log's static resources are served (the tlog-tiles prefix).
pub const LOG_PREFIX: &str = "/log";

/// Why a log request cannot be answered.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// No signing key is configured: checkpoints and proofs cannot be
    /// signed.
    #[error(
        "the log has no signing key configured, so it cannot sign checkpoints or proofs; tiles and every other view still work"
    )]
    SigningUnavailable,
    /// The tile is not in the tree (beyond it, or not at that width).
    #[error("no such tile in the log's tree")]
    NoSuchTile,
    /// A parameter names a leaf or size outside the tree.
    #[error("{message}")]
    OutOfRange {
        /// The query parameter at fault.
        parameter: &'static str,
        /// What is wrong, in words.
        message: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<ProofError> for LogError {
    /// The ranges are checked before a proof is computed, so a proof that
    /// fails has found the store's tiles inconsistent with its head.
    fn from(error: ProofError) -> LogError {
        LogError::Store(StoreError::Corrupt(error.to_string()))
    }
}

/// The log's identity: its origin and, when configured, its signing key.
#[derive(Debug)]
pub struct Log {
    origin: String,
    signer: Option<CheckpointSigner>,
}

/// A signed checkpoint and the head it signs.
#[derive(Debug, Clone)]
pub struct SignedCheckpoint {
    /// The head signed.
    pub head: Head,
    /// The signed note text.
    pub note: Arc<str>,
}

/// A tile's bytes and whether they can never change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileBody {
    /// Hashes (32 bytes each) or an entry bundle.
    pub bytes: Vec<u8>,
    /// A full tile (256 wide) never changes; a partial one is replaced by
    /// wider ones as the log grows.
    pub immutable: bool,
}

impl Log {
    /// The log named `origin`, signing with `key` when there is one (its
    /// name must be the origin).
    pub fn new(origin: &str, key: Option<SigningKey>) -> Result<Log, NoteError> {
        if let Some(key) = &key
            && key.name() != origin
        {
            return Err(NoteError::BadKey("the key's name is not the log's origin"));
        }
        Ok(Log {
            origin: origin.to_owned(),
            signer: key.map(CheckpointSigner::new),
        })
    }

    /// The log's origin (the first line of its checkpoints).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The key readers verify checkpoints with, when the log signs.
    pub fn verifier_key(&self) -> Option<VerifierKey> {
        self.signer.as_ref().map(CheckpointSigner::verifier)
    }

    /// The texts of the signing key that no record may carry.
    pub fn secret_texts(&self) -> Vec<String> {
        self.signer
            .as_ref()
            .map(CheckpointSigner::secret_texts)
            .unwrap_or_default()
    }

    fn signer(&self) -> Result<&CheckpointSigner, LogError> {
        self.signer.as_ref().ok_or(LogError::SigningUnavailable)
    }

    /// The signed checkpoint of the current head (one store read; signed
    /// once per head).
    pub async fn checkpoint(&self, store: &dyn LedgerStore) -> Result<SignedCheckpoint, LogError> {
        let signer = self.signer()?;
        let head = store.head().await?;
        Ok(SignedCheckpoint {
            head,
            note: signer.sign(head),
        })
    }

    /// The tile `path` names, at the current head: one store read. A tile
    /// the tree does not have at that width is [`LogError::NoSuchTile`].
    pub async fn tile(
        &self,
        store: &dyn LedgerStore,
        path: &TilePath,
    ) -> Result<TileBody, LogError> {
        let width = path.width();
        let (size, bytes) = match path.kind {
            TileKind::Hashes(level) => {
                let id = TileId {
                    level,
                    index: path.index,
                };
                let read = store.tiles(&[id]).await?;
                if !path.exists_in(read.head.size) {
                    return Err(LogError::NoSuchTile);
                }
                let hashes = read
                    .tiles
                    .get(&id)
                    .and_then(|hashes| hashes.get(..width as usize))
                    .ok_or(ProofError::MissingTile {
                        level,
                        index: path.index,
                    })?;
                (read.head.size, hashes.iter().flat_map(|h| h.0).collect())
            }
            TileKind::Entries => {
                let first_seq = path
                    .index
                    .checked_mul(tiles::TILE_WIDTH)
                    .and_then(|first| first.checked_add(1))
                    .ok_or(LogError::NoSuchTile)?;
                let run = store.entry_run(first_seq, width).await?;
                if !path.exists_in(run.head.size) {
                    return Err(LogError::NoSuchTile);
                }
                if run.entries.len() as u64 != width {
                    return Err(StoreError::Corrupt(format!(
                        "entry bundle {} is missing records below the head",
                        path.index
                    ))
                    .into());
                }
                let bundle =
                    tiles::entry_bundle(run.entries.iter().map(|e| e.canonical.as_bytes()))
                        .ok_or_else(|| {
                            StoreError::Corrupt("a record is longer than an entry can carry".into())
                        })?;
                (run.head.size, bundle)
            }
        };
        Ok(TileBody {
            bytes,
            immutable: path.partial.is_none() && path.exists_in(size),
        })
    }

    /// The inclusion proof of the record `seq` in the tree of `size` leaves
    /// (default: the head), and the signed checkpoint of that tree.
    pub async fn inclusion(
        &self,
        store: &dyn LedgerStore,
        seq: u64,
        size: Option<u64>,
    ) -> Result<(Inclusion, Arc<str>), LogError> {
        let signer = self.signer()?;
        let size = tree_size(store, size, "size").await?;
        if seq == 0 || seq > size {
            return Err(LogError::OutOfRange {
                parameter: "seq",
                message: format!("seq must be from 1 to the tree's size ({size})"),
            });
        }
        let planned = proof::inclusion_tiles(seq - 1, size)?;
        let read = store.tiles(&planned).await?;
        let proof = proof::inclusion(&mut TileHashes::new(&read.tiles), seq - 1, size)?;
        let note = signer.sign(Head {
            size,
            root_hash: proof.root,
        });
        Ok((proof, note))
    }

    /// The consistency proof from the tree of `from` leaves to that of `to`
    /// (default: the head), and the signed checkpoint of `to`.
    pub async fn consistency(
        &self,
        store: &dyn LedgerStore,
        from: u64,
        to: Option<u64>,
    ) -> Result<(Consistency, Arc<str>), LogError> {
        let signer = self.signer()?;
        let to = tree_size(store, to, "to").await?;
        if from > to {
            return Err(LogError::OutOfRange {
                parameter: "from",
                message: format!("from must be at most the newer size ({to})"),
            });
        }
        let planned = proof::consistency_tiles(from, to)?;
        let read = store.tiles(&planned).await?;
        let proof = proof::consistency(&mut TileHashes::new(&read.tiles), from, to)?;
        let note = signer.sign(Head {
            size: to,
            root_hash: proof.to_root,
        });
        Ok((proof, note))
    }
}

/// `requested` checked against the head, or the head's size.
async fn tree_size(
    store: &dyn LedgerStore,
    requested: Option<u64>,
    parameter: &'static str,
) -> Result<u64, LogError> {
    let head = store.head().await?;
    match requested {
        None => Ok(head.size),
        Some(size) if size <= head.size => Ok(size),
        Some(_) => Err(LogError::OutOfRange {
            parameter,
            message: format!("{parameter} must be at most the log's size ({})", head.size),
        }),
    }
}
