//! A dashboard answer bounded in size: the strategies a request selects
//! (`strategyId`, repeatable), from after a cursor (`after`), until the
//! body would pass [`MAX_ANSWER_BYTES`] (Lambda refuses answers over
//! 6 MB). Strategies are taken by id, those with a live series first (by
//! id), then the paper-only ones (by id), all series of a strategy
//! together; an answer that stops early names the last strategy it holds
//! in `next`. Within such an answer the strategies are in the same order
//! (live first, each strategy's series by mode), so reading the pages one
//! after another never meets a live strategy after a paper one; and
//! `comparison` covers the series it holds. (A dashboard that fits one
//! answer, unfiltered, is answered whole, in the dashboard's order: by id,
//! then mode.)
//! Decisions are the dashboard's, or, with `strategyId`, those of the
//! strategies named.

use super::compare::{Timeline, compare};
use super::view::{Comparison, Dashboard, DecisionView, StrategyView};
use crate::record::Mode;
use bytes::Bytes;
use std::collections::{BTreeSet, HashMap};

/// Most bytes of a dashboard answer, uncompressed: 4 MiB.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;
/// What a series adds to `comparison`, at most, counted with its view.
const COMPARISON_BYTES_PER_SERIES: usize = 256;

/// Which strategies an answer holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only these strategy ids (none: all).
    pub strategies: Option<BTreeSet<String>>,
    /// Only the strategies after this one in the answer's order.
    pub after: Option<String>,
}

impl Selection {
    /// Whether it selects everything from the start.
    pub(crate) fn is_everything(&self) -> bool {
        self.strategies.is_none() && self.after.is_none()
    }
}

/// Why a selection cannot be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    /// `after` names no strategy of this dashboard.
    #[error("after names no strategy of this dashboard; pass the next of an earlier answer")]
    UnknownCursor,
}

/// The strategy ids of `dashboard` in paging order: those with a live
/// series first, then the rest, each by id.
fn paging_order(dashboard: &Dashboard) -> Vec<&str> {
    let mut live = BTreeSet::new();
    let mut all = BTreeSet::new();
    for strategy in &dashboard.strategies {
        all.insert(strategy.strategy_id.as_str());
        if strategy.mode == Mode::Live {
            live.insert(strategy.strategy_id.as_str());
        }
    }
    let mut order: Vec<&str> = live.iter().copied().collect();
    order.extend(all.difference(&live).copied());
    order
}

/// The answer for `selection` from the whole dashboard `full` (its
/// series' `timelines` in the same order) and its JSON `full_json`.
pub(super) fn answer(
    full: &Dashboard,
    full_json: &Bytes,
    timelines: &[Timeline],
    selection: &Selection,
) -> Result<Bytes, SelectionError> {
    if selection.is_everything() && full_json.len() <= MAX_ANSWER_BYTES {
        return Ok(full_json.clone());
    }
    let order = paging_order(full);
    let start = match &selection.after {
        None => 0,
        Some(after) => {
            order
                .iter()
                .position(|id| id == after)
                .ok_or(SelectionError::UnknownCursor)?
                + 1
        }
    };
    let wanted: Vec<&str> = order[start..]
        .iter()
        .copied()
        .filter(|id| {
            selection
                .strategies
                .as_ref()
                .is_none_or(|named| named.contains(*id))
        })
        .collect();
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, strategy) in full.strategies.iter().enumerate() {
        by_id
            .entry(strategy.strategy_id.as_str())
            .or_default()
            .push(index);
    }
    let decisions: Vec<DecisionView> = match &selection.strategies {
        None => full.decisions.clone(),
        Some(named) => full
            .decisions
            .iter()
            .filter(|d| named.contains(d.decision.header.strategy_id.as_str()))
            .cloned()
            .collect(),
    };
    let mut shell = Dashboard {
        schema_version: full.schema_version,
        period: full.period,
        unit: full.unit,
        window: full.window.clone(),
        inception: full.inception.clone(),
        head: full.head,
        witnessing: full.witnessing.clone(),
        strategies: Vec::new(),
        comparison: Comparison {
            shared_timestamps: 0,
            misaligned: Vec::new(),
            disjoint: Vec::new(),
            strategies: Vec::new(),
        },
        decisions,
        next: None,
    };
    let base = serde_json::to_vec(&shell).map_or(0, |b| b.len());
    // Strategies that fit, by size, in paging order.
    let mut taken: Vec<&str> = Vec::new();
    let mut total = base;
    for id in &wanted {
        let size: usize = by_id
            .get(id)
            .map(|indexes| {
                indexes
                    .iter()
                    .map(|i| {
                        serde_json::to_vec(&full.strategies[*i]).map_or(0, |b| b.len())
                            + COMPARISON_BYTES_PER_SERIES
                            + 2
                    })
                    .sum()
            })
            .unwrap_or(0);
        if !taken.is_empty() && total.saturating_add(size) > MAX_ANSWER_BYTES {
            break;
        }
        total = total.saturating_add(size);
        taken.push(id);
    }
    loop {
        let more = taken.len() < wanted.len();
        let indexes: Vec<usize> = taken
            .iter()
            .flat_map(|id| by_id.get(id).into_iter().flatten().copied())
            .collect();
        let strategies: Vec<StrategyView> = indexes
            .iter()
            .map(|i| full.strategies[*i].clone())
            .collect();
        let lines: Vec<Timeline> = indexes
            .iter()
            .filter_map(|i| timelines.get(*i).cloned())
            .collect();
        shell.comparison = if lines.len() == strategies.len() {
            compare(&strategies, &lines)
        } else {
            full.comparison.clone()
        };
        shell.strategies = strategies;
        shell.next = more
            .then(|| taken.last().map(|id| (*id).to_owned()))
            .flatten();
        let json = serde_json::to_vec(&shell).expect("the dashboard serialises");
        if json.len() <= MAX_ANSWER_BYTES || taken.len() <= 1 {
            return Ok(Bytes::from(json));
        }
        taken.pop();
    }
}
