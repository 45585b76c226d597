//! The public page, `GET /` (DESIGN.md "The public page"): the dashboard as
//! server-rendered HTML that reads fully with scripts off (there are none).
//!
//! It shows the strategies' growth indices as an inline SVG chart (live solid,
//! paper dashed; hover titles on every point), the period switch as links,
//! each strategy's metrics with their formulas one click away, the latest
//! positions, the decision journal beside the snapshots around each decision,
//! the latest ledger entries with the current root hash, and links to the
//! ledger, contract and OpenAPI views. Stale, misaligned and baseline-only
//! strategies are labelled as such, and a metric that cannot be computed
//! shows as "n/a", never as 0 %.
//!
//! The page is bounded whatever the ledger holds: at most
//! [`MAX_STRATEGIES`] strategies (live first), [`MAX_POSITIONS`] positions
//! each, the newest [`MAX_DECISIONS`] decisions, prose cut at
//! [`MAX_PROSE_CHARS`] characters, each with a note and a link to the JSON
//! or the ledger entry that holds the rest. It is rendered once per head
//! and period and then answered from memory.
//!
//! Nothing comes from another host. The Content-Security-Policy allows only
//! the page's own stylesheet (by hash) and no scripts, frames or forms. The
//! ETag is the root hash, as for the data it shows. Colours follow the
//! reader's light or dark scheme; the layout is one column at phone width.

use crate::AppState;
use crate::contract;
use crate::routes::{FUND_PATH, with_etag};
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use freedom_shared::dashboard::{
    Dashboard, DecisionView, PERIODS, Period, SeriesPoint, StrategyView,
};
use freedom_shared::http::QueryParams;
use freedom_shared::record::Mode;
use freedom_shared::store::{Entry, PageQuery};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use std::sync::LazyLock;

/// How many of the newest ledger entries the page lists.
pub const LATEST_ENTRIES: usize = 10;
/// Most strategies the page shows (the JSON dashboard lists them all).
pub const MAX_STRATEGIES: usize = 50;
/// Most positions a strategy's card lists.
pub const MAX_POSITIONS: usize = 25;
/// Most decisions the journal shows (the newest).
pub const MAX_DECISIONS: usize = 20;
/// Longest excerpt of a decision's text on the page.
pub const MAX_PROSE_CHARS: usize = 600;

const STYLE: &str = include_str!("page.css");

/// The page's Content-Security-Policy: its one stylesheet by hash, nothing
/// else (the favicon is an empty `data:` URL so no request is made).
static CONTENT_SECURITY_POLICY: LazyLock<String> = LazyLock::new(|| {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE));
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
});

/// `GET /` and `GET /?period=N`.
pub async fn show(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let period = match QueryParams::parse(query.as_deref(), &["period"])
        .map_err(|e| e.to_string())
        .and_then(|p| Period::parse(p.get("period")).map_err(|e| e.to_string()))
    {
        Ok(period) => period,
        Err(message) => return error_page(StatusCode::BAD_REQUEST, "Not a page", &message),
    };
    let store = state.ledger.store();
    let dashboard = match state.dashboards.get(store.as_ref(), period).await {
        Ok(dashboard) => dashboard,
        Err(error) => return unavailable(&error),
    };
    if let Some(html) = state.pages.get(&dashboard.head.root_hash, period) {
        let response = with_etag(
            &headers,
            &dashboard.head,
            html_response(StatusCode::OK, html),
        );
        return secure(response);
    }
    let latest = PageQuery {
        before: Some(dashboard.head.size + 1),
        limit: LATEST_ENTRIES,
        strategy_id: None,
        kind: None,
        mode: None,
    };
    let entries = match store.page(&latest).await {
        Ok(page) => page.entries,
        Err(error) => return unavailable(&error),
    };
    let html = axum::body::Bytes::from(render(&dashboard.view, &entries).into_string());
    state
        .pages
        .put(dashboard.head.root_hash, period, html.clone());
    let response = with_etag(
        &headers,
        &dashboard.head,
        html_response(StatusCode::OK, html),
    );
    secure(response)
}

fn unavailable(error: &freedom_shared::store::StoreError) -> Response {
    tracing::error!(%error, "store failed while rendering the page");
    let mut response = error_page(
        StatusCode::SERVICE_UNAVAILABLE,
        "Temporarily unavailable",
        "The ledger could not be read just now. Nothing is lost; try again in a few seconds.",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

fn html_response(status: StatusCode, body: impl Into<axum::body::Body>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body.into(),
    )
        .into_response()
}

fn secure(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_str(&CONTENT_SECURITY_POLICY).expect("ASCII"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

fn error_page(status: StatusCode, title: &str, message: &str) -> Response {
    let body = layout(
        title,
        html! {
            header { h1 { (title) } }
            main { p { (message) } p { a href="/" { "Back to the dashboard" } } }
        },
    );
    let mut response = secure(html_response(status, body.into_string()));
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn layout(title: &str, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (title) }
                link rel="icon" href="data:,";
                style { (PreEscaped(STYLE)) }
            }
            body { (content) }
        }
    }
}

/// The whole page for one dashboard and the newest ledger entries.
pub fn render(dashboard: &Dashboard, latest_entries: &[Entry]) -> Markup {
    let period = dashboard.period.days();
    let title = format!("Freedom Fund: track record, {}", period_label(period));
    layout(
        &title,
        html! {
            a.skip href="#strategies" { "Skip to the strategies" }
            header {
                h1 { "Freedom Fund" }
                p.lede {
                    "A public, append-only track record of a small long-only USD fund and its paper experiments. "
                    "Every record below is a leaf of a Merkle log; the root hash at the bottom lets anyone re-derive it."
                }
                (period_switch(period))
                p.window {
                    @match (&dashboard.window.start, &dashboard.window.end) {
                        (Some(start), Some(end)) => {
                            "Window: " time datetime=(start) { (date(start)) } " to " time datetime=(end) { (date(end)) }
                            " (" (period) " trading days)"
                        }
                        _ => { "No snapshots yet." }
                    }
                }
            }
            main {
                (chart_section(dashboard))
                (strategies_section(dashboard))
                (journal_section(dashboard))
                (ledger_section(dashboard, latest_entries))
                (PreEscaped(FORMULAS_SECTION.as_str()))
            }
            footer {
                p {
                    "Read-only. This service executes no orders, approves nothing, signs nothing and holds no credentials. "
                    a href=(format!("{FUND_PATH}?period={period}")) { "This dashboard as JSON" } "."
                }
            }
        },
    )
}

fn period_label(days: u32) -> &'static str {
    match days {
        21 => "1M",
        63 => "3M",
        126 => "6M",
        _ => "1Y",
    }
}

fn period_switch(current: u32) -> Markup {
    html! {
        nav.periods aria-label="Period" {
            ul {
                @for days in PERIODS {
                    li {
                        a href=(format!("/?period={days}"))
                          aria-current=[(days == current).then_some("page")]
                          title=(format!("{days} trading days")) {
                            (period_label(days))
                        }
                    }
                }
            }
        }
    }
}

fn date(rfc3339: &str) -> String {
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

// ---------------------------------------------------------------- chart

const CHART_WIDTH: f64 = 720.0;
const CHART_HEIGHT: f64 = 320.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;
const COLOURS: usize = 8;

struct Curve<'a> {
    strategy: &'a StrategyView,
    points: Vec<(i64, f64, &'a SeriesPoint)>,
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

fn curves(dashboard: &Dashboard) -> Vec<Curve<'_>> {
    shown(dashboard)
        .into_iter()
        .map(|strategy| Curve {
            strategy,
            points: strategy
                .series
                .iter()
                .filter_map(|p| Some((instant(&p.as_of)?.timestamp(), p.index?, p)))
                .collect(),
        })
        .collect()
}

fn chart_section(dashboard: &Dashboard) -> Markup {
    let curves = curves(dashboard);
    html! {
        section aria-labelledby="chart-title" {
            h2 #chart-title { "Growth of 1 since each strategy's baseline" }
            @if curves.iter().all(|c| c.points.is_empty()) {
                p { "No valuations in this window yet." }
            } @else {
                (chart(&curves))
                ul.legend {
                    @for (i, curve) in curves.iter().enumerate() {
                        li {
                            svg.swatch viewBox="0 0 32 8" width="32" height="8" aria-hidden="true" {
                                line class=(format!("curve c{} {}", i % COLOURS, curve.strategy.mode.as_str())) x1="0" y1="4" x2="32" y2="4" {}
                            }
                            a href=(format!("#{}", strategy_anchor(curve.strategy))) { bdi { (curve.strategy.strategy_name) } }
                            " " (mode_badge(curve.strategy.mode))
                            (status_badges(curve.strategy, dashboard.comparison.is_misaligned(curve.strategy)))
                        }
                    }
                }
                p.note { "Solid lines are live accounts; dashed lines are paper experiments. Hover a point for its date and value." }
            }
        }
    }
}

fn chart(curves: &[Curve<'_>]) -> Markup {
    let all = curves.iter().flat_map(|c| c.points.iter());
    let (mut t_min, mut t_max) = (i64::MAX, i64::MIN);
    let (mut y_min, mut y_max) = (1.0f64, 1.0f64);
    for (t, y, _) in all {
        t_min = t_min.min(*t);
        t_max = t_max.max(*t);
        y_min = y_min.min(*y);
        y_max = y_max.max(*y);
    }
    if t_min == t_max {
        t_min -= 86_400;
        t_max += 86_400;
    }
    let YAxis {
        min: y_min,
        max: y_max,
        step,
        ticks: y_ticks,
    } = y_axis(y_min, y_max);
    let plot_w = CHART_WIDTH - LEFT - RIGHT;
    let plot_h = CHART_HEIGHT - TOP - BOTTOM;
    let x = |t: i64| LEFT + (t - t_min) as f64 / (t_max - t_min) as f64 * plot_w;
    let y = |v: f64| TOP + (y_max - v) / (y_max - y_min) * plot_h;
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let x_ticks: Vec<i64> = (0..=3).map(|i| t_min + (t_max - t_min) * i / 3).collect();
    let description = curves
        .iter()
        .map(|c| match c.points.last() {
            Some((_, v, p)) => format!(
                "{} ({}): {:.3} on {}",
                c.strategy.strategy_name,
                c.strategy.mode.as_str(),
                v,
                date(&p.as_of)
            ),
            None => format!("{}: no value", c.strategy.strategy_name),
        })
        .collect::<Vec<_>>()
        .join("; ");
    html! {
        figure.chart {
            svg viewBox=(format!("0 0 {CHART_WIDTH} {CHART_HEIGHT}")) role="img" aria-labelledby="chart-svg-title chart-svg-desc" {
                title #chart-svg-title { "Growth index of each strategy over the window" }
                desc #chart-svg-desc { "Latest values: " (description) }
                g.axis {
                    @for v in &y_ticks {
                        line.grid x1=(LEFT) x2=(CHART_WIDTH - RIGHT) y1=(fmt(y(*v))) y2=(fmt(y(*v))) {}
                        text x=(LEFT - 6.0) y=(fmt(y(*v) + 4.0)) text-anchor="end" { (format!("{v:.decimals$}")) }
                    }
                    line.base x1=(LEFT) x2=(CHART_WIDTH - RIGHT) y1=(fmt(y(1.0))) y2=(fmt(y(1.0))) {}
                    line x1=(LEFT) x2=(LEFT) y1=(TOP) y2=(CHART_HEIGHT - BOTTOM) {}
                    line x1=(LEFT) x2=(CHART_WIDTH - RIGHT) y1=(CHART_HEIGHT - BOTTOM) y2=(CHART_HEIGHT - BOTTOM) {}
                    @for (i, t) in x_ticks.iter().enumerate() {
                        @let anchor = match i { 0 => "start", 3 => "end", _ => "middle" };
                        text x=(fmt(x(*t))) y=(CHART_HEIGHT - BOTTOM + 18.0) text-anchor=(anchor) {
                            (DateTime::from_timestamp(*t, 0).map(|d| d.format("%Y-%m-%d").to_string()).unwrap_or_default())
                        }
                    }
                    text x=(LEFT + plot_w / 2.0) y=(CHART_HEIGHT - 4.0) text-anchor="middle" { "valuation date (UTC)" }
                }
                @for (i, curve) in curves.iter().enumerate() {
                    @let class = format!("c{} {}", i % COLOURS, curve.strategy.mode.as_str());
                    g data-strategy=(curve.strategy.strategy_id) data-mode=(curve.strategy.mode.as_str()) {
                        path class=(format!("curve {class}")) d=(path(&curve.points, &x, &y)) {}
                        @for (t, v, point) in &curve.points {
                            circle class=(format!("dot {class}")) cx=(fmt(x(*t))) cy=(fmt(y(*v))) r="3" {
                                title { (curve.strategy.strategy_name) " (" (curve.strategy.mode.as_str()) "), " (date_time(&point.as_of)) ": index " (format!("{v:.4}")) ", equity " (money(&point.equity)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Most horizontal grid lines the chart draws.
const MAX_Y_TICKS: usize = 12;

/// The chart's y axis.
struct YAxis {
    min: f64,
    max: f64,
    step: f64,
    /// Grid values from `min` up to `max`, at most [`MAX_Y_TICKS`] + 1.
    ticks: Vec<f64>,
}

/// The y axis for growth indices between `low` and `high` (finite, ≥ 0):
/// bounds rounded out to a step that reads well, spanning at least two
/// steps. Every value is finite however extreme the index: the step grows
/// with the magnitude (so it is never below a double's resolution), and a
/// bound that rounding would push past `f64::MAX` stays exact.
fn y_axis(low: f64, high: f64) -> YAxis {
    let spread = (high - low).max(0.004).max(high.abs() * 1e-6);
    let step = nice_step(spread / 4.0);
    let rounded =
        |v: f64, round: fn(f64) -> f64| Some(round(v / step) * step).filter(|r| r.is_finite());
    let max = rounded(high, f64::ceil).unwrap_or(high);
    let min = rounded(low, f64::floor).unwrap_or(low);
    let min = min.min(max - step * 2.0);
    let count = (((max - min) / step) + 1e-9).floor();
    let count = if count.is_finite() {
        (count as usize).min(MAX_Y_TICKS)
    } else {
        0
    };
    let ticks = (0..=count)
        .map(|i| min + step * i as f64)
        .filter(|v| v.is_finite() && *v <= max)
        .collect();
    YAxis {
        min,
        max,
        step,
        ticks,
    }
}

/// The 1, 2 or 5 times a power of ten nearest above `raw`: a tick step
/// that reads well.
fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.log10().floor());
    let fraction = raw / magnitude;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

fn fmt(v: f64) -> String {
    format!("{v:.1}")
}

fn path(
    points: &[(i64, f64, &SeriesPoint)],
    x: &dyn Fn(i64) -> f64,
    y: &dyn Fn(f64) -> f64,
) -> String {
    let mut d = String::new();
    for (i, (t, v, _)) in points.iter().enumerate() {
        let command = if i == 0 { 'M' } else { 'L' };
        d.push_str(&format!("{command}{} {} ", fmt(x(*t)), fmt(y(*v))));
    }
    if points.len() == 1 {
        // A single point still draws a visible mark.
        d.push_str("h0.01");
    }
    d.trim_end().to_owned()
}

// ------------------------------------------------------------ strategies

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

fn strategies_section(dashboard: &Dashboard) -> Markup {
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
                    a href=(format!("{FUND_PATH}?period={}", dashboard.period.days())) { "the JSON dashboard" }
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
                    }
                }
            }
            (positions(strategy))
            }
        }
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

fn journal_section(dashboard: &Dashboard) -> Markup {
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

fn ledger_section(dashboard: &Dashboard, entries: &[Entry]) -> Markup {
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
                        thead { tr { th scope="col" { "#" } th scope="col" { "Type" } th scope="col" { "Strategy" } th scope="col" { "As of" } th scope="col" { "Leaf hash" } } }
                        tbody {
                            @for entry in entries {
                                @let record: Value = serde_json::from_str(&entry.canonical).unwrap_or(Value::Null);
                                tr {
                                    td { (entry.seq) }
                                    td { (text(&record, "type").unwrap_or_default()) }
                                    td { bdi { (text(&record, "strategyId").unwrap_or_default()) } " (" (text(&record, "mode").unwrap_or_default()) ")" }
                                    td { (date_time(text(&record, "asOf").unwrap_or_default())) }
                                    td { code title=(entry.leaf_hash) { (entry.leaf_hash.to_hex()[..12]) "…" } }
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
            }
        }
    }
}

/// The formulas section, rendered once from the contract view (it never
/// changes while the process runs).
static FORMULAS_SECTION: LazyLock<String> = LazyLock::new(|| formulas_section().into_string());

fn formulas_section() -> Markup {
    let contract = contract::contract();
    let formulas = contract["rules"]["dashboard"]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_y_axis_is_finite_and_small_for_any_finite_index_range() {
        for (low, high) in [
            (1.0, 1.0),
            (0.0, f64::MAX),
            (1.7e308, f64::MAX),
            (0.0, 1e-300),
            (0.999, 1.001),
            (1e-300, 1e300),
        ] {
            let axis = y_axis(low, high);
            let (min, max, step) = (axis.min, axis.max, axis.step);
            assert!(min.is_finite() && max.is_finite() && step.is_finite() && step > 0.0);
            assert!(min <= low && max >= high, "{low} {high}: {min} {max}");
            // At least two steps (up to rounding near f64::MAX).
            assert!(
                max - min >= 2.0 * step * (1.0 - 1e-9),
                "{low} {high}: {min} {max} {step}"
            );
            assert!(
                (2..=MAX_Y_TICKS + 1).contains(&axis.ticks.len()),
                "{low} {high}: {} ticks",
                axis.ticks.len()
            );
            assert!(
                axis.ticks
                    .iter()
                    .all(|t| t.is_finite() && *t >= min && *t <= max)
            );
        }
    }
}
