//! The decision journal and the newest ledger entries.

use super::MAX_DECISIONS;
use super::bits::*;
use super::strategies::lag_words;
use crate::paths::FEED_PATH;
use crate::routes::ledger::{BEFORE, LIMIT, TYPE};
use crate::routes::log::{SEQ, TLOG_PROOF};
use crate::routes::{FORMAT, STRATEGY_ID, View, link};
use freedom_shared::clock::CLOCK_TOLERANCE_SECONDS;
use freedom_shared::record::RecordKind;
use freedom_shared::service::{Dashboard, DecisionView, SeriesPoint};
use freedom_shared::service::{LatestEntry, RECORDING_WINDOW_SECONDS, Recorded};
use maud::{Markup, html};

pub(super) fn journal_section(dashboard: &Dashboard) -> Markup {
    html! {
        section #journal aria-labelledby="journal-title" {
            (fold(html! { h2 #journal-title { "Decision journal" } }, Some(decision_count(dashboard.decisions.len())), html! {
                @if dashboard.decisions.is_empty() {
                    p { "No decisions recorded in this window." }
                }
                @for decision in dashboard.decisions.iter().take(MAX_DECISIONS) {
                    (decision_entry(dashboard, decision))
                }
                @if dashboard.decisions.len() > MAX_DECISIONS {
                    p.note {
                        "The newest " (MAX_DECISIONS) " are shown; "
                        a href=(link(View::Ledger, &[(TYPE.name, RecordKind::Decision.as_str())])) { "the ledger" }
                        " holds every decision."
                    }
                }
            }))
        }
    }
}

/// The journal's fold says how many decisions it holds.
fn decision_count(count: usize) -> String {
    match count {
        1 => "1 decision".to_owned(),
        n => format!("{n} decisions"),
    }
}

pub(super) fn decision_entry(dashboard: &Dashboard, view: &DecisionView) -> Markup {
    let decision = &view.decision;
    let as_of = decision.header.as_of.as_str();
    let strategy_id = decision.header.strategy_id.as_str();
    let mode = decision.header.mode.as_str();
    let action = decision.action.as_str();
    let around = snapshots_around(dashboard, strategy_id, mode, as_of);
    html! {
        article.decision {
            h3 {
                span class=(format!("badge action {action}")) { (action) } " "
                bdi { (excerpt(&decision.summary)) }
            }
            p.meta {
                (moment(as_of)) " · "
                bdi { (shown_name(&decision.header.strategy_name, decision.header.mode)) } " (" (mode) ") · "
                a href=(link(View::Ledger, &[(STRATEGY_ID, strategy_id), (TYPE.name, RecordKind::Decision.as_str())])) { "ledger entry #" (view.seq) }
            }
            dl {
                @if let Some(thesis) = &decision.thesis { dt { "Thesis" } dd { bdi { (excerpt(thesis)) } } }
                @if let Some(counter) = &decision.counter_evidence { dt { "Counter-evidence" } dd { bdi { (excerpt(counter)) } } }
                @if let Some(next) = &decision.next_check { dt { "Next check" } dd { bdi { (excerpt(next)) } } }
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

pub(super) fn point_text(point: Option<&SeriesPoint>) -> Markup {
    match point {
        Some(p) => html! { (moment(&p.as_of)) " at " (amount(&p.equity)) },
        None => html! { "none yet" },
    }
}

/// The strategy's last snapshot at or before the decision and its first after.
pub(super) fn snapshots_around<'a>(
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

pub(super) fn ledger_section(dashboard: &Dashboard, entries: &[LatestEntry]) -> Markup {
    html! {
        section #ledger aria-labelledby="ledger-title" {
            h2 #ledger-title { "Ledger" }
            p {
                (dashboard.head.size) " records. Root hash (RFC 9162 Merkle Tree Hash of every record's RFC 8785 form):"
            }
            p { code.hash #root-hash { (dashboard.head.root_hash) } }
            (fold(html! { h3 #entries-title { "Newest entries" } }, Some(format!("{} of {}", entries.len(), dashboard.head.size)), html! {
                @if entries.is_empty() {
                    p { "No records yet." }
                } @else {
                    (scroll_table("entries", "entries", html! { "The newest entries, each with its inclusion proof" }, html! {
                        thead { tr { th scope="col" { "#" } th scope="col" { "Type" } th scope="col" { "Strategy" } th scope="col" { "As of" } th scope="col" { "Witnessed" } th scope="col" { "Leaf hash" } th scope="col" { "Proof" } } }
                        tbody {
                            @for entry in entries {
                                @let header = entry.record.header();
                                @let lag = entry.lag_seconds;
                                @let late = lag.is_some_and(|lag| lag > RECORDING_WINDOW_SECONDS);
                                // Dated after its witnessed time: a clock is wrong.
                                @let conflict = lag.is_some_and(|lag| lag < CLOCK_TOLERANCE_SECONDS.saturating_neg());
                                tr.late[late || conflict] {
                                    td { (entry.seq) }
                                    td { (entry.record.kind().as_str()) }
                                    td { bdi { (header.strategy_id.as_str()) } " (" (header.mode.as_str()) ")" }
                                    td { (date_time(header.as_of.as_str())) }
                                    td {
                                        @match entry.recorded {
                                            Recorded::Witnessed(at) => {
                                                (date_time(&at.rfc3339()))
                                                @if let Some(lag) = lag {
                                                    @if late { " " strong.late-mark { "late: " (lag_words(lag as f64)) } }
                                                    @else if conflict { " " strong.late-mark title="Its asOf is later than the witnessed time: the service's or a witness's clock is wrong" { "clock conflict: dated " (lag_words(lag.saturating_neg() as f64)) " later" } }
                                                    @else { " (" (lag_words(lag as f64)) ")" }
                                                }
                                            }
                                            Recorded::Pending => { "pending" }
                                            Recorded::Unwitnessed => { "unwitnessed" }
                                        }
                                    }
                                    td { code title=(entry.leaf_hash) { (entry.leaf_hash.to_hex()[..12]) "…" } }
                                    td {
                                        a.proof href=(link(View::Proof, &[(SEQ.name, &entry.seq.to_string()), (FORMAT, TLOG_PROOF)])) aria-label=(format!(".tlog-proof of record {}", entry.seq)) title="Inclusion proof (c2sp.org/tlog-proof)" { ".tlog-proof" }
                                        " "
                                        a.record href=(link(View::Ledger, &[(BEFORE.name, &entry.seq.saturating_add(1).to_string()), (LIMIT.name, "1")])) aria-label=(format!("JSON of record {}", entry.seq)) title="The ledger entry: its record member is the file freedom-verify proof checks (--record)" { "JSON" }
                                    }
                                }
                            }
                        }
                    }))
                }
            }))
            ul.links {
                li { a href=(link(View::Ledger, &[])) { "The full ledger (JSON, paged)" } }
                li { a href=(link(View::Contract, &[])) { "The contract: schemas, rules, formulas" } }
                li { a href=(link(View::OpenApi, &[])) { "OpenAPI 3.1 document" } }
                li { a href=(FEED_PATH) type="application/atom+xml" { "The decisions as an Atom feed" } }
            }
        }
    }
}

// -------------------------------------------------------------- verify
