//! The record taken out (docs/track-record.md, "Since inception, and what a fund reader expects"):
//! one series' every snapshot as CSV (RFC 4180) or JSON, in time order and
//! in pages of at most `MAX_EXPORT_PAGE_BYTES`; and the Atom feed
//! (RFC 4287) of the latest decisions.
//!
//! A row's `index` and `drawdown` are the series' growth index since its
//! first snapshot and the drawdown from its running peak: the same figures
//! as the dashboard's `period=all`, computed by the same fold. They depend
//! on every earlier snapshot, yet a page costs the same wherever its
//! cursor is ([`Exports`]): the series' since-inception roll-up keeps
//! where the index stood at the end of every month, so a page reads its
//! own rows, the snapshots of its first row's month before that row, and,
//! once per head and series, the roll-up with the open month's snapshots
//! (also to know whether the series' returns stay defined to its end). A
//! cursor only says where a page starts, never what a figure is.
//!
//! At most `MAX_CONCURRENT_EXPORTS` pages are computed at once per
//! process; beyond that the answer is "busy" (503 with `Retry-After: 1`).

use crate::analytics::{Fold, Valuation, finite};
use crate::clock::rfc3339;
use crate::merkle::{Digest, Head};
use crate::ports::ledger_store::{
    Entry, LedgerPages, MAX_PAGE_BYTES, PageQuery, SeriesReads, StoreError,
};
use crate::record::{Decision, Mode, Record, RecordKind, Snapshot, StrategyId, decimal_json};
use crate::service::dashboard::rollup::{SeriesFold, month_of, month_start};
use crate::service::dashboard::{ROLLUP_VERSION, corrupt, fold_series, keep_rollups, snapshot_of};
use crate::service::head_cache::HeadCache;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The CSV export's header line (fixed: the contract publishes it).
pub const CSV_HEADER: &str = "asOf,equity,flowSincePrevious,cash,index,drawdown,seq,leafHash";
/// Most bytes an export page's body holds (1 MiB, as a ledger page).
pub(crate) const MAX_EXPORT_PAGE_BYTES: usize = MAX_PAGE_BYTES;
/// How many decisions the Atom feed carries (the newest).
pub(crate) const FEED_ENTRIES: usize = 50;
/// The feed's own id.
pub(crate) const FEED_ID: &str = "urn:freedom-fund:feed:decisions";

/// The export's formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// `text/csv`, RFC 4180, with [`CSV_HEADER`].
    Csv,
    /// `application/json`: `{schemaVersion, strategyId, mode, head, rows, next}`.
    Json,
}

impl ExportFormat {
    /// Every format's query value (the default first).
    pub const NAMES: [&'static str; 2] = ["json", "csv"];

    /// The format a query value names.
    pub fn parse(text: &str) -> Option<ExportFormat> {
        [ExportFormat::Json, ExportFormat::Csv]
            .into_iter()
            .find(|format| format.name() == text)
    }

    /// Its query value.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "json",
        }
    }

    /// Its media type.
    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Csv => "text/csv; charset=utf-8; header=present",
            ExportFormat::Json => "application/json",
        }
    }
}

/// One snapshot of the series with its figures since the series' start.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SeriesRow {
    /// `asOf` as written.
    pub as_of: String,
    /// Account value, as the record gives it.
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub equity: Value,
    /// The flow at the interval's end, as the record gives it.
    #[cfg_attr(feature = "schema", schemars(with = "f64"))]
    pub flow_since_previous: Value,
    /// Cash, when the record gives it.
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>"))]
    pub cash: Option<Value>,
    /// Growth index since the series' first snapshot (1 there); null when
    /// returns are undefined.
    pub index: Option<f64>,
    /// index / running peak − 1 (≤ 0); null when returns are undefined.
    pub drawdown: Option<f64>,
    /// Ledger position.
    pub seq: u64,
    /// The record's leaf hash.
    pub leaf_hash: Digest,
}

/// One page of an export: its body and, while rows remain, the cursor of
/// the next page (the last row's seq).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportPage {
    /// The response body.
    pub body: String,
    /// `after` for the next page, when more rows remain.
    pub next: Option<u64>,
}

/// Which series an export is of, and the head it was read at.
#[derive(Debug, Clone)]
pub struct SeriesExport<'a> {
    /// The strategy.
    pub strategy_id: &'a StrategyId,
    /// Its mode.
    pub mode: Mode,
    /// The head the rows were read at (no row is beyond it).
    pub head: Head,
}

fn optional_number(value: Option<f64>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

/// One CSV record (RFC 4180: CRLF line ends; the fields here never need
/// quoting: numbers, RFC 3339 instants and hex).
fn csv_line(row: &SeriesRow) -> String {
    format!(
        "{},{},{},{},{},{},{},{}\r\n",
        row.as_of,
        row.equity,
        row.flow_since_previous,
        row.cash.as_ref().map(Value::to_string).unwrap_or_default(),
        optional_number(row.index),
        optional_number(row.drawdown),
        row.seq,
        row.leaf_hash
    )
}

/// What a JSON page holds besides its rows.
const JSON_ENVELOPE_BYTES: usize = 512;

/// Most pages computed at once per process: beyond, an export is busy.
pub(crate) const MAX_CONCURRENT_EXPORTS: usize = 4;
/// Snapshots read from the store at a time while a page fills.
const READ_CHUNK: usize = 1024;
/// Series whose month ends are kept per head.
const KEPT_SERIES: usize = 64;

/// Builds one page from rows offered in order, cut before its body would
/// pass [`MAX_EXPORT_PAGE_BYTES`] (always at least one row).
struct PageBuilder {
    format: ExportFormat,
    used: usize,
    lines: Vec<String>,
    last_seq: Option<u64>,
}

impl PageBuilder {
    fn new(format: ExportFormat) -> PageBuilder {
        PageBuilder {
            format,
            used: match format {
                ExportFormat::Csv => CSV_HEADER.len() + 2,
                ExportFormat::Json => JSON_ENVELOPE_BYTES,
            },
            lines: Vec::new(),
            last_seq: None,
        }
    }

    /// Takes `row` if it fits; `false` when the page is full.
    fn offer(&mut self, row: &SeriesRow) -> bool {
        let line = match self.format {
            ExportFormat::Csv => csv_line(row),
            ExportFormat::Json => serde_json::to_string(row).expect("a row serialises"),
        };
        // A comma between JSON rows.
        let cost = line.len() + 1;
        if !self.lines.is_empty() && self.used + cost > MAX_EXPORT_PAGE_BYTES {
            return false;
        }
        self.used += cost;
        self.lines.push(line);
        self.last_seq = Some(row.seq);
        true
    }

    /// The page; `more`: rows remain after it.
    fn finish(self, export: &SeriesExport<'_>, more: bool) -> ExportPage {
        let next = if more { self.last_seq } else { None };
        let body = match self.format {
            ExportFormat::Csv => {
                let mut body = String::with_capacity(self.used);
                body.push_str(CSV_HEADER);
                body.push_str("\r\n");
                self.lines.iter().for_each(|line| body.push_str(line));
                body
            }
            ExportFormat::Json => {
                let envelope = serde_json::json!({
                    "schemaVersion": crate::record::SCHEMA_VERSION,
                    "strategyId": export.strategy_id.as_str(),
                    "mode": export.mode.as_str(),
                    "head": export.head,
                    "next": next,
                });
                let mut body = envelope.to_string();
                // Insert the rows, already serialised, before the closing brace.
                body.pop();
                write!(body, ",\"rows\":[{}]}}", self.lines.join(","))
                    .expect("writing to a String");
                body
            }
        };
        ExportPage { body, next }
    }
}

/// Why an export page was not made.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// `MAX_CONCURRENT_EXPORTS` pages are being computed already.
    #[error("too many exports are being computed; try again in a second")]
    Busy,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a series' pages start from, at one head: where the growth index
/// stood at the end of each month, and whether the series' returns are
/// defined to its end (else only its first row shows an index).
#[derive(Debug)]
struct SeriesIndex {
    fold: SeriesFold,
}

/// The exports use case on the ledger in its store: a series' pages from
/// any cursor at a cost that does not grow with the series (a bound on how
/// many are computed at once), and the Atom feed of decisions.
pub struct Exports {
    /// The series (and the head).
    series: Arc<dyn SeriesReads>,
    /// The feed's decisions, as ledger pages.
    pages: Arc<dyn LedgerPages>,
    indexes: HeadCache<(StrategyId, Mode), Arc<SeriesIndex>>,
    places: Places,
}

impl std::fmt::Debug for Exports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exports")
            .field("running", &self.places.running)
            .finish_non_exhaustive()
    }
}

/// The [`MAX_CONCURRENT_EXPORTS`] places for pages being computed.
#[derive(Debug, Default)]
struct Places {
    running: AtomicUsize,
}

impl Places {
    /// A place, if one is free.
    fn take(&self) -> Option<Place<'_>> {
        self.running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_CONCURRENT_EXPORTS).then_some(n + 1)
            })
            .ok()
            .map(|_| Place(&self.running))
    }
}

/// One of the [`MAX_CONCURRENT_EXPORTS`] places, given back when dropped.
struct Place<'a>(&'a AtomicUsize);

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Exports {
    /// The exports of the ledger whose series `series` reads and whose
    /// pages `pages` reads (one store, through the two readers).
    pub fn new(series: Arc<dyn SeriesReads>, pages: Arc<dyn LedgerPages>) -> Exports {
        Exports {
            series,
            pages,
            indexes: HeadCache::new(KEPT_SERIES),
            places: Places::default(),
        }
    }

    /// The ledger's current head (what a conditional read compares, before
    /// any other work).
    pub async fn head(&self) -> Result<Head, StoreError> {
        self.series.head().await
    }

    /// The Atom feed of the latest `FEED_ENTRIES` decisions (see
    /// `atom_feed`), and the head it was read at.
    pub async fn feed(&self, page: &str, api: &str) -> Result<(String, Head), StoreError> {
        let latest = self
            .pages
            .page(&PageQuery {
                before: None,
                limit: FEED_ENTRIES,
                strategy_id: None,
                kind: Some(RecordKind::Decision),
                mode: None,
            })
            .await?;
        let feed = atom_feed(&latest.entries, page, api, chrono::DateTime::UNIX_EPOCH)?;
        Ok((feed, latest.head))
    }

    /// The page of `export`'s series that starts after seq `after` (from
    /// its first snapshot when `None`), read at `export.head`.
    pub async fn series_page(
        &self,
        export: &SeriesExport<'_>,
        after: Option<u64>,
        format: ExportFormat,
    ) -> Result<ExportPage, ExportError> {
        let _place = self.places.take().ok_or(ExportError::Busy)?;
        let store = self.series.as_ref();
        let key = (export.strategy_id.clone(), export.mode);
        let index = self
            .indexes
            .get_or_compute(export.head.root_hash, key.clone(), || {
                series_index(store, export.head, key)
            })
            .await?;
        Ok(page_from(store, export, &index, after, format).await?)
    }
}

/// The series' fold at `head` from its since-inception roll-up and the
/// snapshots after it (storing a new roll-up when months have closed).
async fn series_index(
    store: &dyn SeriesReads,
    head: Head,
    key: (StrategyId, Mode),
) -> Result<Arc<SeriesIndex>, StoreError> {
    let since = store
        .since_inception(std::slice::from_ref(&key), ROLLUP_VERSION, head.size, 0)
        .await?;
    let series = since.series.into_iter().next().unwrap_or_default();
    let mut rollups = Vec::new();
    let fold = fold_series(store, &key, series, None, head, false, &mut rollups).await?;
    keep_rollups(
        store,
        rollups,
        &crate::service::log::WitnessTable::unwitnessed(),
    )
    .await;
    Ok(Arc::new(SeriesIndex { fold }))
}

/// The valuation a snapshot gives the fold.
fn valuation(snapshot: &Snapshot) -> Valuation {
    Valuation {
        at: snapshot.header.as_of.instant(),
        equity: snapshot.equity,
        flow: snapshot.flow_since_previous,
    }
}

/// The fold just before `first`: from where the index stood at the start
/// of `first`'s month, through that month's snapshots before it.
async fn fold_before(
    store: &dyn SeriesReads,
    export: &SeriesExport<'_>,
    index: &SeriesIndex,
    first: &Snapshot,
) -> Result<Fold, StoreError> {
    let at = first.header.as_of.instant();
    let mut fold = index
        .fold
        .start_of(month_of(at))
        .map_or_else(Fold::default, |point| Fold::resuming(&point));
    let start = month_start(at).unwrap_or(at);
    let nanos = |t: chrono::DateTime<chrono::Utc>| t.timestamp_nanos_opt().unwrap_or(i64::MAX);
    // The snapshot at or before the month's start comes first: skipped.
    let lead = store
        .snapshot_series(
            export.strategy_id,
            export.mode,
            nanos(start).saturating_sub(1),
            nanos(at).saturating_sub(1),
        )
        .await?;
    for entry in lead.iter().filter(|e| e.seq <= export.head.size) {
        let snapshot = snapshot_of(entry)?;
        if snapshot.header.as_of.instant() >= start {
            fold.push(valuation(&snapshot));
        }
    }
    Ok(fold)
}

/// The page after `after`, built from the rows read in chunks.
async fn page_from(
    store: &dyn SeriesReads,
    export: &SeriesExport<'_>,
    index: &SeriesIndex,
    after: Option<u64>,
    format: ExportFormat,
) -> Result<ExportPage, StoreError> {
    let shown_beyond_first = index.fold.returns_shown();
    let mut page = PageBuilder::new(format);
    let mut fold: Option<Fold> = None;
    let mut cursor = after.unwrap_or(0);
    loop {
        let chunk = store
            .series_after(export.strategy_id, export.mode, cursor, READ_CHUNK)
            .await?;
        let full_chunk = chunk.len() == READ_CHUNK;
        for entry in chunk {
            // Entries appended after the head read are left for the next read.
            if entry.seq > export.head.size {
                return Ok(page.finish(export, false));
            }
            let snapshot = snapshot_of(&entry)?;
            let fold = match &mut fold {
                Some(fold) => fold,
                None if after.is_none() => fold.insert(Fold::default()),
                None => fold.insert(fold_before(store, export, index, &snapshot).await?),
            };
            let first_of_series = fold.last().is_none();
            let step = fold.push(valuation(&snapshot));
            let shown = |value: Option<f64>| {
                value
                    .filter(|_| first_of_series || shown_beyond_first)
                    .and_then(finite)
            };
            let row = SeriesRow {
                as_of: snapshot.header.as_of.as_str().to_owned(),
                equity: decimal_json(snapshot.equity),
                flow_since_previous: decimal_json(snapshot.flow_since_previous),
                cash: snapshot.cash.map(decimal_json),
                index: shown(step.map(|s| s.index)),
                drawdown: shown(step.map(|s| s.drawdown)),
                seq: entry.seq,
                leaf_hash: entry.leaf_hash,
            };
            if !page.offer(&row) {
                return Ok(page.finish(export, true));
            }
            cursor = entry.seq;
        }
        if !full_chunk {
            return Ok(page.finish(export, false));
        }
    }
}

// ---------------------------------------------------------------- Atom

/// Text made safe for XML 1.0 character data and attribute values: the
/// five special characters escaped, and characters XML 1.0 forbids (most
/// control characters) replaced by U+FFFD, so no record can break the feed.
pub(crate) fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The Atom feed (RFC 4287) of `decisions` (the newest first, as stored):
/// entry ids `urn:freedom-fund:leaf:<leafHash>`, links to the page and to
/// each record's inclusion proof. `updated` is the newest decision's
/// `asOf`, or `fallback` when there is none. Links are relative to the
/// service's root (`page` is the page's path, `api` the API's). (Long:
/// the feed's template, element after element, as RFC 4287 orders them.)
pub(crate) fn atom_feed(
    decisions: &[Entry],
    page: &str,
    api: &str,
    fallback: chrono::DateTime<chrono::Utc>,
) -> Result<String, StoreError> {
    let parsed: Vec<(&Entry, Decision)> = decisions
        .iter()
        .map(|entry| {
            match Record::from_canonical(&entry.canonical).map_err(|e| corrupt(entry, e))? {
                Record::Decision(decision) => Ok((entry, decision)),
                Record::Snapshot(_) => Err(corrupt(entry, "expected a decision")),
            }
        })
        .collect::<Result<_, _>>()?;
    let updated = parsed
        .iter()
        .map(|(_, d)| d.header.as_of.instant())
        .max()
        .unwrap_or(fallback);
    let mut feed = String::new();
    let _ = write!(
        feed,
        concat!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n",
            "<feed xmlns=\"http://www.w3.org/2005/Atom\">\n",
            "<id>{id}</id>\n",
            "<title>Freedom Fund: decision journal</title>\n",
            "<subtitle>The latest {count} decisions of a public, append-only fund record</subtitle>\n",
            "<updated>{updated}</updated>\n",
            "<author><name>Freedom Fund</name></author>\n",
            "<link rel=\"self\" type=\"application/atom+xml\" href=\"/feed.atom\"/>\n",
            "<link rel=\"alternate\" type=\"text/html\" href=\"{page}\"/>\n"
        ),
        id = FEED_ID,
        count = FEED_ENTRIES,
        updated = rfc3339(updated),
        page = xml_text(page),
    );
    for (entry, decision) in &parsed {
        let header = &decision.header;
        let mut content = format!(
            "{} · {} ({})\n\n{}",
            decision.action.as_str(),
            header.strategy_name,
            header.mode.as_str(),
            decision.summary
        );
        for (label, text) in [
            ("Thesis", &decision.thesis),
            ("Counter-evidence", &decision.counter_evidence),
            ("Next check", &decision.next_check),
        ] {
            if let Some(text) = text {
                let _ = write!(content, "\n\n{label}: {text}");
            }
        }
        let _ = write!(
            feed,
            concat!(
                "<entry>\n",
                "<id>urn:freedom-fund:leaf:{leaf}</id>\n",
                "<title>{action}: {summary}</title>\n",
                "<updated>{updated}</updated>\n",
                "<link rel=\"alternate\" type=\"text/html\" href=\"{page}\"/>\n",
                "<link rel=\"related\" type=\"application/json\" href=\"{api}?view=proof&amp;seq={seq}\"/>\n",
                "<category term=\"{action}\"/>\n",
                "<content type=\"text\">{content}</content>\n",
                "</entry>\n"
            ),
            leaf = entry.leaf_hash,
            action = decision.action.as_str(),
            summary = xml_text(&decision.summary),
            updated = rfc3339(header.as_of.instant()),
            page = xml_text(page),
            api = xml_text(api),
            seq = entry.seq,
            content = xml_text(&content),
        );
    }
    feed.push_str("</feed>\n");
    Ok(feed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: u64) -> SeriesRow {
        SeriesRow {
            as_of: format!("2026-05-01T00:{:02}:00Z", seq % 60),
            equity: serde_json::json!(1000.5),
            flow_since_previous: serde_json::json!(0),
            cash: None,
            index: Some(1.0 + seq as f64 / 1e6),
            drawdown: Some(0.0),
            seq,
            leaf_hash: crate::merkle::leaf_hash(&seq.to_be_bytes()),
        }
    }

    /// Pages as `page_from` cuts them: rows after the cursor offered in
    /// order until one does not fit.
    fn pages(rows: &[SeriesRow], format: ExportFormat) -> Vec<ExportPage> {
        let id = StrategyId::parse("core").unwrap();
        let export = SeriesExport {
            strategy_id: &id,
            mode: Mode::Live,
            head: Head::empty(),
        };
        let mut pages = Vec::new();
        let mut after = None;
        loop {
            let mut builder = PageBuilder::new(format);
            let remaining = rows.iter().filter(|r| after.is_none_or(|a| r.seq > a));
            let mut more = false;
            for row in remaining {
                if !builder.offer(row) {
                    more = true;
                    break;
                }
            }
            let page = builder.finish(&export, more);
            after = page.next;
            pages.push(page);
            if after.is_none() {
                return pages;
            }
        }
    }

    #[test]
    fn pages_stay_under_a_mebibyte_and_visit_every_row_once() {
        let rows: Vec<SeriesRow> = (1..=20_000).map(|seq| row(seq * 2)).collect();
        for format in [ExportFormat::Csv, ExportFormat::Json] {
            let mut seen = Vec::new();
            let pages = pages(&rows, format);
            assert!(pages.len() > 1, "{format:?} pages");
            for page in pages {
                assert!(page.body.len() <= MAX_EXPORT_PAGE_BYTES, "{format:?}");
                let seqs: Vec<u64> = match format {
                    ExportFormat::Csv => page
                        .body
                        .lines()
                        .skip(1)
                        .map(|line| line.split(',').nth(6).unwrap().parse().unwrap())
                        .collect(),
                    ExportFormat::Json => {
                        let value: Value = serde_json::from_str(&page.body).unwrap();
                        assert_eq!(value["next"], serde_json::json!(page.next));
                        value["rows"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|r| r["seq"].as_u64().unwrap())
                            .collect()
                    }
                };
                assert_eq!(page.next, page.next.and(seqs.last().copied()));
                seen.extend(seqs);
            }
            assert_eq!(seen, rows.iter().map(|r| r.seq).collect::<Vec<_>>());
        }
    }

    #[test]
    fn at_most_four_pages_are_computed_at_once() {
        let places = Places::default();
        let taken: Vec<_> = (0..MAX_CONCURRENT_EXPORTS)
            .map(|_| places.take().expect("a place"))
            .collect();
        assert!(places.take().is_none(), "the fifth is busy");
        drop(taken);
        assert!(places.take().is_some(), "places are given back");
    }

    #[test]
    fn xml_text_escapes_markup_and_replaces_forbidden_characters() {
        assert_eq!(
            xml_text("a<b>&\"c'\u{0}\u{1b}\t\n\u{FFFF}é"),
            "a&lt;b&gt;&amp;&quot;c&apos;\u{FFFD}\u{FFFD}\t\n\u{FFFD}é"
        );
    }
}
