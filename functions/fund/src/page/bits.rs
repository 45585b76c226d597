//! Small pieces every section uses: periods, dates and numbers as the
//! page writes them, and the strategies' anchors and badges.

use super::{MAX_PROSE_CHARS, MAX_STRATEGIES};
use chrono::{DateTime, Utc};
use freedom_shared::record::Mode;
use freedom_shared::service::{Dashboard, Period, StrategyView};
use maud::{Markup, html};
use serde_json::Value;

pub(super) fn period_label(period: Period) -> &'static str {
    match period.days() {
        Some(21) => "1M",
        Some(63) => "3M",
        Some(126) => "6M",
        Some(_) => "1Y",
        None => "All",
    }
}

pub(super) fn period_title(period: Period) -> String {
    match period.days() {
        Some(days) => format!("{days} trading days"),
        None => "since inception".to_owned(),
    }
}

pub(super) fn date(rfc3339: &str) -> String {
    instant(rfc3339)
        .map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| rfc3339.to_owned())
}

pub(super) fn date_time(rfc3339: &str) -> String {
    instant(rfc3339)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| rfc3339.to_owned())
}

pub(super) fn instant(rfc3339: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(rfc3339)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

pub(super) fn strategy_anchor(strategy: &StrategyView) -> String {
    format!(
        "strategy-{}-{}",
        strategy.mode.as_str(),
        strategy.strategy_id
    )
}

pub(super) fn mode_badge(mode: Mode) -> Markup {
    html! { span class=(format!("badge {}", mode.as_str())) { (mode.as_str()) } }
}

pub(super) fn status_badges(strategy: &StrategyView, misaligned: bool) -> Markup {
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
pub(super) fn shown(dashboard: &Dashboard) -> Vec<&StrategyView> {
    let mut strategies: Vec<&StrategyView> = dashboard.strategies.iter().collect();
    strategies.sort_by_key(|s| s.mode != Mode::Live);
    strategies.truncate(MAX_STRATEGIES);
    strategies
}

/// A strategy's name as the page shows it, beside its mode: without a
/// last " (paper)" or " (live)" that would repeat the mode.
pub(super) fn shown_name(name: &str, mode: Mode) -> &str {
    let suffix = format!(" ({})", mode.as_str());
    match name.len().checked_sub(suffix.len()) {
        Some(at)
            if at > 0 && name.is_char_boundary(at) && name[at..].eq_ignore_ascii_case(&suffix) =>
        {
            &name[..at]
        }
        _ => name,
    }
}

/// Text cut to [`MAX_PROSE_CHARS`] characters, with an ellipsis when cut.
pub(super) fn excerpt(text: &str) -> String {
    match text.char_indices().nth(MAX_PROSE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

pub(super) fn percent(value: Option<f64>) -> Markup {
    match value {
        Some(v) => html! { (minus(format!("{:+.2} %", v * 100.0))) },
        None => not_computable(),
    }
}

/// A level that has no direction (volatility, a drawdown's depth): no
/// "+", since it cannot be a gain; a drawdown keeps its minus sign.
pub(super) fn level(value: Option<f64>) -> Markup {
    match value {
        Some(v) => html! { (minus(format!("{:.2} %", v * 100.0))) },
        None => not_computable(),
    }
}

pub(super) fn ratio(value: Option<f64>) -> Markup {
    match value {
        Some(v) => html! { (minus(format!("{v:.2}"))) },
        None => not_computable(),
    }
}

/// A formatted number with its minus sign written as the minus sign
/// (U+2212), as amounts and the monthly grid write it.
pub(super) fn minus(text: String) -> String {
    text.replace('-', "−")
}

pub(super) fn not_computable() -> Markup {
    html! { abbr.na title="Not computable over this window (see the formulas)" { "n/a" } }
}

/// A JSON number as dollars with two decimals and thousands separators.
pub(super) fn money(value: &Value) -> String {
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

pub(super) fn number(value: &Value) -> String {
    value.to_string()
}

pub(super) fn signed_money(value: &Value) -> String {
    let text = money(value);
    if value.as_f64().is_some_and(|v| v > 0.0) {
        format!("+{text}")
    } else {
        text
    }
}

pub(super) fn percent_plain(value: Option<f64>) -> Markup {
    match value {
        Some(v) => html! { (minus(format!("{:.1} %", v * 100.0))) },
        None => not_computable(),
    }
}

// ------------------------------------------------------------- journal

/// A date as the page shows it in prose: a `<time>` that never breaks.
pub(super) fn day_time(rfc3339: &str) -> Markup {
    html! { time datetime=(rfc3339) { (date(rfc3339)) } }
}

/// A date and time as the page shows it in prose: a `<time>` that never
/// breaks.
pub(super) fn moment(rfc3339: &str) -> Markup {
    html! { time datetime=(rfc3339) { (date_time(rfc3339)) } }
}

/// Dollars in prose: one unbreakable piece, sign and all.
pub(super) fn amount(value: &Value) -> Markup {
    html! { span.num { (money(value)) } }
}

/// A long part of the page folded behind its heading (`<details>`, no
/// script): `heading` goes inside the `<summary>`, `count` beside it.
pub(super) fn fold(heading: Markup, count: Option<String>, content: Markup) -> Markup {
    html! {
        details.fold {
            summary {
                (heading)
                @if let Some(count) = count { span.count { (count) } }
            }
            (content)
        }
    }
}

/// A table that scrolls sideways inside its own box when it is wider than
/// the screen, its first column kept in view. The caption is a paragraph
/// above the box (a `<caption>` is as wide as the table, so on a phone it
/// would scroll out of sight with it), naming both the box (a focusable
/// region, so keyboards can scroll it) and the table.
pub(super) fn scroll_table(id: &str, class: &str, caption: Markup, rows: Markup) -> Markup {
    let caption_id = format!("{id}-caption");
    html! {
        p.caption #(caption_id) { (caption) }
        div.scroll role="region" tabindex="0" aria-labelledby=(caption_id) {
            table class=(class) aria-labelledby=(caption_id) { (rows) }
        }
    }
}
