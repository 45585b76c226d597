//! One series' dashboard entry as a resumable pass, and the since-inception
//! roll-up built on it.
//!
//! [`SeriesFold`] takes a series' snapshots in time order and keeps what its
//! entry needs: the analytics [`Fold`], the baseline, the chart's points
//! (thinned as they come, [`Chart`]) and the flows. Every period uses it.
//! A windowed period folds its window on each miss. Since inception,
//! the state after a series' last *closed* month is kept in the store (a
//! [`Rollup`](crate::ports::ledger_store::Rollup)): a month is closed once the series has a snapshot in a later
//! month, since the ledger refuses a snapshot older than its series' latest
//! (`out_of_order`), so nothing can be added to it. A request then reads the
//! stored state and the snapshots from the open month on, and the first
//! request after a month closes folds that month and stores the new state
//! (one write per series per month). The result equals one pass over the
//! whole series, bit for bit (the state keeps every `f64` exactly; property
//! tests in `analytics` and here).

use super::recording::Recording;
use super::view::{latest_view, month_label};
use super::{
    DrawdownPoint, FlowPoint, MAX_CHART_POINTS, MetricsView, MonthReturn, Point, SeriesPoint,
    StrategyView, YearReturn,
};
use crate::analytics::{self, Fold, IndexPoint, Valuation, finite};
use crate::record::{Snapshot, decimal_json};
use crate::service::log::WitnessTable;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The format of a stored roll-up's state: a change to `SeriesFold`, the
/// analytics' fold or the chart's rule gets a new number, and states of
/// another number are ignored (and replaced by the next reader). Version 5:
/// the recording counts clock conflicts apart (a state of 4 counted them
/// on time).
pub(crate) const ROLLUP_VERSION: u32 = 5;

/// How finely a chart keeps points: every snapshot, or the last of each UTC
/// day, ISO week or calendar month (the baseline is always kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Grain {
    #[default]
    Snapshot,
    Day,
    Week,
    Month,
}

impl Grain {
    const ALL: [Grain; 4] = [Grain::Snapshot, Grain::Day, Grain::Week, Grain::Month];

    /// Whether two instants (in order) fall in the same group.
    fn same_group(self, a: DateTime<Utc>, b: DateTime<Utc>) -> bool {
        let (a, b) = (a.date_naive(), b.date_naive());
        match self {
            Grain::Snapshot => false,
            Grain::Day => a == b,
            Grain::Week => a.iso_week() == b.iso_week(),
            Grain::Month => (a.year(), a.month()) == (b.year(), b.month()),
        }
    }

    fn coarser(self) -> Option<Grain> {
        match self {
            Grain::Snapshot => Some(Grain::Day),
            Grain::Day => Some(Grain::Week),
            Grain::Week => Some(Grain::Month),
            Grain::Month => None,
        }
    }
}

/// A point of the chart.
#[derive(Clone, Debug, PartialEq)]
struct ChartPoint {
    /// `asOf` as written.
    as_of: String,
    at: DateTime<Utc>,
    /// The equity as the dashboard shows it ([`decimal_json`]), converted
    /// once when the point is taken.
    equity: Value,
    /// The growth index (NaN once the series' returns are undefined).
    index: f64,
    /// Its drawdown from the running peak (NaN likewise).
    drawdown: f64,
}

/// The chart's points, thinned as they come: every snapshot up to
/// [`MAX_CHART_POINTS`]; beyond, the baseline and the last point of each
/// UTC day; beyond that many days, of each ISO week; then of each month.
/// So the chart never holds many more than [`MAX_CHART_POINTS`] points,
/// and the result is the same whether the points come in one pass or in
/// several.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "StoredChart", try_from = "StoredChart")]
struct Chart {
    grain: Grain,
    /// How many groups the series has at each grain (snapshots, days,
    /// weeks, months).
    groups: [u64; 4],
    points: Vec<ChartPoint>,
}

impl Chart {
    fn push(&mut self, point: ChartPoint) {
        let previous = self.points.last().map(|p| p.at);
        for (count, grain) in self.groups.iter_mut().zip(Grain::ALL) {
            if previous.is_none_or(|at| !grain.same_group(at, point.at)) {
                *count += 1;
            }
        }
        while self.groups[self.grain as usize] > MAX_CHART_POINTS as u64 {
            let Some(coarser) = self.grain.coarser() else {
                break;
            };
            self.grain = coarser;
            self.thin();
        }
        let kept = self.points.len();
        match self.points.last_mut() {
            Some(last) if kept > 1 && self.grain.same_group(last.at, point.at) => *last = point,
            _ => self.points.push(point),
        }
    }

    /// Keeps the baseline and the last point of each group.
    fn thin(&mut self) {
        let points = std::mem::take(&mut self.points);
        let mut points = points.into_iter().peekable();
        let mut first = true;
        while let Some(point) = points.next() {
            let last_of_group = points
                .peek()
                .is_none_or(|next| !self.grain.same_group(point.at, next.at));
            if first || last_of_group {
                self.points.push(point);
            }
            first = false;
        }
    }
}

/// A chart as a roll-up stores it, by column: every since-inception
/// request reads hundreds of points per series, so each column of numbers
/// is one base64 text of their bits, big-endian (exact, NaN included, and
/// quick to read back), and the `asOf`s one space-separated text, not an
/// object per point.
#[derive(Serialize, Deserialize)]
struct StoredChart {
    grain: Grain,
    groups: [u64; 4],
    /// Each point's `asOf` as written, separated by spaces (an `asOf` has none).
    as_of: String,
    /// Each point's instant in nanoseconds.
    at: String,
    /// Each point's equity as shown.
    equity: Vec<Value>,
    /// Each point's growth index.
    index: String,
    /// Each point's drawdown.
    drawdown: String,
}

fn text_of_bits(values: impl Iterator<Item = u64>) -> String {
    let bytes: Vec<u8> = values.flat_map(u64::to_be_bytes).collect();
    BASE64.encode(bytes)
}

fn bits_of_text(text: &str) -> Result<Vec<u64>, String> {
    let bytes = BASE64.decode(text).map_err(|e| e.to_string())?;
    if bytes.len() % 8 != 0 {
        return Err("a column is not whole numbers".into());
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|chunk| u64::from_be_bytes(chunk.try_into().expect("eight bytes")))
        .collect())
}

impl From<Chart> for StoredChart {
    fn from(chart: Chart) -> StoredChart {
        let points = &chart.points;
        StoredChart {
            grain: chart.grain,
            groups: chart.groups,
            as_of: points
                .iter()
                .map(|p| p.as_of.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            // Every accepted `asOf` fits i64 nanoseconds (`AsOf::nanos`).
            at: text_of_bits(
                points
                    .iter()
                    .map(|p| p.at.timestamp_nanos_opt().unwrap_or(i64::MAX) as u64),
            ),
            equity: points.iter().map(|p| p.equity.clone()).collect(),
            index: text_of_bits(points.iter().map(|p| p.index.to_bits())),
            drawdown: text_of_bits(points.iter().map(|p| p.drawdown.to_bits())),
        }
    }
}

impl TryFrom<StoredChart> for Chart {
    type Error = String;

    fn try_from(stored: StoredChart) -> Result<Chart, String> {
        let at = bits_of_text(&stored.at)?;
        let index = bits_of_text(&stored.index)?;
        let drawdown = bits_of_text(&stored.drawdown)?;
        let as_of: Vec<&str> = if stored.as_of.is_empty() {
            Vec::new()
        } else {
            stored.as_of.split(' ').collect()
        };
        let count = as_of.len();
        if [at.len(), stored.equity.len(), index.len(), drawdown.len()] != [count; 4] {
            return Err("the chart's columns differ in length".into());
        }
        let points = as_of
            .into_iter()
            .zip(at)
            .zip(stored.equity)
            .zip(index.into_iter().zip(drawdown))
            .map(|(((as_of, at), equity), (index, drawdown))| ChartPoint {
                as_of: as_of.to_owned(),
                at: DateTime::from_timestamp_nanos(at as i64),
                equity,
                index: f64::from_bits(index),
                drawdown: f64::from_bits(drawdown),
            })
            .collect();
        Ok(Chart {
            grain: stored.grain,
            groups: stored.groups,
            points,
        })
    }
}

/// The baseline: the series' first snapshot in the fold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Baseline {
    seq: u64,
    as_of: String,
}

/// A non-zero flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Flow {
    as_of: String,
    amount: Decimal,
}

/// Where the growth index stood at the end of a calendar month (after the
/// month's last snapshot): a series export starts a page in the next month
/// from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct MonthEnd {
    month: analytics::Month,
    point: IndexPoint,
}

/// The month ends as a roll-up stores them: one base64 text of fixed-width
/// records (the year as a big-endian i32, the month as one byte, then the
/// index point's [`IndexPoint::to_bytes`]), since every since-inception
/// request reads one per month of every series.
mod month_ends_column {
    use super::{IndexPoint, MonthEnd};
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use serde::de::Error as _;
    use serde::{Deserializer, Serializer};

    const RECORD: usize = 4 + 1 + IndexPoint::BYTES;

    /// Writes the column.
    pub(super) fn serialize<S: Serializer>(
        ends: &[MonthEnd],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::with_capacity(ends.len() * RECORD);
        for end in ends {
            let (year, month) = end.month;
            bytes.extend_from_slice(&year.to_be_bytes());
            bytes.push(u8::try_from(month).unwrap_or(u8::MAX));
            bytes.extend_from_slice(&end.point.to_bytes());
        }
        serializer.serialize_str(&BASE64.encode(bytes))
    }

    /// Reads it back; a text it cannot have written is an error (the
    /// roll-up is then rebuilt).
    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<MonthEnd>, D::Error> {
        let bytes = crate::analytics::base64_bytes(deserializer)?;
        if bytes.len() % RECORD != 0 {
            return Err(D::Error::custom("the month ends are not whole records"));
        }
        bytes
            .chunks_exact(RECORD)
            .map(|record| {
                let year = i32::from_be_bytes(record[..4].try_into().expect("four bytes"));
                let month = u32::from(record[4]);
                let point = IndexPoint::from_bytes(record[5..].try_into().expect("a point"))
                    .filter(|_| (1..=12).contains(&month))
                    .ok_or_else(|| D::Error::custom("a month end out of range"))?;
                Ok(MonthEnd {
                    month: (year, month),
                    point,
                })
            })
            .collect()
    }
}

/// One series' dashboard entry as a pass over its snapshots (see the module
/// documentation); serialised, it is the since-inception roll-up's state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SeriesFold {
    fold: Fold,
    baseline: Option<Baseline>,
    chart: Chart,
    flows: Vec<Flow>,
    /// The index point at the end of each month that has a later one.
    #[serde(with = "month_ends_column")]
    month_ends: Vec<MonthEnd>,
    /// The seq of the latest snapshot taken.
    through_seq: u64,
    /// How the snapshots were recorded (their witnessed times' lags), when
    /// the reader that began the fold shows witnessed times (a log without
    /// witnesses keeps nothing that could only grow).
    recording: Option<Recording>,
    /// Every point's instant and growth index, for a windowed period's
    /// comparison (never stored: since inception compares charted points).
    #[serde(skip)]
    every_point: Option<Vec<(DateTime<Utc>, f64)>>,
}

impl SeriesFold {
    /// An empty fold that keeps how its snapshots were recorded when
    /// `witnessed`.
    pub(crate) fn new(witnessed: bool) -> SeriesFold {
        SeriesFold {
            recording: witnessed.then(Recording::default),
            ..SeriesFold::default()
        }
    }

    /// A fold that also keeps every point for the comparison.
    pub(crate) fn keeping_every_point(witnessed: bool) -> SeriesFold {
        SeriesFold {
            every_point: Some(Vec::new()),
            ..SeriesFold::new(witnessed)
        }
    }

    /// Whether it keeps how its snapshots were recorded.
    pub(crate) fn keeps_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// Whether it has taken no snapshot.
    pub(crate) fn is_empty(&self) -> bool {
        self.baseline.is_none()
    }

    /// The baseline's instant.
    pub(crate) fn first_instant(&self) -> Option<DateTime<Utc>> {
        self.chart.points.first().map(|p| p.at)
    }

    /// The seq of the latest snapshot taken.
    pub(crate) fn through_seq(&self) -> u64 {
        self.through_seq
    }

    /// The first record still waiting for its witnessed time.
    pub(crate) fn first_waiting(&self) -> Option<u64> {
        self.recording.as_ref().and_then(Recording::first_waiting)
    }

    /// Gives the waiting snapshots the witnessed times `table` holds.
    pub(crate) fn resolve(&mut self, table: &WitnessTable) {
        if let Some(recording) = &mut self.recording {
            recording.resolve(table);
        }
    }

    /// Whether the series' returns are defined to its end (every interval
    /// so far, and at least one): otherwise only the baseline's index is
    /// shown.
    pub(crate) fn returns_shown(&self) -> bool {
        self.fold.returns_defined() && self.fold.intervals() > 0
    }

    /// The index point at the start of `month`: the end of the latest month
    /// before it that has a snapshot (`None`: the series starts in or after
    /// `month`). Complete for every month up to the last one taken.
    pub(crate) fn start_of(&self, month: analytics::Month) -> Option<IndexPoint> {
        let before = self.month_ends.partition_point(|end| end.month < month);
        before
            .checked_sub(1)
            .map(|last| self.month_ends[last].point)
    }

    /// Takes the series' next snapshot (later than every one before).
    pub(crate) fn push(&mut self, seq: u64, snapshot: &Snapshot) {
        let at = snapshot.header.as_of.instant();
        let as_of = snapshot.header.as_of.as_str();
        if let Some(last) = self.fold.last().map(|v| month_of(v.at))
            && last != month_of(at)
            && let Some(point) = self.fold.index_point()
        {
            self.month_ends.push(MonthEnd { month: last, point });
        }
        let step = self.fold.push(Valuation {
            at,
            equity: snapshot.equity,
            flow: snapshot.flow_since_previous,
        });
        if self.baseline.is_none() {
            self.baseline = Some(Baseline {
                seq,
                as_of: as_of.to_owned(),
            });
        } else if !snapshot.flow_since_previous.is_zero() {
            self.flows.push(Flow {
                as_of: as_of.to_owned(),
                amount: snapshot.flow_since_previous,
            });
        }
        let (index, drawdown) = step.map_or((f64::NAN, f64::NAN), |s| (s.index, s.drawdown));
        if let Some(points) = self.every_point.as_mut() {
            points.push((at, index));
        }
        if let Some(recording) = &mut self.recording {
            recording.push(seq, at, as_of, index);
        }
        self.chart.push(ChartPoint {
            as_of: as_of.to_owned(),
            at,
            equity: decimal_json(snapshot.equity),
            index,
            drawdown,
        });
        self.through_seq = seq;
    }

    /// A point's value as shown: the baseline's always, later ones only
    /// while the series' returns are defined; never a non-finite number.
    fn shown(&self, position: usize, value: f64) -> Option<f64> {
        if position == 0 || self.fold.returns_defined() {
            finite(value)
        } else {
            None
        }
    }

    /// The growth index by instant for the comparison: at every point when
    /// they were kept, else at the charted points.
    fn timeline(&self) -> BTreeMap<DateTime<Utc>, Option<f64>> {
        match &self.every_point {
            Some(points) => points
                .iter()
                .enumerate()
                .map(|(i, (at, index))| (*at, self.shown(i, *index)))
                .collect(),
            None => self
                .chart
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| (p.at, self.shown(i, p.index)))
                .collect(),
        }
    }

    /// The series' dashboard entry, and its growth index by instant for the
    /// comparison; `latest` is its latest snapshot (the last one taken),
    /// `end` the fund's latest instant. (Long: every part of the entry is
    /// read off the fold in one place, so none is computed twice.)
    pub(crate) fn finish(
        mut self,
        latest_seq: u64,
        latest: &Snapshot,
        end: DateTime<Utc>,
        table: &WitnessTable,
    ) -> FinishedSeries {
        self.resolve(table);
        let latest_index = self.chart.points.last().map(|p| p.index);
        let (recording, since_on_time) = match &self.recording {
            Some(recording) => recording.view(table, latest_index, self.returns_shown()),
            // Only a log without witnesses folds without keeping it.
            None => Recording::default().view(
                &WitnessTable::unwitnessed(),
                latest_index,
                self.returns_shown(),
            ),
        };
        let timeline = self.timeline();
        let mut metrics = self.fold.metrics();
        let daily_returns = std::mem::take(&mut metrics.daily_returns);
        let shown: Vec<(Option<f64>, Option<f64>)> = self
            .chart
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| (self.shown(i, p.index), self.shown(i, p.drawdown)))
            .collect();
        let (baseline_seq, baseline_as_of) = match self.baseline {
            Some(baseline) => (baseline.seq, baseline.as_of),
            None => (latest_seq, latest.header.as_of.as_str().to_owned()),
        };
        let baseline_equity = self
            .chart
            .points
            .first()
            .map_or_else(|| decimal_json(latest.equity), |p| p.equity.clone());
        let (series, underwater) = self
            .chart
            .points
            .into_iter()
            .zip(shown)
            .map(|(p, (index, drawdown))| {
                let drawdown = DrawdownPoint {
                    as_of: p.as_of.clone(),
                    drawdown,
                };
                let point = SeriesPoint {
                    as_of: p.as_of,
                    equity: p.equity,
                    index,
                };
                (point, drawdown)
            })
            .unzip();
        let view = StrategyView {
            strategy_id: latest.header.strategy_id.to_string(),
            strategy_name: latest.header.strategy_name.clone(),
            mode: latest.header.mode,
            baseline: Point {
                as_of: baseline_as_of,
                equity: baseline_equity,
                seq: baseline_seq,
            },
            latest: latest_view(latest_seq, latest),
            metrics: MetricsView {
                twr: metrics.twr,
                annualized_return: metrics.annualized_return,
                pnl: metrics.pnl.map(decimal_json),
                net_flows: metrics.net_flows.map(decimal_json),
                max_drawdown: metrics.max_drawdown,
                volatility: metrics.volatility,
                sharpe: metrics.sharpe,
                sortino: metrics.sortino,
                calmar: metrics.calmar,
                withheld: metrics.withheld,
                daily_returns: daily_returns.len() as u64,
                sharpe_stats: metrics.sharpe_statistics,
                benchmark: None,
                best_day: metrics.best_day,
                worst_day: metrics.worst_day,
                current_drawdown: metrics.current_drawdown,
                longest_drawdown_days: metrics.longest_drawdown_days,
                intervals: metrics.intervals,
            },
            series,
            underwater,
            monthly: metrics
                .monthly
                .iter()
                .map(|&(month, r)| MonthReturn {
                    month: month_label(month),
                    r#return: r,
                })
                .collect(),
            yearly: metrics
                .yearly
                .iter()
                .map(|&(year, r)| YearReturn { year, r#return: r })
                .collect(),
            flows: self
                .flows
                .into_iter()
                .map(|f| FlowPoint {
                    as_of: f.as_of,
                    amount: decimal_json(f.amount),
                })
                .collect(),
            stale: analytics::is_stale(latest.header.as_of.instant(), end),
            baseline_only: metrics.intervals == 0,
            recording,
            since_on_time,
        };
        FinishedSeries {
            view,
            timeline,
            daily_returns,
        }
    }
}

/// A series' dashboard entry with what the dashboard's comparisons need.
pub(crate) struct FinishedSeries {
    /// The entry (its Sharpe not yet deflated, no benchmark yet).
    pub view: StrategyView,
    /// Its growth index by instant, for the comparison.
    pub timeline: BTreeMap<DateTime<Utc>, Option<f64>>,
    /// Each UTC day's return, for the benchmark comparison.
    pub daily_returns: Vec<(analytics::DayNumber, f64)>,
}

/// The UTC calendar month of `at`.
pub(crate) fn month_of(at: DateTime<Utc>) -> analytics::Month {
    (at.year(), at.month())
}

/// The first instant of `at`'s UTC calendar month: snapshots before it are
/// in closed months once a snapshot at or after `at` exists.
pub(crate) fn month_start(at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    NaiveDate::from_ymd_opt(at.year(), at.month(), 1)?
        .and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc())
}

#[cfg(test)]
mod tests;
