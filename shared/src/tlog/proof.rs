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

use super::checkpoint::Checkpoint;
use super::note::{NoteError, VerifierKey};
use super::tiles::{TILE_HEIGHT, TILE_WIDTH, TileId};
use crate::merkle::{Digest, largest_power_of_two_below, leaf_hash, node_hash};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Why a proof could not be computed or did not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The leaf or the older size is not in the tree.
    #[error("{0}")]
    OutOfRange(&'static str),
    /// A tile the proof needs was not stored, or is shorter than the tree
    /// says (the store is inconsistent).
    #[error("the stored tile {level}/{index} is missing or short")]
    MissingTile {
        /// Its level.
        level: u8,
        /// Its index.
        index: u64,
    },
    /// The `.tlog-proof` text is malformed.
    #[error("the proof is malformed ({0})")]
    Malformed(&'static str),
    /// The checkpoint does not open with the verifier key.
    #[error(transparent)]
    Checkpoint(#[from] NoteError),
    /// The hashes do not lead to the checkpoint's root.
    #[error("{0}")]
    Mismatch(&'static str),
}

/// Where the hashes of perfect subtrees come from.
pub trait SubtreeSource {
    /// The root of the perfect subtree of `2^height` leaves that starts at
    /// leaf `index * 2^height`.
    fn subtree(&mut self, height: u32, index: u64) -> Result<Digest, ProofError>;
}

/// A [`SubtreeSource`] that reads nothing and notes the tiles each subtree
/// lives in: the plan of a proof's store read.
#[derive(Debug, Default)]
pub struct TilePlan {
    tiles: BTreeSet<TileId>,
}

impl TilePlan {
    /// The tiles noted, in order.
    pub fn tiles(self) -> Vec<TileId> {
        self.tiles.into_iter().collect()
    }
}

/// The tile that holds the subtree of height `height` at `index`, and the
/// subtree's first position and width in it.
fn locate(height: u32, index: u64) -> Result<(TileId, usize, usize), ProofError> {
    let level = height / TILE_HEIGHT;
    let spread = height % TILE_HEIGHT;
    let first = index
        .checked_shl(spread)
        .filter(|first| first >> spread == index)
        .ok_or(ProofError::OutOfRange("the subtree is beyond any tree"))?;
    let tile = TileId {
        level: level as u8,
        index: first / TILE_WIDTH,
    };
    Ok((tile, (first % TILE_WIDTH) as usize, 1usize << spread))
}

impl SubtreeSource for TilePlan {
    fn subtree(&mut self, height: u32, index: u64) -> Result<Digest, ProofError> {
        let (tile, _, _) = locate(height, index)?;
        self.tiles.insert(tile);
        Ok(Digest([0; 32]))
    }
}

/// A [`SubtreeSource`] over fetched tiles (each as stored: it may be wider
/// than the tree the proof is for, never narrower).
#[derive(Debug)]
pub struct TileHashes<'a> {
    tiles: &'a BTreeMap<TileId, Vec<Digest>>,
}

impl<'a> TileHashes<'a> {
    /// Reads subtrees from `tiles`.
    pub fn new(tiles: &'a BTreeMap<TileId, Vec<Digest>>) -> TileHashes<'a> {
        TileHashes { tiles }
    }
}

impl SubtreeSource for TileHashes<'_> {
    fn subtree(&mut self, height: u32, index: u64) -> Result<Digest, ProofError> {
        let (tile, first, width) = locate(height, index)?;
        let missing = ProofError::MissingTile {
            level: tile.level,
            index: tile.index,
        };
        let hashes = self
            .tiles
            .get(&tile)
            .and_then(|hashes| hashes.get(first..first + width))
            .ok_or(missing)?;
        Ok(perfect_root(hashes))
    }
}

/// A perfect subtree's place: its height and its index at that height.
type SubtreeKey = (u32, u64);

/// Perfect subtrees a process has already computed and verified. A perfect
/// subtree's hash never changes once its leaves exist (the tree only
/// grows), so proofs after the first read fewer tiles and hash less: the
/// subtrees of the upper levels (height 8 and above, from tiles of level 1
/// and above), which every proof crosses, come from memory. The level-0
/// tile around the leaf, different for almost every proof, is read and
/// hashed each time, so a proof costs the same at any size. Bounded: when
/// full it starts again empty.
#[derive(Default)]
pub struct SubtreeMemo {
    known: std::sync::Mutex<HashMap<SubtreeKey, Digest>>,
}

impl std::fmt::Debug for SubtreeMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubtreeMemo")
            .field("subtrees", &self.lock().len())
            .finish()
    }
}

impl SubtreeMemo {
    /// The most subtrees kept (about 5 MB).
    pub const CAPACITY: usize = 1 << 16;

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SubtreeKey, Digest>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Plans a proof against the memo: what it knows is taken now (so a
    /// later eviction cannot leave the proof short), the rest becomes the
    /// tiles to read.
    pub fn planner(&self) -> MemoPlan<'_> {
        MemoPlan {
            memo: self,
            known: HashMap::new(),
            plan: TilePlan::default(),
        }
    }

    /// Drops every subtree kept.
    pub fn forget(&self) {
        self.lock().clear();
    }

    /// Keeps the subtrees a proof computed, once the proof has been
    /// verified against the head (so a corrupt tile is never remembered).
    pub fn remember(&self, learned: HashMap<SubtreeKey, Digest>) {
        let mut known = self.lock();
        if known.len() + learned.len() > Self::CAPACITY {
            known.clear();
        }
        known.extend(learned);
    }
}

/// The planning pass of a proof over a [`SubtreeMemo`]: subtrees the memo
/// knows are answered from it, the others note their tiles.
#[derive(Debug)]
pub struct MemoPlan<'a> {
    memo: &'a SubtreeMemo,
    known: HashMap<SubtreeKey, Digest>,
    plan: TilePlan,
}

impl MemoPlan<'_> {
    /// Whether the plan took any subtree from the memo.
    pub fn used_memo(&self) -> bool {
        !self.known.is_empty()
    }

    /// The tiles to read, and a source that answers from the subtrees the
    /// plan took from the memo and otherwise from `tiles`.
    pub fn finish(self) -> (Vec<TileId>, KnownThenTiles) {
        (
            self.plan.tiles(),
            KnownThenTiles {
                known: self.known,
                learned: HashMap::new(),
            },
        )
    }
}

impl SubtreeSource for MemoPlan<'_> {
    fn subtree(&mut self, height: u32, index: u64) -> Result<Digest, ProofError> {
        if let Some(hash) = self.memo.lock().get(&(height, index)) {
            self.known.insert((height, index), *hash);
            return Ok(*hash);
        }
        self.plan.subtree(height, index)
    }
}

/// The computing pass's memory: the subtrees taken from the memo, and
/// those computed from tiles (to remember once the proof verifies).
#[derive(Debug, Default)]
pub struct KnownThenTiles {
    known: HashMap<SubtreeKey, Digest>,
    learned: HashMap<SubtreeKey, Digest>,
}

impl KnownThenTiles {
    /// A source over the fetched `tiles`.
    pub fn over<'t>(
        &'t mut self,
        tiles: &'t BTreeMap<TileId, Vec<Digest>>,
    ) -> KnownThenTilesSource<'t> {
        KnownThenTilesSource {
            memory: self,
            tiles: TileHashes::new(tiles),
        }
    }

    /// The subtrees computed from tiles.
    pub fn learned(self) -> HashMap<SubtreeKey, Digest> {
        self.learned
    }
}

/// A [`SubtreeSource`]: the subtrees known from the memo, else the tiles.
#[derive(Debug)]
pub struct KnownThenTilesSource<'t> {
    memory: &'t mut KnownThenTiles,
    tiles: TileHashes<'t>,
}

impl SubtreeSource for KnownThenTilesSource<'_> {
    fn subtree(&mut self, height: u32, index: u64) -> Result<Digest, ProofError> {
        let key = (height, index);
        if let Some(hash) = self.memory.known.get(&key) {
            return Ok(*hash);
        }
        let hash = self.tiles.subtree(height, index)?;
        if height >= TILE_HEIGHT {
            self.memory.learned.insert(key, hash);
        }
        Ok(hash)
    }
}

/// The root of a perfect tree over `hashes` (a power of two of them).
fn perfect_root(hashes: &[Digest]) -> Digest {
    let mut level = hashes.to_vec();
    while level.len() > 1 {
        level = level
            .chunks_exact(2)
            .map(|pair| node_hash(&pair[0], &pair[1]))
            .collect();
    }
    level[0]
}

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
pub const TLOG_PROOF_HEADER: &str = "c2sp.org/tlog-proof@v1";

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
}

impl TlogProof {
    /// The text form: header, `index N`, one base64 hash per line, a blank
    /// line, the checkpoint.
    pub fn to_text(&self) -> String {
        let mut text = format!("{TLOG_PROOF_HEADER}\nindex {}\n", self.index);
        for hash in &self.path {
            text.push_str(&BASE64.encode(hash.0));
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&self.checkpoint);
        text
    }

    /// Reads the text form (an `extra` line is allowed and ignored: it is
    /// not authenticated).
    pub fn parse(text: &str) -> Result<TlogProof, ProofError> {
        let malformed = ProofError::Malformed;
        let rest = text
            .strip_prefix(TLOG_PROOF_HEADER)
            .and_then(|rest| rest.strip_prefix('\n'))
            .ok_or(malformed("it does not start with c2sp.org/tlog-proof@v1"))?;
        let rest = match rest.strip_prefix("extra ") {
            Some(extra) => extra.split_once('\n').ok_or(malformed("no index line"))?.1,
            None => rest,
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
mod tests {
    use super::*;
    use crate::merkle::root_of;

    use crate::tlog::tiles::tiles_of;

    fn leaves(n: u64) -> Vec<Digest> {
        (0..n).map(|i| leaf_hash(&i.to_be_bytes())).collect()
    }

    fn inclusion_tiles(leaf_index: u64, tree_size: u64) -> Result<Vec<TileId>, ProofError> {
        let mut plan = TilePlan::default();
        inclusion(&mut plan, leaf_index, tree_size)?;
        Ok(plan.tiles())
    }

    fn consistency_tiles(from: u64, to: u64) -> Result<Vec<TileId>, ProofError> {
        let mut plan = TilePlan::default();
        consistency(&mut plan, from, to)?;
        Ok(plan.tiles())
    }

    /// One proof through a [`SubtreeMemo`], as `Log` computes it: the
    /// tiles it had to read, and the proof.
    fn through_memo(
        memo: &SubtreeMemo,
        tiles: &BTreeMap<TileId, Vec<Digest>>,
        index: u64,
        size: u64,
    ) -> (Vec<TileId>, Inclusion) {
        let mut plan = memo.planner();
        inclusion(&mut plan, index, size).unwrap();
        let (planned, mut memory) = plan.finish();
        let fetched: BTreeMap<_, _> = planned.iter().map(|id| (*id, tiles[id].clone())).collect();
        let proof = inclusion(&mut memory.over(&fetched), index, size).unwrap();
        memo.remember(memory.learned());
        (planned, proof)
    }

    #[test]
    fn proofs_through_the_memo_equal_proofs_from_tiles_and_read_less() {
        let all = leaves(70_000);
        let tiles = tiles_of(&all);
        let memo = SubtreeMemo::default();
        let mut upper_reads = [0, 0];
        for upper in &mut upper_reads {
            for index in (0..70_000).step_by(997) {
                let (reads, proof) = through_memo(&memo, &tiles, index, 70_000);
                let cold = inclusion(&mut TileHashes::new(&tiles), index, 70_000).unwrap();
                assert_eq!(proof, cold, "leaf {index}");
                assert!(reads.iter().any(|tile| tile.level == 0), "leaf {index}");
                *upper += reads.iter().filter(|tile| tile.level > 0).count();
            }
        }
        // The second round knows every upper subtree: only the leaves'
        // level-0 tiles are read.
        assert!(upper_reads[0] > 0);
        assert_eq!(upper_reads[1], 0);
        // A memo that is full starts again empty rather than growing.
        memo.remember(
            (0..SubtreeMemo::CAPACITY as u64)
                .map(|i| ((0, i), Digest([0; 32])))
                .collect(),
        );
        assert!(memo.lock().len() <= SubtreeMemo::CAPACITY);
    }

    /// Tile hashes with each subtree computed once (the grids below ask
    /// for the same subtrees tens of thousands of times).
    struct Memo<'a> {
        tiles: TileHashes<'a>,
        seen: std::collections::HashMap<(u32, u64), Digest>,
    }

    impl<'a> Memo<'a> {
        fn new(tiles: &'a BTreeMap<TileId, Vec<Digest>>) -> Memo<'a> {
            Memo {
                tiles: TileHashes::new(tiles),
                seen: Default::default(),
            }
        }
    }

    impl SubtreeSource for Memo<'_> {
        fn subtree(&mut self, height: u32, index: u64) -> Result<Digest, ProofError> {
            if let Some(hash) = self.seen.get(&(height, index)) {
                return Ok(*hash);
            }
            let hash = self.tiles.subtree(height, index)?;
            self.seen.insert((height, index), hash);
            Ok(hash)
        }
    }

    /// RFC 9162's definitions over all leaves, written as the RFC writes
    /// them (with `MTH` of each range computed once).
    struct Reference<'a> {
        leaves: &'a [Digest],
        mth: std::collections::HashMap<(usize, usize), Digest>,
    }

    impl Reference<'_> {
        fn mth(&mut self, lo: usize, hi: usize) -> Digest {
            if let Some(hash) = self.mth.get(&(lo, hi)) {
                return *hash;
            }
            let hash = root_of(&self.leaves[lo..hi]);
            self.mth.insert((lo, hi), hash);
            hash
        }

        /// `PATH(m, D[lo:hi])`.
        fn path(&mut self, m: usize, lo: usize, hi: usize) -> Vec<Digest> {
            if hi - lo <= 1 {
                return Vec::new();
            }
            let k = largest_power_of_two_below((hi - lo) as u64) as usize;
            let (mut path, sibling) = if m < lo + k {
                (self.path(m, lo, lo + k), self.mth(lo + k, hi))
            } else {
                (self.path(m, lo + k, hi), self.mth(lo, lo + k))
            };
            path.push(sibling);
            path
        }

        /// `SUBPROOF(m, D[lo:hi], b)`.
        fn subproof(&mut self, m: usize, lo: usize, hi: usize, whole: bool) -> Vec<Digest> {
            if m == hi - lo {
                return if whole {
                    Vec::new()
                } else {
                    vec![self.mth(lo, hi)]
                };
            }
            let k = largest_power_of_two_below((hi - lo) as u64) as usize;
            let (mut proof, last) = if m <= k {
                (self.subproof(m, lo, lo + k, whole), self.mth(lo + k, hi))
            } else {
                (
                    self.subproof(m - k, lo + k, hi, false),
                    self.mth(lo, lo + k),
                )
            };
            proof.push(last);
            proof
        }
    }

    #[test]
    fn every_inclusion_proof_up_to_300_leaves_matches_the_definition_and_verifies() {
        let all = leaves(300);
        let tiles = tiles_of(&all);
        let mut reference = Reference {
            leaves: &all,
            mth: Default::default(),
        };
        let mut source = Memo::new(&tiles);
        for size in 1..=300u64 {
            let d = &all[..size as usize];
            let root = reference.mth(0, size as usize);
            for index in 0..size {
                let proof = inclusion(&mut source, index, size).unwrap();
                let expected = reference.path(index as usize, 0, size as usize);
                assert_eq!(proof.path, expected, "{index}/{size}");
                assert_eq!((proof.root, proof.leaf_hash), (root, d[index as usize]));
                assert!(verify_inclusion(
                    index,
                    size,
                    &d[index as usize],
                    &proof.path,
                    &root
                ));
                if let Some(first) = proof.path.first() {
                    let mut bent = proof.path.clone();
                    bent[0] = node_hash(first, first);
                    assert!(!verify_inclusion(
                        index,
                        size,
                        &d[index as usize],
                        &bent,
                        &root
                    ));
                }
                let other = (index + 1) % size;
                assert_eq!(
                    verify_inclusion(other, size, &d[index as usize], &proof.path, &root),
                    other == index
                );
            }
        }
    }

    #[test]
    fn every_consistency_proof_up_to_300_leaves_matches_the_definition_and_verifies() {
        let all = leaves(300);
        let tiles = tiles_of(&all);
        let mut reference = Reference {
            leaves: &all,
            mth: Default::default(),
        };
        let mut source = Memo::new(&tiles);
        for to in 1..=300u64 {
            let to_root = reference.mth(0, to as usize);
            for from in 1..=to {
                let proof = consistency(&mut source, from, to).unwrap();
                let expected = if from == to {
                    Vec::new()
                } else {
                    reference.subproof(from as usize, 0, to as usize, true)
                };
                assert_eq!(proof.path, expected, "{from}->{to}");
                let from_root = reference.mth(0, from as usize);
                assert_eq!((proof.from_root, proof.to_root), (from_root, to_root));
                assert!(verify_consistency(
                    from,
                    to,
                    &from_root,
                    &to_root,
                    &proof.path
                ));
                let forged = leaf_hash(b"another history");
                assert!(!verify_consistency(
                    from,
                    to,
                    &forged,
                    &to_root,
                    &proof.path
                ));
            }
        }
    }

    #[test]
    fn proofs_read_few_tiles_and_only_the_ones_planned() {
        let all = leaves(70_000);
        let tiles = tiles_of(&all);
        for (index, size) in [(0, 70_000), (69_999, 70_000), (12_345, 65_537), (256, 257)] {
            let planned = inclusion_tiles(index, size).unwrap();
            assert!(planned.len() <= 6, "{index}/{size}: {planned:?}");
            let fetched: BTreeMap<TileId, Vec<Digest>> = planned
                .iter()
                .map(|tile| (*tile, tiles[tile].clone()))
                .collect();
            let proof = inclusion(&mut TileHashes::new(&fetched), index, size).unwrap();
            assert_eq!(proof.root, root_of(&all[..size as usize]));
        }
        let fetched: BTreeMap<TileId, Vec<Digest>> = consistency_tiles(1_000, 70_000)
            .unwrap()
            .iter()
            .map(|tile| (*tile, tiles[tile].clone()))
            .collect();
        let proof = consistency(&mut TileHashes::new(&fetched), 1_000, 70_000).unwrap();
        assert_eq!(proof.from_root, root_of(&all[..1_000]));
    }

    #[test]
    fn a_missing_or_short_tile_is_an_error_not_a_wrong_proof() {
        let mut tiles = tiles_of(&leaves(300));
        tiles
            .get_mut(&TileId { level: 0, index: 1 })
            .unwrap()
            .truncate(3);
        assert_eq!(
            inclusion(&mut TileHashes::new(&tiles), 299, 300),
            Err(ProofError::MissingTile { level: 0, index: 1 })
        );
        assert!(inclusion(&mut TileHashes::new(&tiles), 3, 3).is_err());
    }

    /// transparency-dev/merkle's reference inclusion and consistency proofs
    /// over the RFC 6962 test leaves.
    #[test]
    fn the_published_proof_vectors_are_reproduced() {
        let leaves: Vec<Digest> = crate::merkle::tests::LEAVES
            .iter()
            .map(|h| leaf_hash(&hex::decode(h).unwrap()))
            .collect();
        let tiles = tiles_of(&leaves);
        let hashes = |list: &[&str]| -> Vec<Digest> {
            list.iter().map(|h| Digest::from_hex(h).unwrap()).collect()
        };
        let inclusions: [(u64, u64, &[&str]); 4] = [
            (0, 1, &[]),
            (
                0,
                8,
                &[
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ],
            ),
            (
                5,
                8,
                &[
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ],
            ),
            (
                2,
                3,
                &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
            ),
        ];
        for (index, size, expected) in inclusions {
            let proof = inclusion(&mut TileHashes::new(&tiles), index, size).unwrap();
            assert_eq!(proof.path, hashes(expected), "inclusion {index}/{size}");
        }
        let consistencies: [(u64, u64, &[&str]); 3] = [
            (
                1,
                8,
                &[
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ],
            ),
            (
                6,
                8,
                &[
                    "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ],
            ),
            (
                2,
                5,
                &[
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ],
            ),
        ];
        for (from, to, expected) in consistencies {
            let proof = consistency(&mut TileHashes::new(&tiles), from, to).unwrap();
            assert_eq!(proof.path, hashes(expected), "consistency {from}->{to}");
        }
    }

    #[test]
    fn tlog_proofs_round_trip_and_verify_only_the_record_they_prove() {
        use crate::tlog::checkpoint::CheckpointSigner;
        use crate::tlog::note::SigningKey;
        let records: Vec<Vec<u8>> = (0..5)
            .map(|i| format!("{{\"n\":{i}}}").into_bytes())
            .collect();
        let hashes: Vec<Digest> = records.iter().map(|r| leaf_hash(r)).collect();
        let tiles = tiles_of(&hashes);
        let key = SigningKey::from_seed("example.com/log", [7; 32]).unwrap();
        let signer = CheckpointSigner::new(key.clone());
        let included = inclusion(&mut TileHashes::new(&tiles), 3, 5).unwrap();
        let proof = TlogProof {
            index: 3,
            path: included.path,
            checkpoint: signer
                .sign(crate::merkle::Head {
                    size: 5,
                    root_hash: included.root,
                })
                .to_string(),
        };
        let text = proof.to_text();
        assert!(text.starts_with("c2sp.org/tlog-proof@v1\nindex 3\n"));
        let parsed = TlogProof::parse(&text).unwrap();
        assert_eq!(parsed, proof);
        assert_eq!(parsed.verify(&key.verifier(), &records[3]).unwrap().size, 5);
        assert!(matches!(
            parsed.verify(&key.verifier(), &records[2]),
            Err(ProofError::Mismatch(_))
        ));
        let other = SigningKey::from_seed("example.com/log", [8; 32]).unwrap();
        assert!(matches!(
            parsed.verify(&other.verifier(), &records[3]),
            Err(ProofError::Checkpoint(_))
        ));
        for bad in [
            "",
            "c2sp.org/tlog-proof@v1\nindex 03\n\n",
            "c2sp.org/tlog-proof@v1\nindex 1\n!!\n\nx",
        ] {
            assert!(TlogProof::parse(bad).is_err(), "{bad:?}");
        }
    }
}
