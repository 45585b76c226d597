//! Tiles (c2sp.org/tlog-tiles): the tree as 256-wide rows of hashes, and the
//! records as entry bundles, each addressed by a static path.
//!
//! - Hash tiles `tile/<L>/<N>[.p/<W>]`: level 0 holds leaf hashes; the
//!   `i`-th hash of a level-`L` tile is the root of the `i`-th full tile of
//!   level `L - 1`, that is of `256^L` leaves. Tiles are stored as they grow
//!   ([`TileId`]); a partial tile of width `W` is the first `W` hashes of
//!   the stored one.
//! - Entry bundles `tile/entries/<N>[.p/<W>]`: the leaves' bytes (each
//!   record's canonical JSON), each behind its length as a big-endian
//!   `u16`.
//!
//! `<N>` is written in 3-digit groups, all but the last prefixed with `x`:
//! 1234067 is `x001/x234/067`.

use crate::merkle::Digest;

/// The form of a tile path after `tile/`, as a regular expression (for the
/// OpenAPI document): a level or `entries`, the index in `x001/x234/067`
/// form, an optional `.p/<width>`. [`TilePath::parse`] is stricter (levels
/// up to 63, widths 1 to 255, one spelling per index); a path of this form
/// the tree does not have is 404 like any other.
pub const PATH_PATTERN: &str = "^(entries|[0-9]{1,2})/(x[0-9]{3}/)*[0-9]{3}(\\.p/[0-9]{1,3})?$";

/// Hashes a full tile holds.
pub const TILE_WIDTH: u64 = 256;
/// Tree levels a tile spans (`256 = 2^8`).
pub const TILE_HEIGHT: u32 = 8;
/// The largest entry a bundle can carry (its length is a `u16`).
pub const MAX_ENTRY_BYTES: usize = u16::MAX as usize;

/// A stored hash tile: its level and its index in that level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TileId {
    /// 0 for leaf hashes.
    pub level: u8,
    /// Its place in the level.
    pub index: u64,
}

/// What a tile path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileKind {
    /// A hash tile of this level.
    Hashes(u8),
    /// An entry bundle.
    Entries,
}

/// A tile as its path names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TilePath {
    /// Hashes (and which level) or entries.
    pub kind: TileKind,
    /// The tile's index in its level.
    pub index: u64,
    /// The width of a partial tile (1 to 255); `None` for a full tile.
    pub partial: Option<u16>,
}

impl TilePath {
    /// Reads the part of a tile URL after `tile/`: `<L>/<N>[.p/<W>]` or
    /// `entries/<N>[.p/<W>]`, exactly as the specification spells it.
    pub fn parse(path: &str) -> Option<TilePath> {
        let (head, rest) = path.split_once('/')?;
        let kind = if head == "entries" {
            TileKind::Entries
        } else {
            let level: u8 = decimal(head)?.try_into().ok()?;
            if level > 63 {
                return None;
            }
            TileKind::Hashes(level)
        };
        let (index_path, partial) = match rest.split_once(".p/") {
            Some((index, width)) => {
                let width = decimal(width)?;
                if !(1..TILE_WIDTH).contains(&width) {
                    return None;
                }
                (index, Some(width as u16))
            }
            None => (rest, None),
        };
        let groups: Vec<&str> = index_path.split('/').collect();
        let (last, leading) = groups.split_last()?;
        let mut index: u64 = 0;
        for (i, group) in groups.iter().enumerate() {
            let digits = if i == leading.len() {
                *last
            } else {
                group.strip_prefix('x')?
            };
            if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            index = index
                .checked_mul(1000)?
                .checked_add(digits.parse::<u64>().ok()?)?;
        }
        let path = TilePath {
            kind,
            index,
            partial,
        };
        // One spelling per tile: no leading groups of zeros.
        (index_path.len() + 1
            == path_string(path).len()
                - head.len()
                - path.partial.map_or(0, |w| format!(".p/{w}").len()))
        .then_some(path)
    }

    /// The part of the tile's URL after `tile/`.
    pub fn to_path(&self) -> String {
        path_string(*self)
    }

    /// The tile's width in a tree of `size` leaves: 256 when full, else the
    /// partial width (0: the tile does not exist at that size).
    pub fn width_in(&self, size: u64) -> u64 {
        let level = match self.kind {
            TileKind::Hashes(level) => u32::from(level),
            TileKind::Entries => 0,
        };
        let hashes = level_width(size, level);
        let first = self.index.saturating_mul(TILE_WIDTH);
        hashes.saturating_sub(first).min(TILE_WIDTH)
    }

    /// Whether a tree of `size` leaves has this tile at this width: a full
    /// tile once it is full; a partial one of any width up to the tile's
    /// width at `size` (a narrower one is an older tree's, the same first
    /// hashes, which a reader holding an older checkpoint asks for).
    pub fn exists_in(&self, size: u64) -> bool {
        let width = self.width_in(size);
        match self.partial {
            None => width == TILE_WIDTH,
            Some(w) => u64::from(w) <= width,
        }
    }

    /// The hashes (or entries) it holds.
    pub fn width(&self) -> u64 {
        self.partial.map_or(TILE_WIDTH, u64::from)
    }
}

/// How many hashes level `level` holds in a tree of `size` leaves.
pub fn level_width(size: u64, level: u32) -> u64 {
    size.checked_shr(TILE_HEIGHT * level).unwrap_or(0)
}

fn decimal(text: &str) -> Option<u64> {
    if text.is_empty() || (text.len() > 1 && text.starts_with('0')) {
        return None;
    }
    text.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| text.parse().ok())
        .flatten()
}

fn path_string(path: TilePath) -> String {
    let mut groups = vec![format!("{:03}", path.index % 1000)];
    let mut rest = path.index / 1000;
    while rest > 0 {
        groups.push(format!("x{:03}", rest % 1000));
        rest /= 1000;
    }
    groups.reverse();
    let kind = match path.kind {
        TileKind::Hashes(level) => level.to_string(),
        TileKind::Entries => "entries".to_owned(),
    };
    let partial = path.partial.map_or(String::new(), |w| format!(".p/{w}"));
    format!("{kind}/{}{partial}", groups.join("/"))
}

/// Where the nodes an append created go in the stored tiles: `created` is
/// what [`crate::merkle::Frontier::push_recording`] returns for a tree that
/// now has `size` leaves (the leaf at height 0, then each node it merged
/// into); each node of a height that is a multiple of 8 is the next hash of
/// a tile.
pub fn tile_appends(size: u64, created: &[(u32, Digest)]) -> Vec<(TileId, Digest)> {
    created
        .iter()
        .filter(|(height, _)| height % TILE_HEIGHT == 0)
        .map(|(height, hash)| {
            let level = height / TILE_HEIGHT;
            let position = level_width(size, level) - 1;
            (
                TileId {
                    level: level as u8,
                    index: position / TILE_WIDTH,
                },
                *hash,
            )
        })
        .collect()
}

/// Every tile of the tree whose leaves are `leaves`, built from scratch:
/// what a store must hold, and what a verifier compares served tiles with.
pub fn tiles_of(leaves: &[Digest]) -> std::collections::BTreeMap<TileId, Vec<Digest>> {
    let mut frontier = crate::merkle::Frontier::empty();
    let mut tiles: std::collections::BTreeMap<TileId, Vec<Digest>> = Default::default();
    for leaf in leaves {
        let created = frontier.push_recording(*leaf);
        for (tile, hash) in tile_appends(frontier.size(), &created) {
            tiles.entry(tile).or_default().push(hash);
        }
    }
    tiles
}

/// An entry bundle: each entry's length as a big-endian `u16`, then its
/// bytes. `None` if an entry is larger than a `u16` can say (the ledger
/// refuses such records).
pub fn entry_bundle<'a>(entries: impl IntoIterator<Item = &'a [u8]>) -> Option<Vec<u8>> {
    let mut bundle = Vec::new();
    for entry in entries {
        let length = u16::try_from(entry.len()).ok()?;
        bundle.extend_from_slice(&length.to_be_bytes());
        bundle.extend_from_slice(entry);
    }
    Some(bundle)
}

/// The entries of a bundle, or `None` if it is not one.
pub fn split_bundle(mut bundle: &[u8]) -> Option<Vec<&[u8]>> {
    let mut entries = Vec::new();
    while !bundle.is_empty() {
        let (length, rest) = bundle.split_first_chunk::<2>()?;
        let length = usize::from(u16::from_be_bytes(*length));
        let (entry, rest) = rest.split_at_checked(length)?;
        entries.push(entry);
        bundle = rest;
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_paths_read_and_write_as_the_specification_spells_them() {
        let path = TilePath::parse("0/x001/x234/067").unwrap();
        assert_eq!(
            path,
            TilePath {
                kind: TileKind::Hashes(0),
                index: 1_234_067,
                partial: None
            }
        );
        assert_eq!(path.to_path(), "0/x001/x234/067");
        let partial = TilePath::parse("entries/001.p/17").unwrap();
        assert_eq!(
            (partial.kind, partial.index, partial.partial),
            (TileKind::Entries, 1, Some(17))
        );
        assert_eq!(TilePath::parse("2/000").unwrap().index, 0);
        for bad in [
            "0/1",
            "0/0001",
            "0/x000/001",
            "64/000",
            "01/000",
            "0/000.p/0",
            "0/000.p/256",
            "0/000.p/012",
            "0/000/",
            "x/000",
            "entries/x1/000",
            "0/x001",
            "0/001/002",
        ] {
            assert_eq!(TilePath::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn widths_follow_the_tree_size() {
        // The specification's example: 70,000 leaves.
        let size = 70_000;
        let tile = |level, index, partial| TilePath {
            kind: TileKind::Hashes(level),
            index,
            partial,
        };
        assert!(tile(0, 272, None).exists_in(size));
        assert!(tile(0, 273, Some(112)).exists_in(size));
        assert!(!tile(0, 273, None).exists_in(size));
        assert!(tile(1, 0, None).exists_in(size));
        assert!(tile(1, 1, Some(17)).exists_in(size));
        assert!(tile(2, 0, Some(1)).exists_in(size));
        assert!(!tile(2, 0, Some(2)).exists_in(size));
        assert!(!tile(3, 0, Some(1)).exists_in(size));
        // Narrower partial tiles are older trees'; wider ones do not exist.
        assert!(tile(0, 273, Some(111)).exists_in(size));
        assert!(!tile(0, 273, Some(113)).exists_in(size));
        assert!(tile(0, 272, Some(255)).exists_in(size));
        // 256 leaves: a full level-0 tile and a level-1 tile of width 1.
        assert!(tile(0, 0, None).exists_in(256) && tile(1, 0, Some(1)).exists_in(256));
    }

    #[test]
    fn bundles_round_trip_and_refuse_what_a_u16_cannot_say() {
        let entries: Vec<&[u8]> = vec![b"{}", b"", b"{\"a\":1}"];
        let bundle = entry_bundle(entries.iter().copied()).unwrap();
        assert_eq!(split_bundle(&bundle).unwrap(), entries);
        assert!(entry_bundle([vec![0u8; 65_536].as_slice()]).is_none());
        assert!(split_bundle(&[0, 5, 1]).is_none());
    }
}
