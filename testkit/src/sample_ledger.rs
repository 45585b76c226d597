//! A small, realistic ledger for page and browser tests and docs/page.md's
//! screenshot: two live accounts and three paper experiments over the
//! weekdays of April and May 2026, with one deposit, positions, decisions,
//! a stale strategy, a misaligned one and a baseline-only one.

use chrono::{Datelike, Duration, NaiveDate, Weekday};
use serde_json::{Value, json};

/// The weekdays from 2026-04-01 to 2026-05-29, at 20:00 UTC.
pub fn valuation_dates() -> Vec<String> {
    let mut day = NaiveDate::from_ymd_opt(2026, 4, 1).expect("valid date");
    let last = NaiveDate::from_ymd_opt(2026, 5, 29).expect("valid date");
    let mut dates = Vec::new();
    while day <= last {
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            dates.push(format!("{day}T20:00:00Z"));
        }
        day += Duration::days(1);
    }
    dates
}

fn dollars(cents: i64) -> f64 {
    cents as f64 / 100.0
}

fn source() -> Value {
    json!({"name": "broker statement", "url": "https://example.com/statements"})
}

/// A snapshot with positions `(symbol, quantity, mark in cents)` and cash.
fn snapshot(
    id: String,
    strategy: (&str, &str, &str),
    as_of: &str,
    cash_cents: i64,
    positions: &[(&str, i64, i64)],
    flow_cents: i64,
) -> Value {
    let (strategy_id, name, mode) = strategy;
    let invested: i64 = positions.iter().map(|(_, q, mark)| q * mark).sum();
    json!({
        "id": id, "type": "snapshot", "visibility": "public", "mode": mode,
        "strategyId": strategy_id, "strategyName": name, "asOf": as_of, "source": source(),
        "currency": "USD", "equity": dollars(cash_cents + invested),
        "flowSincePrevious": dollars(flow_cents), "cash": dollars(cash_cents),
        "positions": positions.iter().map(|(symbol, q, mark)| json!({
            "symbol": symbol, "quantity": q, "cost": dollars(*mark - 150), "mark": dollars(*mark)
        })).collect::<Vec<_>>()
    })
}

/// Every record, in the order to append them. (Long: a listing of
/// records, one literal each.)
pub fn records() -> Vec<Value> {
    let dates = valuation_dates();
    let mut records = Vec::new();
    let n = dates.len() as i64;
    for (i, as_of) in dates.iter().enumerate() {
        let i = i as i64;
        // Live core account: a broad index fund and bonds, a deposit mid-way.
        let deposit = if i == 20 { 50_000 } else { 0 };
        let cash = 120_000 + if i >= 20 { 50_000 } else { 0 };
        let wave = [0, 35, -20, 55, 10, -45, 25][(i % 7) as usize];
        records.push(snapshot(
            format!("core-{i}"),
            ("core", "Core index portfolio", "live"),
            as_of,
            cash,
            &[
                ("VTI", 40, 27_000 + i * 30 + wave),
                ("BND", 60, 7_300 + wave / 5),
            ],
            deposit,
        ));
        // Paper momentum: more volatile.
        let swing = [0, 120, -90, 160, -60, 80, -140][(i % 7) as usize];
        records.push(snapshot(
            format!("momentum-{i}"),
            ("momentum", "Momentum (paper)", "paper"),
            as_of,
            500_000,
            &[("QQQ", 20, 44_000 + i * 55 + swing)],
            0,
        ));
        // Paper equal weight: skips every fifth day (misaligned).
        if i % 5 != 3 {
            records.push(snapshot(
                format!("equal-{i}"),
                ("equal-weight", "Equal weight (paper)", "paper"),
                as_of,
                200_000,
                &[
                    ("SPY", 10, 51_000 - i * 12 + wave),
                    ("GLD", 15, 21_000 + i * 20),
                ],
                0,
            ));
        }
        // Live income account: stopped reporting a week before the end.
        if i < n - 5 {
            records.push(snapshot(
                format!("income-{i}"),
                ("income", "Dividend income", "live"),
                as_of,
                30_000,
                &[("SCHD", 100, 2_700 + i * 2)],
                0,
            ));
        }
    }
    let last = dates.last().expect("dates").clone();
    // A brand-new paper experiment: only its baseline so far.
    records.push(snapshot(
        "newcomer-0".into(),
        ("newcomer", "Newcomer (paper)", "paper"),
        &last,
        1_000_000,
        &[],
        0,
    ));
    let decisions = [
        (
            12,
            "momentum",
            "Momentum (paper)",
            "paper",
            "propose",
            "Rotate half of the momentum book into QQQ",
            Some("Twelve-week momentum turned positive and breadth confirms it."),
            Some("Rates are still rising; the last two rotations gave back their gains."),
            Some("Re-check after the May CPI print."),
        ),
        (
            25,
            "core",
            "Core index portfolio",
            "live",
            "hold",
            "Hold the core allocation after the deposit",
            Some("The deposit keeps the target weights; nothing to rebalance."),
            None,
            Some("Monthly review on June 1."),
        ),
        (
            38,
            "income",
            "Dividend income",
            "live",
            "research",
            "Look into why statements stopped arriving",
            None,
            Some("The broker reported an outage that may simply be over."),
            None,
        ),
    ];
    for (day, strategy_id, name, mode, action, summary, thesis, counter, next) in decisions {
        let as_of = dates[day].replace("T20:00:00Z", "T21:30:00Z");
        let mut record = json!({
            "id": format!("decision-{day}"), "type": "decision", "visibility": "public", "mode": mode,
            "strategyId": strategy_id, "strategyName": name, "asOf": as_of, "source": source(),
            "action": action, "summary": summary
        });
        for (field, value) in [
            ("thesis", thesis),
            ("counterEvidence", counter),
            ("nextCheck", next),
        ] {
            if let Some(value) = value {
                record[field] = json!(value);
            }
        }
        records.push(record);
    }
    records
}

/// A year of history for three strategies, for the page's narrow-screen
/// checks: a live account with a withdrawal of $1,951.08 and a deposit,
/// and two paper experiments, valued every weekday from 2025-06-02 to
/// 2026-05-29 (so the monthly grid spans two calendar years and twelve
/// months), with a decision a month.
pub fn year_records() -> Vec<Value> {
    let mut day = NaiveDate::from_ymd_opt(2025, 6, 2).expect("valid date");
    let last = NaiveDate::from_ymd_opt(2026, 5, 29).expect("valid date");
    let mut records = Vec::new();
    let mut i: i64 = 0;
    let mut month = day.month();
    while day <= last {
        if matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            day += Duration::days(1);
            continue;
        }
        let as_of = format!("{day}T20:00:00Z");
        // The live account: a withdrawal in autumn, a deposit in spring.
        let flow = match i {
            90 => -195_108,
            200 => 1_000_000,
            _ => 0,
        };
        let cash =
            2_000_000 + if i >= 90 { -195_108 } else { 0 } + if i >= 200 { 1_000_000 } else { 0 };
        let wave = [0, 140, -90, 210, 40, -180, 95, -30, 60][(i % 9) as usize];
        records.push(snapshot(
            format!("year-core-{i}"),
            ("core", "Core index portfolio", "live"),
            &as_of,
            cash,
            &[
                ("VTI", 300, 24_000 + i * 25 + wave),
                ("BND", 500, 7_200 + wave / 6),
            ],
            flow,
        ));
        let swing = [0, 260, -310, 420, -150, 90, -380, 200][(i % 8) as usize];
        records.push(snapshot(
            format!("year-momentum-{i}"),
            ("momentum", "Momentum (paper)", "paper"),
            &as_of,
            1_000_000,
            &[("QQQ", 120, 42_000 + i * 35 - (i / 60) * 900 + swing)],
            0,
        ));
        records.push(snapshot(
            format!("year-defensive-{i}"),
            ("defensive", "Defensive rotation (paper)", "paper"),
            &as_of,
            4_000_000,
            &[
                ("XLU", 200, 6_800 + i * 3 + wave / 4),
                ("GLD", 40, 19_000 + i * 11),
            ],
            0,
        ));
        if day.month() != month {
            month = day.month();
            records.push(json!({
                "id": format!("year-decision-{i}"), "type": "decision", "visibility": "public",
                "mode": "live", "strategyId": "core", "strategyName": "Core index portfolio",
                "asOf": format!("{day}T21:30:00Z"), "source": source(), "action": "hold",
                "summary": format!("Monthly review of {}: hold the target weights", day.format("%B %Y")),
                "thesis": "Weights are within two points of target; trading would only add costs."
            }));
        }
        i += 1;
        day += Duration::days(1);
    }
    records
}

/// What a careless writer may append, every record of it accepted: a
/// strategy whose id is 128 characters and whose name and position symbol
/// are single words of 200 and 120, equity near a trillion dollars, and a
/// decision whose summary and thesis hold words longer than any screen.
/// For the page's narrow-screen checks: nothing may push the page sideways.
pub fn careless_records() -> Vec<Value> {
    let id = format!("careless-{}", "x".repeat(119));
    let name = format!("Unbroken{}", "Name".repeat(48));
    let symbol = format!("SYM{}", "BOL".repeat(39));
    let strategy = (id.as_str(), name.as_str(), "live");
    let mut records: Vec<Value> = ["2026-05-27", "2026-05-28", "2026-05-29"]
        .iter()
        .enumerate()
        .map(|(i, day)| {
            snapshot(
                format!("careless-{i}"),
                strategy,
                &format!("{day}T20:00:00Z"),
                98_765_432_101_234 - i as i64 * 1_000_000_000,
                &[(symbol.as_str(), 1_000_000, 987_654_321 + i as i64 * 4_321)],
                if i == 2 { -123_456_789_012 } else { 0 },
            )
        })
        .collect();
    records.push(json!({
        "id": "careless-decision", "type": "decision", "visibility": "public", "mode": "live",
        "strategyId": id, "strategyName": name, "asOf": "2026-05-28T21:30:00Z", "source": source(),
        "action": "research",
        "summary": format!("See{}", "Longword".repeat(60)),
        "thesis": format!("https://example.com/{}", "path/segment-".repeat(40))
    }));
    records
}

/// Appends every record of [`records`] through `router` (the fund's) with
/// the write `token`, each answered 201 Created.
pub async fn post_all(router: &axum::Router, token: &str) {
    post_records(router, token, records()).await;
}

/// Appends `records` through `router` (the fund's) with the write `token`,
/// each answered 201 Created.
pub async fn post_records(router: &axum::Router, token: &str, records: Vec<Value>) {
    use tower::ServiceExt;
    for record in records {
        let request = axum::http::Request::post("/api/freedom-fund")
            .header(axum::http::header::AUTHORIZATION, format!("Bearer {token}"))
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(axum::body::Body::from(record.to_string()))
            .expect("a valid request");
        let status = router
            .clone()
            .oneshot(request)
            .await
            .expect("the router answers")
            .status();
        assert_eq!(status, axum::http::StatusCode::CREATED, "{record}");
    }
}
