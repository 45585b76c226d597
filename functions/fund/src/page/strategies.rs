//! The strategies: the at-a-glance table and each strategy's card
//! (metrics linked to their formulas, monthly returns, drawdowns, flows,
//! latest positions).

use super::bits::*;
use super::chart::{self, Curve, Point};
use super::{MAX_POSITIONS, MAX_STRATEGIES};
use crate::routes::dashboard::PERIOD;
use crate::routes::ledger::{LIMIT, TYPE};
use crate::routes::{FORMAT, MODE, STRATEGY_ID, View, link};
use chrono::SecondsFormat;
use freedom_shared::record::{Mode, RecordKind};
use freedom_shared::scan::{RunStatus, ScannerHealth};
use freedom_shared::service::{Dashboard, MetricsView, RecordingState, SeriesKey, StrategyView};
use maud::{Markup, html};

pub(super) fn metric_row(name: &str, formula: &str, value: Markup) -> Markup {
    html! {
        tr {
            th scope="row" { a href=(format!("#formula-{formula}")) title="How this is computed" { (name) } }
            td { (value) }
        }
    }
}

pub(super) fn strategies_section(dashboard: &Dashboard, scanner: Option<&ScannerHealth>) -> Markup {
    html! {
        section #strategies aria-labelledby="strategies-title" {
            h2 #strategies-title { "Strategies" }
            @if let Some(health) = scanner {
                (scanner_line(health))
            }
            @if dashboard.strategies.is_empty() {
                p { "No strategy has a snapshot yet." }
            }
            @if dashboard.comparison.shared_timestamps > 0 || !dashboard.comparison.misaligned.is_empty() || !dashboard.comparison.disjoint.is_empty() {
                p.note {
                    (dashboard.comparison.shared_timestamps) " valuation instants are shared by every strategy in this window."
                    @if !dashboard.comparison.disjoint.is_empty() {
                        " No instant can be shared while a series ends before another begins or has no valuation in the window, as "
                        (series_list(&dashboard.comparison.disjoint))
                        @if dashboard.comparison.disjoint.len() == 1 { " does." } @else { " do." }
                    }
                    @if !dashboard.comparison.misaligned.is_empty() {
                        " Misaligned (missing most of the valuation instants the other series use): "
                        (series_list(&dashboard.comparison.misaligned))
                        "."
                    }
                }
            }
            @if dashboard.strategies.len() > MAX_STRATEGIES {
                p.note {
                    (MAX_STRATEGIES) " are shown here, live ones first; "
                    a href=(link(View::Dashboard, &[(PERIOD.name, &dashboard.period.query_value())])) { "the JSON dashboard" }
                    " lists all " (dashboard.strategies.len()) " strategies."
                }
            }
            @if !dashboard.strategies.is_empty() {
                (overview(dashboard))
            }
            @for strategy in shown(dashboard) {
                (strategy_card(strategy, dashboard.comparison.is_misaligned(strategy)))
            }
        }
    }
}

/// How the scanner's last run ended, beside the paper experiments it
/// advances: when, why it was degraded, and when a run last succeeded.
fn scanner_line(health: &ScannerHealth) -> Markup {
    let at = health.at.to_rfc3339_opts(SecondsFormat::Secs, true);
    html! {
        p.note #scanner-status {
            "The scanner (it advances the paper experiments): its last run, " (moment(&at)) ", "
            @match health.status {
                RunStatus::Ok => { "succeeded." }
                RunStatus::Degraded => {
                    strong { "was degraded" }
                    @if health.why.is_empty() { "." } @else {
                        ": "
                        @for (i, why) in health.why.iter().enumerate() {
                            @if i > 0 { "; " }
                            bdi { (excerpt(why)) }
                        }
                        "."
                    }
                    " Last succeeded: "
                    @match health.last_ok_at {
                        Some(ok) => { (moment(&ok.to_rfc3339_opts(SecondsFormat::Secs, true))) "." }
                        None => { "never." }
                    }
                }
            }
        }
    }
}

/// Series named by id and mode, at most [`MAX_STRATEGIES`] of them.
fn series_list(keys: &[SeriesKey]) -> Markup {
    html! {
        @for (i, key) in keys.iter().take(MAX_STRATEGIES).enumerate() {
            @if i > 0 { ", " }
            bdi { (key.strategy_id) } " (" (key.mode.as_str()) ")"
        }
        @if keys.len() > MAX_STRATEGIES {
            " and " (keys.len() - MAX_STRATEGIES) " more"
        }
    }
}

/// One row per strategy: what a reader compares first.
pub(super) fn overview(dashboard: &Dashboard) -> Markup {
    html! {
        (scroll_table("overview", "overview", html! { "At a glance (each metric links to its formula)" }, html! {
                thead {
                    tr {
                        th scope="col" { "Strategy" }
                        th.left scope="col" { "Mode" }
                        th scope="col" { a href="#formula-twr" { "Return" } }
                        th scope="col" { a href="#formula-maxDrawdown" { abbr title="Maximum drawdown" { "Max DD" } } }
                        th scope="col" { a href="#formula-sharpe" { "Sharpe" } }
                        th scope="col" { a href="#formula-sharpeStats" { "95 % interval" } }
                        th scope="col" { a href="#formula-sharpeStats" { abbr title="Probability the Sharpe is above 0" { "P(> 0)" } } }
                        th scope="col" { "Equity" }
                    }
                }
                tbody {
                    @for strategy in shown(dashboard) {
                        tr {
                            th.name scope="row" {
                                a href=(format!("#{}", strategy_anchor(strategy))) { bdi { (shown_name(&strategy.strategy_name, strategy.mode)) } }
                            }
                            td.badges {
                                (mode_badge(strategy.mode))
                                (status_badges(strategy, dashboard.comparison.is_misaligned(strategy)))
                            }
                            td { (percent(strategy.metrics.twr)) }
                            td { (level(strategy.metrics.max_drawdown)) }
                            td { (withheld_or(&strategy.metrics, ratio(strategy.metrics.sharpe))) }
                            @match &strategy.metrics.sharpe_stats {
                                Some(stats) => {
                                    td { (interval(stats.interval95)) }
                                    td { (probability(stats.psr)) }
                                }
                                None => { td { (not_computable()) } td { (not_computable()) } }
                            }
                            td { (money(&strategy.latest.equity)) }
                        }
                    }
                }
        }))
    }
}

pub(super) fn strategy_card(strategy: &StrategyView, misaligned: bool) -> Markup {
    let m = &strategy.metrics;
    let latest = &strategy.latest;
    let anchor = strategy_anchor(strategy);
    html! {
        article.strategy #(strategy_anchor(strategy)) aria-labelledby=(format!("{}-title", strategy_anchor(strategy))) {
            h3 #(format!("{}-title", strategy_anchor(strategy))) {
                bdi { (shown_name(&strategy.strategy_name, strategy.mode)) } " " (mode_badge(strategy.mode)) (status_badges(strategy, misaligned))
            }
            p.meta {
                code { bdi { (strategy.strategy_id) } } " · baseline " (day_time(&strategy.baseline.as_of)) " at " (amount(&strategy.baseline.equity))
                " · latest " (moment(&latest.as_of)) " at " (amount(&latest.equity))
            }
            @if strategy.baseline_only {
                p.note { "Only the baseline is known in this window, so there is no return yet (not 0 %)." }
            }
            (recording_line(strategy))
            div.tables {
            div {
                (scroll_table(&format!("{anchor}-metrics"), "metrics", html! { "Metrics over the window (" (m.intervals) " intervals)" }, html! {
                    tbody {
                        (metric_row("Time-weighted return", "twr", percent(m.twr)))
                        (metric_row("Annualized return", "annualizedReturn", percent(m.annualized_return)))
                        (metric_row("P&L", "pnl", m.pnl.as_ref().map_or_else(not_computable, |v| html! { (money(v)) })))
                        (metric_row("Net flows", "netFlows", m.net_flows.as_ref().map_or_else(not_computable, |v| html! { (money(v)) })))
                        (metric_row("Max drawdown", "maxDrawdown", level(m.max_drawdown)))
                        (metric_row("Volatility (annualized)", "volatility", level(m.volatility)))
                        (metric_row("Sharpe", "sharpe", withheld_or(m, ratio(m.sharpe))))
                        (metric_row("Sortino", "sortino", withheld_or(m, ratio(m.sortino))))
                        (metric_row("Calmar", "calmar", withheld_or(m, ratio(m.calmar))))
                        (metric_row("Best day", "bestDay", percent(m.best_day)))
                        (metric_row("Worst day", "worstDay", percent(m.worst_day)))
                        (metric_row("Current drawdown", "currentDrawdown", level(m.current_drawdown)))
                        (metric_row("Longest drawdown", "longestDrawdownDays", m.longest_drawdown_days.map_or_else(not_computable, |d| html! { (d) " days" })))
                    }
                }))
                (sharpe_line(strategy))
            }
            div {
                (positions(strategy))
                (benchmark_table(strategy))
            }
            }
            (monthly_grid(strategy))
            (underwater_chart(strategy))
            (flows(strategy))
            p.links {
                "This series' every snapshot: "
                a.export href=(export_link(strategy, "csv")) { "CSV" } " · "
                a.export href=(export_link(strategy, "json")) { "JSON" }
            }
        }
    }
}

/// `value`, or "withheld" when the figures are (the card's Sharpe line
/// says why in words).
fn withheld_or(metrics: &MetricsView, value: Markup) -> Markup {
    match metrics.withheld {
        Some(reason) => html! { span.withheld title=(reason.reason()) { "withheld" } },
        None => value,
    }
}

/// What the Sharpe can support, in sentences under the card's tables:
/// its 95 % interval, the probability it is above 0, whether the history
/// is long enough for 95 % confidence, and the figure allowing for the
/// strategies tried; or why the ratios are withheld.
fn sharpe_line(strategy: &StrategyView) -> Markup {
    let m = &strategy.metrics;
    let Some(stats) = &m.sharpe_stats else {
        return match m.withheld {
            Some(reason) => html! {
                p.note.sharpe {
                    "Sharpe, Sortino and Calmar withheld: " (reason.reason())
                    @if m.daily_returns > 0 { " (" (m.daily_returns) " so far)" }
                    "."
                }
            },
            None => html! {},
        };
    };
    html! {
        p.note.sharpe {
            a href="#formula-sharpeStats" { "Sharpe" } " " (ratio(m.sharpe)) ", 95\u{a0}%: " (interval(stats.interval95)) ". "
            "Probability the Sharpe is above 0: " (probability(stats.psr)) ". "
            "Enough history for 95\u{a0}% confidence: "
            @match (stats.enough, stats.min_track_record, stats.more_trading_days) {
                (true, _, _) => { "yes (" (stats.n) " daily returns)" }
                (false, None, _) => { "never, at this Sharpe (not above 0)" }
                (false, Some(_), Some(days)) => { "needs about " (days) " more trading day" @if days != 1 { "s" } }
                (false, Some(needed), None) => { "needs about " (format!("{:.0}", (needed - stats.n as f64).ceil())) " more daily returns" }
            }
            "."
            // The page names luck among the paper experiments (the API
            // deflates every mode's Sharpe).
            @if let (Mode::Paper, Some(deflated)) = (strategy.mode, stats.deflated) {
                " " a href="#formula-deflatedSharpe" { "Allowing for " (stats.trials) " paper strategies tried" } ": " (probability(deflated)) "."
            }
        }
    }
}

/// A probability as a percentage with one decimal, and a no-break space
/// before the sign; "> 99.9 %" and "< 0.1 %" rather than a rounded
/// certainty.
fn probability(value: f64) -> String {
    if value > 0.999 {
        "> 99.9\u{a0}%".to_owned()
    } else if value < 0.001 {
        "< 0.1\u{a0}%".to_owned()
    } else {
        format!("{:.1}\u{a0}%", value * 100.0)
    }
}

/// A 95 % interval of the annualised Sharpe, "2.18 to 11.23".
fn interval([low, high]: [f64; 2]) -> String {
    minus(format!("{low:.2} to {high:.2}"))
}

/// The series against its mode's benchmark, or why it cannot be compared.
fn benchmark_table(strategy: &StrategyView) -> Markup {
    let Some(benchmark) = &strategy.metrics.benchmark else {
        return html! {};
    };
    let anchor = strategy_anchor(strategy);
    if let Some(reason) = benchmark.withheld {
        return html! {
            p.note.benchmark {
                "Against " code { bdi { (benchmark.strategy_id) } } ": withheld, " (reason.reason())
                " (" (benchmark.shared) " so far)."
            }
        };
    }
    html! {
        (scroll_table(&format!("{anchor}-benchmark"), "metrics benchmark", html! {
            "Against " bdi { (benchmark.strategy_id) } " (" (benchmark.shared) " shared days)"
        }, html! {
            tbody {
                (metric_row("Excess return", "benchmark", percent(benchmark.excess_return)))
                (metric_row("Tracking error", "benchmark", level(benchmark.tracking_error)))
                (metric_row("Information ratio", "benchmark", ratio(benchmark.information_ratio)))
                (metric_row("Beta", "benchmark", ratio(benchmark.beta)))
                (metric_row("Alpha (annualized)", "benchmark", percent(benchmark.alpha)))
                (metric_row("Correlation", "benchmark", ratio(benchmark.correlation)))
                (metric_row("Up capture", "benchmark", percent_plain(benchmark.up_capture)))
                (metric_row("Down capture", "benchmark", percent_plain(benchmark.down_capture)))
            }
        }))
    }
}

/// A lag in words: seconds, minutes, hours or days.
pub(super) fn lag_words(seconds: f64) -> String {
    let seconds = seconds.max(0.0);
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5_400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 172_800.0 {
        format!("{:.0} h", seconds / 3_600.0)
    } else {
        format!("{:.0} days", seconds / 86_400.0)
    }
}

/// One line on how the period's valuations were recorded: since when each
/// entered the witnessed log as it happened, how many were logged late, how
/// many are dated after the witnesses saw them (a clock conflict), or why
/// the page cannot say.
pub(super) fn recording_line(strategy: &StrategyView) -> Markup {
    let RecordingState::Witnessed(recording) = &strategy.recording else {
        return html! {
            p.recording.unwitnessed { "Not witnessed: the log has no witness policy with a quorum, so nothing shows when these valuations were recorded." }
        };
    };
    let max = recording.max_lag_seconds.map_or(0.0, |s| s as f64);
    let median = recording.median_lag_seconds.unwrap_or(0.0);
    let conflicts = recording.clock_conflict;
    html! {
        p.recording.late[recording.late > 0 || conflicts > 0] {
            @match (&recording.on_time_since, recording.late) {
                (Some(since), 0) => {
                    "Recorded as it happened since " (day_time(since)) ": every later valuation was in the witnessed log within " (lag_words(max)) " (median " (lag_words(median)) ")."
                }
                (Some(since), late) => {
                    "Recorded as it happened since " (day_time(since)) "; " (late) " valuation" @if late != 1 { "s" } " before it " @if late != 1 { "were" } @else { "was" } " logged late, up to " (lag_words(max)) " after " @if late != 1 { "their" } @else { "its" } " valuation."
                }
                // Without a clock conflict, the latest witnessed one was late.
                (None, late) if late > 0 && conflicts == 0 => {
                    (late) " valuation" @if late != 1 { "s" } " in this period " @if late != 1 { "were" } @else { "was" } " logged late, up to " (lag_words(max)) " after " @if late != 1 { "their" } @else { "its" } " valuation, the latest among them."
                }
                (None, late) if late > 0 => {
                    (late) " valuation" @if late != 1 { "s" } " in this period " @if late != 1 { "were" } @else { "was" } " logged late, up to " (lag_words(max)) " after " @if late != 1 { "their" } @else { "its" } " valuation."
                }
                // Every witnessed one is on time or a conflict, and the
                // latest a conflict: the sentence below says it.
                (None, _) if conflicts > 0 => {}
                _ => { "No valuation of this period is in the witnessed log yet." }
            }
            @if conflicts > 0 {
                @if recording.on_time_since.is_some() || recording.late > 0 { " " }
                (conflicts) " valuation" @if conflicts != 1 { "s are" } @else { " is" } " dated after the witnesses saw " @if conflicts != 1 { "them" } @else { "it" } ": a clock is wrong, or the valuation was dated ahead of when it was written, so " @if conflicts != 1 { "they are" } @else { "it is" } " not counted as on time."
            }
            @if recording.pending > 0 {
                " " (recording.pending) " not yet witnessed."
            }
        }
    }
}

pub(super) fn export_link(strategy: &StrategyView, format: &str) -> String {
    link(
        View::Series,
        &[
            (STRATEGY_ID, &strategy.strategy_id),
            (MODE, strategy.mode.as_str()),
            (FORMAT, format),
        ],
    )
}

/// A return as a grid cell: the value as text with its sign (so colour is
/// never the only cue), classed by sign for the colours.
pub(super) fn return_cell(value: Option<f64>) -> Markup {
    match value {
        Some(v) => {
            let class = if v > 0.0 {
                "up"
            } else if v < 0.0 {
                "down"
            } else {
                "flat"
            };
            let text = minus(format!("{:+.1}", v * 100.0));
            html! { td class=(class) { (text) } }
        }
        None => html! { td { (not_computable()) } },
    }
}

pub(super) const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Years × months of returns, each year with its own return.
pub(super) fn monthly_grid(strategy: &StrategyView) -> Markup {
    let mut years: Vec<i32> = strategy.yearly.iter().map(|y| y.year).collect();
    years.reverse();
    let month = |year: i32, number: usize| {
        let key = format!("{year:04}-{number:02}");
        strategy.monthly.iter().find(|m| m.month == key)
    };
    html! {
        @if !years.is_empty() {
            (scroll_table(&format!("{}-monthly", strategy_anchor(strategy)), "monthly", html! { "Monthly returns, % (each month's time-weighted return; the year's in the last column)" }, html! {
                    thead { tr { th scope="col" { "Year" } @for name in MONTHS { th scope="col" { (name) } } th scope="col" { "Year" } } }
                    tbody {
                        @for year in years {
                            tr {
                                th scope="row" { (year) }
                                @for number in 1..=12 {
                                    @match month(year, number) {
                                        Some(m) => { (return_cell(m.r#return)) }
                                        None => { td {} }
                                    }
                                }
                                (return_cell(strategy.yearly.iter().find(|y| y.year == year).and_then(|y| y.r#return)))
                            }
                        }
                    }
            }))
        }
    }
}

/// The drawdown at each charted point, as an inline SVG chart.
pub(super) fn underwater_chart(strategy: &StrategyView) -> Markup {
    let points: Vec<Point> = strategy
        .underwater
        .iter()
        .filter_map(|p| {
            let value = p.drawdown?;
            Some(Point {
                t: instant(&p.as_of)?.timestamp(),
                value,
                title: format!(
                    "{}: drawdown {} %",
                    date_time(&p.as_of),
                    minus(format!("{:.2}", value * 100.0))
                ),
            })
        })
        .collect();
    if points.len() < 2 {
        return html! {};
    }
    let id = format!("{}-underwater", strategy_anchor(strategy));
    let description = strategy
        .metrics
        .current_drawdown
        .map(|d| minus(format!("current drawdown {:.2} %", d * 100.0)))
        .unwrap_or_else(|| "no drawdown computable".to_owned());
    let curve = Curve {
        class: format!("c6 {}", strategy.mode.as_str()),
        strategy_id: strategy.strategy_id.to_string(),
        mode: strategy.mode.as_str(),
        points,
        late_points: 0,
    };
    html! {
        div.underwater {
            h4 { "Underwater: drawdown from the running peak" }
            (chart::line_chart(std::slice::from_ref(&curve), &chart::Labels {
                id: &id,
                title: "Drawdown of the growth index from its running peak",
                description,
                x_axis: "valuation date (UTC)",
                reference: 0.0,
                percent: true,
            }))
        }
    }
}

/// The non-zero deposits and withdrawals in the window.
pub(super) fn flows(strategy: &StrategyView) -> Markup {
    html! {
        @if !strategy.flows.is_empty() {
            (scroll_table(&format!("{}-flows", strategy_anchor(strategy)), "flows", html! { "Deposits (+) and withdrawals (−) in the window" }, html! {
                    thead { tr { th scope="col" { "As of" } th scope="col" { "Amount" } } }
                    tbody {
                        @for flow in strategy.flows.iter().rev().take(MAX_FLOWS) {
                            tr { td { (day_time(&flow.as_of)) } td { (signed_money(&flow.amount)) } }
                        }
                    }
            }))
            @if strategy.flows.len() > MAX_FLOWS {
                p.note { "The newest " (MAX_FLOWS) " of " (strategy.flows.len()) " flows; the CSV has them all." }
            }
        }
    }
}

/// Most flows a strategy's card lists (the newest).
pub(super) const MAX_FLOWS: usize = 20;

pub(super) fn positions(strategy: &StrategyView) -> Markup {
    let latest = &strategy.latest;
    html! {
        @match &latest.positions {
            Some(positions) => {
                (scroll_table(&format!("{}-positions", strategy_anchor(strategy)), "positions", html! { "Positions on " (day_time(&latest.as_of)) }, html! {
                        thead { tr { th scope="col" { "Symbol" } th scope="col" { "Quantity" } th scope="col" { "Mark" } th scope="col" { "Value" } th scope="col" { "Weight" } } }
                        tbody {
                            @for p in positions.iter().take(MAX_POSITIONS) {
                                tr {
                                    th.name scope="row" { bdi { (p.symbol) } }
                                    td { (number(&p.quantity)) }
                                    td { (money(&p.mark)) }
                                    td { (money(&p.value)) }
                                    td { (percent_plain(p.weight)) }
                                }
                            }
                            @if positions.len() > MAX_POSITIONS {
                                tr.more {
                                    td.text colspan="5" {
                                        "and " (positions.len() - MAX_POSITIONS) " more positions, in "
                                        a href=(link(View::Ledger, &[(STRATEGY_ID, &strategy.strategy_id), (TYPE.name, RecordKind::Snapshot.as_str()), (MODE, strategy.mode.as_str()), (LIMIT.name, "1")])) { "the ledger entry" }
                                    }
                                }
                            }
                            @if let Some(cash) = &latest.cash {
                                tr.cash { th scope="row" { "Cash" } td {} td {} td { (money(cash)) } td { (percent_plain(latest.cash_weight)) } }
                            }
                        }
                }))
            }
            None => {
                p.note { "No positions reported with the latest snapshot." }
            }
        }
    }
}
