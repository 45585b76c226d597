//! The dashboard read model (DESIGN.md "Dashboard").
//!
//! [`Dashboards::get`] makes at most two store reads on a miss and one on a
//! repeat: (1) the latest snapshot of every strategy with the head, which
//! fixes the window's end; (2) [`SeriesReads::window`]: each strategy's
//! baseline and window snapshots plus the window's decisions, or, since
//! inception, [`SeriesReads::since_inception`]: each series' roll-up (see
//! the `rollup` module) and its snapshots from the open month on, plus the latest
//! decisions (and, after a month closed, one write of the new roll-ups).
//! Nothing else is read, so the cost follows the window (or the open
//! month), not the ledger's length. A warm
//! process answers the same head and period from memory, and the same head
//! always gives byte-identical JSON (everything is sorted, and entries
//! appended after the head are left out).

pub(crate) mod rollup;

pub use rollup::ROLLUP_VERSION;

use crate::analytics;
use crate::clock::rfc3339;
use crate::merkle::Head;
use crate::ports::ledger_store::{Entry, Rollup, SeriesReads, SeriesSince, StoreError};
use crate::record::{Mode, Record, Snapshot, StrategyId, decimal_json};
use crate::service::head_cache::HeadCache;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use rollup::SeriesFold;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The allowed periods, in trading days.
pub const PERIODS: [u32; 4] = [21, 63, 126, 252];
/// The period when none is asked for.
pub const DEFAULT_PERIOD: u32 = 63;
/// The unit of `period`: trading days.
pub const UNIT: &str = "tradingDays";
/// Most decisions a dashboard lists (newest first): with every text cut
/// to [`MAX_DECISION_TEXT_CHARS`], 50 decisions stay well under a
/// megabyte whatever the writer sent.
pub const MAX_DECISIONS: usize = 50;
/// Longest a decision's `summary`, `thesis`, `counterEvidence` or
/// `nextCheck` is shown on the dashboard, in characters (the last being
/// "…" when cut); the ledger view has the record whole.
pub const MAX_DECISION_TEXT_CHARS: usize = 600;
/// The decision fields the dashboard cuts.
pub const CUT_DECISION_FIELDS: [&str; 4] = ["summary", "thesis", "counterEvidence", "nextCheck"];
/// Beyond this many points a chart series is thinned to the last point of
/// each UTC day (with the baseline kept), beyond this many days to each ISO
/// week's last, beyond this many weeks to each month's; the metrics never
/// are.
pub const MAX_CHART_POINTS: usize = 500;

/// The `period` value that selects the record since inception.
pub const ALL: &str = "all";

/// A dashboard period: a count of trading days, one of [`PERIODS`], or the
/// whole record since inception ([`ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    /// The latest N trading days.
    TradingDays(u32),
    /// Since inception: each series from its first snapshot.
    All,
}

impl Serialize for Period {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Period::TradingDays(days) => serializer.serialize_u32(*days),
            Period::All => serializer.serialize_str(ALL),
        }
    }
}

/// A `period` that is neither one of [`PERIODS`] nor [`ALL`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("period must be one of 21, 63, 126, 252 (trading days) or all; the default is 63")]
pub struct InvalidPeriod;

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Period {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Period".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "oneOf": [
                {"type": "integer", "enum": PERIODS,
                 "description": "Trading days (Monday to Friday by UTC date)."},
                {"const": ALL, "description": "Since inception."}
            ]
        })
    }
}

/// The schema of the dashboard's `unit`.
#[cfg(feature = "schema")]
fn trading_days_unit(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"const": UNIT})
}

impl Period {
    /// Every period, in the order the page offers them.
    pub const ALL_PERIODS: [Period; 5] = [
        Period::TradingDays(PERIODS[0]),
        Period::TradingDays(PERIODS[1]),
        Period::TradingDays(PERIODS[2]),
        Period::TradingDays(PERIODS[3]),
        Period::All,
    ];

    /// Parses the query value; `None` gives the default.
    pub fn parse(value: Option<&str>) -> Result<Period, InvalidPeriod> {
        let Some(text) = value else {
            return Ok(Period::TradingDays(DEFAULT_PERIOD));
        };
        if text == ALL {
            return Ok(Period::All);
        }
        let days: u32 = text.parse().map_err(|_| InvalidPeriod)?;
        if PERIODS.contains(&days) && text == days.to_string() {
            Ok(Period::TradingDays(days))
        } else {
            Err(InvalidPeriod)
        }
    }

    /// Number of trading days; `None` for since inception.
    pub fn days(self) -> Option<u32> {
        match self {
            Period::TradingDays(days) => Some(days),
            Period::All => None,
        }
    }

    /// The query value that selects it (`63`, `all`).
    pub fn query_value(self) -> String {
        match self {
            Period::TradingDays(days) => days.to_string(),
            Period::All => ALL.to_owned(),
        }
    }
}

/// A rendered dashboard: its head (for the ETag), the typed view (for the
/// page) and its JSON bytes (for the API).
#[derive(Debug, Clone)]
pub struct RenderedDashboard {
    /// The head it was computed at.
    pub head: Head,
    /// The dashboard itself.
    pub view: Arc<Dashboard>,
    /// The response body.
    pub json: Bytes,
}

type Cached = (Arc<Dashboard>, Bytes);

/// What was rendered for the latest head, by period (the dashboard's JSON
/// and the page are kept this way), each computed once however many ask.
pub type PeriodCache<V> = HeadCache<Period, V>;

/// The dashboard use case: the read model of the ledger in its store, the
/// latest head's dashboards kept in memory by period.
pub struct Dashboards {
    store: Arc<dyn SeriesReads>,
    latest: PeriodCache<Cached>,
}

impl std::fmt::Debug for Dashboards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dashboards").finish_non_exhaustive()
    }
}

impl Dashboards {
    /// The dashboards of the ledger in `store`.
    pub fn new(store: Arc<dyn SeriesReads>) -> Dashboards {
        Dashboards {
            store,
            latest: PeriodCache::default(),
        }
    }

    /// The dashboard for `period` at the store's current head: one read
    /// for the head (with every latest snapshot), then, unless this head's
    /// answer is kept, its computation, shared by every request that asks
    /// for the same head and period at the same time.
    pub async fn get(&self, period: Period) -> Result<RenderedDashboard, StoreError> {
        let store = self.store.as_ref();
        let latest = store.latest_snapshots().await?;
        let head = latest.head;
        let (view, json) = self
            .latest
            .get_or_compute(head.root_hash, period, || async {
                let inception = latest.first.as_ref().map(inception_of).transpose()?;
                let dashboard = compute(store, period, head, latest.entries, inception).await?;
                // Room for every point at once: growing the buffer copies it.
                let points: usize = dashboard.strategies.iter().map(|s| s.series.len()).sum();
                let mut json = Vec::with_capacity(16 * 1024 + 160 * points);
                serde_json::to_writer(&mut json, &dashboard).expect("the dashboard serialises");
                Ok::<_, StoreError>((Arc::new(dashboard), Bytes::from(json)))
            })
            .await?;
        Ok(RenderedDashboard { head, view, json })
    }
}

/// The `asOf` of the ledger's first record, as written and as an instant.
fn inception_of(first: &Entry) -> Result<(String, DateTime<Utc>), StoreError> {
    let record = Record::from_canonical(&first.canonical).map_err(|e| corrupt(first, e))?;
    let as_of = &record.header().as_of;
    Ok((as_of.as_str().to_owned(), as_of.instant()))
}

/// The dashboard's window.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Window {
    /// Start instant (RFC 3339, UTC), or null before the first snapshot.
    pub start: Option<String>,
    /// The fund's latest snapshot instant (RFC 3339, UTC), or null.
    pub end: Option<String>,
}

/// Where the record starts and how old it is.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Inception {
    /// The `asOf` of the ledger's first record (seq 1).
    pub as_of: String,
    /// Calendar days (by UTC date) from it to the window's end (the fund's
    /// latest snapshot); null before the first snapshot.
    pub age_days: Option<i64>,
}

/// A valuation point shown in the response.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Point {
    /// `asOf` as written.
    pub as_of: String,
    /// Account value at that time, as the record gives it.
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub equity: Value,
    /// Ledger position.
    pub seq: u64,
}

/// One position of the latest snapshot, with its value and weight.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PositionView {
    /// Instrument, as the record names it.
    pub symbol: String,
    /// Units held.
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub quantity: Value,
    /// Cost basis.
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub cost: Value,
    /// Mark price.
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub mark: Value,
    /// quantity × mark, exact (null if it does not fit a decimal).
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub value: Value,
    /// value / equity (null when equity is 0).
    pub weight: Option<f64>,
}

/// The latest snapshot of a strategy.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Latest {
    /// `asOf` as written.
    pub as_of: String,
    /// Account value at the latest snapshot.
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub equity: Value,
    /// Cash, when given.
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub cash: Option<Value>,
    /// cash / equity, when cash is given and equity is not 0.
    pub cash_weight: Option<f64>,
    /// Positions with value and weight, when given.
    pub positions: Option<Vec<PositionView>>,
    /// Ledger position.
    pub seq: u64,
}

/// A strategy's metrics over the window (null where not computable).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MetricsView {
    /// Time-weighted return (fraction).
    pub twr: Option<f64>,
    /// Annualised return; only for a span of 252 trading days or more.
    pub annualized_return: Option<f64>,
    /// E_end − E_baseline − ΣF.
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub pnl: Option<Value>,
    /// ΣF.
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub net_flows: Option<Value>,
    /// Maximum drawdown of the growth index (≤ 0).
    pub max_drawdown: Option<f64>,
    /// Annualised volatility of daily returns.
    pub volatility: Option<f64>,
    /// Sharpe ratio (risk-free 0).
    pub sharpe: Option<f64>,
    /// Sortino ratio.
    pub sortino: Option<f64>,
    /// annualizedReturn / |maxDrawdown|; null unless both are defined and
    /// maxDrawdown < 0.
    pub calmar: Option<f64>,
    /// The best daily return.
    pub best_day: Option<f64>,
    /// The worst daily return.
    pub worst_day: Option<f64>,
    /// The drawdown at the latest snapshot (growth index / running peak − 1).
    pub current_drawdown: Option<f64>,
    /// The longest drawdown in calendar days: from a peak of the growth
    /// index to its recovery, or to the latest snapshot if not recovered.
    pub longest_drawdown_days: Option<i64>,
    /// Number of intervals after the baseline.
    pub intervals: usize,
}

/// One calendar month's return.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MonthReturn {
    /// The UTC calendar month, `YYYY-MM`.
    pub month: String,
    /// The TWR chained over the month's intervals (the first month from the
    /// baseline).
    #[serde(rename = "return")]
    pub r#return: Option<f64>,
}

/// One calendar year's return.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct YearReturn {
    /// The UTC calendar year.
    pub year: i32,
    /// The TWR chained over the year's intervals.
    #[serde(rename = "return")]
    pub r#return: Option<f64>,
}

/// A point of the underwater (drawdown) chart.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DrawdownPoint {
    /// `asOf` as written.
    pub as_of: String,
    /// Growth index / running peak − 1 (≤ 0).
    pub drawdown: Option<f64>,
}

/// A non-zero flow in the window.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlowPoint {
    /// The snapshot's `asOf` (flows land at interval end).
    pub as_of: String,
    /// Deposit (+) or withdrawal (−), as the record gives it.
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub amount: Value,
}

/// A point of the chart series.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SeriesPoint {
    /// `asOf` as written.
    pub as_of: String,
    /// Account value at that snapshot.
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub equity: Value,
    /// Growth index (1 at the baseline).
    pub index: Option<f64>,
}

/// One (strategyId, mode) on the dashboard.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StrategyView {
    /// Strategy id.
    pub strategy_id: String,
    /// Name from the latest snapshot.
    pub strategy_name: String,
    /// live or paper.
    pub mode: Mode,
    /// The baseline: last snapshot at or before the start, or the first one.
    pub baseline: Point,
    /// The latest snapshot.
    pub latest: Latest,
    /// Metrics over the window.
    pub metrics: MetricsView,
    /// The growth index at each snapshot from the baseline (beyond
    /// [`MAX_CHART_POINTS`] points, the last of each UTC day, week or month).
    pub series: Vec<SeriesPoint>,
    /// The drawdown at the same points as `series`.
    pub underwater: Vec<DrawdownPoint>,
    /// Each UTC calendar month's return, in order.
    pub monthly: Vec<MonthReturn>,
    /// Each UTC calendar year's return, in order.
    pub yearly: Vec<YearReturn>,
    /// The non-zero flows after the baseline, in order.
    pub flows: Vec<FlowPoint>,
    /// True when the latest snapshot is more than one trading day older than
    /// the fund's latest.
    pub stale: bool,
    /// True when only the baseline is known: no return yet.
    pub baseline_only: bool,
}

/// One strategy's return over the shared timestamps only.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SharedReturn {
    /// Strategy id.
    pub strategy_id: String,
    /// live or paper.
    pub mode: Mode,
    /// index(last shared) / index(first shared) − 1; null with fewer than two.
    pub twr: Option<f64>,
}

/// One series: a strategy in one mode.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SeriesKey {
    /// Strategy id.
    pub strategy_id: String,
    /// live or paper.
    pub mode: Mode,
}

/// How the strategies line up (since inception, at their charted points).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Comparison {
    /// Timestamps (instants in the window) that every series has.
    pub shared_timestamps: usize,
    /// Series that do not value at the reference times (DESIGN.md
    /// "Dashboard"): the reference times are the valuation instants in the
    /// window used by at least half of the series; a series is misaligned
    /// when it misses more than half of the reference times within its own
    /// span (its baseline to its latest snapshot). Sorted by id, then mode.
    pub misaligned: Vec<SeriesKey>,
    /// Returns measured between the first and last shared timestamps.
    pub strategies: Vec<SharedReturn>,
}

/// A decision in the window.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DecisionView {
    /// Ledger position: the ledger view (`view=ledger&before=<seq + 1>`)
    /// and the proof view have the record whole.
    pub seq: u64,
    /// The record as stored, except that a `summary`, `thesis`,
    /// `counterEvidence` or `nextCheck` longer than 600 characters is cut
    /// to its first 599 and "…".
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::record::schema::decision_ref")
    )]
    pub record: Box<RawValue>,
    /// Whether a text of the record was cut.
    pub truncated: bool,
}

impl DecisionView {
    /// The view of a stored decision: its text fields cut when long.
    fn of(entry: &Entry) -> Result<DecisionView, StoreError> {
        let long = |value: &Value| {
            value
                .as_str()
                .is_some_and(|t| t.chars().nth(MAX_DECISION_TEXT_CHARS).is_some())
        };
        let mut record: Value =
            serde_json::from_str(&entry.canonical).map_err(|e| corrupt(entry, e))?;
        let mut truncated = false;
        if let Value::Object(fields) = &mut record {
            for name in CUT_DECISION_FIELDS {
                if let Some(value) = fields.get_mut(name).filter(|v| long(v)) {
                    let text = value.as_str().unwrap_or_default();
                    let cut: String = text.chars().take(MAX_DECISION_TEXT_CHARS - 1).collect();
                    *value = Value::String(cut + "\u{2026}");
                    truncated = true;
                }
            }
        }
        let text = if truncated {
            record.to_string()
        } else {
            entry.canonical.clone()
        };
        Ok(DecisionView {
            seq: entry.seq,
            record: RawValue::from_string(text).map_err(|e| corrupt(entry, e))?,
            truncated,
        })
    }
}

impl Comparison {
    /// Whether `strategy` is one of the misaligned series.
    pub fn is_misaligned(&self, strategy: &StrategyView) -> bool {
        self.misaligned
            .iter()
            .any(|k| k.strategy_id == strategy.strategy_id && k.mode == strategy.mode)
    }
}

/// The dashboard response.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Dashboard {
    /// Always 1.
    pub schema_version: u32,
    /// Trading days, or "all" (since inception).
    pub period: Period,
    /// Always "tradingDays".
    #[cfg_attr(feature = "schema", schemars(schema_with = "trading_days_unit"))]
    pub unit: &'static str,
    /// The window the period selects.
    pub window: Window,
    /// The record's start: the ledger's first record; null when empty.
    pub inception: Option<Inception>,
    /// The ledger head the dashboard was computed at.
    pub head: Head,
    /// One per (strategyId, mode), sorted by id then mode.
    pub strategies: Vec<StrategyView>,
    /// How the strategies line up.
    pub comparison: Comparison,
    /// Decisions from the window's start on, including those made after the
    /// latest snapshot, newest first (at most [`MAX_DECISIONS`]).
    pub decisions: Vec<DecisionView>,
}

/// The store's error for a stored record that does not read back.
pub(crate) fn corrupt(entry: &Entry, error: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!(
        "stored record {} does not parse: {error}",
        entry.seq
    ))
}

/// The snapshot a stored entry holds (a decision there is corrupt).
pub(crate) fn snapshot_of(entry: &Entry) -> Result<Snapshot, StoreError> {
    match Record::from_canonical(&entry.canonical).map_err(|e| corrupt(entry, e))? {
        Record::Snapshot(snapshot) => Ok(snapshot),
        Record::Decision(_) => Err(corrupt(entry, "expected a snapshot")),
    }
}

fn nanos(instant: DateTime<Utc>) -> i64 {
    instant.timestamp_nanos_opt().unwrap_or(i64::MAX)
}

async fn compute(
    store: &dyn SeriesReads,
    period: Period,
    head: Head,
    latest: Vec<Entry>,
    inception: Option<(String, DateTime<Utc>)>,
) -> Result<Dashboard, StoreError> {
    let mut latest: Vec<(Entry, Snapshot)> = latest
        .into_iter()
        .map(|e| snapshot_of(&e).map(|s| (e, s)))
        .collect::<Result<_, _>>()?;
    latest.sort_by(|(_, a), (_, b)| {
        (a.header.strategy_id.as_str(), a.header.mode)
            .cmp(&(b.header.strategy_id.as_str(), b.header.mode))
    });
    let end = latest.iter().map(|(_, s)| s.header.as_of.instant()).max();
    let inception = inception.map(|(as_of, instant)| Inception {
        as_of,
        age_days: end.map(|end| (end.date_naive() - instant.date_naive()).num_days()),
    });
    let Some(end) = end else {
        return Ok(Dashboard {
            schema_version: crate::record::SCHEMA_VERSION,
            period,
            unit: UNIT,
            window: Window {
                start: None,
                end: None,
            },
            inception,
            head,
            strategies: Vec::new(),
            comparison: Comparison {
                shared_timestamps: 0,
                misaligned: Vec::new(),
                strategies: Vec::new(),
            },
            decisions: Vec::new(),
        });
    };
    let keys: Vec<(StrategyId, Mode)> = latest
        .iter()
        .map(|(_, s)| (s.header.strategy_id.clone(), s.header.mode))
        .collect();
    let (folds, decisions) = match period.days() {
        Some(days) => {
            fold_window(
                store,
                &keys,
                &latest,
                head,
                nanos(analytics::window_start(end, days)),
            )
            .await?
        }
        None => fold_since_inception(store, &keys, &latest, head).await?,
    };
    let start = match period.days() {
        Some(days) => analytics::window_start(end, days),
        // The fund's first snapshot.
        None => folds
            .iter()
            .filter_map(SeriesFold::first_instant)
            .min()
            .unwrap_or(end),
    };
    let mut strategies = Vec::with_capacity(latest.len());
    let mut timelines = Vec::with_capacity(latest.len());
    for ((latest_entry, latest_snapshot), mut fold) in latest.iter().zip(folds) {
        // The series always holds the latest snapshot; fall back to it alone.
        if fold.is_empty() {
            fold.push(latest_entry.seq, latest_snapshot);
        }
        let (view, instants) = fold.finish(latest_entry.seq, latest_snapshot, end);
        strategies.push(view);
        timelines.push(Timeline { start, instants });
    }
    let comparison = compare(&strategies, &timelines);
    // The store's query selects decisions; the text is checked to be JSON here.
    let decisions = decisions
        .iter()
        .map(DecisionView::of)
        .collect::<Result<_, StoreError>>()?;
    Ok(Dashboard {
        schema_version: crate::record::SCHEMA_VERSION,
        period,
        unit: UNIT,
        window: Window {
            start: Some(rfc3339(start)),
            end: Some(rfc3339(end)),
        },
        inception,
        head,
        strategies,
        comparison,
        decisions,
    })
}

/// A windowed period's series folded from the store: each series'
/// baseline and window snapshots (keeping every point for the comparison),
/// and the window's decisions, up to `head`.
async fn fold_window(
    store: &dyn SeriesReads,
    keys: &[(StrategyId, Mode)],
    latest: &[(Entry, Snapshot)],
    head: Head,
    read_from: i64,
) -> Result<(Vec<SeriesFold>, Vec<Entry>), StoreError> {
    // Read up to the end of time rather than `end`: no series has a
    // snapshot after its latest (so the series are the same), and decisions
    // made after the fund's latest snapshot belong on the dashboard too.
    let window = store
        .window(keys, read_from, i64::MAX, MAX_DECISIONS)
        .await?;
    let mut folds = Vec::with_capacity(keys.len());
    for (entries, latest) in window.series.iter().zip(latest) {
        let mut fold = SeriesFold::keeping_every_point();
        for entry in entries.iter().filter(|e| at_head(e, head)) {
            fold.push(entry.seq, &*snapshot_in(entry, Some(latest))?);
        }
        folds.push(fold);
    }
    let decisions = window
        .decisions
        .into_iter()
        .filter(|e| at_head(e, head))
        .collect();
    Ok((folds, decisions))
}

/// The since-inception series: each stored roll-up (see the `rollup` module) with
/// the snapshots after it, and the latest decisions, up to `head`. Months
/// that closed since a series' roll-up are folded into it and the roll-up
/// is stored again; a store that cannot keep it only costs the next reader
/// the same work.
async fn fold_since_inception(
    store: &dyn SeriesReads,
    keys: &[(StrategyId, Mode)],
    latest: &[(Entry, Snapshot)],
    head: Head,
) -> Result<(Vec<SeriesFold>, Vec<Entry>), StoreError> {
    let since = store
        .since_inception(keys, ROLLUP_VERSION, head.size, MAX_DECISIONS)
        .await?;
    let mut folds = Vec::with_capacity(keys.len());
    let mut rollups = Vec::new();
    for ((key, series), latest) in keys.iter().zip(since.series).zip(latest) {
        folds.push(fold_series(store, key, series, Some(latest), head, &mut rollups).await?);
    }
    keep_rollups(store, &rollups).await;
    let decisions = since
        .decisions
        .into_iter()
        .filter(|e| at_head(e, head))
        .collect();
    Ok((folds, decisions))
}

/// Stores `rollups`; a store that cannot keep them only costs the next
/// reader the same work.
pub(crate) async fn keep_rollups(store: &dyn SeriesReads, rollups: &[Rollup]) {
    if let Err(error) = store.put_rollups(rollups).await {
        tracing::warn!(%error, "the since-inception roll-ups were not kept");
    }
}

/// One series since inception, up to `head`: its stored roll-up (`series`
/// as [`SeriesReads::since_inception`] read it) with the snapshots after
/// it. When months closed since the roll-up, the new roll-up (the fold
/// through the last closed month) is added to `rollups`. `latest` is the
/// series' latest snapshot when the caller has it parsed already.
pub(crate) async fn fold_series(
    store: &dyn SeriesReads,
    (strategy_id, mode): &(StrategyId, Mode),
    series: SeriesSince,
    latest: Option<&(Entry, Snapshot)>,
    head: Head,
    rollups: &mut Vec<Rollup>,
) -> Result<SeriesFold, StoreError> {
    let stored = series
        .state
        .as_deref()
        .map(serde_json::from_str::<SeriesFold>);
    let unreadable = matches!(stored, Some(Err(_)));
    let (mut fold, entries) = match stored {
        Some(Ok(fold)) => (fold, series.entries),
        // A state this version cannot read: start over from the series'
        // first snapshot, and replace it.
        Some(Err(_)) => (
            SeriesFold::default(),
            store
                .snapshot_series(strategy_id, *mode, i64::MIN, i64::MAX)
                .await?,
        ),
        None => (SeriesFold::default(), series.entries),
    };
    let snapshots: Vec<(u64, Cow<Snapshot>)> = entries
        .iter()
        .filter(|e| at_head(e, head))
        .map(|e| snapshot_in(e, latest).map(|s| (e.seq, s)))
        .collect::<Result<_, _>>()?;
    // Every month before the latest snapshot's is closed.
    let open_month = snapshots
        .last()
        .and_then(|(_, s)| rollup::month_start(s.header.as_of.instant()));
    let closed = open_month.map_or(0, |start| {
        snapshots.partition_point(|(_, s)| s.header.as_of.instant() < start)
    });
    for (seq, snapshot) in &snapshots[..closed] {
        fold.push(*seq, snapshot);
    }
    if let (true, Some(start)) = (closed > 0, open_month) {
        rollups.push(Rollup {
            strategy_id: strategy_id.clone(),
            mode: *mode,
            version: ROLLUP_VERSION,
            from_nanos: nanos(start),
            through_seq: fold.through_seq(),
            state: serde_json::to_string(&fold).expect("a fold serialises"),
            overwrite: unreadable,
        });
    }
    for (seq, snapshot) in &snapshots[closed..] {
        fold.push(*seq, snapshot);
    }
    Ok(fold)
}

/// The snapshot `entry` holds: the series' `latest`, parsed already, when it
/// is that one (every series read ends with it).
fn snapshot_in<'a>(
    entry: &Entry,
    latest: Option<&'a (Entry, Snapshot)>,
) -> Result<Cow<'a, Snapshot>, StoreError> {
    match latest {
        Some((latest_entry, snapshot)) if entry.seq == latest_entry.seq => {
            Ok(Cow::Borrowed(snapshot))
        }
        _ => snapshot_of(entry).map(Cow::Owned),
    }
}

/// Whether `entry` is part of the ledger at `head` (entries appended after
/// the head are not part of a dashboard computed at it).
fn at_head(entry: &Entry, head: Head) -> bool {
    entry.seq <= head.size
}

fn month_label((year, month): analytics::Month) -> String {
    format!("{year:04}-{month:02}")
}

fn latest_view(seq: u64, snapshot: &Snapshot) -> Latest {
    // Checked: a tiny equity beside a large value does not fit a decimal
    // (the weight is then null, like a zero equity's).
    let weight = |value: rust_decimal::Decimal| {
        value
            .checked_div(snapshot.equity)
            .and_then(|w| rust_decimal::prelude::ToPrimitive::to_f64(&w))
    };
    Latest {
        as_of: snapshot.header.as_of.as_str().to_owned(),
        equity: decimal_json(snapshot.equity),
        cash: snapshot.cash.map(decimal_json),
        cash_weight: snapshot.cash.and_then(weight),
        positions: snapshot.positions.as_ref().map(|positions| {
            positions
                .iter()
                .map(|p| {
                    let value = p.market_value();
                    PositionView {
                        symbol: p.symbol.clone(),
                        quantity: decimal_json(p.quantity),
                        cost: decimal_json(p.cost),
                        mark: decimal_json(p.mark),
                        value: value.map_or(Value::Null, decimal_json),
                        weight: value.and_then(weight),
                    }
                })
                .collect()
        }),
        seq,
    }
}

/// One series' valuation instants (baseline included) with its growth index.
struct Timeline {
    /// The window's start: instants before it are the baseline's, not the window's.
    start: DateTime<Utc>,
    instants: BTreeMap<DateTime<Utc>, Option<f64>>,
}

impl Timeline {
    /// The instants inside the window.
    fn in_window(&self) -> impl Iterator<Item = &DateTime<Utc>> {
        self.instants.range(self.start..).map(|(t, _)| t)
    }

    /// From the baseline to the latest snapshot.
    fn span(&self) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        Some((
            *self.instants.keys().next()?,
            *self.instants.keys().next_back()?,
        ))
    }
}

/// Shared timestamps, misaligned series, and returns over the shared span.
fn compare(strategies: &[StrategyView], timelines: &[Timeline]) -> Comparison {
    let mut users: BTreeMap<DateTime<Utc>, usize> = BTreeMap::new();
    for timeline in timelines {
        for instant in timeline.in_window() {
            *users.entry(*instant).or_default() += 1;
        }
    }
    let series_count = timelines.len();
    let shared: BTreeSet<DateTime<Utc>> = users
        .iter()
        .filter(|(_, n)| **n == series_count)
        .map(|(t, _)| *t)
        .collect();
    let reference: BTreeSet<DateTime<Utc>> = users
        .iter()
        .filter(|(_, n)| **n * 2 >= series_count)
        .map(|(t, _)| *t)
        .collect();
    let mut misaligned: Vec<SeriesKey> = strategies
        .iter()
        .zip(timelines)
        .filter(|(_, timeline)| {
            let Some((first, last)) = timeline.span() else {
                return false;
            };
            let expected: Vec<&DateTime<Utc>> = reference.range(first..=last).collect();
            let missed = expected
                .iter()
                .filter(|t| !timeline.instants.contains_key(t))
                .count();
            missed * 2 > expected.len()
        })
        .map(|(s, _)| SeriesKey {
            strategy_id: s.strategy_id.clone(),
            mode: s.mode,
        })
        .collect();
    misaligned.sort();
    let returns = strategies
        .iter()
        .zip(timelines)
        .map(|(s, timeline)| {
            let index_at = |instant: Option<&DateTime<Utc>>| {
                instant.and_then(|i| timeline.instants.get(i).copied().flatten())
            };
            let twr = match (index_at(shared.first()), index_at(shared.last())) {
                (Some(a), Some(b)) if shared.len() >= 2 && a > 0.0 => {
                    Some(b / a - 1.0).filter(|x| x.is_finite())
                }
                _ => None,
            };
            SharedReturn {
                strategy_id: s.strategy_id.clone(),
                mode: s.mode,
                twr,
            }
        })
        .collect();
    Comparison {
        shared_timestamps: shared.len(),
        misaligned,
        strategies: returns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_the_four_allowed_counts_with_63_by_default() {
        assert_eq!(Period::parse(None).unwrap().days(), Some(63));
        for days in PERIODS {
            assert_eq!(
                Period::parse(Some(&days.to_string())).unwrap().days(),
                Some(days)
            );
        }
        assert_eq!(Period::parse(Some("all")), Ok(Period::All));
        for bad in [
            "0",
            "20",
            "64",
            "-21",
            "21.0",
            "021",
            "+21",
            "abc",
            "",
            "252 ",
            "99999999999",
            "ALL",
            "All",
            "all ",
        ] {
            assert_eq!(Period::parse(Some(bad)), Err(InvalidPeriod), "{bad}");
        }
    }
}
