//! The production ledger store: Redis behind the Upstash REST protocol
//! ([`super::client`]).
//!
//! # Key layout
//!
//! Every key starts with the configured prefix `P` (`FF_KV_PREFIX`, default
//! `ff:`). Codes are fixed-width lowercase hex so that byte order is number
//! order: an `asOf` code is the nanoseconds with the sign bit flipped (16
//! digits), a seq code is the seq (16 digits).
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P head` | hash | `size`, `root` (hex), `frontier` (hex of the right edge's subtree roots), `tiles` (how many leaves the tiles cover) |
//! | `P tile:{level}:{index}` | string | a hash tile (c2sp.org/tlog-tiles, height 8): its hashes, hex, concatenated |
//! | `P rec:{seq}` | string | leaf hash (64 hex) followed by the canonical record |
//! | `P ids` | hash | record id → `"{seq} {leaf hex}"` |
//! | `P series:{mode}:{strategy}` | sorted set, all scores 0 | `"{asOf code}:{seq code}"` per snapshot |
//! | `P decisions` | sorted set, all scores 0 | `"{asOf code}:{seq code}"` per decision |
//! | `P strategies` | hash | `"{mode} {strategy}"` → seq of its latest snapshot |
//! | `P idx:{kind}:{mode}:{strategy}` | sorted set | seq (score = seq) |
//! | `P idx:{kind}:{mode}` | sorted set | seq (score = seq) |
//! | `P rollup:{mode}:{strategy}` | hash | the dashboard's since-inception roll-up: `version`, `from` (an `asOf` code: the state folds every snapshot before it), `through` (the last seq it folds), `state` |
//!
//! So no read scans the ledger: an unfiltered page is a range of seqs below
//! the head; a filtered page merges at most four `idx` ranges (kind × mode);
//! a strategy's series in a window is two lexicographic ranges of its
//! `series` set (the baseline at or before the start, then the window);
//! decisions in a time range are one range of `decisions`; the latest
//! snapshot of every strategy is one hash. Times are lexicographic members,
//! not scores, because nanoseconds since the epoch do not fit a double.
//!
//! # Round trips
//!
//! - append: one `EVALSHA` of `append.lua` that checks id, slot, order and
//!   the head and writes record, id, time index, latest, both page indexes and
//!   the head together; the new root is computed here (Redis Lua has no
//!   SHA-256) from the head's frontier, read first when this process has not
//!   seen the head yet. So: two round trips uncontended, one when the cached
//!   head is current. If the head moved, the script answers the current
//!   frontier and the append is retried (at most `append::MAX_APPEND_ATTEMPTS`).
//!   A retry of an append whose write took effect behind a failed answer finds
//!   its id with the same leaf: `unchanged`, never a second leaf. The same
//!   script appends the nodes the leaf completed to their hash tiles, so the
//!   tiles are always exactly the tree's.
//! - tiles and entry bundles: one (`multi-exec` of the head and an `MGET`);
//!   a proof is two (the head, then its tiles). A ledger written before
//!   tiles were kept has its tiles built once from its leaves by the first
//!   read that needs them (`tiles.lua`, conditional on the head).
//! - head: one; latest snapshots (with the head and the first record): one
//!   run of `latest.lua`; dashboard window, series, decisions: one run of
//!   `window.lua` (index ranges and records together), so a cold
//!   dashboard is two; page: one run of `page.lua` (the head, the
//!   page's seqs merged from its indexes, and the records in order up to
//!   the page's byte budget).
//! - a series export's rows from its cursor: one run of `after.lua`
//!   (the series' page index from the cursor's seq, and the records).
//! - since inception: one run of `since.lua` (each series' roll-up, when
//!   its version is the reader's and it folds nothing beyond the reader's
//!   head, with the series' members from its `from` code on, else the whole
//!   series; and the latest decisions), so a cold `period=all` is two like
//!   any period; storing roll-ups after a month closes is one run of
//!   `rollups.lua`, which never moves a roll-up back.

use super::client::{Command, CommandResult, KvClient, KvError, as_array, as_string};
use crate::merkle::{Digest, Frontier, Head};
use crate::ports::ledger_store::{Entry, StoreError};
use crate::record::{Mode, RecordKind};
use crate::tlog::tiles::TileId;
use serde_json::Value;
use std::sync::Mutex;

mod append;
mod pages;
mod series;
#[cfg(test)]
mod tests;
mod tiles;

/// What a read says of a head that was lost (missing while the ledger has
/// records): the store is damaged, not empty.
pub(super) const LOST_HEAD: &str = "the head is missing while the ledger has records";

impl From<KvError> for StoreError {
    /// A command the store refused is a fault of the service's own (a Lua
    /// error, `WRONGTYPE`), unless the store says it is busy or out of a
    /// limit; everything else about the store is unavailability.
    fn from(error: KvError) -> StoreError {
        match &error {
            KvError::Command(message) if message.contains(DAMAGED) => {
                let (_, why) = message.split_once(DAMAGED).unwrap_or_default();
                StoreError::Corrupt(why.trim().to_owned())
            }
            KvError::Command(message) if !is_transient_refusal(message) => StoreError::Fault {
                context: "KV REST store".into(),
                cause: Some(error.into()),
            },
            _ => StoreError::unavailable("KV REST store", error),
        }
    }
}

/// How the scripts begin an error that says the ledger's keys disagree (a
/// key was lost): the data breaks the ledger's invariants.
const DAMAGED: &str = "ledger_damaged:";

/// Redis and Upstash refusals that pass: a script still running, a server
/// loading or out of memory, a replica, a request or rate limit.
fn is_transient_refusal(message: &str) -> bool {
    const TRANSIENT: [&str; 8] = [
        "BUSY",
        "LOADING",
        "OOM",
        "TRYAGAIN",
        "CLUSTERDOWN",
        "MASTERDOWN",
        "READONLY",
        "ERR max",
    ];
    TRANSIENT.iter().any(|prefix| message.starts_with(prefix))
}

/// The KV REST adapter of [`crate::ports::LedgerStore`].
#[derive(Debug)]
pub struct KvLedgerStore {
    client: KvClient,
    prefix: String,
    /// The last head this process saw; a hint the append script verifies.
    cached_frontier: Mutex<Option<Frontier>>,
}

impl KvLedgerStore {
    /// The ledger under `prefix` on the store `client` talks to.
    pub fn new(client: KvClient, prefix: impl Into<String>) -> KvLedgerStore {
        KvLedgerStore {
            client,
            prefix: prefix.into(),
            cached_frontier: Mutex::new(None),
        }
    }

    pub(super) fn key(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.prefix)
    }

    pub(super) fn record_key(&self, seq: u64) -> String {
        self.key(&format!("rec:{seq}"))
    }

    /// What a record's key is before its seq (for the read scripts).
    pub(super) fn record_key_prefix(&self) -> String {
        self.key("rec:")
    }

    pub(super) fn series_key(&self, strategy: &str, mode: Mode) -> String {
        self.key(&format!("series:{}:{strategy}", mode.as_str()))
    }

    pub(super) fn rollup_key(&self, strategy: &str, mode: Mode) -> String {
        self.key(&format!("rollup:{}:{strategy}", mode.as_str()))
    }

    pub(super) fn index_key(&self, kind: RecordKind, mode: Mode, strategy: Option<&str>) -> String {
        match strategy {
            Some(s) => self.key(&format!("idx:{}:{}:{s}", kind.as_str(), mode.as_str())),
            None => self.key(&format!("idx:{}:{}", kind.as_str(), mode.as_str())),
        }
    }

    pub(super) fn tile_key(&self, tile: TileId) -> String {
        self.key(&format!("tile:{}:{}", tile.level, tile.index))
    }

    pub(super) fn head_command(&self) -> Command {
        Command::new("HMGET")
            .arg(self.key("head"))
            .arg("size")
            .arg("root")
    }

    /// `head` (an `HMGET` of the head) and `more`, in one `multi-exec`
    /// with `EXISTS` of the id index: a head that is missing while the
    /// ledger has ids was lost, and reads as an error, never as an empty
    /// ledger. Gives the head's fields and the results of `more`.
    pub(super) async fn head_with(
        &self,
        head: Command,
        more: Vec<Command>,
    ) -> Result<(Vec<Value>, Vec<CommandResult>), StoreError> {
        let mut commands = vec![head, Command::new("EXISTS").arg(self.key("ids"))];
        commands.extend(more);
        let mut results = self.client.multi_exec(&commands).await?.into_iter();
        let fields = command_result(results.next().expect("the head's result"))?;
        let ids = command_result(results.next().expect("the id index's result"))?;
        let fields = as_array(&fields)?.to_vec();
        if optional_field(&fields, 0)?.is_none() && ids.as_u64() == Some(1) {
            return Err(StoreError::Corrupt(LOST_HEAD.into()));
        }
        Ok((fields, results.collect()))
    }
}

pub(super) fn optional_field(fields: &[Value], index: usize) -> Result<Option<&str>, StoreError> {
    match fields.get(index) {
        Some(value) => Ok(as_string(value)?),
        None => Ok(None),
    }
}

pub(super) fn parse_head(fields: &[Value]) -> Result<Head, StoreError> {
    match (optional_field(fields, 0)?, optional_field(fields, 1)?) {
        (None, _) => Ok(Head::empty()),
        (Some(size), Some(root)) => Ok(Head {
            size: size
                .parse()
                .map_err(|_| StoreError::Corrupt("the head's size is not a number".into()))?,
            root_hash: Digest::from_hex(root)
                .ok_or_else(|| StoreError::Corrupt("the head's root is not a hash".into()))?,
        }),
        (Some(_), None) => Err(StoreError::Corrupt(
            "the head has a size but no root".into(),
        )),
    }
}

pub(super) fn parse_record(seq: u64, text: &str) -> Result<Entry, StoreError> {
    let corrupt = || StoreError::Corrupt(format!("record {seq} is malformed"));
    let (leaf, canonical) = text.split_at_checked(64).ok_or_else(corrupt)?;
    Entry::read(
        seq,
        Digest::from_hex(leaf).ok_or_else(corrupt)?,
        canonical.to_owned(),
    )
}

/// The order-preserving code of an instant: sign bit flipped, 16 hex digits.
pub(super) fn time_code(nanos: i64) -> String {
    format!("{:016x}", (nanos as u64) ^ (1 << 63))
}

pub(super) fn seq_code(seq: u64) -> String {
    format!("{seq:016x}")
}

/// The seq in a time-index member `"{asOf code}:{seq code}"`.
pub(super) fn member_seq(member: &str) -> Result<u64, StoreError> {
    member
        .split_once(':')
        .and_then(|(_, seq)| u64::from_str_radix(seq, 16).ok())
        .ok_or_else(|| StoreError::Corrupt("a time index member is malformed".into()))
}

pub(super) fn command_result(result: CommandResult) -> Result<Value, StoreError> {
    result.map_err(|message| KvError::Command(message).into())
}

pub(super) fn parse_seq(text: &str) -> Result<u64, StoreError> {
    text.parse()
        .map_err(|_| StoreError::Corrupt("a stored seq is not a number".into()))
}

/// Entries from a script's flat `{seq, record, seq, record, ...}` answer; a
/// missing record (an index names it) is corrupt.
pub(super) fn seq_record_pairs(values: &[Value]) -> Result<Vec<Entry>, StoreError> {
    values
        .chunks(2)
        .map(|pair| {
            let seq = parse_seq(
                pair.first()
                    .map(as_string)
                    .transpose()?
                    .flatten()
                    .unwrap_or_default(),
            )?;
            match pair.get(1).map(as_string).transpose()?.flatten() {
                Some(text) => parse_record(seq, text),
                None => Err(StoreError::Corrupt(format!(
                    "an index names record {seq}, which is missing"
                ))),
            }
        })
        .collect()
}
