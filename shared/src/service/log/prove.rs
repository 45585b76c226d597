//! The proofs: computed from the memo and the tiles in one store read,
//! tied to the stored head, verified before they are signed or served.

use super::witnessing::Deadline;
use super::{Log, LogError};
use crate::merkle::{Digest, Head};
use crate::ports::ledger_store::{StoreError, TileReads};
use crate::tlog::proof::{self, Consistency, Inclusion, ProofError, SubtreeSource};
use crate::tlog::tiles::TileId;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Log {
    /// Computes `asked` from the memo and the tiles (one store read), ties
    /// its tree's root to `stored` and verifies it, then remembers the
    /// subtrees it computed. With `tie_from`, the same read also gives the
    /// consistency proof from that size to `stored`, verified, whose older
    /// root is returned (the signer's check that the head extends what it
    /// signed). Should that fail with subtrees from the memo (a memo of
    /// another history: the store was replaced under the log), the memo is
    /// dropped and the proof computed again from tiles alone; failing then,
    /// the tiles are corrupt.
    pub(super) async fn prove<P: ProofKind>(
        &self,
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
            let tiles = read_tiles(self.store.as_ref(), &planned).await?;
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
    /// and the signed checkpoint of that tree. The size defaults to the
    /// witnessed checkpoint's when the log serves witnessed checkpoints and
    /// the record is in it, else to the head; the checkpoint embedded is
    /// the witnessed one (with its cosignatures) when the tree is its.
    pub async fn inclusion(
        &self,
        seq: u64,
        size: Option<u64>,
    ) -> Result<(Inclusion, Arc<str>), LogError> {
        let signer = self.signer()?;
        let anchor = self.proof_anchor().await?;
        let size = size.or_else(|| anchor.as_ref().filter(|w| seq <= w.size).map(|w| w.size));
        let stored = self.store.head().await?;
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
        let proof = self.vouched(stored, asked).await?;
        let tree = Head {
            size,
            root_hash: proof.root,
        };
        let note = Log::anchor_note(anchor.as_ref(), tree, || signer.sign(tree));
        Ok((proof, note))
    }

    /// The consistency proof from the tree of `from` leaves to that of `to`
    /// and the signed checkpoint of `to`. `to` defaults to the witnessed
    /// checkpoint's size when the log serves witnessed checkpoints and
    /// `from` is within it, else to the head; the checkpoint embedded is
    /// the witnessed one when the tree is its.
    pub async fn consistency(
        &self,
        from: u64,
        to: Option<u64>,
    ) -> Result<(Consistency, Arc<str>), LogError> {
        let anchor = self.proof_anchor().await?;
        let to = to.or_else(|| anchor.as_ref().filter(|w| from <= w.size).map(|w| w.size));
        let (proof, note) = self.consistency_signed(from, to).await?;
        let tree = Head {
            size: proof.to,
            root_hash: proof.to_root,
        };
        Ok((proof, Log::anchor_note(anchor.as_ref(), tree, || note)))
    }

    /// The consistency proof from `from` to `to` (default: the head) and
    /// the log-signed checkpoint of `to`.
    pub(super) async fn consistency_signed(
        &self,
        from: u64,
        to: Option<u64>,
    ) -> Result<(Consistency, Arc<str>), LogError> {
        self.consistency_signed_by(from, to, self.deadline(false))
            .await
    }

    /// [`Log::consistency_signed`], any consultation of the witnesses over
    /// by `deadline` (a round's, when a round asks).
    pub(super) async fn consistency_signed_by(
        &self,
        from: u64,
        to: Option<u64>,
        deadline: Deadline,
    ) -> Result<(Consistency, Arc<str>), LogError> {
        let signer = self.signer()?;
        let stored = self.store.head().await?;
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
            .vouched_by(stored, ConsistencyOf { from, to }, deadline)
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
    store: &dyn TileReads,
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
pub(super) trait ProofKind {
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
pub(super) struct Nothing {
    pub(super) head: Head,
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
pub(super) struct InclusionOf {
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
pub(super) struct ConsistencyOf {
    pub(super) from: u64,
    pub(super) to: u64,
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
