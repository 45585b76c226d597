//! The KV store's append: one run of `append.lua`, which checks the
//! keys it reads agree, then the contract's checks and the head, and writes
//! record, id, indexes, head and tiles together.

use super::super::client::{Command, Script, as_array};
use super::{
    KvLedgerStore, member_seq, optional_field, parse_head, parse_seq, seq_code, time_code,
};
use crate::merkle::Frontier;
use crate::ports::ledger_store::{
    AppendOutcome, Candidate, Entry, LedgerAppend, Refusal, StoreError,
};
use crate::record::RecordKind;
use crate::tlog::tiles::{TILE_WIDTH, level_width, tile_appends};
use async_trait::async_trait;
use serde_json::Value;
use std::sync::LazyLock;

/// How often an append recomputes its root because others appended first,
/// before it answers "unavailable" (the client may retry).
pub(crate) const MAX_APPEND_ATTEMPTS: usize = 200;

static APPEND_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("append.lua")));

/// What the append script says when a hash tile does not end where the
/// new node goes (a tile lost from the store): the tiles are rebuilt.
const LOST_TILE: &str = "a hash tile does not end where the new node goes";

impl KvLedgerStore {
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

#[async_trait]
impl LedgerAppend for KvLedgerStore {
    async fn append(&self, c: Candidate) -> Result<AppendOutcome, StoreError> {
        self.submit(c, Submit::Write).await
    }

    async fn check(&self, c: Candidate) -> Result<AppendOutcome, StoreError> {
        self.submit(c, Submit::Dry).await
    }
}

/// An append that writes, or a dry run: the same script and checks, which
/// stops before its first write.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Submit {
    Write,
    Dry,
}

impl KvLedgerStore {
    async fn submit(&self, c: Candidate, submit: Submit) -> Result<AppendOutcome, StoreError> {
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
        let mut tiles_rebuilt = false;
        for _ in 0..MAX_APPEND_ATTEMPTS {
            let (next, keys, mut args) = self.append_call(&c, &frontier, &time_index);
            args.push(
                match submit {
                    Submit::Write => "write",
                    Submit::Dry => "dry",
                }
                .to_owned(),
            );
            let new_head = next.head();
            let seq = new_head.size;
            let reply = match APPEND_SCRIPT.run(&self.client, &keys, &args).await {
                Ok(reply) => reply,
                Err(error) => {
                    // The write may or may not have happened: forget the hint.
                    *self.cache() = None;
                    if !tiles_rebuilt && error.to_string().contains(LOST_TILE) {
                        // A hash tile was lost: rebuilt from the leaves, the
                        // append is tried again (the script wrote nothing).
                        tracing::warn!(
                            "a hash tile is missing or short: rebuilding the log's tiles before appending"
                        );
                        self.complete_tiles(true).await?;
                        tiles_rebuilt = true;
                        frontier = self.read_frontier().await?;
                        continue;
                    }
                    return Err(error.into());
                }
            };
            let parts = script_strings(&reply)?;
            match required(&parts, 0)? {
                "created" => {
                    if submit == Submit::Write {
                        *self.cache() = Some(next);
                    }
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
}

impl KvLedgerStore {
    /// The append script's keys and arguments for appending `c` to the
    /// ledger at `frontier` (with `time_index`, its series' or the
    /// decisions' index), and the frontier the append makes.
    fn append_call(
        &self,
        c: &Candidate,
        frontier: &Frontier,
        time_index: &str,
    ) -> (Frontier, Vec<String>, Vec<String>) {
        let strategy = c.strategy_id.as_str();
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
            time_index.to_owned(),
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
            c.leaf_hash.to_hex(),
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
            let position = level_width(seq, u32::from(tile.level)) - 1 - tile.index * TILE_WIDTH;
            format!("{}:{}", position * 64, hash.to_hex())
        }));
        (next, keys, args)
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
