//! A series export from any cursor gives exactly the rows of one pass over
//! the whole series (the same index and drawdown, bit for bit), whether
//! the since-inception roll-up is stored yet or not, across month
//! boundaries, with other series, modes and decisions interleaved, and for
//! a series whose returns become undefined. Run on the embedded store.

use chrono::{DateTime, Duration, Utc};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::analytics::{self, Valuation};
use freedom_shared::ports::Candidate;
use freedom_shared::ports::{HeadReads, SeriesReads};
use freedom_shared::record::Guard;
use freedom_shared::record::{Mode, Record, StrategyId, decimal_json};
use freedom_shared::service::{ExportFormat, Exports, SeriesExport};
use rust_decimal::Decimal;
use serde_json::{Value, json};

fn candidate(value: Value) -> Candidate {
    let record =
        Record::parse(value.to_string().as_bytes(), &Guard::default(), Utc::now()).unwrap();
    Candidate::new(&record)
}

fn snapshot(
    strategy: &str,
    mode: &str,
    at: DateTime<Utc>,
    equity: Decimal,
    flow: Decimal,
) -> Candidate {
    candidate(json!({
        "id": format!("{strategy}-{mode}-{}", at.timestamp()), "type": "snapshot", "visibility": "public",
        "mode": mode, "strategyId": strategy, "strategyName": "Export test",
        "asOf": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "source": {"name": "test", "url": "https://example.com/t"},
        "currency": "USD", "equity": decimal_json(equity), "flowSincePrevious": decimal_json(flow)
    }))
}

fn decision(n: usize, at: DateTime<Utc>) -> Candidate {
    candidate(json!({
        "id": format!("d{n}"), "type": "decision", "visibility": "public", "mode": "live",
        "strategyId": "core", "strategyName": "Export test",
        "asOf": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "source": {"name": "test", "url": "https://example.com/t"},
        "action": "hold", "summary": "hold"
    }))
}

/// `core` live every 7 hours from 2026-01-03 over about four months (with
/// flows and a deep drawdown), interleaved with `core` paper, another
/// strategy and decisions; returns the ledger and `core` live's valuations
/// with their seqs.
async fn ledger(
    equities: impl Fn(usize) -> (Decimal, Decimal),
) -> (tempfile::TempDir, SqliteLedgerStore, Vec<(u64, Valuation)>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    let start: DateTime<Utc> = "2026-01-03T05:00:00Z".parse().unwrap();
    let mut batch = Vec::new();
    let mut series = Vec::new();
    for i in 0..420 {
        let at = start + Duration::hours(7 * i as i64);
        let (equity, flow) = equities(i);
        batch.push(snapshot("core", "live", at, equity, flow));
        series.push(Valuation { at, equity, flow });
        batch.push(snapshot(
            "core",
            "paper",
            at,
            Decimal::new(1000, 0),
            Decimal::ZERO,
        ));
        if i % 3 == 0 {
            batch.push(snapshot(
                "other",
                "live",
                at,
                Decimal::new(5, 0),
                Decimal::ZERO,
            ));
        }
        if i % 11 == 0 {
            batch.push(decision(i, at));
        }
    }
    store.append_batch(batch).await.unwrap();
    // The seqs of core live, in order.
    let seqs: Vec<u64> = store
        .series_after(&StrategyId::parse("core").unwrap(), Mode::Live, 0, 10_000)
        .await
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    (dir, store, seqs.into_iter().zip(series).collect())
}

/// Every row of every page (JSON), following `next` from `after`.
async fn rows_from(
    exports: &Exports,
    store: &SqliteLedgerStore,
    after: Option<u64>,
    limit_pages: usize,
) -> Vec<Value> {
    let head = store.head().await.unwrap();
    let id = StrategyId::parse("core").unwrap();
    let export = SeriesExport {
        strategy_id: &id,
        mode: Mode::Live,
        head,
    };
    let (mut rows, mut cursor) = (Vec::new(), after);
    for _ in 0..limit_pages {
        let page = exports
            .series_page(&export, cursor, ExportFormat::Json)
            .await
            .unwrap();
        let body: Value = serde_json::from_str(&page.body).unwrap();
        rows.extend(body["rows"].as_array().unwrap().iter().cloned());
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    rows
}

/// What one pass over the whole series gives each row: (seq, index, drawdown).
fn expected(series: &[(u64, Valuation)]) -> Vec<(u64, Value, Value)> {
    let valuations: Vec<Valuation> = series.iter().map(|(_, v)| *v).collect();
    let metrics = analytics::metrics(&valuations);
    series
        .iter()
        .zip(metrics.index.iter().zip(&metrics.underwater))
        .map(|((seq, _), (index, drawdown))| (*seq, json!(index), json!(drawdown)))
        .collect()
}

fn check(rows: &[Value], expected: &[(u64, Value, Value)], from: usize, what: &str) {
    assert_eq!(rows.len(), expected.len() - from, "{what}: row count");
    for (row, (seq, index, drawdown)) in rows.iter().zip(&expected[from..]) {
        assert_eq!(row["seq"], json!(seq), "{what}");
        assert_eq!(&row["index"], index, "{what}: index at seq {seq}");
        assert_eq!(&row["drawdown"], drawdown, "{what}: drawdown at seq {seq}");
    }
}

async fn every_cursor_gives_the_whole_pass(equities: impl Fn(usize) -> (Decimal, Decimal)) {
    let (_dir, store, series) = ledger(equities).await;
    let expected = expected(&series);
    // Before any roll-up is stored, then with the one the first export stored.
    for round in ["no roll-up yet", "with the roll-up"] {
        let shared = std::sync::Arc::new(store.clone());
        let exports = Exports::new(shared.clone(), shared);
        check(
            &rows_from(&exports, &store, None, 100).await,
            &expected,
            0,
            round,
        );
        // Cursors on the series' own seqs, on others' (between its seqs),
        // and before its first: each page starts at the next row.
        for position in [0usize, 1, 2, 57, 58, 150, 211, 300, 418] {
            let (seq, _) = series[position];
            let rows = rows_from(&exports, &store, Some(seq), 100).await;
            check(
                &rows,
                &expected,
                position + 1,
                &format!("{round}, after seq {seq}"),
            );
            let rows = rows_from(&exports, &store, Some(seq + 1), 1).await;
            assert_eq!(
                rows[0]["seq"],
                json!(series[position + 1].0),
                "a cursor between seqs"
            );
        }
        assert!(
            rows_from(&exports, &store, Some(series[419].0), 1)
                .await
                .is_empty()
        );
    }
}

#[tokio::test]
async fn pages_from_any_cursor_equal_one_pass_over_the_whole_series() {
    every_cursor_gives_the_whole_pass(|i| {
        // Up, a deep drawdown in February, a recovery; flows now and then.
        let level = 1000 + (i as i64 * 37 % 200) - if (120..260).contains(&i) { 400 } else { 0 };
        let flow = if i % 50 == 49 { 100 } else { 0 };
        (Decimal::new(level + flow, 0), Decimal::new(flow, 0))
    })
    .await;
}

#[tokio::test]
async fn a_series_whose_returns_become_undefined_shows_only_its_first_index() {
    // Zero equity in March, then a gain from nothing: returns undefined from
    // there on, so every row but the first shows none.
    every_cursor_gives_the_whole_pass(|i| match i {
        250 => (Decimal::ZERO, Decimal::ZERO),
        251.. => (Decimal::new(10, 0), Decimal::ZERO),
        _ => (Decimal::new(1000 + i as i64, 0), Decimal::ZERO),
    })
    .await;
}
