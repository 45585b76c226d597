//! The dashboard as it answers: its JSON types (and, with the `schema`
//! feature, their schemas), and the views built from a snapshot.

use super::corrupt;
use super::period::*;
use crate::analytics;
use crate::merkle::Head;
use crate::ports::ledger_store::{Entry, StoreError};
use crate::record::{Decision, Mode, Record, Snapshot, decimal_json};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// Most decisions a dashboard lists (newest first): with every text cut
/// to [`MAX_DECISION_TEXT_CHARS`], 50 decisions stay well under a
/// megabyte whatever the writer sent.
pub(crate) const MAX_DECISIONS: usize = 50;
/// Longest a decision's `summary`, `thesis`, `counterEvidence` or
/// `nextCheck` is shown on the dashboard, in characters (the last being
/// "…" when cut); the ledger view has the record whole.
pub(crate) const MAX_DECISION_TEXT_CHARS: usize = 600;
/// The decision fields the dashboard cuts.
pub(crate) const CUT_DECISION_FIELDS: [&str; 4] =
    ["summary", "thesis", "counterEvidence", "nextCheck"];
/// Beyond this many points a chart series is thinned to the last point of
/// each UTC day (with the baseline kept), beyond this many days to each ISO
/// week's last, beyond this many weeks to each month's; the metrics never
/// are.
pub(crate) const MAX_CHART_POINTS: usize = 500;

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
    /// Sharpe ratio (risk-free 0); null while `withheld`.
    pub sharpe: Option<f64>,
    /// Sortino ratio; null while `withheld`.
    pub sortino: Option<f64>,
    /// annualizedReturn / |maxDrawdown|; null unless both are defined and
    /// maxDrawdown < 0, and while `withheld`.
    pub calmar: Option<f64>,
    /// Why the Sharpe, Sortino and Calmar ratios and `sharpeStats` are
    /// null: `"fewer than 20 daily returns"`, `"no variation"` (every
    /// daily return the same) or `"no standard error"`; null when they are
    /// shown (or the series' returns are undefined).
    pub withheld: Option<analytics::Withheld>,
    /// The UTC days with a return (each day's intervals chained).
    pub daily_returns: u64,
    /// What the Sharpe can support: its standard error and 95 % interval,
    /// the probability it is above 0, the history 95 % confidence needs,
    /// and the figure deflated for the strategies of the mode tried;
    /// null while `withheld`.
    pub sharpe_stats: Option<analytics::SharpeStatistics>,
    /// The series against its mode's benchmark (`benchmarks` in the
    /// contract) over the days both have a return; null for the benchmark
    /// itself and when its mode has none.
    pub benchmark: Option<analytics::BenchmarkComparison>,
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
    /// `MAX_CHART_POINTS` points, the last of each UTC day, week or month).
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
    /// How the period's snapshots were recorded: how many entered the
    /// witnessed log on time, late or not yet, and how many are dated after
    /// it (a clock conflict); `"unwitnessed"` when the log has no witness
    /// policy with a quorum.
    pub recording: RecordingState,
    /// The stretch since `recording.onTimeSince` (every later snapshot on
    /// time) and the growth over it; null when there is none.
    pub since_on_time: Option<SinceOnTime>,
}

/// A series' recording, or the word that the log claims no time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum RecordingState {
    /// The log is witnessed: the counts.
    Witnessed(RecordingView),
    /// The log has no policy with a quorum: `"unwitnessed"`.
    Unwitnessed(UnwitnessedMark),
}

impl RecordingState {
    /// The state of a log that claims no time.
    pub(crate) fn unwitnessed() -> RecordingState {
        RecordingState::Unwitnessed(UnwitnessedMark::Unwitnessed)
    }
}

/// The word `"unwitnessed"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum UnwitnessedMark {
    /// No witnessed time is claimed.
    #[serde(rename = "unwitnessed")]
    Unwitnessed,
}

/// How a series' snapshots were recorded: each one's lag is its witnessed
/// time minus its `asOf`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecordingView {
    /// The `asOf` from which every later witnessed snapshot was on time;
    /// null when the latest witnessed one was late or a clock conflict, or
    /// none is witnessed.
    pub on_time_since: Option<String>,
    /// Snapshots in the witnessed log within `log.recordingWindowSeconds`
    /// of their valuation.
    pub on_time: u64,
    /// Snapshots that entered it later than that (disclosed, not refused).
    pub late: u64,
    /// Snapshots not yet in a witnessed checkpoint.
    pub pending: u64,
    /// Snapshots whose witnessed time precedes their `asOf` by more than
    /// `log.clockToleranceSeconds` (a lag below minus that): a clock is
    /// wrong, the service's or a witness's. Never on time; each ends an
    /// on-time stretch as a late one does.
    pub clock_conflict: u64,
    /// The median lag of the witnessed snapshots, seconds (clock conflicts
    /// left out).
    pub median_lag_seconds: Option<f64>,
    /// The largest lag, seconds (clock conflicts left out).
    pub max_lag_seconds: Option<i64>,
}

/// The stretch of a series recorded as it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SinceOnTime {
    /// Its first snapshot's `asOf` (`recording.onTimeSince`).
    pub start: String,
    /// Time-weighted return from that snapshot to the latest; null when
    /// returns are undefined.
    pub twr: Option<f64>,
}

/// Whether the log claims witnessed times, and since when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WitnessingView {
    /// `witnessed` (a policy with a quorum) or `unwitnessed`.
    pub state: &'static str,
    /// When witnessing began: the first witnessed checkpoint's quorum
    /// time (records appended before it can only be shown as in the log
    /// by then); null before it.
    pub since: Option<String>,
    /// How long after its valuation a snapshot may enter the witnessed log
    /// and still be on time.
    pub recording_window_seconds: i64,
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
    /// Series that do not value at the reference times (the
    /// contract's `comparison` formula): the reference times are the valuation instants in the
    /// window used by at least half of the series; a series is misaligned
    /// when it misses more than half of the reference times within its own
    /// span (its baseline to its latest snapshot). Sorted by id, then mode.
    pub misaligned: Vec<SeriesKey>,
    /// Series whose valuations in the window all come before another
    /// series' first one there, or that have none in the window (a stale
    /// baseline): while one is listed no instant is shared by every series,
    /// so `shared_timestamps` is 0 and this names why. Sorted by id, then
    /// mode.
    pub disjoint: Vec<SeriesKey>,
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
    /// The same decision typed (its texts cut the same way), for readers
    /// in code (the page); not part of the JSON.
    #[serde(skip)]
    pub decision: Decision,
}

/// `text` cut to [`MAX_DECISION_TEXT_CHARS`] characters (its first 599
/// and "…") when it is longer, else `None`.
fn cut_text(text: &str) -> Option<String> {
    text.chars().nth(MAX_DECISION_TEXT_CHARS)?;
    let cut: String = text.chars().take(MAX_DECISION_TEXT_CHARS - 1).collect();
    Some(cut + "\u{2026}")
}

/// `decision` with its long texts cut as the dashboard's JSON cuts them.
fn cut_decision(mut decision: Decision) -> Decision {
    if let Some(cut) = cut_text(&decision.summary) {
        decision.summary = cut;
    }
    for text in [
        &mut decision.thesis,
        &mut decision.counter_evidence,
        &mut decision.next_check,
    ]
    .into_iter()
    .flatten()
    {
        if let Some(cut) = cut_text(text) {
            *text = cut;
        }
    }
    decision
}

impl DecisionView {
    /// The view of a stored decision: its text fields cut when long.
    pub(super) fn of(entry: &Entry) -> Result<DecisionView, StoreError> {
        let decision = match Record::from_canonical(&entry.canonical) {
            Ok(Record::Decision(decision)) => cut_decision(decision),
            Ok(Record::Snapshot(_)) => return Err(corrupt(entry, "expected a decision")),
            Err(error) => return Err(corrupt(entry, error)),
        };
        let mut record: Value =
            serde_json::from_str(&entry.canonical).map_err(|e| corrupt(entry, e))?;
        let mut truncated = false;
        if let Value::Object(fields) = &mut record {
            for name in CUT_DECISION_FIELDS {
                if let Some(value) = fields.get_mut(name)
                    && let Some(cut) = value.as_str().and_then(cut_text)
                {
                    *value = Value::String(cut);
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
            decision,
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
    /// Whether the record's times are witnessed, and since when.
    pub witnessing: WitnessingView,
    /// One per (strategyId, mode), sorted by id then mode.
    pub strategies: Vec<StrategyView>,
    /// How the strategies line up.
    pub comparison: Comparison,
    /// Decisions from the window's start on, including those made after the
    /// latest snapshot, newest first (at most `MAX_DECISIONS`).
    pub decisions: Vec<DecisionView>,
    /// When the answer stopped before its last strategy (it would have
    /// passed [`MAX_ANSWER_BYTES`](super::MAX_ANSWER_BYTES)): the last
    /// strategy id it holds, to pass as `after` for the rest; else null.
    pub next: Option<String>,
}

pub(super) fn month_label((year, month): analytics::Month) -> String {
    format!("{year:04}-{month:02}")
}

pub(super) fn latest_view(seq: u64, snapshot: &Snapshot) -> Latest {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merkle::Digest;

    /// The typed decision the page reads is cut exactly as the JSON is.
    #[test]
    fn the_typed_decision_is_cut_like_its_json() {
        let long = "é".repeat(MAX_DECISION_TEXT_CHARS + 5);
        let record = serde_json::json!({
            "id": "dec-1", "type": "decision", "visibility": "public", "mode": "paper",
            "strategyId": "momentum", "strategyName": "Momentum (paper)",
            "asOf": "2026-05-04T16:05:00Z",
            "source": {"name": "agent", "url": "https://example.com/agent"},
            "action": "research", "summary": "short", "thesis": long,
            "nextCheck": "x".repeat(MAX_DECISION_TEXT_CHARS)
        });
        let entry = Entry {
            seq: 7,
            leaf_hash: Digest([0; 32]),
            canonical: crate::canonical::canonical_json(&record),
        };
        let view = DecisionView::of(&entry).unwrap();
        let json: Value = serde_json::from_str(view.record.get()).unwrap();
        assert!(view.truncated);
        let thesis = view.decision.thesis.as_deref().unwrap();
        assert_eq!(json["thesis"], thesis);
        assert_eq!(thesis.chars().count(), MAX_DECISION_TEXT_CHARS);
        assert!(thesis.ends_with('\u{2026}'));
        assert_eq!(
            json["nextCheck"],
            view.decision.next_check.as_deref().unwrap()
        );
        assert_eq!(json["summary"], view.decision.summary.as_str());
        assert_eq!(view.decision.header.strategy_id.as_str(), "momentum");
    }
}
