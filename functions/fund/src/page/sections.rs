//! The page's sections, from the dashboard: the period switch, the growth
//! chart and its legend, the at-a-glance table, each strategy's card
//! (metrics linked to their formulas, latest positions), the decision
//! journal, the newest ledger entries, and the formulas. Text from records is
//! escaped by maud and isolated in `<bdi>`.

use super::chart::{self, COLOURS, Curve, Point};
use super::{MAX_DECISIONS, MAX_POSITIONS, MAX_PROSE_CHARS, MAX_STRATEGIES};
use crate::contract;
use crate::paths::{FEED_PATH, FUND_PATH};
use chrono::{DateTime, Utc};
use freedom_shared::ports::ledger_store::Entry;
use freedom_shared::record::Mode;
use freedom_shared::service::dashboard::{
    Dashboard, DecisionView, Period, SeriesPoint, StrategyView,
};
use maud::{Markup, html};
use serde_json::Value;
use std::sync::LazyLock;

pub(super) fn period_label(period: Period) -> &'static str {
    match period.days() {
        Some(21) => "1M",
        Some(63) => "3M",
        Some(126) => "6M",
        Some(_) => "1Y",
        None => "All",
    }
}

fn period_title(period: Period) -> String {
    match period.days() {
        Some(days) => format!("{days} trading days"),
        None => "since inception".to_owned(),
    }
}

pub(super) fn period_switch(current: Period) -> Markup {
    html! {
        nav.periods aria-label="Period" {
            ul {
                @for period in Period::ALL_PERIODS {
                    li {
                        a href=(format!("/?period={}", period.query_value()))
                          aria-current=[(period == current).then_some("page")]
                          title=(period_title(period)) {
                            (period_label(period))
                        }
                    }
                }
            }
        }
    }
}

/// The window's line under the period switch, with the record's start
/// and age.
pub(super) fn window_line(dashboard: &Dashboard) -> Markup {
    html! {
        p.window {
            @match (&dashboard.window.start, &dashboard.window.end) {
                (Some(start), Some(end)) => {
                    "Window: " time datetime=(start) { (date(start)) } " to " time datetime=(end) { (date(end)) }
                    " (" (period_title(dashboard.period)) ")."
                }
                _ => { "No snapshots yet." }
            }
            @if let Some(inception) = &dashboard.inception {
                " Record started " time #inception datetime=(inception.as_of) { (date(&inception.as_of)) }
                @if let Some(age) = inception.age_days {
                    " (" (age) " days of record)"
                }
                "."
            }
        }
    }
}

pub(super) fn date(rfc3339: &str) -> String {
    instant(rfc3339)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| rfc3339.to_owned())
}

fn date_time(rfc3339: &str) -> String {
    instant(rfc3339)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| rfc3339.to_owned())
}

fn instant(rfc3339: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(rfc3339)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn strategy_anchor(strategy: &StrategyView) -> String {
    format!(
        "strategy-{}-{}",
        strategy.mode.as_str(),
        strategy.strategy_id
    )
}

fn mode_badge(mode: Mode) -> Markup {
    html! { span class=(format!("badge {}", mode.as_str())) { (mode.as_str()) } }
}

fn status_badges(strategy: &StrategyView, misaligned: bool) -> Markup {
    html! {
        @if strategy.baseline_only {
            span.badge.warn title="Only the baseline is known: no return can be computed yet" { "baseline only" }
        }
        @if strategy.stale {
            span.badge.warn title="The latest snapshot is more than one trading day older than the fund's latest" { "stale" }
        }
        @if misaligned {
            span.badge.warn title="Misses most of the valuation instants the other series use: compare with care" { "misaligned" }
        }
    }
}

/// The strategies the page shows: live before paper (readers come for the
/// real money first), then in the dashboard's order; at most
/// [`MAX_STRATEGIES`].
fn shown(dashboard: &Dashboard) -> Vec<&StrategyView> {
    let mut strategies: Vec<&StrategyView> = dashboard.strategies.iter().collect();
    strategies.sort_by_key(|s| s.mode != Mode::Live);
    strategies.truncate(MAX_STRATEGIES);
    strategies
}

/// Text cut to [`MAX_PROSE_CHARS`] characters, with an ellipsis when cut.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(MAX_PROSE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Each shown strategy's growth index as a curve: colour by place, dashed
/// when paper, a hover title per point.
fn growth_curves(shown: &[&StrategyView]) -> Vec<Curve> {
    shown
        .iter()
        .enumerate()
        .map(|(i, strategy)| Curve {
            class: format!("c{} {}", i % COLOURS, strategy.mode.as_str()),
            strategy_id: strategy.strategy_id.to_string(),
            mode: strategy.mode.as_str(),
            points: strategy
                .series
                .iter()
                .filter_map(|p| {
                    let value = p.index?;
                    Some(Point {
                        t: instant(&p.as_of)?.timestamp(),
                        value,
                        title: format!(
                            "{} ({}), {}: index {value:.4}, equity {}",
                            strategy.strategy_name,
                            strategy.mode.as_str(),
                            date_time(&p.as_of),
                            money(&p.equity)
                        ),
                    })
                })
                .collect(),
        })
        .collect()
}

/// The chart's description: each strategy's latest charted value and date.
fn latest_values(shown: &[&StrategyView]) -> String {
    shown
        .iter()
        .map(|strategy| {
            let latest = strategy
                .series
                .iter()
                .rev()
                .find_map(|p| Some((p.index?, instant(&p.as_of).map(|_| p)?)));
            match latest {
                Some((value, point)) => format!(
                    "{} ({}): {value:.3} on {}",
                    strategy.strategy_name,
                    strategy.mode.as_str(),
                    date(&point.as_of)
                ),
                None => format!("{}: no value", strategy.strategy_name),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn chart_section(dashboard: &Dashboard) -> Markup {
    let shown = shown(dashboard);
    let curves = growth_curves(&shown);
    html! {
        section aria-labelledby="chart-title" {
            h2 #chart-title { "Growth of 1 since each strategy's baseline" }
            @if curves.iter().all(|c| c.points.is_empty()) {
                p { "No valuations in this window yet." }
            } @else {
                (chart::line_chart(&curves, &chart::Labels {
                    id: "growth",
                    title: "Growth index of each strategy over the window",
                    description: latest_values(&shown),
                    x_axis: "valuation date (UTC)",
                    reference: 1.0,
                    percent: false,
                }))
                ul.legend {
                    @for (strategy, curve) in shown.iter().zip(&curves) {
                        li {
                            svg.swatch viewBox="0 0 32 8" width="32" height="8" aria-hidden="true" {
                                line class=(format!("curve {}", curve.class)) x1="0" y1="4" x2="32" y2="4" {}
                            }
                            a href=(format!("#{}", strategy_anchor(strategy))) { bdi { (strategy.strategy_name) } }
                            " " (mode_badge(strategy.mode))
                            (status_badges(strategy, dashboard.comparison.is_misaligned(strategy)))
                        }
                    }
                }
                p.note { "Solid lines are live accounts; dashed lines are paper experiments. Hover a point for its date and value." }
            }
        }
    }
}

fn percent(value: Option<f64>) -> Markup {
    match value {
        Some(v) => html! { (format!("{:+.2} %", v * 100.0)) },
        None => not_computable(),
    }
}

fn ratio(value: Option<f64>) -> Markup {
    match value {
        Some(v) => html! { (format!("{v:.2}")) },
        None => not_computable(),
    }
}

fn not_computable() -> Markup {
    html! { abbr.na title="Not computable over this window (see the formulas)" { "n/a" } }
}

/// A JSON number as dollars with two decimals and thousands separators.
fn money(value: &Value) -> String {
    let Some(number) = value.as_f64() else {
        return value.to_string();
    };
    let text = format!("{:.2}", number.abs());
    let (whole, cents) = text.split_once('.').unwrap_or((&text, "00"));
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let sign = if number < 0.0 { "−" } else { "" };
    format!("{sign}${grouped}.{cents}")
}

fn number(value: &Value) -> String {
    value.to_string()
}

fn metric_row(name: &str, formula: &str, value: Markup) -> Markup {
    html! {
        tr {
            th scope="row" { a href=(format!("#formula-{formula}")) title="How this is computed" { (name) } }
            td { (value) }
        }
    }
}

pub(super) fn strategies_section(dashboard: &Dashboard) -> Markup {
    html! {
        section #strategies aria-labelledby="strategies-title" {
            h2 #strategies-title { "Strategies" }
            @if dashboard.strategies.is_empty() {
                p { "No strategy has a snapshot yet." }
            }
            @if dashboard.comparison.shared_timestamps > 0 || !dashboard.comparison.misaligned.is_empty() {
                p.note {
                    (dashboard.comparison.shared_timestamps) " valuation instants are shared by every strategy in this window."
                    @if !dashboard.comparison.misaligned.is_empty() {
                        " Misaligned (missing most of the valuation instants the other series use): "
                        @for (i, key) in dashboard.comparison.misaligned.iter().take(MAX_STRATEGIES).enumerate() {
                            @if i > 0 { ", " }
                            bdi { (key.strategy_id) } " (" (key.mode.as_str()) ")"
                        }
                        @if dashboard.comparison.misaligned.len() > MAX_STRATEGIES {
                            " and " (dashboard.comparison.misaligned.len() - MAX_STRATEGIES) " more"
                        }
                        "."
                    }
                }
            }
            @if dashboard.strategies.len() > MAX_STRATEGIES {
                p.note {
                    (MAX_STRATEGIES) " are shown here, live ones first; "
                    a href=(format!("{FUND_PATH}?period={}", dashboard.period.query_value())) { "the JSON dashboard" }
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

/// One row per strategy: what a reader compares first.
fn overview(dashboard: &Dashboard) -> Markup {
    html! {
        div.scroll {
            table.overview {
                caption { "At a glance (each metric links to its formula)" }
                thead {
                    tr {
                        th scope="col" { "Strategy" }
                        th scope="col" { a href="#formula-twr" { "Return" } }
                        th scope="col" { a href="#formula-maxDrawdown" { "Max drawdown" } }
                        th scope="col" { a href="#formula-sharpe" { "Sharpe" } }
                        th scope="col" { "Equity" }
                    }
                }
                tbody {
                    @for strategy in shown(dashboard) {
                        tr {
                            th scope="row" {
                                a href=(format!("#{}", strategy_anchor(strategy))) { bdi { (strategy.strategy_name) } }
                                " " (mode_badge(strategy.mode))
                                (status_badges(strategy, dashboard.comparison.is_misaligned(strategy)))
                            }
                            td { (percent(strategy.metrics.twr)) }
                            td { (percent(strategy.metrics.max_drawdown)) }
                            td { (ratio(strategy.metrics.sharpe)) }
                            td { (money(&strategy.latest.equity)) }
                        }
                    }
                }
            }
        }
    }
}

fn strategy_card(strategy: &StrategyView, misaligned: bool) -> Markup {
    let m = &strategy.metrics;
    let latest = &strategy.latest;
    html! {
        article.strategy #(strategy_anchor(strategy)) aria-labelledby=(format!("{}-title", strategy_anchor(strategy))) {
            h3 #(format!("{}-title", strategy_anchor(strategy))) {
                bdi { (strategy.strategy_name) } " " (mode_badge(strategy.mode)) (status_badges(strategy, misaligned))
            }
            p.meta {
                code { bdi { (strategy.strategy_id) } } " · baseline " (date(&strategy.baseline.as_of)) " at " (money(&strategy.baseline.equity))
                " · latest " (date_time(&latest.as_of)) " at " (money(&latest.equity))
            }
            @if strategy.baseline_only {
                p.note { "Only the baseline is known in this window, so there is no return yet (not 0 %)." }
            }
            div.tables {
            div.scroll {
                table.metrics {
                    caption { "Metrics over the window (" (m.intervals) " intervals)" }
                    tbody {
                        (metric_row("Time-weighted return", "twr", percent(m.twr)))
                        (metric_row("Annualized return", "annualizedReturn", percent(m.annualized_return)))
                        (metric_row("P&L", "pnl", m.pnl.as_ref().map_or_else(not_computable, |v| html! { (money(v)) })))
                        (metric_row("Net flows", "netFlows", m.net_flows.as_ref().map_or_else(not_computable, |v| html! { (money(v)) })))
                        (metric_row("Max drawdown", "maxDrawdown", percent(m.max_drawdown)))
                        (metric_row("Volatility (annualized)", "volatility", percent(m.volatility)))
                        (metric_row("Sharpe", "sharpe", ratio(m.sharpe)))
                        (metric_row("Sortino", "sortino", ratio(m.sortino)))
                        (metric_row("Calmar", "calmar", ratio(m.calmar)))
                        (metric_row("Best day", "bestDay", percent(m.best_day)))
                        (metric_row("Worst day", "worstDay", percent(m.worst_day)))
                        (metric_row("Current drawdown", "currentDrawdown", percent(m.current_drawdown)))
                        (metric_row("Longest drawdown", "longestDrawdownDays", m.longest_drawdown_days.map_or_else(not_computable, |d| html! { (d) " days" })))
                    }
                }
            }
            (positions(strategy))
            }
            (monthly_grid(strategy))
            (underwater_chart(strategy))
            (flows(strategy))
            p.links {
                "This series' every snapshot: "
                a href=(export_link(strategy, "csv")) { "CSV" } " · "
                a href=(export_link(strategy, "json")) { "JSON" }
            }
        }
    }
}

fn export_link(strategy: &StrategyView, format: &str) -> String {
    format!(
        "{FUND_PATH}?view=series&strategyId={}&mode={}&format={format}",
        strategy.strategy_id,
        strategy.mode.as_str()
    )
}

/// A return as a grid cell: the value as text with its sign (so colour is
/// never the only cue), classed by sign for the colours.
fn return_cell(value: Option<f64>) -> Markup {
    match value {
        Some(v) => {
            let class = if v > 0.0 {
                "up"
            } else if v < 0.0 {
                "down"
            } else {
                "flat"
            };
            let text = format!("{:+.1}", v * 100.0).replace('-', "−");
            html! { td class=(class) { (text) } }
        }
        None => html! { td { (not_computable()) } },
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Years × months of returns, each year with its own return.
fn monthly_grid(strategy: &StrategyView) -> Markup {
    let mut years: Vec<i32> = strategy.yearly.iter().map(|y| y.year).collect();
    years.reverse();
    let month = |year: i32, number: usize| {
        let key = format!("{year:04}-{number:02}");
        strategy.monthly.iter().find(|m| m.month == key)
    };
    html! {
        @if !years.is_empty() {
            div.scroll {
                table.monthly {
                    caption { "Monthly returns, % (each month's time-weighted return; the year's in the last column)" }
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
                }
            }
        }
    }
}

/// The drawdown at each charted point, as an inline SVG chart.
fn underwater_chart(strategy: &StrategyView) -> Markup {
    let points: Vec<Point> = strategy
        .underwater
        .iter()
        .filter_map(|p| {
            let value = p.drawdown?;
            Some(Point {
                t: instant(&p.as_of)?.timestamp(),
                value,
                title: format!("{}: drawdown {:.2} %", date_time(&p.as_of), value * 100.0),
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
        .map(|d| format!("current drawdown {:.2} %", d * 100.0))
        .unwrap_or_else(|| "no drawdown computable".to_owned());
    let curve = Curve {
        class: format!("c6 {}", strategy.mode.as_str()),
        strategy_id: strategy.strategy_id.to_string(),
        mode: strategy.mode.as_str(),
        points,
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
fn flows(strategy: &StrategyView) -> Markup {
    html! {
        @if !strategy.flows.is_empty() {
            div.scroll {
                table.flows {
                    caption { "Deposits (+) and withdrawals (−) in the window" }
                    thead { tr { th scope="col" { "As of" } th scope="col" { "Amount" } } }
                    tbody {
                        @for flow in strategy.flows.iter().rev().take(MAX_FLOWS) {
                            tr { td { (date_time(&flow.as_of)) } td { (signed_money(&flow.amount)) } }
                        }
                    }
                }
                @if strategy.flows.len() > MAX_FLOWS {
                    p.note { "The newest " (MAX_FLOWS) " of " (strategy.flows.len()) " flows; the CSV has them all." }
                }
            }
        }
    }
}

/// Most flows a strategy's card lists (the newest).
const MAX_FLOWS: usize = 20;

fn signed_money(value: &Value) -> String {
    let text = money(value);
    if value.as_f64().is_some_and(|v| v > 0.0) {
        format!("+{text}")
    } else {
        text
    }
}

fn positions(strategy: &StrategyView) -> Markup {
    let latest = &strategy.latest;
    html! {
        @match &latest.positions {
            Some(positions) => {
                div.scroll {
                    table.positions {
                        caption { "Positions on " (date(&latest.as_of)) }
                        thead { tr { th scope="col" { "Symbol" } th scope="col" { "Quantity" } th scope="col" { "Mark" } th scope="col" { "Value" } th scope="col" { "Weight" } } }
                        tbody {
                            @for p in positions.iter().take(MAX_POSITIONS) {
                                tr {
                                    th scope="row" { bdi { (p.symbol) } }
                                    td { (number(&p.quantity)) }
                                    td { (money(&p.mark)) }
                                    td { (money(&p.value)) }
                                    td { (percent_plain(p.weight)) }
                                }
                            }
                            @if positions.len() > MAX_POSITIONS {
                                tr.more {
                                    td colspan="5" {
                                        "and " (positions.len() - MAX_POSITIONS) " more positions, in "
                                        a href=(format!("{FUND_PATH}?view=ledger&strategyId={}&type=snapshot&mode={}&limit=1", strategy.strategy_id, strategy.mode.as_str())) { "the ledger entry" }
                                    }
                                }
                            }
                            @if let Some(cash) = &latest.cash {
                                tr.cash { th scope="row" { "Cash" } td {} td {} td { (money(cash)) } td { (percent_plain(latest.cash_weight)) } }
                            }
                        }
                    }
                }
            }
            None => {
                p.note { "No positions reported with the latest snapshot." }
            }
        }
    }
}

fn percent_plain(value: Option<f64>) -> Markup {
    match value {
        Some(v) => html! { (format!("{:.1} %", v * 100.0)) },
        None => not_computable(),
    }
}

// ------------------------------------------------------------- journal

pub(super) fn journal_section(dashboard: &Dashboard) -> Markup {
    html! {
        section #journal aria-labelledby="journal-title" {
            h2 #journal-title { "Decision journal" }
            @if dashboard.decisions.is_empty() {
                p { "No decisions recorded in this window." }
            }
            @for decision in dashboard.decisions.iter().take(MAX_DECISIONS) {
                (decision_entry(dashboard, decision))
            }
            @if dashboard.decisions.len() > MAX_DECISIONS {
                p.note {
                    "The newest " (MAX_DECISIONS) " are shown; "
                    a href=(format!("{FUND_PATH}?view=ledger&type=decision")) { "the ledger" }
                    " holds every decision."
                }
            }
        }
    }
}

fn text<'a>(record: &'a Value, field: &str) -> Option<&'a str> {
    record.get(field).and_then(Value::as_str)
}

fn decision_entry(dashboard: &Dashboard, decision: &DecisionView) -> Markup {
    let record: Value = serde_json::from_str(decision.record.get()).unwrap_or(Value::Null);
    let as_of = text(&record, "asOf").unwrap_or_default();
    let strategy_id = text(&record, "strategyId").unwrap_or_default();
    let mode = text(&record, "mode").unwrap_or_default();
    let action = text(&record, "action").unwrap_or_default();
    let around = snapshots_around(dashboard, strategy_id, mode, as_of);
    html! {
        article.decision {
            h3 {
                span class=(format!("badge action {action}")) { (action) } " "
                bdi { (excerpt(text(&record, "summary").unwrap_or_default())) }
            }
            p.meta {
                time datetime=(as_of) { (date_time(as_of)) } " · "
                bdi { (text(&record, "strategyName").unwrap_or(strategy_id)) } " (" (mode) ") · "
                a href=(format!("{FUND_PATH}?view=ledger&strategyId={strategy_id}&type=decision")) { "ledger entry #" (decision.seq) }
            }
            dl {
                @if let Some(thesis) = text(&record, "thesis") { dt { "Thesis" } dd { bdi { (excerpt(thesis)) } } }
                @if let Some(counter) = text(&record, "counterEvidence") { dt { "Counter-evidence" } dd { bdi { (excerpt(counter)) } } }
                @if let Some(next) = text(&record, "nextCheck") { dt { "Next check" } dd { bdi { (excerpt(next)) } } }
                dt { "Snapshots around it" }
                dd {
                    @match around {
                        (None, None) => { "none in this window" }
                        (before, after) => {
                            "before: " (point_text(before)) "; after: " (point_text(after))
                        }
                    }
                }
            }
        }
    }
}

fn point_text(point: Option<&SeriesPoint>) -> String {
    match point {
        Some(p) => format!("{} at {}", date_time(&p.as_of), money(&p.equity)),
        None => "none yet".to_owned(),
    }
}

/// The strategy's last snapshot at or before the decision and its first after.
fn snapshots_around<'a>(
    dashboard: &'a Dashboard,
    strategy_id: &str,
    mode: &str,
    as_of: &str,
) -> (Option<&'a SeriesPoint>, Option<&'a SeriesPoint>) {
    let Some(at) = instant(as_of) else {
        return (None, None);
    };
    let Some(strategy) = dashboard
        .strategies
        .iter()
        .find(|s| s.strategy_id == strategy_id && s.mode.as_str() == mode)
    else {
        return (None, None);
    };
    let before = strategy
        .series
        .iter()
        .rev()
        .find(|p| instant(&p.as_of).is_some_and(|t| t <= at));
    let after = strategy
        .series
        .iter()
        .find(|p| instant(&p.as_of).is_some_and(|t| t > at));
    (before, after)
}

// -------------------------------------------------------------- ledger

pub(super) fn ledger_section(dashboard: &Dashboard, entries: &[Entry]) -> Markup {
    html! {
        section #ledger aria-labelledby="ledger-title" {
            h2 #ledger-title { "Ledger" }
            p {
                (dashboard.head.size) " records. Root hash (RFC 9162 Merkle Tree Hash of every record's RFC 8785 form):"
            }
            p { code.hash #root-hash { (dashboard.head.root_hash) } }
            @if !entries.is_empty() {
                div.scroll {
                    table.entries {
                        caption { "Newest entries" }
                        thead { tr { th scope="col" { "#" } th scope="col" { "Type" } th scope="col" { "Strategy" } th scope="col" { "As of" } th scope="col" { "Leaf hash" } th scope="col" { "Proof" } } }
                        tbody {
                            @for entry in entries {
                                @let record: Value = serde_json::from_str(&entry.canonical).unwrap_or(Value::Null);
                                tr {
                                    td { (entry.seq) }
                                    td { (text(&record, "type").unwrap_or_default()) }
                                    td { bdi { (text(&record, "strategyId").unwrap_or_default()) } " (" (text(&record, "mode").unwrap_or_default()) ")" }
                                    td { (date_time(text(&record, "asOf").unwrap_or_default())) }
                                    td { code title=(entry.leaf_hash) { (entry.leaf_hash.to_hex()[..12]) "…" } }
                                    td {
                                        a href=(format!("{FUND_PATH}?view=proof&seq={}&format=tlog-proof", entry.seq)) aria-label=(format!("Inclusion proof of record {} (.tlog-proof)", entry.seq)) { ".tlog-proof" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            ul.links {
                li { a href=(format!("{FUND_PATH}?view=ledger")) { "The full ledger (JSON, paged)" } }
                li { a href=(format!("{FUND_PATH}?view=contract")) { "The contract: schemas, rules, formulas" } }
                li { a href=(format!("{FUND_PATH}?view=openapi")) { "OpenAPI 3.1 document" } }
                li { a href=(FEED_PATH) type="application/atom+xml" { "The decisions as an Atom feed" } }
            }
        }
    }
}

// -------------------------------------------------------------- verify

pub(super) fn verify_section(verification: &super::Verification, size: u64) -> Markup {
    let first_bundle = (size > 0).then(|| {
        let path = freedom_shared::tlog::tiles::TilePath {
            kind: freedom_shared::tlog::tiles::TileKind::Entries,
            index: 0,
            partial: (size < 256).then_some(size as u16),
        };
        format!("/log/tile/{}", path.to_path())
    });
    html! {
        section #verify aria-labelledby="verify-title" {
            h2 #verify-title { "Verify this record" }
            p {
                "The ledger is a transparency log to the C2SP standard (the format of Go's checksum database and Certificate Transparency's static logs). "
                "Its checkpoint, signed with the log's key, names the size and root hash of the whole tree; "
                "tiles of hashes and records let anyone re-derive that root, and each record has an inclusion proof."
            }
            @match (&verification.checkpoint, &verification.verifier_key) {
                (Some(checkpoint), Some(key)) => {
                    p { "The checkpoint of the ledger shown on this page (" a href="/log/checkpoint" { "the current one" } "):" }
                    pre.checkpoint { code { (checkpoint) } }
                    p { "The log's verifier key (keep it; a checkpoint signed by any other key is not this log's):" }
                    p { code.hash #verifier-key { (key) } }
                }
                (None, Some(key)) => {
                    p.note.refused {
                        "The log refuses to sign the ledger it now holds: its store does not extend the largest checkpoint this log has signed "
                        "(the store went back or was replaced). Nothing shown here is vouched for until the operator restores it."
                    }
                    p { "The log's verifier key:" }
                    p { code.hash #verifier-key { (key) } }
                }
                _ => {
                    p.note { "This deployment has no signing key configured, so it publishes no signed checkpoints: the tiles and proofs can be read, but nothing vouches for the root." }
                }
            }
            p { "To check everything yourself, trusting only the verifier key:" }
            pre { code { "freedom-verify <this site's URL> --key <verifier key> --state freedom-fund.state" } }
            p {
                "It checks the signature, re-derives every record's leaf and the root from the tiles, compares each record with the ledger, "
                "and checks that the log still extends the checkpoint it kept last time. To check one record offline, save its "
                code { ".tlog-proof" } " (the link beside each entry above) and the record, then run "
                code { "freedom-verify proof <file> --key <verifier key> --record <record.json>" } "."
            }
            ul.links {
                li { a href="/log/checkpoint" { "The signed checkpoint" } " (" (verification.origin) ")" }
                @if let Some(bundle) = &first_bundle {
                    li { a href=(bundle) { "The first entry bundle" } " (records; " code { "/log/tile/…" } ", c2sp.org/tlog-tiles)" }
                }
            }
        }
    }
}

/// The formulas section, rendered once from the contract view (it never
/// changes while the process runs).
pub(super) static FORMULAS_SECTION: LazyLock<String> =
    LazyLock::new(|| formulas_section().into_string());

fn formulas_section() -> Markup {
    let formulas = contract::rules::dashboard_formulas()
        .as_object()
        .cloned()
        .unwrap_or_default();
    html! {
        section #formulas aria-labelledby="formulas-title" {
            h2 #formulas-title { "How the numbers are computed" }
            dl.formulas {
                @for (name, formula) in &formulas {
                    dt #(format!("formula-{name}")) { (name) }
                    dd { (formula.as_str().unwrap_or_default()) }
                }
            }
        }
    }
}
