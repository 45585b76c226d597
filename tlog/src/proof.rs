//! Inclusion and consistency proofs (RFC 9162 §2.1.3 and §2.1.4), computed
//! from the stored tiles, their verification, and the `.tlog-proof` text
//! form (c2sp.org/tlog-proof).
//!
//! Every hash a proof needs is the Merkle Tree Hash of a range of leaves,
//! which splits into perfect, aligned subtrees. A perfect subtree of height
//! `h` is `2^(h mod 8)` consecutive hashes of one tile of level `h / 8`, so
//! a proof reads O(log n) hashes from at most a few tiles per level. A proof
//! is computed twice over the same code: once with a [`TilePlan`], which
//! only notes the tiles it would read (so a store fetches them all in one
//! go), then with [`TileHashes`] over the tiles fetched.

pub use super::subtree::{
    KnownThenTiles, KnownThenTilesSource, MemoPlan, ProofError, SubtreeMemo, SubtreeSource,
    TileHashes, TilePlan,
};

use super::checkpoint::Checkpoint;
use super::note::VerifierKey;
use crate::merkle::{Digest, largest_power_of_two_below, leaf_hash, node_hash};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

/// The Merkle Tree Hash of leaves `lo..hi` (`lo < hi`), split as RFC 9162
/// splits: perfect aligned ranges come whole from the source.
fn range_hash(source: &mut impl SubtreeSource, lo: u64, hi: u64) -> Result<Digest, ProofError> {
    let len = hi - lo;
    if len.is_power_of_two() && lo.is_multiple_of(len) {
        return source.subtree(len.trailing_zeros(), lo / len);
    }
    let k = largest_power_of_two_below(len);
    let left = range_hash(source, lo, lo + k)?;
    let right = range_hash(source, lo + k, hi)?;
    Ok(node_hash(&left, &right))
}

/// An inclusion proof: the leaf, the tree and the audit path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inclusion {
    /// The leaf's index (seq - 1).
    pub leaf_index: u64,
    /// The tree's size.
    pub tree_size: u64,
    /// The leaf's hash.
    pub leaf_hash: Digest,
    /// RFC 9162 `PATH(m, D[n])`: from the leaf's sibling up to the root's
    /// child.
    pub path: Vec<Digest>,
    /// The tree's root.
    pub root: Digest,
}

/// The inclusion proof of leaf `leaf_index` in the tree of `tree_size`
/// leaves, with `source`'s hashes.
pub fn inclusion(
    source: &mut impl SubtreeSource,
    leaf_index: u64,
    tree_size: u64,
) -> Result<Inclusion, ProofError> {
    if leaf_index >= tree_size {
        return Err(ProofError::OutOfRange("the leaf is not in the tree"));
    }
    let mut path = Vec::new();
    audit_path(source, leaf_index, 0, tree_size, &mut path)?;
    Ok(Inclusion {
        leaf_index,
        tree_size,
        leaf_hash: source.subtree(0, leaf_index)?,
        path,
        root: range_hash(source, 0, tree_size)?,
    })
}

/// RFC 9162 §2.1.3.1 `PATH(m, D[lo:hi])`, the deepest sibling first.
fn audit_path(
    source: &mut impl SubtreeSource,
    m: u64,
    lo: u64,
    hi: u64,
    path: &mut Vec<Digest>,
) -> Result<(), ProofError> {
    if hi - lo <= 1 {
        return Ok(());
    }
    let k = largest_power_of_two_below(hi - lo);
    if m < lo + k {
        audit_path(source, m, lo, lo + k, path)?;
        path.push(range_hash(source, lo + k, hi)?);
    } else {
        audit_path(source, m, lo + k, hi, path)?;
        path.push(range_hash(source, lo, lo + k)?);
    }
    Ok(())
}

/// A consistency proof between two sizes of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consistency {
    /// The older size.
    pub from: u64,
    /// The newer size.
    pub to: u64,
    /// RFC 9162 `PROOF(from, D[to])` (empty when `from` is 0 or equals `to`).
    pub path: Vec<Digest>,
    /// The root at `from`.
    pub from_root: Digest,
    /// The root at `to`.
    pub to_root: Digest,
}

/// The consistency proof from the tree of `from` leaves to that of `to`.
pub fn consistency(
    source: &mut impl SubtreeSource,
    from: u64,
    to: u64,
) -> Result<Consistency, ProofError> {
    if from > to {
        return Err(ProofError::OutOfRange(
            "the older size is larger than the newer",
        ));
    }
    let mut path = Vec::new();
    if from > 0 && from < to {
        subproof(source, from, 0, to, true, &mut path)?;
    }
    let root = |source: &mut _, size| match size {
        0 => Ok(crate::merkle::empty_root()),
        size => range_hash(source, 0, size),
    };
    Ok(Consistency {
        from,
        to,
        path,
        from_root: root(source, from)?,
        to_root: root(source, to)?,
    })
}

/// RFC 9162 §2.1.4.1 `SUBPROOF(m, D[lo:hi], b)`.
fn subproof(
    source: &mut impl SubtreeSource,
    m: u64,
    lo: u64,
    hi: u64,
    whole: bool,
    path: &mut Vec<Digest>,
) -> Result<(), ProofError> {
    let n = hi - lo;
    if m == n {
        if !whole {
            path.push(range_hash(source, lo, hi)?);
        }
        return Ok(());
    }
    let k = largest_power_of_two_below(n);
    if m <= k {
        subproof(source, m, lo, lo + k, whole, path)?;
        path.push(range_hash(source, lo + k, hi)?);
    } else {
        subproof(source, m - k, lo + k, hi, false, path)?;
        path.push(range_hash(source, lo, lo + k)?);
    }
    Ok(())
}

/// RFC 9162 §2.1.3.2: whether `path` proves leaf `leaf_index` with hash
/// `leaf` in the tree of `tree_size` leaves with root `root`.
pub fn verify_inclusion(
    leaf_index: u64,
    tree_size: u64,
    leaf: &Digest,
    path: &[Digest],
    root: &Digest,
) -> bool {
    if leaf_index >= tree_size {
        return false;
    }
    let (mut f, mut s) = (leaf_index, tree_size - 1);
    let mut r = *leaf;
    for p in path {
        if s == 0 {
            return false;
        }
        if f & 1 == 1 || f == s {
            r = node_hash(p, &r);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    s == 0 && r == *root
}

/// RFC 9162 §2.1.4.2: whether `path` proves the tree of `from` leaves
/// with root `from_root` is a prefix of the tree of `to` leaves with root
/// `to_root`.
pub fn verify_consistency(
    from: u64,
    to: u64,
    from_root: &Digest,
    to_root: &Digest,
    path: &[Digest],
) -> bool {
    if from > to {
        return false;
    }
    if from == to {
        return path.is_empty() && from_root == to_root;
    }
    if from == 0 {
        return path.is_empty();
    }
    let mut hashes = Vec::with_capacity(path.len() + 1);
    if from.is_power_of_two() {
        hashes.push(*from_root);
    }
    hashes.extend_from_slice(path);
    let Some((first, rest)) = hashes.split_first() else {
        return false;
    };
    let (mut f, mut s) = (from - 1, to - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    let (mut fr, mut sr) = (*first, *first);
    for c in rest {
        if s == 0 {
            return false;
        }
        if f & 1 == 1 || f == s {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        f >>= 1;
        s >>= 1;
    }
    fr == *from_root && sr == *to_root && s == 0
}

/// The first line of a `.tlog-proof`.
pub(crate) const TLOG_PROOF_HEADER: &str = "c2sp.org/tlog-proof@v1";

/// A proof in the c2sp.org/tlog-proof form: an index, its inclusion path
/// and the signed checkpoint the path leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlogProof {
    /// The leaf's index.
    pub index: u64,
    /// The inclusion path, deepest sibling first.
    pub path: Vec<Digest>,
    /// The signed checkpoint, verbatim.
    pub checkpoint: String,
    /// Opaque extra data with an application-specific meaning (the `extra`
    /// line, base64; not authenticated by the proof).
    pub extra: Option<Vec<u8>>,
}

impl TlogProof {
    /// The text form: header, `index N`, one base64 hash per line, a blank
    /// line, the checkpoint.
    pub fn to_text(&self) -> String {
        let mut text = format!("{TLOG_PROOF_HEADER}\n");
        if let Some(extra) = &self.extra {
            text.push_str("extra ");
            text.push_str(&BASE64.encode(extra));
            text.push('\n');
        }
        text.push_str(&format!("index {}\n", self.index));
        for hash in &self.path {
            text.push_str(&BASE64.encode(hash.0));
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&self.checkpoint);
        text
    }

    /// Reads the text form (an `extra` line is kept as it is: it is not
    /// authenticated).
    pub fn parse(text: &str) -> Result<TlogProof, ProofError> {
        let malformed = ProofError::Malformed;
        let rest = text
            .strip_prefix(TLOG_PROOF_HEADER)
            .and_then(|rest| rest.strip_prefix('\n'))
            .ok_or(malformed("it does not start with c2sp.org/tlog-proof@v1"))?;
        let (extra, rest) = match rest.strip_prefix("extra ") {
            Some(extra) => {
                let (line, rest) = extra.split_once('\n').ok_or(malformed("no index line"))?;
                let bytes = BASE64
                    .decode(line)
                    .map_err(|_| malformed("the extra line is not base64"))?;
                (Some(bytes), rest)
            }
            None => (None, rest),
        };
        let (index_line, rest) = rest.split_once('\n').ok_or(malformed("no index line"))?;
        let index = index_line
            .strip_prefix("index ")
            .filter(|n| *n == "0" || !n.starts_with('0'))
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or(malformed("the index line is not `index <decimal>`"))?;
        let (hashes, checkpoint) = match rest.strip_prefix('\n') {
            Some(checkpoint) => ("", checkpoint),
            None => rest
                .split_once("\n\n")
                .ok_or(malformed("no blank line before the checkpoint"))?,
        };
        let path = hashes
            .split('\n')
            .filter(|line| !line.is_empty())
            .map(|line| {
                BASE64
                    .decode(line)
                    .ok()
                    .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
                    .map(Digest)
                    .ok_or(malformed("a path line is not a base64 SHA-256 hash"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TlogProof {
            index,
            path,
            checkpoint: checkpoint.to_owned(),
            extra,
        })
    }

    /// Checks that the leaf bytes `leaf` are at this proof's index in the
    /// tree the checkpoint signed by `verifier` names; answers that
    /// checkpoint.
    pub fn verify(&self, verifier: &VerifierKey, leaf: &[u8]) -> Result<Checkpoint, ProofError> {
        let checkpoint = Checkpoint::open(&self.checkpoint, verifier)?;
        if self.index >= checkpoint.size {
            return Err(ProofError::Mismatch(
                "the index is beyond the checkpoint's tree",
            ));
        }
        if !verify_inclusion(
            self.index,
            checkpoint.size,
            &leaf_hash(leaf),
            &self.path,
            &checkpoint.root,
        ) {
            return Err(ProofError::Mismatch(
                "the record and the path do not lead to the checkpoint's root",
            ));
        }
        Ok(checkpoint)
    }
}

#[cfg(test)]
mod tests;
