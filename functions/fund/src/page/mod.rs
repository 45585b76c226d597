//! The public page, `GET /` (docs/page.md): the dashboard as
//! server-rendered HTML that reads fully with scripts off (there are none).
//!
//! It shows the strategies' growth indices as an inline SVG chart (live solid,
//! paper dashed; hover titles on every point), the period switch as links,
//! each strategy's metrics with their formulas one click away, the latest
//! positions, the decision journal beside the snapshots around each decision,
//! the latest ledger entries with the current root hash and a proof link
//! each, how to verify the record (the signed checkpoint, the verifier key,
//! `freedom-verify`), and links to the ledger, contract and OpenAPI views. Stale, misaligned and baseline-only
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
//! ETag is the root hash (with the witnessed checkpoint, when witnessed),
//! as for the data it shows. Colours follow the
//! reader's light or dark scheme; the layout is one column at phone width.
//!
//! On a phone (docs/page.md, "On a phone"), with no script: numbers, dates,
//! badges and every table cell never break inside (`white-space: nowrap`;
//! only a prose cell, `td.text`, wraps); long labels are abbreviated with
//! `<abbr title>` ("Max DD"); every table sits in its own scroll box (a
//! focusable, labelled region) whose first column stays in view, its
//! caption a paragraph above the box so it never scrolls away. The monthly
//! grid keeps years as rows and months as columns in such a box: the
//! layout fund factsheets use, the same at every width, with the year
//! always in view (months as rows would have to be a second layout that
//! grows sideways with every year of record instead). The decision
//! journal, the ledger's entries, the formulas and the verify section are
//! folded in `<details>` at every width, so the page opens on the chart,
//! the strategies and their figures; a link to a formula opens its fold.
//! The period switch, the export and proof links and the folds' summaries
//! are at least 44 × 44 px. Hashes, keys and commands are identifiers, not
//! numbers: they wrap anywhere.

mod bits;
mod chart;
mod journal;
mod sections;
mod strategies;

use crate::paths::{FEED_PATH, HTML};
use crate::routes::dashboard::PERIOD;
use crate::routes::{View, link};
use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use bits::period_label;
use freedom_shared::ports::StoreError;
use freedom_shared::service::Period;
use freedom_shared::service::{PageData, Verification, Witnesses};
use freedom_shared::web::{ApiError, QueryParams, client_tags, read_answer};
use journal::{journal_section, ledger_section};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use sections::{FORMULAS_SECTION, chart_section, period_switch, verify_section, window_line};
use sha2::{Digest as _, Sha256};
use std::sync::LazyLock;
use strategies::strategies_section;

/// How many of the newest ledger entries the page lists.
pub use freedom_shared::service::LATEST_ENTRIES;
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

/// `GET /` and `GET /?period=N`: one call to the page's use case, which
/// answers 304 from the head (and the witnessed checkpoint) alone, or the
/// page rendered once per head and period.
#[tracing::instrument(skip_all)]
pub async fn show(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let period = match QueryParams::parse(query.as_deref(), &[PERIOD.name])
        .map_err(|e| e.to_string())
        .and_then(|p| Period::parse(p.get(PERIOD.name)).map_err(|e| e.to_string()))
    {
        Ok(period) => period,
        Err(message) => return error_page(StatusCode::BAD_REQUEST, "Not a page", &message),
    };
    let read = state
        .pages
        .read(&client_tags(&headers), period, |data| {
            render(data).into_string()
        })
        .await;
    match read {
        Ok(read) => secure(read_answer(&headers, read, HTML)),
        Err(error) => unavailable(error),
    }
}

/// The page for an error, as HTML: its status, `Retry-After` and log line
/// are the API's one mapping of the error ([`ApiError`]'s answer); the
/// page only words it for a reader.
fn unavailable(error: StoreError) -> Response {
    let answer = ApiError::from(error).into_response();
    let status = answer.status();
    let (title, message) = if status == StatusCode::SERVICE_UNAVAILABLE {
        (
            "Temporarily unavailable",
            "The ledger could not be read just now. Nothing is lost; try again in a few seconds.",
        )
    } else {
        (
            "Something went wrong on our side",
            "The page could not be built from the ledger. The fault is logged; trying again will not help until it is mended.",
        )
    };
    let mut response = error_page(status, title, message);
    if let Some(retry) = answer.headers().get(header::RETRY_AFTER) {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, retry.clone());
    }
    response
}

fn html_response(status: StatusCode, body: impl Into<axum::body::Body>) -> Response {
    (status, [(header::CONTENT_TYPE, HTML)], body.into()).into_response()
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
                link rel="alternate" type="application/atom+xml" title="Freedom Fund: decision journal" href=(FEED_PATH);
                style { (PreEscaped(STYLE)) }
            }
            body { (content) }
        }
    }
}

/// The whole page for one dashboard and the newest ledger entries.
pub(crate) fn render(data: &PageData) -> Markup {
    let PageData {
        dashboard,
        latest_entries,
        verification,
        scanner,
    } = data;
    let period = dashboard.period;
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
                (window_line(dashboard))
            }
            main {
                (chart_section(dashboard))
                (strategies_section(dashboard, scanner.as_ref()))
                (journal_section(dashboard))
                (ledger_section(dashboard, latest_entries))
                (verify_section(verification, dashboard.head.size, &dashboard.witnessing))
                (PreEscaped(FORMULAS_SECTION.as_str()))
            }
            footer {
                p {
                    "Read-only. This service executes no orders, approves nothing, signs nothing and holds no credentials. "
                    a href=(link(View::Dashboard, &[(PERIOD.name, &period.query_value())])) { "This dashboard as JSON" } " · "
                    a href=(FEED_PATH) type="application/atom+xml" { "Decisions feed (Atom)" } "."
                }
            }
        },
    )
}
