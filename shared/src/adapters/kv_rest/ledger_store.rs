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
//! - append: one `EVALSHA` of `kv_append.lua` that checks id, slot, order and
//!   the head and writes record, id, time index, latest, both page indexes and
//!   the head together; the new root is computed here (Redis Lua has no
//!   SHA-256) from the head's frontier, read first when this process has not
//!   seen the head yet. So: two round trips uncontended, one when the cached
//!   head is current. If the head moved, the script answers the current
//!   frontier and the append is retried (at most [`MAX_APPEND_ATTEMPTS`]).
//!   A retry of an append whose write took effect behind a failed answer finds
//!   its id with the same leaf: `unchanged`, never a second leaf. The same
//!   script appends the nodes the leaf completed to their hash tiles, so the
//!   tiles are always exactly the tree's.
//! - tiles and entry bundles: one (`multi-exec` of the head and an `MGET`);
//!   a proof is two (the head, then its tiles). A ledger written before
//!   tiles were kept has its tiles built once from its leaves by the first
//!   read that needs them (`kv_tiles.lua`, conditional on the head).
//! - head: one; latest snapshots (with the head and the first record): one
//!   run of `kv_latest.lua`; dashboard window, series, decisions: one run of
//!   `kv_window.lua` (index ranges and records together), so a cold
//!   dashboard is two; page: one run of `kv_page.lua` (the head, the
//!   page's seqs merged from its indexes, and the records in order up to
//!   the page's byte budget).
//! - a series export's rows from its cursor: one run of `kv_after.lua`
//!   (the series' page index from the cursor's seq, and the records).
//! - since inception: one run of `kv_since.lua` (each series' roll-up, when
//!   its version is the reader's and it folds nothing beyond the reader's
//!   head, with the series' members from its `from` code on, else the whole
//!   series; and the latest decisions), so a cold `period=all` is two like
//!   any period; storing roll-ups after a month closes is one run of
//!   `kv_rollups.lua`, which never moves a roll-up back.

use super::client::{Command, CommandResult, KvClient, KvError, Script, as_array, as_string};
use crate::merkle::{Digest, Frontier, Head};
use crate::ports::ledger_store::{
    AppendOutcome, Candidate, Entry, EntryRun, LatestSnapshots, LedgerStore,
    PAGE_ENTRY_OVERHEAD_BYTES, Page, PageBuilder, PageQuery, Refusal, Rollup, SeriesSince,
    SinceInception, StoreError, TileRead, WindowEntries,
};
use crate::record::{Mode, RecordKind, StrategyId};
use crate::tlog::tiles::{TILE_WIDTH, TileId, level_width, tile_appends};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex};

/// How often an append recomputes its root because others appended first,
/// before it answers "unavailable" (the client may retry).
pub const MAX_APPEND_ATTEMPTS: usize = 200;

static APPEND_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("append.lua")));
static PAGE_SCRIPT: LazyLock<Script> =
    LazyLock::new(|| Script::new(concat!(include_str!("head.lua"), include_str!("page.lua"))));
static TILES_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("tiles.lua")));
static LATEST_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("head.lua"),
        include_str!("latest.lua")
    ))
});
static WINDOW_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("records.lua"),
        include_str!("window.lua")
    ))
});
static SINCE_SCRIPT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("records.lua"),
        include_str!("since.lua")
    ))
});
static AFTER_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("after.lua")));
static ROLLUPS_SCRIPT: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("rollups.lua")));

/// What a read says of a head that was lost (missing while the ledger has
/// records): the store is damaged, not empty.
const LOST_HEAD: &str = "the head is missing while the ledger has records";

/// How many tiles one call of the tile-building script stores (at most
/// about 512 KiB of hex per request).
const TILES_PER_BUILD_REQUEST: usize = 32;
/// How many leaf hashes one pipeline of the tile build reads.
const LEAVES_PER_BUILD_REQUEST: u64 = 1000;
/// How often the tile build starts over because appends moved the head.
const MAX_BUILD_ATTEMPTS: usize = 20;

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

/// The KV REST adapter of [`LedgerStore`].
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

    fn key(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.prefix)
    }

    fn record_key(&self, seq: u64) -> String {
        self.key(&format!("rec:{seq}"))
    }

    /// What a record's key is before its seq (for the read scripts).
    fn record_key_prefix(&self) -> String {
        self.key("rec:")
    }

    fn series_key(&self, strategy: &str, mode: Mode) -> String {
        self.key(&format!("series:{}:{strategy}", mode.as_str()))
    }

    fn rollup_key(&self, strategy: &str, mode: Mode) -> String {
        self.key(&format!("rollup:{}:{strategy}", mode.as_str()))
    }

    fn index_key(&self, kind: RecordKind, mode: Mode, strategy: Option<&str>) -> String {
        match strategy {
            Some(s) => self.key(&format!("idx:{}:{}:{s}", kind.as_str(), mode.as_str())),
            None => self.key(&format!("idx:{}:{}", kind.as_str(), mode.as_str())),
        }
    }

    fn tile_key(&self, tile: TileId) -> String {
        self.key(&format!("tile:{}:{}", tile.level, tile.index))
    }

    /// The head and how many leaves the tiles cover.
    fn head_and_tiles_command(&self) -> Command {
        self.head_command().arg("tiles")
    }

    /// Builds the tiles from the leaves if they do not cover the tree (a
    /// ledger written before tiles were kept). Once built, appends keep
    /// them; the build is conditional on the head, so it is safe to race.
    async fn complete_tiles(&self) -> Result<(), StoreError> {
        for _ in 0..MAX_BUILD_ATTEMPTS {
            let value = self.client.command(&self.head_and_tiles_command()).await?;
            let fields = as_array(&value)?;
            let head = parse_head(fields)?;
            let covered = optional_field(fields, 2)?.unwrap_or("0");
            if covered == head.size.to_string() {
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

    fn head_command(&self) -> Command {
        Command::new("HMGET")
            .arg(self.key("head"))
            .arg("size")
            .arg("root")
    }

    /// `head` (an `HMGET` of the head) and `more`, in one `multi-exec`
    /// with `EXISTS` of the id index: a head that is missing while the
    /// ledger has ids was lost, and reads as an error, never as an empty
    /// ledger. Gives the head's fields and the results of `more`.
    async fn head_with(
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

    fn cache(&self) -> std::sync::MutexGuard<'_, Option<Frontier>> {
        self.cached_frontier
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    async fn read_frontier(&self) -> Result<Frontier, StoreError> {
        let value = self
            .client
            .command(
                &Command::new("HMGET")
                    .arg(self.key("head"))
                    .arg("size")
                    .arg("frontier"),
            )
            .await?;
        let fields = as_array(&value)?;
        let size = optional_field(fields, 0)?;
        let frontier = optional_field(fields, 1)?;
        parse_frontier(size.unwrap_or("0"), frontier.unwrap_or(""))
    }
}

fn optional_field(fields: &[Value], index: usize) -> Result<Option<&str>, StoreError> {
    match fields.get(index) {
        Some(value) => Ok(as_string(value)?),
        None => Ok(None),
    }
}

fn parse_frontier(size: &str, frontier_hex: &str) -> Result<Frontier, StoreError> {
    let size: u64 = size
        .parse()
        .map_err(|_| StoreError::Corrupt("the head's size is not a number".into()))?;
    let bytes = hex::decode(frontier_hex)
        .map_err(|_| StoreError::Corrupt("the head's frontier is not hex".into()))?;
    Frontier::from_bytes(size, &bytes).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn parse_head(fields: &[Value]) -> Result<Head, StoreError> {
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

fn parse_record(seq: u64, text: &str) -> Result<Entry, StoreError> {
    let corrupt = || StoreError::Corrupt(format!("record {seq} is malformed"));
    let (leaf, canonical) = text.split_at_checked(64).ok_or_else(corrupt)?;
    Ok(Entry {
        seq,
        leaf_hash: Digest::from_hex(leaf).ok_or_else(corrupt)?,
        canonical: canonical.to_owned(),
    })
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

/// `text` as a literal in a Redis `MATCH` pattern (its glob characters
/// escaped).
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '^' | '-') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The order-preserving code of an instant: sign bit flipped, 16 hex digits.
fn time_code(nanos: i64) -> String {
    format!("{:016x}", (nanos as u64) ^ (1 << 63))
}

fn seq_code(seq: u64) -> String {
    format!("{seq:016x}")
}

/// The seq in a time-index member `"{asOf code}:{seq code}"`.
fn member_seq(member: &str) -> Result<u64, StoreError> {
    member
        .split_once(':')
        .and_then(|(_, seq)| u64::from_str_radix(seq, 16).ok())
        .ok_or_else(|| StoreError::Corrupt("a time index member is malformed".into()))
}

/// Lexicographic bound: members at instants `<= nanos`.
fn below_or_at(nanos: i64) -> String {
    match nanos.checked_add(1) {
        Some(next) => format!("({}", time_code(next)),
        None => "+".to_owned(),
    }
}

/// Lexicographic bound: members at instants `> nanos`.
fn above(nanos: i64) -> String {
    match nanos.checked_add(1) {
        Some(next) => format!("[{}", time_code(next)),
        // Nothing is after the last instant: a bound above every member.
        None => "+".to_owned(),
    }
}

fn command_result(result: CommandResult) -> Result<Value, StoreError> {
    result.map_err(|message| KvError::Command(message).into())
}

fn script_strings(value: &Value) -> Result<Vec<Option<String>>, StoreError> {
    as_array(value)?
        .iter()
        .map(|v| match v {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            Value::Number(n) => Ok(Some(n.to_string())),
            _ => Err(StoreError::Corrupt(
                "the append script answered an unexpected value".into(),
            )),
        })
        .collect()
}

fn required(parts: &[Option<String>], index: usize) -> Result<&str, StoreError> {
    parts
        .get(index)
        .and_then(|p| p.as_deref())
        .ok_or_else(|| StoreError::Corrupt("the append script's answer is incomplete".into()))
}

fn parse_seq(text: &str) -> Result<u64, StoreError> {
    text.parse()
        .map_err(|_| StoreError::Corrupt("a stored seq is not a number".into()))
}

#[async_trait]
impl LedgerStore for KvLedgerStore {
    async fn append(&self, c: Candidate) -> Result<AppendOutcome, StoreError> {
        let cached = self.cache().clone();
        let mut frontier = match cached {
            Some(frontier) => frontier,
            None => self.read_frontier().await?,
        };
        let strategy = c.strategy_id.as_str();
        let time_index = match c.kind {
            RecordKind::Snapshot => self.series_key(strategy, c.mode),
            RecordKind::Decision => self.key("decisions"),
        };
        let leaf_hex = c.leaf_hash.to_hex();
        for _ in 0..MAX_APPEND_ATTEMPTS {
            let mut next = frontier.clone();
            let created = next.push_recording(c.leaf_hash);
            let new_head = next.head();
            let seq = new_head.size;
            let tile_nodes = tile_appends(seq, &created);
            let expected_root = if frontier.size() == 0 {
                String::new()
            } else {
                frontier.root().to_hex()
            };
            let mut keys = vec![
                self.key("head"),
                self.key("ids"),
                self.record_key(seq),
                time_index.clone(),
                self.key("strategies"),
                self.index_key(c.kind, c.mode, Some(strategy)),
                self.index_key(c.kind, c.mode, None),
                self.record_key(1),
            ];
            keys.extend(tile_nodes.iter().map(|(tile, _)| self.tile_key(*tile)));
            let mut args = vec![
                frontier.size().to_string(),
                expected_root,
                c.id.as_str().to_owned(),
                c.kind.as_str().to_owned(),
                format!("{} {strategy}", c.mode.as_str()),
                time_code(c.as_of_nanos),
                seq_code(seq),
                leaf_hex.clone(),
                c.canonical.clone(),
                seq.to_string(),
                new_head.root_hash.to_hex(),
                hex::encode(next.to_bytes()),
                glob_escape(&self.prefix),
                self.prefix.len().to_string(),
            ];
            // Each node goes at the end of its tile: the script checks the
            // tile's length is the node's position (64 hex digits a hash).
            args.extend(tile_nodes.iter().map(|(tile, hash)| {
                let position =
                    level_width(seq, u32::from(tile.level)) - 1 - tile.index * TILE_WIDTH;
                format!("{}:{}", position * 64, hash.to_hex())
            }));
            let reply = match APPEND_SCRIPT.run(&self.client, &keys, &args).await {
                Ok(reply) => reply,
                Err(error) => {
                    // The write may or may not have happened: forget the hint.
                    *self.cache() = None;
                    return Err(error.into());
                }
            };
            let parts = script_strings(&reply)?;
            match required(&parts, 0)? {
                "created" => {
                    *self.cache() = Some(next);
                    let entry = Entry {
                        seq,
                        leaf_hash: c.leaf_hash,
                        canonical: c.canonical,
                    };
                    return Ok(AppendOutcome::Created {
                        entry,
                        head: new_head,
                    });
                }
                "unchanged" => {
                    let head = parse_head(&[
                        Value::from(required(&parts, 2)?),
                        Value::from(required(&parts, 3)?),
                    ])?;
                    let entry = Entry {
                        seq: parse_seq(required(&parts, 1)?)?,
                        leaf_hash: c.leaf_hash,
                        canonical: c.canonical,
                    };
                    return Ok(AppendOutcome::Unchanged { entry, head });
                }
                "id_conflict" => {
                    return Ok(AppendOutcome::Refused(Refusal::IdConflict {
                        existing_seq: parse_seq(required(&parts, 1)?)?,
                    }));
                }
                "duplicate_snapshot" => {
                    return Ok(AppendOutcome::Refused(Refusal::DuplicateSnapshot {
                        existing_seq: member_seq(required(&parts, 1)?)?,
                    }));
                }
                "out_of_order" => {
                    return Ok(AppendOutcome::Refused(Refusal::OutOfOrder {
                        latest_seq: member_seq(required(&parts, 1)?)?,
                    }));
                }
                "moved" => {
                    let frontier_hex = parts.get(2).and_then(|p| p.as_deref()).unwrap_or("");
                    frontier = parse_frontier(required(&parts, 1)?, frontier_hex)?;
                    *self.cache() = Some(frontier.clone());
                }
                other => {
                    return Err(StoreError::Corrupt(format!(
                        "the append script answered {other:?}"
                    )));
                }
            }
        }
        Err(StoreError::unavailable_now(
            "the ledger head kept moving under concurrent appends; try again",
        ))
    }

    async fn head(&self) -> Result<Head, StoreError> {
        let (fields, _) = self.head_with(self.head_command(), Vec::new()).await?;
        parse_head(&fields)
    }

    /// One round trip: `kv_page.lua` reads the head, merges the page's
    /// indexes (for a filtered page) and reads the records up to the page's
    /// byte budget, at one moment.
    async fn page(&self, q: &PageQuery) -> Result<Page, StoreError> {
        let filtered = q.strategy_id.is_some() || q.kind.is_some() || q.mode.is_some();
        let mut keys = vec![self.key("head"), self.key("ids")];
        if filtered {
            let kinds = q
                .kind
                .map_or(vec![RecordKind::Snapshot, RecordKind::Decision], |k| {
                    vec![k]
                });
            let modes = q.mode.map_or(vec![Mode::Live, Mode::Paper], |m| vec![m]);
            for kind in &kinds {
                for mode in &modes {
                    keys.push(self.index_key(
                        *kind,
                        *mode,
                        q.strategy_id.as_ref().map(|s| s.as_str()),
                    ));
                }
            }
        }
        let mut page = PageBuilder::new(q.limit);
        let args = [
            self.record_key_prefix(),
            page.budget().to_string(),
            PAGE_ENTRY_OVERHEAD_BYTES.to_string(),
            q.before.map_or("+inf".to_owned(), |b| format!("({b}")),
            q.limit.to_string(),
        ];
        let value = PAGE_SCRIPT.run(&self.client, &keys, &args).await?;
        let fields = as_array(&value)?;
        let head = parse_head(fields)?;
        let candidates: usize = parse_seq(
            fields
                .get(2)
                .map(as_string)
                .transpose()?
                .flatten()
                .unwrap_or("0"),
        )?
        .try_into()
        .unwrap_or(usize::MAX);
        let read = seq_record_pairs(fields.get(3..).unwrap_or_default())?;
        if candidates > read.len() {
            page.more_remain();
        }
        for entry in read {
            if !page.offer(entry) {
                break;
            }
        }
        Ok(page.finish(head))
    }

    async fn snapshot_series(
        &self,
        strategy_id: &StrategyId,
        mode: Mode,
        start_nanos: i64,
        end_nanos: i64,
    ) -> Result<Vec<Entry>, StoreError> {
        let window = self
            .window(&[(strategy_id.clone(), mode)], start_nanos, end_nanos, 0)
            .await?;
        Ok(window.series.into_iter().next().unwrap_or_default())
    }

    /// One round trip: `kv_after.lua` reads the series' seqs above the
    /// cursor from its page index and their records.
    async fn series_after(
        &self,
        strategy_id: &StrategyId,
        mode: Mode,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Entry>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let keys = [self.index_key(RecordKind::Snapshot, mode, Some(strategy_id.as_str()))];
        let args = [
            self.record_key_prefix(),
            format!("({after}"),
            limit.to_string(),
        ];
        let value = AFTER_SCRIPT.run(&self.client, &keys, &args).await?;
        seq_record_pairs(as_array(&value)?)
    }

    /// One round trip: `kv_latest.lua` reads the head, the first record and
    /// every strategy's latest snapshot at one moment.
    async fn latest_snapshots(&self) -> Result<LatestSnapshots, StoreError> {
        let keys = [self.key("head"), self.key("strategies"), self.key("ids")];
        let value = LATEST_SCRIPT
            .run(&self.client, &keys, &[self.record_key_prefix()])
            .await?;
        let fields = as_array(&value)?;
        let head = parse_head(fields)?;
        let first = match fields.get(2).map(as_string).transpose()?.flatten() {
            Some(text) => Some(parse_record(1, text)?),
            None => None,
        };
        let entries = seq_record_pairs(fields.get(3..).unwrap_or_default())?;
        Ok(LatestSnapshots {
            head,
            entries,
            first,
        })
    }

    /// One round trip: the head (with the tiles' coverage) and the tiles in
    /// one `multi-exec`.
    async fn tiles(&self, ids: &[TileId]) -> Result<TileRead, StoreError> {
        for _ in 0..2 {
            let mut more = Vec::new();
            if !ids.is_empty() {
                more.push(Command::new("MGET").args(ids.iter().map(|id| self.tile_key(*id))));
            }
            let (fields, results) = self.head_with(self.head_and_tiles_command(), more).await?;
            let mut results = results.into_iter();
            let head = parse_head(&fields)?;
            if optional_field(&fields, 2)?.unwrap_or("0") != head.size.to_string() {
                self.complete_tiles().await?;
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

    async fn decisions_in_range(
        &self,
        start_nanos: i64,
        end_nanos: i64,
        limit: usize,
    ) -> Result<Vec<Entry>, StoreError> {
        Ok(self
            .window(&[], start_nanos, end_nanos, limit)
            .await?
            .decisions)
    }

    /// One round trip: `kv_window.lua` reads every series' index ranges,
    /// the decisions' range and their records at one moment.
    async fn window(
        &self,
        strategies: &[(StrategyId, Mode)],
        start_nanos: i64,
        end_nanos: i64,
        decision_limit: usize,
    ) -> Result<WindowEntries, StoreError> {
        let want_decisions = decision_limit > 0 && start_nanos < end_nanos;
        if strategies.is_empty() && !want_decisions {
            return Ok(WindowEntries::default());
        }
        let mut keys = Vec::with_capacity(strategies.len() + 1);
        keys.push(self.key("decisions"));
        keys.extend(
            strategies
                .iter()
                .map(|(strategy, mode)| self.series_key(strategy.as_str(), *mode)),
        );
        let args = [
            self.record_key_prefix(),
            below_or_at(start_nanos),
            above(start_nanos),
            below_or_at(end_nanos),
            if want_decisions { decision_limit } else { 0 }.to_string(),
        ];
        let value = WINDOW_SCRIPT.run(&self.client, &keys, &args).await?;
        let parts = as_array(&value)?;
        if parts.len() != strategies.len() + 1 {
            return Err(StoreError::Corrupt(
                "the window script answered a different count".into(),
            ));
        }
        let mut parts = parts
            .iter()
            .map(|part| seq_record_pairs(as_array(part)?))
            .collect::<Result<Vec<_>, _>>()?;
        let decisions = parts.pop().unwrap_or_default();
        Ok(WindowEntries {
            series: parts,
            decisions,
        })
    }

    /// One round trip: `kv_since.lua` reads each series' roll-up, the
    /// snapshots after it and the latest decisions at one moment.
    async fn since_inception(
        &self,
        strategies: &[(StrategyId, Mode)],
        version: u32,
        head_size: u64,
        decision_limit: usize,
    ) -> Result<SinceInception, StoreError> {
        if strategies.is_empty() && decision_limit == 0 {
            return Ok(SinceInception::default());
        }
        let mut keys = Vec::with_capacity(2 * strategies.len() + 1);
        keys.push(self.key("decisions"));
        for (strategy, mode) in strategies {
            keys.push(self.series_key(strategy.as_str(), *mode));
            keys.push(self.rollup_key(strategy.as_str(), *mode));
        }
        let args = [
            self.record_key_prefix(),
            version.to_string(),
            head_size.to_string(),
            decision_limit.to_string(),
        ];
        let value = SINCE_SCRIPT.run(&self.client, &keys, &args).await?;
        let parts = as_array(&value)?;
        let answered_differently =
            || StoreError::Corrupt("the since-inception script answered a different shape".into());
        let (decisions, series) = parts.split_first().ok_or_else(answered_differently)?;
        if series.len() != strategies.len() {
            return Err(answered_differently());
        }
        let series = series
            .iter()
            .map(|part| match as_array(part)? {
                [state, records] => Ok(SeriesSince {
                    state: as_string(state)?.map(str::to_owned),
                    entries: seq_record_pairs(as_array(records)?)?,
                }),
                _ => Err(answered_differently()),
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(SinceInception {
            series,
            decisions: seq_record_pairs(as_array(decisions)?)?,
        })
    }

    /// One round trip: `kv_rollups.lua` keeps each roll-up that moves its
    /// series forward (or is of another version).
    async fn put_rollups(&self, rollups: &[Rollup]) -> Result<(), StoreError> {
        for batch in rollup_batches(rollups, MAX_ROLLUP_REQUEST_BYTES) {
            let keys: Vec<String> = batch
                .iter()
                .map(|r| self.rollup_key(r.strategy_id.as_str(), r.mode))
                .collect();
            let args: Vec<String> = batch
                .iter()
                .flat_map(|r| {
                    [
                        r.version.to_string(),
                        time_code(r.from_nanos),
                        r.through_seq.to_string(),
                        r.state.clone(),
                        if r.overwrite { "1" } else { "0" }.to_owned(),
                    ]
                })
                .collect();
            ROLLUPS_SCRIPT.run(&self.client, &keys, &args).await?;
        }
        Ok(())
    }
}

/// The most state bytes one `kv_rollups.lua` request carries (Upstash
/// refuses requests over 10 MB); more roll-ups take more requests.
const MAX_ROLLUP_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// `rollups` cut into consecutive runs of at most `limit` state bytes each
/// (a single larger state is a run of its own).
fn rollup_batches(rollups: &[Rollup], limit: usize) -> Vec<&[Rollup]> {
    let mut batches = Vec::new();
    let (mut start, mut bytes) = (0, 0usize);
    for (i, rollup) in rollups.iter().enumerate() {
        if i > start && bytes.saturating_add(rollup.state.len()) > limit {
            batches.push(&rollups[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes = bytes.saturating_add(rollup.state.len());
    }
    if start < rollups.len() {
        batches.push(&rollups[start..]);
    }
    batches
}

/// Entries from a script's flat `{seq, record, seq, record, ...}` answer; a
/// missing record (an index names it) is corrupt.
fn seq_record_pairs(values: &[Value]) -> Result<Vec<Entry>, StoreError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roll_ups_are_written_in_requests_of_bounded_size() {
        let rollup = |bytes: usize| Rollup {
            strategy_id: StrategyId::parse("s").unwrap(),
            mode: Mode::Paper,
            version: 1,
            from_nanos: 0,
            through_seq: 1,
            state: "x".repeat(bytes),
            overwrite: false,
        };
        let sizes = |rollups: &[Rollup], limit| {
            rollup_batches(rollups, limit)
                .iter()
                .map(|batch| batch.iter().map(|r| r.state.len()).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        assert!(rollup_batches(&[], 10).is_empty());
        let rollups = [rollup(4), rollup(5), rollup(2), rollup(12), rollup(1)];
        assert_eq!(
            sizes(&rollups, 10),
            [vec![4, 5], vec![2], vec![12], vec![1]]
        );
        assert_eq!(sizes(&rollups, 100), [vec![4, 5, 2, 12, 1]]);
    }

    #[test]
    fn time_codes_sort_as_the_instants_do() {
        let instants = [
            i64::MIN,
            -1_000,
            -1,
            0,
            1,
            1_767_571_200_000_000_000,
            i64::MAX,
        ];
        let codes: Vec<String> = instants.iter().map(|n| time_code(*n)).collect();
        let mut sorted = codes.clone();
        sorted.sort();
        assert_eq!(codes, sorted);
        assert!(codes.iter().all(|c| c.len() == 16));
    }

    #[test]
    fn bounds_include_the_end_and_exclude_the_start() {
        let member = |t: i64| format!("{}:{}", time_code(t), seq_code(7));
        let t = 1_000;
        // "(" bound: strictly below; "[" bound: at or above.
        assert!(member(t).as_str() < &below_or_at(t)[1..]);
        assert!(member(t + 1).as_str() > &below_or_at(t)[1..]);
        assert!(member(t).as_str() < &above(t)[1..]);
        assert!(member(t + 1).as_str() >= &above(t)[1..]);
        assert_eq!(below_or_at(i64::MAX), "+");
    }

    #[test]
    fn members_and_records_parse_back() {
        assert_eq!(
            member_seq(&format!("{}:{}", time_code(5), seq_code(42))).unwrap(),
            42
        );
        assert!(member_seq("garbage").is_err());
        let leaf = crate::merkle::leaf_hash(b"{}");
        let entry = parse_record(3, &format!("{}{{}}", leaf.to_hex())).unwrap();
        assert_eq!(
            (entry.seq, entry.leaf_hash, entry.canonical.as_str()),
            (3, leaf, "{}")
        );
        assert!(parse_record(3, "short").is_err());
    }
}
