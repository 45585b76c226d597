//! The page's sections that are not a strategy's or the journal's: the
//! period switch, the window line, the growth chart and its legend, how
//! to verify the record, and the formulas. Text from records is escaped by
//! maud and isolated in `<bdi>`.

use super::bits::*;
use super::chart::{self, COLOURS, Curve, Point};
use freedom_shared::clock::CLOCK_TOLERANCE_SECONDS;
use freedom_shared::service::{Dashboard, Period, RecordingState, StrategyView};
use maud::{Markup, html};
use std::sync::LazyLock;

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

/// Whether `strategy` has a charted value inside the window that starts at
/// `window_start` (seconds; any time when the window has no start).
fn valued_in_window(strategy: &StrategyView, window_start: Option<i64>) -> bool {
    strategy.series.iter().any(|p| {
        p.index.is_some()
            && instant(&p.as_of)
                .is_some_and(|t| window_start.is_none_or(|start| t.timestamp() >= start))
    })
}

/// Each charted strategy's growth index as a curve: colour by place, dashed
/// when paper, a hover title per point. A point before the window (the
/// baseline) is drawn at the window's start, so the time axis is the
/// window's.
pub(super) fn growth_curves(shown: &[&StrategyView], window_start: Option<i64>) -> Vec<Curve> {
    shown
        .iter()
        .enumerate()
        .map(|(i, strategy)| Curve {
            class: format!("c{} {}", i % COLOURS, strategy.mode.as_str()),
            strategy_id: strategy.strategy_id.to_string(),
            mode: strategy.mode.as_str(),
            late_points: late_points(strategy),
            points: strategy
                .series
                .iter()
                .filter_map(|p| {
                    let value = p.index?;
                    Some(Point {
                        t: instant(&p.as_of)?
                            .timestamp()
                            .max(window_start.unwrap_or(i64::MIN)),
                        value,
                        title: format!(
                            "{} ({}), {}: index {value:.4}, equity {}",
                            shown_name(&strategy.strategy_name, strategy.mode),
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

/// How many of a strategy's charted points (those with a value) come before
/// it was recorded as it happened: before `recording.onTimeSince`, or all
/// of them when its latest witnessed valuation was late or a clock
/// conflict.
fn late_points(strategy: &StrategyView) -> usize {
    let RecordingState::Witnessed(recording) = &strategy.recording else {
        return 0;
    };
    if recording.late == 0 && recording.clock_conflict == 0 {
        return 0;
    }
    let valued = strategy.series.iter().filter(|p| p.index.is_some());
    match recording.on_time_since.as_deref().and_then(instant) {
        Some(since) => valued
            .filter(|p| instant(&p.as_of).is_some_and(|t| t < since))
            .count(),
        None => valued.count(),
    }
}

/// How many of a strategy's valuations are dated after the witnesses saw
/// them (0 when the log claims no time).
fn clock_conflicts(strategy: &StrategyView) -> u64 {
    match &strategy.recording {
        RecordingState::Witnessed(recording) => recording.clock_conflict,
        RecordingState::Unwitnessed(_) => 0,
    }
}

/// The chart's description: each strategy's latest charted value and date.
pub(super) fn latest_values(shown: &[&StrategyView]) -> String {
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
                    shown_name(&strategy.strategy_name, strategy.mode),
                    strategy.mode.as_str(),
                    date(&point.as_of)
                ),
                None => format!(
                    "{}: no value",
                    shown_name(&strategy.strategy_name, strategy.mode)
                ),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn chart_section(dashboard: &Dashboard) -> Markup {
    let window_start = dashboard
        .window
        .start
        .as_deref()
        .and_then(instant)
        .map(|t| t.timestamp());
    let (shown, left_off): (Vec<&StrategyView>, Vec<&StrategyView>) = shown(dashboard)
        .into_iter()
        .partition(|strategy| valued_in_window(strategy, window_start));
    let curves = growth_curves(&shown, window_start);
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
                            a href=(format!("#{}", strategy_anchor(strategy))) { bdi { (shown_name(&strategy.strategy_name, strategy.mode)) } }
                            " " (mode_badge(strategy.mode))
                            (status_badges(strategy, dashboard.comparison.is_misaligned(strategy)))
                        }
                    }
                }
                p.note { "Solid lines are live accounts; dashed lines are paper experiments. Hover a point for its date and value." }
                @let late: Vec<&&StrategyView> = shown.iter().zip(&curves).filter(|(_, c)| c.late_points > 0).map(|(s, _)| s).collect();
                @if !late.is_empty() {
                    p.note #late-note {
                        "Drawn lighter: valuations logged late, more than " (dashboard.witnessing.recording_window_seconds / 60) " minutes after their date by the witnessed log's time"
                        @if late.iter().any(|s| clock_conflicts(s) > 0) { ", or dated after the witnesses saw them (a clock is wrong, or a valuation dated ahead)" }
                        ", so nothing shows they were recorded as they happened ("
                        @for (i, strategy) in late.iter().enumerate() {
                            @if i > 0 { ", " }
                            bdi { (shown_name(&strategy.strategy_name, strategy.mode)) }
                        }
                        ")."
                    }
                }
            }
            @if !left_off.is_empty() {
                p.note {
                    "Left off the chart, with no valuation in this window: "
                    @for (i, strategy) in left_off.iter().enumerate() {
                        @if i > 0 { ", " }
                        a href=(format!("#{}", strategy_anchor(strategy))) { bdi { (shown_name(&strategy.strategy_name, strategy.mode)) } }
                        " (" (strategy.mode.as_str()) ")"
                    }
                    "."
                }
            }
        }
    }
}

/// What witnessed time says here: since when records carry one, and what
/// it proves.
fn witnessed_time_part(witnessing: &freedom_shared::service::WitnessingView) -> Markup {
    html! {
        h3 #witnessed-time-title { "When each record was written" }
        @match (witnessing.state, &witnessing.since) {
            ("witnessed", Some(since)) => {
                p #witnessed-time {
                    "Each record carries its witnessed time: the moment a quorum of the witnesses, on their own clocks, had cosigned a checkpoint holding it. "
                    "A valuation in the log within " (witnessing.recording_window_seconds / 60) " minutes of its date is on time; a later one is marked late, never refused. "
                    "One dated more than " (CLOCK_TOLERANCE_SECONDS) " s after the witnesses saw it is a clock conflict (the service's clock or a witness's is wrong), never counted as on time. "
                    "Witnessing began " (date_time(since)) ": records appended before then can only be shown as in the log by then, which says nothing against them."
                }
            }
            ("witnessed", None) => {
                p.note #witnessed-time { "The log is witnessed, but no checkpoint has met the quorum yet: no record has a witnessed time so far." }
            }
            _ => {
                p.note #witnessed-time { "This log has no witness policy with a quorum, so it claims no time for any record: a valuation appended today about last March would read exactly like one appended last March." }
            }
        }
    }
}

/// The witnesses: who they are, and who cosigned the served checkpoint when.
fn witnesses_part(witnesses: &super::Witnesses) -> Markup {
    html! {
        h3 #witnesses-title { "Witnesses" }
        p {
            "Independent witnesses cosign a checkpoint only after checking it extends every checkpoint of this log they cosigned before, "
            "so no reader can be shown a different history than the next. "
            a href="/log/checkpoint" { "The checkpoint served" } " is the newest one cosigned by the quorum of "
            a href="/log/policy" { "the witness policy" } "."
        }
        @match witnesses.served_size {
            Some(size) => p { "The served checkpoint (size " (size) ") is cosigned by " (witnesses.cosignatures.len()) " of " (witnesses.listed.len()) " witnesses:" },
            None => p.note { "No checkpoint has met the policy's quorum yet." },
        }
        (scroll_table("witnesses", "witnesses", html! { "The policy's witnesses, and when each cosigned the served checkpoint" }, html! {
                thead { tr { th scope="col" { "Witness" } th scope="col" { "Key" } th scope="col" { "Cosigned (UTC)" } } }
                tbody {
                    @for (name, key) in &witnesses.listed {
                        @let cosigned = witnesses.cosignatures.iter().find(|c| &c.name == name);
                        tr {
                            th scope="row" { (name) }
                            td { code.hash { (key) } }
                            td.num {
                                @match cosigned.and_then(|c| i64::try_from(c.time).ok()).and_then(|t| chrono::DateTime::from_timestamp(t, 0)) {
                                    Some(time) => time datetime=(time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)) { (time.format("%Y-%m-%d %H:%M:%S")) },
                                    None => "—",
                                }
                            }
                        }
                    }
                }
        }))
        p { "Add " code { "--policy <policy file>" } " to the commands below to require the quorum too." }
    }
}

pub(super) fn verify_section(
    verification: &super::Verification,
    size: u64,
    witnessing: &freedom_shared::service::WitnessingView,
) -> Markup {
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
            (fold(html! { h2 #verify-title { "Verify this record" } }, None, html! {
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
            @if let Some(witnesses) = &verification.witnesses {
                (witnesses_part(witnesses))
            }
            (witnessed_time_part(witnessing))
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
            }))
        }
    }
}

/// The formulas section, rendered once from the contract view (it never
/// changes while the process runs).
pub(super) static FORMULAS_SECTION: LazyLock<String> =
    LazyLock::new(|| formulas_section().into_string());

pub(super) fn formulas_section() -> Markup {
    let formulas = freedom_shared::service::dashboard_formulas()
        .as_object()
        .cloned()
        .unwrap_or_default();
    html! {
        section #formulas aria-labelledby="formulas-title" {
            (fold(html! { h2 #formulas-title { "How the numbers are computed" } }, Some(format!("{} formulas", formulas.len())), html! {
                dl.formulas {
                    @for (name, formula) in &formulas {
                        dt #(format!("formula-{name}")) { (name) }
                        dd { (formula.as_str().unwrap_or_default()) }
                    }
                }
            }))
        }
    }
}
