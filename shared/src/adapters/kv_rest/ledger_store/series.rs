//! The KV store's series reads: one script run each (`window.lua`,
//! `latest.lua`, `since.lua`, `after.lua`), and the roll-ups'
//! write (`rollups.lua`).

use super::super::client::{Script, as_array, as_string};
use super::{KvLedgerStore, parse_head, parse_record, seq_record_pairs, time_code};
use crate::ports::ledger_store::{
    Entry, LatestSnapshots, Rollup, SeriesReads, SeriesSince, SinceInception, StoreError,
    WindowEntries,
};
use crate::record::{Mode, RecordKind, StrategyId};
use async_trait::async_trait;
use std::sync::LazyLock;

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

#[async_trait]
impl SeriesReads for KvLedgerStore {
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

    /// One round trip: `after.lua` reads the series' seqs above the
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

    /// One round trip: `latest.lua` reads the head, the first record and
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

    /// One round trip: `window.lua` reads every series' index ranges,
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

    /// One round trip: `since.lua` reads each series' roll-up, the
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

    /// One round trip: `rollups.lua` keeps each roll-up that moves its
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

/// The most state bytes one `rollups.lua` request carries (Upstash
/// refuses requests over 10 MB); more roll-ups take more requests.
const MAX_ROLLUP_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// `rollups` cut into consecutive runs of at most `limit` state bytes each
/// (a single larger state is a run of its own).
pub(super) fn rollup_batches(rollups: &[Rollup], limit: usize) -> Vec<&[Rollup]> {
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

/// Lexicographic bound: members at instants `<= nanos`.
pub(super) fn below_or_at(nanos: i64) -> String {
    match nanos.checked_add(1) {
        Some(next) => format!("({}", time_code(next)),
        None => "+".to_owned(),
    }
}

/// Lexicographic bound: members at instants `> nanos`.
pub(super) fn above(nanos: i64) -> String {
    match nanos.checked_add(1) {
        Some(next) => format!("[{}", time_code(next)),
        // Nothing is after the last instant: a bound above every member.
        None => "+".to_owned(),
    }
}
