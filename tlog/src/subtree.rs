//! Where a proof's hashes come from: the hashes of perfect, aligned
//! subtrees, read from tiles ([`TileHashes`]), planned before the read
//! ([`TilePlan`]), or remembered from earlier proofs ([`SubtreeMemo`]).
//!
//! A perfect subtree of height `h` is `2^(h mod 8)` consecutive hashes of
//! one tile of level `h / 8`, so a proof reads O(log n) hashes from at most
//! a few tiles per level.

use super::note::NoteError;
use super::tiles::{TILE_HEIGHT, TILE_WIDTH, TileId};
use crate::merkle::{Digest, node_hash};
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

    /// The subtrees known, locked (a poisoned lock still holds hashes).
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SubtreeKey, Digest>> {
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
