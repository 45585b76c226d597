//! The ledger's Merkle log, exactly as RFC 9162 §2.1 (Certificate Transparency
//! v2) defines the Merkle Tree Hash.
//!
//! - leaf hash: `SHA-256(0x00 || leaf bytes)`;
//! - interior node: `SHA-256(0x01 || left || right)`, the left subtree holding
//!   the largest power of two strictly below n leaves;
//! - the empty tree: `SHA-256("")`.
//!
//! Append never re-reads the leaves: a [`Frontier`] keeps the roots of the
//! perfect subtrees along the tree's right edge (one per set bit of the size),
//! which is all the next root needs. [`root_of`] computes the hash from all
//! leaves, for verification and tests.

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::fmt;

/// A SHA-256 digest: a leaf hash or a tree root. Shown as lowercase hex.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// Lowercase hex, as every hash appears in the API.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Parses 64 hex digits (either case).
    pub fn from_hex(text: &str) -> Option<Digest> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).ok()?;
        Some(Digest(bytes))
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

impl fmt::Display for Digest {
    /// Lowercase hex, made on the stack (every ETag writes one).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = [0u8; 64];
        hex::encode_to_slice(self.0, &mut text).map_err(|_| fmt::Error)?;
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Digest {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Hash".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string", "pattern": "^[0-9a-f]{64}$",
            "description": "A SHA-256 hash, lowercase hex."
        })
    }
}

impl<'de> Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Digest::from_hex(&text).ok_or_else(|| serde::de::Error::custom("expected 64 hex digits"))
    }
}

/// `SHA-256(0x00 || leaf)`: the hash of one leaf's bytes.
pub fn leaf_hash(leaf: &[u8]) -> Digest {
    let mut h = Sha256::new();
    h.update([0x00]);
    h.update(leaf);
    Digest(h.finalize().into())
}

/// `SHA-256(0x01 || left || right)`: an interior node.
pub(crate) fn node_hash(left: &Digest, right: &Digest) -> Digest {
    let mut h = Sha256::new();
    h.update([0x01]);
    h.update(left.0);
    h.update(right.0);
    Digest(h.finalize().into())
}

/// `SHA-256("")`: the root of the empty tree.
pub(crate) fn empty_root() -> Digest {
    Digest(Sha256::digest([]).into())
}

/// The Merkle Tree Hash of a list of leaf hashes (RFC 9162 §2.1.1), computed
/// from all of them. For verification; the ledger itself uses [`Frontier`].
pub fn root_of(leaves: &[Digest]) -> Digest {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            let k = largest_power_of_two_below(n as u64) as usize;
            node_hash(&root_of(&leaves[..k]), &root_of(&leaves[k..]))
        }
    }
}

/// The largest power of two strictly less than `n` (for n ≥ 2): where
/// RFC 9162 splits a tree of `n` leaves.
pub(crate) fn largest_power_of_two_below(n: u64) -> u64 {
    debug_assert!(n >= 2);
    1 << (63 - (n - 1).leading_zeros())
}

/// The head of the log: how many leaves and their Merkle Tree Hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Head {
    /// Number of leaves (records) in the log.
    pub size: u64,
    /// Merkle Tree Hash of all `size` leaves.
    #[serde(rename = "rootHash")]
    pub root_hash: Digest,
}

impl Head {
    /// The head of the empty log.
    pub fn empty() -> Head {
        Head {
            size: 0,
            root_hash: empty_root(),
        }
    }
}

/// The right edge of the tree: the roots of its perfect subtrees, largest
/// first, one per set bit of `size`. Enough to append and to compute the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontier {
    size: u64,
    subtrees: Vec<Digest>,
}

/// A stored frontier whose length does not match its size.
#[derive(Debug, thiserror::Error)]
#[error("stored frontier is inconsistent with its size")]
pub struct CorruptFrontier;

impl Frontier {
    /// The frontier of the empty tree.
    pub fn empty() -> Frontier {
        Frontier {
            size: 0,
            subtrees: Vec::new(),
        }
    }

    /// Number of leaves.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Appends one leaf hash, merging equal-sized subtrees on the right edge.
    pub fn push(&mut self, leaf: Digest) {
        self.push_with(leaf, |_, _| {});
    }

    /// Appends one leaf hash and returns the nodes it completed, as
    /// `(height, hash)`: the leaf itself at height 0, then each perfect
    /// subtree it closed (height `h` holds `2^h` leaves). These are the
    /// hashes the stored tiles gain ([`crate::tiles::tile_appends`]).
    pub fn push_recording(&mut self, leaf: Digest) -> Vec<(u32, Digest)> {
        let mut created = Vec::with_capacity(1 + self.size.trailing_ones() as usize);
        self.push_with(leaf, |height, node| created.push((height, *node)));
        created
    }

    fn push_with(&mut self, leaf: Digest, mut completed: impl FnMut(u32, &Digest)) {
        let mut node = leaf;
        let mut size = self.size;
        let mut height = 0;
        completed(height, &node);
        while size & 1 == 1 {
            let left = self.subtrees.pop().expect("a set bit has its subtree");
            node = node_hash(&left, &node);
            size >>= 1;
            height += 1;
            completed(height, &node);
        }
        self.subtrees.push(node);
        self.size += 1;
    }

    /// The Merkle Tree Hash of all leaves appended so far.
    pub fn root(&self) -> Digest {
        let mut iter = self.subtrees.iter().rev();
        let Some(smallest) = iter.next() else {
            return empty_root();
        };
        iter.fold(*smallest, |right, left| node_hash(left, &right))
    }

    /// The head for this frontier.
    pub fn head(&self) -> Head {
        Head {
            size: self.size,
            root_hash: self.root(),
        }
    }

    /// Storage form: the subtree roots concatenated, largest first.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.subtrees.iter().flat_map(|d| d.0).collect()
    }

    /// Reads the storage form back, checking it fits `size`.
    pub fn from_bytes(size: u64, bytes: &[u8]) -> Result<Frontier, CorruptFrontier> {
        if !bytes.len().is_multiple_of(32) || bytes.len() / 32 != size.count_ones() as usize {
            return Err(CorruptFrontier);
        }
        let subtrees = bytes
            .chunks_exact(32)
            .map(|c| Digest(c.try_into().expect("chunks are 32 bytes")))
            .collect();
        Ok(Frontier { size, subtrees })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// transparency-dev/merkle testonly vectors (RFC 6962 reference leaves).
    pub(crate) const LEAVES: [&str; 8] = [
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    ];
    const ROOTS: [&str; 9] = [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ];

    fn reference_leaves() -> Vec<Digest> {
        LEAVES
            .iter()
            .map(|h| leaf_hash(&hex::decode(h).unwrap()))
            .collect()
    }

    #[test]
    fn root_of_matches_the_published_vectors_for_sizes_0_to_8() {
        let leaves = reference_leaves();
        for size in 0..=8 {
            assert_eq!(
                root_of(&leaves[..size]).to_hex(),
                ROOTS[size],
                "size {size}"
            );
        }
    }

    #[test]
    fn frontier_matches_the_published_vectors_after_each_append() {
        let mut frontier = Frontier::empty();
        assert_eq!(frontier.root().to_hex(), ROOTS[0]);
        for (i, leaf) in reference_leaves().into_iter().enumerate() {
            frontier.push(leaf);
            assert_eq!(
                frontier.head().root_hash.to_hex(),
                ROOTS[i + 1],
                "size {}",
                i + 1
            );
            assert_eq!(frontier.size(), i as u64 + 1);
        }
    }

    #[test]
    fn frontier_agrees_with_the_full_computation_on_every_size_up_to_300() {
        let leaves: Vec<Digest> = (0u32..300).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        let mut frontier = Frontier::empty();
        for (i, leaf) in leaves.iter().enumerate() {
            frontier.push(*leaf);
            assert_eq!(frontier.root(), root_of(&leaves[..=i]), "size {}", i + 1);
            let stored = Frontier::from_bytes(frontier.size(), &frontier.to_bytes()).unwrap();
            assert_eq!(stored, frontier);
        }
    }

    #[test]
    fn a_frontier_that_does_not_fit_its_size_is_refused() {
        assert!(Frontier::from_bytes(3, &[0u8; 32]).is_err());
        assert!(Frontier::from_bytes(1, &[0u8; 31]).is_err());
    }
}
