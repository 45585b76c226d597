//! The ledger published as a transparency log to the C2SP standard, so
//! that the standard tooling can read and verify it:
//!
//! - [`note`]: signed notes (c2sp.org/signed-note) with Ed25519 keys;
//! - [`checkpoint`]: the signed tree head (c2sp.org/tlog-checkpoint);
//! - [`tiles`]: hash tiles and entry bundles (c2sp.org/tlog-tiles);
//! - [`proof`]: RFC 9162 inclusion and consistency proofs from the tiles,
//!   their verification, and `.tlog-proof` files (c2sp.org/tlog-proof).
//!
//! [`Log`] is the use cases on one ledger store: the checkpoint, a tile, a
//! proof. It never signs two histories: before signing a head it checks
//! that head extends the largest checkpoint it has signed, remembered
//! apart from the ledger ([`crate::ports::signer_memory`]; the check is the
//! `custody` module's). A proof reads the head, then the tiles its hashes live in that
//! the log's memo of upper subtrees does not hold (two store reads, O(log
//! n) hashes); it is tied to the stored head and verified before it is
//! signed or served. A tile is one read.

pub mod checkpoint;
mod custody;
pub mod note;
pub mod proof;
pub mod tiles;

use crate::merkle::{Digest, Head};
use crate::ports::event_sink::{Events, no_events};
use crate::ports::ledger_store::{LedgerStore, StoreError};
use crate::ports::signer_memory::{InProcess, SignerMemory};
use checkpoint::CheckpointSigner;
pub use custody::REFUSED_TO_SIGN;
use custody::{Custody, Refusal, Relation, Vouch};
use note::{NoteError, SigningKey, VerifierKey};
use proof::{Consistency, Inclusion, ProofError, SubtreeMemo, SubtreeSource};
use std::collections::BTreeMap;
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
    /// A parameter names a record or tree size the log does not have
    /// (yet): beyond its head.
    #[error("{message}")]
    BeyondLog {
        /// The query parameter at fault.
        parameter: &'static str,
        /// What is missing, in words, with the log's size.
        message: String,
    },
    /// Two parameters contradict each other (a leaf beyond the tree asked
    /// for, an older size above the newer).
    #[error("{message}")]
    OutOfRange {
        /// The query parameter at fault.
        parameter: &'static str,
        /// What is wrong, in words.
        message: String,
    },
    /// The ledger's head does not extend the largest checkpoint the log
    /// has signed (the store went back, was replaced, or forked): nothing
    /// is signed (a 500; the reason is logged and published).
    #[error("the log refuses to sign: {0}")]
    RefusedToSign(String),
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

/// The log's identity: its origin and, when configured, its signing key;
/// and the subtrees its proofs computed. One per store: under another
/// history it notices (a proof stops verifying), forgets and recomputes.
#[derive(Debug)]
pub struct Log {
    origin: String,
    signer: Option<CheckpointSigner>,
    memo: SubtreeMemo,
    custody: Custody,
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
            memo: SubtreeMemo::default(),
            custody: Custody::new(Arc::new(InProcess::default()), no_events()),
        })
    }

    /// The same log remembering the largest checkpoint it signed in
    /// `memory` (by default it remembers only while the process lives).
    pub fn with_memory(mut self, memory: Arc<dyn SignerMemory>) -> Log {
        self.custody = self.custody.with_memory(memory);
        self
    }

    /// The same log publishing a refusal to sign to `events`.
    pub fn with_events(mut self, events: Events) -> Log {
        self.custody = self.custody.with_events(events);
        self
    }

    /// Where the log remembers the largest checkpoint it signed, in words.
    pub fn memory(&self) -> String {
        self.custody.describe()
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

    /// The signed checkpoint of the current head: one store read, and at a
    /// new head one tile read more to check it extends what the log signed
    /// before (then the signer's memory is written); signed once per head.
    pub async fn checkpoint(&self, store: &dyn LedgerStore) -> Result<SignedCheckpoint, LogError> {
        let signer = self.signer()?;
        let head = store.head().await?;
        self.vouched(store, head, Nothing { head }).await?;
        Ok(SignedCheckpoint {
            head,
            note: signer.sign(head),
        })
    }

    /// The signed checkpoint of `head`, a head `store` has (or had): signed
    /// only once the store's current head is vouched for and `head` proved
    /// a prefix of it (one tile read for both).
    pub async fn signed_checkpoint(
        &self,
        store: &dyn LedgerStore,
        head: Head,
    ) -> Result<Arc<str>, LogError> {
        let signer = self.signer()?;
        let current = store.head().await?;
        if head.size > current.size {
            return Err(StoreError::Corrupt("a head beyond the ledger's".into()).into());
        }
        let asked = ConsistencyOf {
            from: head.size,
            to: current.size,
        };
        let prefix = self.vouched(store, current, asked).await?;
        if prefix.from_root != head.root_hash {
            return Err(StoreError::Corrupt(
                "a head asked to be signed is not part of the ledger".into(),
            )
            .into());
        }
        Ok(signer.sign(head))
    }

    /// Whether `head` (the store's current head) can be signed, before any
    /// tile is read: already vouched for, or to be remembered (after a
    /// consistency proof from the remembered checkpoint, when one is
    /// needed); a refusal when it cannot extend what the log signed.
    async fn precheck(&self, verifier: &VerifierKey, head: Head) -> Result<Vouch, LogError> {
        if self.custody.vouched(head) {
            return Ok(Vouch::Done);
        }
        let remembered = match self.custody.remembered(verifier, head).await? {
            Ok(remembered) => remembered,
            Err(refusal) => return Err(self.refuse(refusal).await),
        };
        let Some(kept) = remembered else {
            return Ok(Vouch::Remember {
                previous: None,
                prove: false,
            });
        };
        match custody::compare(head, &kept) {
            Err(reason) => Err(self
                .refuse(Refusal {
                    head,
                    remembered: Some(kept.head),
                    reason,
                })
                .await),
            Ok(Relation::Same) => {
                self.custody.vouch(head);
                Ok(Vouch::Done)
            }
            Ok(Relation::Larger { prove }) => Ok(Vouch::Remember {
                previous: Some(kept),
                prove,
            }),
        }
    }

    /// `asked`, computed at `stored` (the store's current head) once that
    /// head is vouched for: checked to extend the largest checkpoint the
    /// log has signed, with the consistency proof from it computed from the
    /// same tile read as `asked`, and remembered before anything signed of
    /// it is served. Once per head; a refusal is reported and answered.
    async fn vouched<P: ProofKind + Copy>(
        &self,
        store: &dyn LedgerStore,
        stored: Head,
        asked: P,
    ) -> Result<P::Proof, LogError> {
        let signer = self.signer()?;
        for _ in 0..custody::MAX_ATTEMPTS {
            let vouch = self.precheck(&signer.verifier(), stored).await?;
            let to_prove = match &vouch {
                Vouch::Remember {
                    previous: Some(kept),
                    prove: true,
                } => Some(kept),
                _ => None,
            };
            let refused = |reason| Refusal {
                head: stored,
                remembered: to_prove.map(|kept| kept.head),
                reason,
            };
            let (proof, tie) = match self
                .prove(store, &stored, asked, to_prove.map(|kept| kept.head.size))
                .await
            {
                Ok(answer) => answer,
                Err(LogError::Store(error)) if error.is_transient() => return Err(error.into()),
                Err(error) if to_prove.is_some() => {
                    let reason = format!(
                        "the ledger cannot prove it extends the checkpoint the log signed ({error})"
                    );
                    return Err(self.refuse(refused(reason)).await);
                }
                Err(error) => return Err(error),
            };
            if let (Some(kept), Some(from_root)) = (to_prove, tie)
                && let Err(reason) = custody::proves(&from_root, kept)
            {
                return Err(self.refuse(refused(reason)).await);
            }
            let Vouch::Remember { previous, .. } = vouch else {
                return Ok(proof);
            };
            let note = signer.sign(stored);
            if self
                .custody
                .remember(previous.as_ref(), stored, &note)
                .await?
            {
                return Ok(proof);
            }
        }
        Err(
            StoreError::unavailable_now("other signers kept moving the signer's memory; try again")
                .into(),
        )
    }

    /// Reports `refusal` (once) and gives the error every signing view answers.
    async fn refuse(&self, refusal: Refusal) -> LogError {
        self.custody.report(&self.origin, &refusal).await;
        LogError::RefusedToSign(refusal.reason)
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

    /// Computes `asked` from the memo and the tiles (one store read), ties
    /// its tree's root to `stored` and verifies it, then remembers the
    /// subtrees it computed. With `tie_from`, the same read also gives the
    /// consistency proof from that size to `stored`, verified, whose older
    /// root is returned (the signer's check that the head extends what it
    /// signed). Should that fail with subtrees from the memo (a memo of
    /// another history: the store was replaced under the log), the memo is
    /// dropped and the proof computed again from tiles alone; failing then,
    /// the tiles are corrupt.
    async fn prove<P: ProofKind>(
        &self,
        store: &dyn LedgerStore,
        stored: &Head,
        asked: P,
        tie_from: Option<u64>,
    ) -> Result<(P::Proof, Option<Digest>), LogError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut plan = self.memo.planner();
            asked.compute(&mut plan)?;
            if asked.size() < stored.size {
                proof::consistency(&mut plan, asked.size(), stored.size)?;
            }
            if let Some(from) = tie_from {
                proof::consistency(&mut plan, from, stored.size)?;
            }
            let from_memo = plan.used_memo();
            let (planned, mut memory) = plan.finish();
            let tiles = read_tiles(store, &planned).await?;
            let mut source = memory.over(&tiles);
            let proof = asked.compute(&mut source)?;
            let tie = tie_from
                .map(|from| proof::consistency(&mut source, from, stored.size))
                .transpose()?
                .filter(|tie| {
                    proof::verify_consistency(
                        tie.from,
                        tie.to,
                        &tie.from_root,
                        &stored.root_hash,
                        &tie.path,
                    )
                });
            if tie_to_head(&mut source, asked.size(), &asked.root(&proof), stored)?
                && asked.verifies(&proof)
                && tie.is_some() == tie_from.is_some()
            {
                self.memo.remember(memory.learned());
                return Ok((proof, tie.map(|tie| tie.from_root)));
            }
            if !from_memo || attempt > 1 {
                return Err(LogError::Store(StoreError::Corrupt(
                    "the log's tiles do not hash to its head".into(),
                )));
            }
            tracing::warn!("proof subtrees remembered from another history; computing from tiles");
            self.memo.forget();
        }
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
        let stored = store.head().await?;
        let head = stored.size;
        let size = tree_size(head, size, "size")?;
        if size.is_none() && seq > head {
            return Err(LogError::BeyondLog {
                parameter: "seq",
                message: format!("the log has {head} records; there is no record {seq}"),
            });
        }
        let size = size.unwrap_or(head);
        if seq == 0 || seq > size {
            return Err(LogError::OutOfRange {
                parameter: "seq",
                message: format!("seq must be from 1 to the tree's size ({size})"),
            });
        }
        let asked = InclusionOf {
            index: seq - 1,
            size,
        };
        let proof = self.vouched(store, stored, asked).await?;
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
        let stored = store.head().await?;
        let head = stored.size;
        let to = tree_size(head, to, "to")?;
        if to.is_none() && from > head {
            return Err(LogError::BeyondLog {
                parameter: "from",
                message: format!("the log has {head} records; there is no tree of {from}"),
            });
        }
        let to = to.unwrap_or(head);
        if from > to {
            return Err(LogError::OutOfRange {
                parameter: "from",
                message: format!("from must be at most the newer size ({to})"),
            });
        }
        let proof = self
            .vouched(store, stored, ConsistencyOf { from, to })
            .await?;
        let note = signer.sign(Head {
            size: to,
            root_hash: proof.to_root,
        });
        Ok((proof, note))
    }
}

/// The tiles a proof's plan names, in one store read (none when the memo
/// knew every subtree).
async fn read_tiles(
    store: &dyn LedgerStore,
    planned: &[TileId],
) -> Result<BTreeMap<TileId, Vec<Digest>>, LogError> {
    if planned.is_empty() {
        return Ok(BTreeMap::new());
    }
    Ok(store.tiles(planned).await?.tiles)
}

/// Whether `root`, computed from the tiles for the tree of `size` leaves,
/// belongs to the stored head: equal to its root, or proved a prefix of it
/// with the same tiles. A root that does not is never signed: the log
/// never signs two roots for one size.
fn tie_to_head(
    source: &mut impl SubtreeSource,
    size: u64,
    root: &Digest,
    head: &Head,
) -> Result<bool, LogError> {
    if size == head.size {
        return Ok(*root == head.root_hash);
    }
    let tie = proof::consistency(source, size, head.size)?;
    Ok(proof::verify_consistency(
        size,
        head.size,
        root,
        &head.root_hash,
        &tie.path,
    ))
}

/// A proof the log computes: how, for which tree, and how it is checked.
trait ProofKind {
    /// The proof computed.
    type Proof;
    /// Computes the proof with `source`'s subtrees.
    fn compute(&self, source: &mut impl SubtreeSource) -> Result<Self::Proof, ProofError>;
    /// The size of the tree the proof is for.
    fn size(&self) -> u64;
    /// The root of that tree, as the proof computed it.
    fn root(&self, proof: &Self::Proof) -> Digest;
    /// Whether the proof verifies against its own root.
    fn verifies(&self, proof: &Self::Proof) -> bool;
}

/// No proof: what a checkpoint asks for besides the signer's own check.
#[derive(Clone, Copy)]
struct Nothing {
    head: Head,
}

impl ProofKind for Nothing {
    type Proof = ();
    fn compute(&self, _: &mut impl SubtreeSource) -> Result<(), ProofError> {
        Ok(())
    }
    fn size(&self) -> u64 {
        self.head.size
    }
    fn root(&self, (): &()) -> Digest {
        self.head.root_hash
    }
    fn verifies(&self, (): &()) -> bool {
        true
    }
}

/// An inclusion proof of leaf `index` in the tree of `size` leaves.
#[derive(Clone, Copy)]
struct InclusionOf {
    index: u64,
    size: u64,
}

impl ProofKind for InclusionOf {
    type Proof = Inclusion;
    fn compute(&self, source: &mut impl SubtreeSource) -> Result<Inclusion, ProofError> {
        proof::inclusion(source, self.index, self.size)
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn root(&self, proof: &Inclusion) -> Digest {
        proof.root
    }
    fn verifies(&self, p: &Inclusion) -> bool {
        proof::verify_inclusion(p.leaf_index, p.tree_size, &p.leaf_hash, &p.path, &p.root)
    }
}

/// A consistency proof from the tree of `from` leaves to that of `to`.
#[derive(Clone, Copy)]
struct ConsistencyOf {
    from: u64,
    to: u64,
}

impl ProofKind for ConsistencyOf {
    type Proof = Consistency;
    fn compute(&self, source: &mut impl SubtreeSource) -> Result<Consistency, ProofError> {
        proof::consistency(source, self.from, self.to)
    }
    fn size(&self) -> u64 {
        self.to
    }
    fn root(&self, proof: &Consistency) -> Digest {
        proof.to_root
    }
    fn verifies(&self, p: &Consistency) -> bool {
        proof::verify_consistency(p.from, p.to, &p.from_root, &p.to_root, &p.path)
    }
}

/// The tree size `requested`, if any, checked against the head's size: a
/// tree the log does not have yet is [`LogError::BeyondLog`].
fn tree_size(
    head: u64,
    requested: Option<u64>,
    parameter: &'static str,
) -> Result<Option<u64>, LogError> {
    match requested {
        Some(size) if size > head => Err(LogError::BeyondLog {
            parameter,
            message: format!("the log has {head} records; there is no tree of {size}"),
        }),
        requested => Ok(requested),
    }
}
