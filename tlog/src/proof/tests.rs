use super::*;
use crate::merkle::root_of;
use crate::tiles::{TileId, tiles_of};
use std::collections::BTreeMap;

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
    use crate::checkpoint::CheckpointSigner;
    use crate::note::SigningKey;
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
        extra: None,
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
    let with_extra = TlogProof {
        extra: Some(b"any bytes\n\0".to_vec()),
        ..proof.clone()
    };
    let text = with_extra.to_text();
    assert!(text.starts_with("c2sp.org/tlog-proof@v1\nextra "));
    assert_eq!(TlogProof::parse(&text).unwrap(), with_extra);
    for bad in [
        "",
        "c2sp.org/tlog-proof@v1\nextra !!\nindex 1\n\nx",
        "c2sp.org/tlog-proof@v1\nindex 03\n\n",
        "c2sp.org/tlog-proof@v1\nindex 1\n!!\n\nx",
    ] {
        assert!(TlogProof::parse(bad).is_err(), "{bad:?}");
    }
}
