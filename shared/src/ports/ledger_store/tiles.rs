//! What the log reads: the head, hash tiles and entry runs, each with the
//! head it was read at.

use super::{Entry, HeadReads, StoreError};
use crate::merkle::{Digest, Head};
use crate::tlog::tiles::TileId;
use async_trait::async_trait;
use std::collections::BTreeMap;

/// Stored hash tiles and the head they were read with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileRead {
    /// The head at the moment of the read.
    pub head: Head,
    /// Each tile asked for that is stored, with the hashes it holds at
    /// `head` (a tile still filling may be wider than a smaller tree needs).
    pub tiles: BTreeMap<TileId, Vec<Digest>>,
}

/// Consecutive entries and the head they were read with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRun {
    /// The head at the moment of the read.
    pub head: Head,
    /// The entries asked for that exist, in seq order, without gaps.
    pub entries: Vec<Entry>,
}

/// The log's reads (and the head, as every reader).
#[async_trait]
pub trait TileReads: HeadReads {
    /// The hash tiles `ids` (c2sp.org/tlog-tiles, height 8) as stored, and
    /// the head, read at one moment. Stores keep the tiles as appends
    /// complete them (each append adds the nodes it closed at heights that
    /// are multiples of 8), so this is one read: one round trip on the KV
    /// store, one read transaction on SQLite.
    async fn tiles(&self, ids: &[TileId]) -> Result<TileRead, StoreError>;

    /// At most `count` entries (and never more than a bundle's 256) from
    /// `first_seq` on, in order, and the head, read at one moment: an entry
    /// bundle's records.
    async fn entry_run(&self, first_seq: u64, count: u64) -> Result<EntryRun, StoreError>;
}
