//! The record taken out (DESIGN.md "What a fund reader expects", exports):
//! one series' every snapshot as CSV (RFC 4180) or JSON, in time order and
//! in pages of at most [`MAX_EXPORT_PAGE_BYTES`]; and the Atom feed
//! (RFC 4287) of the latest decisions.
//!
//! A row's `index` and `drawdown` are the series' growth index since its
//! first snapshot and the drawdown from its running peak: the same figures
//! as the dashboard's `period=all`, computed by the same functions. They
//! depend on every earlier snapshot, so each page is computed from the
//! series' start rather than from a client-supplied state: a cursor can
//! only say where a page starts, never what a figure is.

use crate::analytics::{self, Valuation};
use crate::clock::rfc3339;
use crate::dashboard::{corrupt, snapshot_of};
use crate::merkle::{Digest, Head};
use crate::ports::ledger_store::{Entry, MAX_PAGE_BYTES, StoreError};
use crate::record::{Decision, Mode, Record, Snapshot, StrategyId, decimal_json};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;

/// The CSV export's header line (DESIGN.md, fixed).
pub const CSV_HEADER: &str = "asOf,equity,flowSincePrevious,cash,index,drawdown,seq,leafHash";
/// Most bytes an export page's body holds (1 MiB, as a ledger page).
pub const MAX_EXPORT_PAGE_BYTES: usize = MAX_PAGE_BYTES;
/// How many decisions the Atom feed carries (the newest).
pub const FEED_ENTRIES: usize = 50;
/// The feed's own id.
pub const FEED_ID: &str = "urn:freedom-fund:feed:decisions";

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

/// The rows of a whole series, from its stored snapshots in time order.
pub fn series_rows(entries: &[Entry]) -> Result<Vec<SeriesRow>, StoreError> {
    let snapshots: Vec<Snapshot> = entries.iter().map(snapshot_of).collect::<Result<_, _>>()?;
    let valuations: Vec<Valuation> = snapshots
        .iter()
        .map(|s| Valuation {
            at: s.header.as_of.instant(),
            equity: s.equity,
            flow: s.flow_since_previous,
        })
        .collect();
    let metrics = analytics::metrics(&valuations);
    Ok(entries
        .iter()
        .zip(&snapshots)
        .enumerate()
        .map(|(i, (entry, snapshot))| SeriesRow {
            as_of: snapshot.header.as_of.as_str().to_owned(),
            equity: decimal_json(snapshot.equity),
            flow_since_previous: decimal_json(snapshot.flow_since_previous),
            cash: snapshot.cash.map(decimal_json),
            index: metrics.index.get(i).copied().flatten(),
            drawdown: metrics.underwater.get(i).copied().flatten(),
            seq: entry.seq,
            leaf_hash: entry.leaf_hash,
        })
        .collect())
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

impl SeriesExport<'_> {
    /// The page of `rows` (the whole series, in order) that starts after
    /// seq `after` (from the first row when `None`), cut before its body
    /// passes [`MAX_EXPORT_PAGE_BYTES`] (always at least one row).
    pub fn page(&self, rows: &[SeriesRow], after: Option<u64>, format: ExportFormat) -> ExportPage {
        let first = after.map_or(0, |after| rows.partition_point(|row| row.seq <= after));
        let remaining = rows.get(first..).unwrap_or_default();
        let mut lines: Vec<String> = Vec::new();
        let mut used = match format {
            ExportFormat::Csv => CSV_HEADER.len() + 2,
            ExportFormat::Json => JSON_ENVELOPE_BYTES,
        };
        for row in remaining {
            let line = match format {
                ExportFormat::Csv => csv_line(row),
                ExportFormat::Json => serde_json::to_string(row).expect("a row serialises"),
            };
            // A comma between JSON rows.
            let cost = line.len() + 1;
            if !lines.is_empty() && used + cost > MAX_EXPORT_PAGE_BYTES {
                break;
            }
            used += cost;
            lines.push(line);
        }
        let shown = lines.len();
        // More remain: the next page starts after this one's last row.
        let next = (shown < remaining.len())
            .then(|| shown.checked_sub(1).and_then(|last| remaining.get(last)))
            .flatten()
            .map(|row| row.seq);
        let body = match format {
            ExportFormat::Csv => {
                let mut body = String::with_capacity(used);
                body.push_str(CSV_HEADER);
                body.push_str("\r\n");
                lines.iter().for_each(|line| body.push_str(line));
                body
            }
            ExportFormat::Json => {
                let envelope = serde_json::json!({
                    "schemaVersion": crate::SCHEMA_VERSION,
                    "strategyId": self.strategy_id.as_str(),
                    "mode": self.mode.as_str(),
                    "head": self.head,
                    "next": next,
                });
                let mut body = envelope.to_string();
                // Insert the rows, already serialised, before the closing brace.
                body.pop();
                write!(body, ",\"rows\":[{}]}}", lines.join(",")).expect("writing to a String");
                body
            }
        };
        ExportPage { body, next }
    }
}

// ---------------------------------------------------------------- Atom

/// Text made safe for XML 1.0 character data and attribute values: the
/// five special characters escaped, and characters XML 1.0 forbids (most
/// control characters) replaced by U+FFFD, so no record can break the feed.
pub fn xml_text(text: &str) -> String {
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
/// service's root (`page` is the page's path, `api` the API's).
pub fn atom_feed(
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

    #[test]
    fn pages_stay_under_a_mebibyte_and_visit_every_row_once() {
        let rows: Vec<SeriesRow> = (1..=20_000).map(|seq| row(seq * 2)).collect();
        let id = StrategyId::parse("core").unwrap();
        let export = SeriesExport {
            strategy_id: &id,
            mode: Mode::Live,
            head: Head::empty(),
        };
        for format in [ExportFormat::Csv, ExportFormat::Json] {
            let (mut after, mut seen, mut pages) = (None, Vec::new(), 0);
            loop {
                let page = export.page(&rows, after, format);
                pages += 1;
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
                match page.next {
                    Some(next) => after = Some(next),
                    None => break,
                }
            }
            assert!(pages > 1, "{format:?} pages");
            assert_eq!(seen, rows.iter().map(|r| r.seq).collect::<Vec<_>>());
        }
        // A cursor between seqs, and past the end.
        assert!(
            export
                .page(&rows, Some(40_001), ExportFormat::Csv)
                .body
                .lines()
                .count()
                == 1
        );
        let from_odd = export.page(&rows, Some(3), ExportFormat::Json);
        assert!(from_odd.body.contains("\"seq\":4,"));
        assert!(!from_odd.body.contains("\"seq\":2,"));
    }

    #[test]
    fn xml_text_escapes_markup_and_replaces_forbidden_characters() {
        assert_eq!(
            xml_text("a<b>&\"c'\u{0}\u{1b}\t\n\u{FFFF}é"),
            "a&lt;b&gt;&amp;&quot;c&apos;\u{FFFD}\u{FFFD}\t\n\u{FFFD}é"
        );
    }
}
