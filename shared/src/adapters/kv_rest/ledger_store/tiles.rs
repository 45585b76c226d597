//! The KV store's log reads: the head, hash tiles and entry runs, each one
//! `multi-exec` with the head; and building the tiles from the leaves
//! (`tiles.lua`, conditional on the head), for a ledger written before
//! tiles were kept and for tiles lost from the store (a tile shorter than
//! the tree says it must be, or gone): the records are the truth the tiles
//! are derived from, and every proof built on rebuilt tiles is still
//! checked against the head's root before it is served.

use super::super::client::{Command, Script, as_array, as_string};
use super::{KvLedgerStore, command_result, optional_field, parse_head, parse_record};
use crate::merkle::{Digest, Frontier, Head};
use crate::ports::ledger_store::{EntryRun, HeadReads, StoreError, TileRead, TileReads};
use crate::tlog::tiles::{TILE_WIDTH, TileId, level_width, tile_appends};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static TILES_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("tiles.lua")));

/// How many tiles one call of the tile-building script stores (at most
/// about 512 KiB of hex per request).
const TILES_PER_BUILD_REQUEST: usize = 32;

/// How many leaf hashes one pipeline of the tile build reads.
const LEAVES_PER_BUILD_REQUEST: u64 = 1000;

/// How often the tile build starts over because appends moved the head.
const MAX_BUILD_ATTEMPTS: usize = 20;

impl KvLedgerStore {
    /// The head and how many leaves the tiles cover.
    fn head_and_tiles_command(&self) -> Command {
        self.head_command().arg("tiles")
    }

    /// Builds the tiles from the leaves if they do not cover the tree (a
    /// ledger written before tiles were kept), or whatever they say when
    /// `rebuild` (a tile was lost). Once built, appends keep them; the
    /// build is conditional on the head, so it is safe to race.
    pub(super) async fn complete_tiles(&self, rebuild: bool) -> Result<(), StoreError> {
        for _ in 0..MAX_BUILD_ATTEMPTS {
            let value = self.client.command(&self.head_and_tiles_command()).await?;
            let fields = as_array(&value)?;
            let head = parse_head(fields)?;
            let covered = optional_field(fields, 2)?.unwrap_or("0");
            if covered == head.size.to_string() && !rebuild {
                return Ok(());
            }
            tracing::info!(
                leaves = head.size,
                "building the log's tiles from the ledger's leaves"
            );
            let mut frontier = Frontier::empty();
            let mut tiles: BTreeMap<TileId, Vec<u8>> = BTreeMap::new();
            let mut first = 1;
            while first <= head.size {
                let last = head.size.min(first + LEAVES_PER_BUILD_REQUEST - 1);
                let commands: Vec<Command> = (first..=last)
                    .map(|seq| {
                        Command::new("GETRANGE")
                            .arg(self.record_key(seq))
                            .arg(0)
                            .arg(63)
                    })
                    .collect();
                for (seq, result) in (first..=last).zip(self.client.pipeline(&commands).await?) {
                    let value = command_result(result)?;
                    let leaf = as_string(&value)?
                        .and_then(Digest::from_hex)
                        .ok_or_else(|| StoreError::Corrupt(format!("record {seq} is malformed")))?;
                    let created = frontier.push_recording(leaf);
                    for (tile, hash) in tile_appends(frontier.size(), &created) {
                        tiles.entry(tile).or_default().extend_from_slice(&hash.0);
                    }
                }
                first = last + 1;
            }
            if frontier.head() != head {
                return Err(StoreError::Corrupt(
                    "the ledger's leaves do not hash to its head".into(),
                ));
            }
            if self.store_built_tiles(head.size, &tiles).await? {
                return Ok(());
            }
        }
        Err(StoreError::unavailable_now(
            "the ledger head kept moving while its tiles were built; try again",
        ))
    }

    /// Stores built tiles in parts; `false` if the head moved meanwhile.
    async fn store_built_tiles(
        &self,
        size: u64,
        tiles: &BTreeMap<TileId, Vec<u8>>,
    ) -> Result<bool, StoreError> {
        let all: Vec<(&TileId, &Vec<u8>)> = tiles.iter().collect();
        let parts: Vec<&[(&TileId, &Vec<u8>)]> = if all.is_empty() {
            vec![&[]]
        } else {
            all.chunks(TILES_PER_BUILD_REQUEST).collect()
        };
        for (i, part) in parts.iter().enumerate() {
            let mut keys = vec![self.key("head")];
            keys.extend(part.iter().map(|(tile, _)| self.tile_key(**tile)));
            let mut args = vec![
                size.to_string(),
                if i + 1 == parts.len() { "last" } else { "part" }.to_owned(),
            ];
            args.extend(part.iter().map(|(_, hashes)| hex::encode(hashes)));
            let answer = TILES_SCRIPT.run(&self.client, &keys, &args).await?;
            if as_string(&answer)? != Some("stored") {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[async_trait]
impl HeadReads for KvLedgerStore {
    async fn head(&self) -> Result<Head, StoreError> {
        let (fields, _) = self.head_with(self.head_command(), Vec::new()).await?;
        parse_head(&fields)
    }
}

#[async_trait]
impl TileReads for KvLedgerStore {
    /// One round trip: the head (with the tiles' coverage) and the tiles in
    /// one `multi-exec`.
    async fn tiles(&self, ids: &[TileId]) -> Result<TileRead, StoreError> {
        for attempt in 0..2 {
            let mut more = Vec::new();
            if !ids.is_empty() {
                more.push(Command::new("MGET").args(ids.iter().map(|id| self.tile_key(*id))));
            }
            let (fields, results) = self.head_with(self.head_and_tiles_command(), more).await?;
            let mut results = results.into_iter();
            let head = parse_head(&fields)?;
            if optional_field(&fields, 2)?.unwrap_or("0") != head.size.to_string() {
                self.complete_tiles(false).await?;
                continue;
            }
            let mut tiles = BTreeMap::new();
            if let Some(result) = results.next() {
                let values = command_result(result)?;
                for (id, value) in ids.iter().zip(as_array(&values)?) {
                    if let Some(text) = as_string(value)? {
                        tiles.insert(*id, parse_tile(text)?);
                    }
                }
            }
            let lost = ids.iter().any(|id| {
                tiles
                    .get(id)
                    .map_or(0, |hashes: &Vec<Digest>| hashes.len() as u64)
                    < stored_width(*id, head.size)
            });
            if lost && attempt == 0 {
                tracing::warn!(
                    leaves = head.size,
                    "a hash tile is missing or short: rebuilding the log's tiles from the ledger's leaves"
                );
                self.complete_tiles(true).await?;
                continue;
            }
            return Ok(TileRead { head, tiles });
        }
        Err(StoreError::unavailable_now(
            "the log's tiles are being built; try again",
        ))
    }

    /// One round trip: the head and the records in one `multi-exec`.
    async fn entry_run(&self, first_seq: u64, count: u64) -> Result<EntryRun, StoreError> {
        let seqs: Vec<u64> = (first_seq..first_seq.saturating_add(count.min(TILE_WIDTH))).collect();
        let mut more = Vec::new();
        if !seqs.is_empty() {
            more.push(Command::new("MGET").args(seqs.iter().map(|s| self.record_key(*s))));
        }
        let (fields, results) = self.head_with(self.head_command(), more).await?;
        let mut results = results.into_iter();
        let head = parse_head(&fields)?;
        let mut entries = Vec::with_capacity(seqs.len());
        if let Some(result) = results.next() {
            let values = command_result(result)?;
            for (seq, value) in seqs.iter().zip(as_array(&values)?) {
                match as_string(value)? {
                    Some(text) => entries.push(parse_record(*seq, text)?),
                    None => break,
                }
            }
        }
        Ok(EntryRun { head, entries })
    }
}

/// How many hashes the tile `id` holds in a tree of `size` leaves: the
/// nodes of its level closed so far within its 256.
fn stored_width(id: TileId, size: u64) -> u64 {
    let first = id.index.saturating_mul(TILE_WIDTH);
    level_width(size, u32::from(id.level))
        .saturating_sub(first)
        .min(TILE_WIDTH)
}

fn parse_tile(text: &str) -> Result<Vec<Digest>, StoreError> {
    let corrupt = || StoreError::Corrupt("a stored tile is not whole hashes".into());
    if !text.len().is_multiple_of(64) {
        return Err(corrupt());
    }
    (0..text.len())
        .step_by(64)
        .map(|i| {
            text.get(i..i + 64)
                .and_then(Digest::from_hex)
                .ok_or_else(corrupt)
        })
        .collect()
}
