//! The dashboard end to end through the router: each period, the default,
//! each invalid period, the window rule, metrics against hand-computed
//! values, stale / baseline-only / misaligned strategies, decisions, weights,
//! and byte-identical answers for the same head.

mod support;

use axum::http::StatusCode;
use chrono::{Duration, Utc};
use serde_json::{Value, json};
use support::{App, Witnessed, snapshot, strategy, weekdays};

fn close(value: &Value, want: f64) -> bool {
    value
        .as_f64()
        .is_some_and(|got| (got - want).abs() <= 1e-9 * want.abs().max(1.0))
}

/// "steady" gains 0.1 % every weekday for 300 days, with a 1000 deposit on
/// the last day; "late" starts five days before the end; "gone" stopped two
/// weeks ago; "fresh" has a single snapshot today.
async fn fund_with_history() -> App {
    let app = App::new();
    let days = weekdays(300);
    let mut equity = 10_000.0f64;
    for (i, at) in days.iter().enumerate() {
        let flow = if i == days.len() - 1 { 1000.0 } else { 0.0 };
        if i > 0 {
            equity = (equity * 1.001 * 100.0).round() / 100.0 + flow;
        }
        app.post(snapshot("steady", "live", *at, equity, flow))
            .await;
    }
    for (i, at) in days[days.len() - 5..].iter().enumerate() {
        app.post(snapshot("late", "paper", *at, 500.0 + i as f64 * 5.0, 0.0))
            .await;
    }
    for at in &days[200..days.len() - 10] {
        app.post(snapshot("gone", "paper", *at, 100.0, 0.0)).await;
    }
    app.post(snapshot("fresh", "live", days[days.len() - 1], 42.0, 0.0))
        .await;
    app.post(json!({
        "id": "decision-in-window", "type": "decision", "visibility": "public", "mode": "live",
        "strategyId": "steady", "strategyName": "Strategy steady", "asOf": "2026-05-20T15:00:00Z",
        "source": {"name": "agent", "url": "https://example.com/a"}, "action": "hold", "summary": "Stay the course."
    }))
    .await;
    app.post(json!({
        "id": "decision-before-window", "type": "decision", "visibility": "public", "mode": "live",
        "strategyId": "steady", "strategyName": "Strategy steady", "asOf": "2025-01-20T15:00:00Z",
        "source": {"name": "agent", "url": "https://example.com/a"}, "action": "research", "summary": "Old."
    }))
    .await;
    app
}

#[tokio::test]
async fn each_period_has_its_window_and_metrics() {
    let app = fund_with_history().await;
    for period in [21u32, 63, 126, 252] {
        let dashboard = app.get(&format!("?period={period}")).await;
        assert_eq!(dashboard["period"], period);
        assert_eq!(dashboard["window"]["end"], "2026-05-29T20:00:00Z");
        let steady = strategy(&dashboard, "steady");
        // Daily weekday snapshots ending on a Friday: exactly `period` intervals.
        assert_eq!(steady["metrics"]["intervals"], period, "period {period}");
        assert_eq!(
            steady["series"].as_array().unwrap().len(),
            period as usize + 1
        );
        assert_eq!(steady["series"][0]["index"], 1.0);
        // The last day's deposit is not a gain: the TWR is the compounded 0.1 % (to the cent).
        let twr = steady["metrics"]["twr"].as_f64().unwrap();
        let expected = 1.001f64.powi(period as i32) - 1.0;
        assert!(
            (twr - expected).abs() < 1e-5,
            "period {period}: {twr} vs {expected}"
        );
        assert_eq!(steady["metrics"]["netFlows"], 1000);
        assert_eq!(steady["metrics"]["maxDrawdown"], 0.0);
        // Constant daily returns (to the cent): near-zero volatility, never NaN.
        assert!(steady["metrics"]["volatility"].as_f64().unwrap() < 0.001);
        if period == 252 {
            assert!(
                close(&steady["metrics"]["annualizedReturn"], twr),
                "252 days annualise to the TWR itself"
            );
        } else {
            assert_eq!(
                steady["metrics"]["annualizedReturn"],
                Value::Null,
                "period {period}"
            );
        }
        assert_eq!(steady["stale"], false);
    }
}

#[tokio::test]
async fn the_default_period_is_63_and_invalid_periods_are_400() {
    let app = fund_with_history().await;
    let default = app.get("").await;
    assert_eq!(default["period"], 63);
    assert_eq!(default["unit"], "tradingDays");
    assert_eq!(app.get("?period=63").await, default);
    for bad in ["0", "1", "20", "22", "64", "365", "abc", "-21", "21.5", ""] {
        let (status, body) = app.get_raw(&format!("?period={bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "invalid_query");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("21, 63, 126, 252")
        );
    }
}

#[tokio::test]
async fn stale_baseline_only_and_misaligned_strategies_are_shown_as_such() {
    let app = fund_with_history().await;
    let dashboard = app.get("?period=21").await;
    let gone = strategy(&dashboard, "gone");
    assert_eq!(gone["stale"], true);
    let fresh = strategy(&dashboard, "fresh");
    assert_eq!(fresh["baselineOnly"], true);
    assert_eq!(
        fresh["metrics"]["twr"],
        Value::Null,
        "a baseline has no return, not 0 %"
    );
    assert_eq!(fresh["metrics"]["volatility"], Value::Null);
    let late = strategy(&dashboard, "late");
    assert_eq!(
        late["baseline"]["asOf"], "2026-05-25T20:00:00Z",
        "began inside the window: its first snapshot"
    );
    assert!(close(&late["metrics"]["twr"], 520.0 / 500.0 - 1.0));
    let comparison = &dashboard["comparison"];
    assert_eq!(
        comparison["sharedTimestamps"], 0,
        "'gone' shares no timestamp in the window with 'fresh'"
    );
    assert_eq!(
        comparison["misaligned"],
        json!([]),
        "every series values at the times most others use, within its own span"
    );
    let emptied: Vec<&str> = comparison["disjoint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["strategyId"].as_str().unwrap())
        .collect();
    assert_eq!(
        emptied,
        ["gone"],
        "the comparison names the series that left no instant shared"
    );
}

fn misaligned(dashboard: &Value) -> Vec<(String, String)> {
    dashboard["comparison"]["misaligned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["strategyId"].as_str().unwrap().to_owned(),
                s["mode"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_series_valuing_at_another_hour_is_misaligned_and_a_frequent_valuer_is_not() {
    let app = App::new();
    let days = weekdays(10);
    for at in &days {
        for strategy in ["alpha", "beta", "gamma"] {
            app.post(snapshot(strategy, "live", *at, 100.0, 0.0)).await;
        }
        // "hourly" values at the common close and at four more hours before it.
        for hours_before in (0..5).rev() {
            let when = *at - Duration::hours(hours_before);
            app.post(snapshot("hourly", "live", when, 100.0, 0.0)).await;
        }
        // "other" values three hours before everyone's close.
        app.post(snapshot(
            "other",
            "live",
            *at - Duration::hours(3),
            100.0,
            0.0,
        ))
        .await;
    }
    let dashboard = app.get("?period=21").await;
    assert_eq!(
        misaligned(&dashboard),
        [("other".to_owned(), "live".to_owned())]
    );
}

#[tokio::test]
async fn misalignment_tells_the_live_and_paper_series_of_one_strategy_apart() {
    let app = App::new();
    for at in weekdays(10) {
        app.post(snapshot("core", "live", at, 100.0, 0.0)).await;
        app.post(snapshot("other", "live", at, 100.0, 0.0)).await;
        app.post(snapshot(
            "core",
            "paper",
            at - Duration::hours(2),
            100.0,
            0.0,
        ))
        .await;
    }
    let dashboard = app.get("?period=21").await;
    assert_eq!(
        misaligned(&dashboard),
        [("core".to_owned(), "paper".to_owned())]
    );
}

#[tokio::test]
async fn a_decision_after_the_latest_snapshot_is_listed() {
    let app = fund_with_history().await;
    app.post(json!({
        "id": "decision-after-latest", "type": "decision", "visibility": "public", "mode": "live",
        "strategyId": "steady", "strategyName": "Strategy steady", "asOf": "2026-05-29T21:30:00Z",
        "source": {"name": "agent", "url": "https://example.com/a"}, "action": "propose",
        "summary": "Rebalance next week."
    }))
    .await;
    let dashboard = app.get("?period=21").await;
    assert_eq!(dashboard["window"]["end"], "2026-05-29T20:00:00Z");
    let ids: Vec<&str> = dashboard["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["record"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["decision-after-latest", "decision-in-window"]);
}

#[tokio::test]
async fn decisions_in_the_window_are_listed_and_older_ones_are_not() {
    let app = fund_with_history().await;
    let dashboard = app.get("?period=21").await;
    let ids: Vec<&str> = dashboard["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["record"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["decision-in-window"]);
    assert!(dashboard["decisions"][0]["seq"].as_u64().is_some());
}

#[tokio::test]
async fn latest_positions_carry_value_and_weight() {
    let app = App::new();
    let mut record = snapshot(
        "core",
        "live",
        "2026-05-29T20:00:00Z".parse().unwrap(),
        1000.0,
        0.0,
    );
    record["cash"] = json!(250);
    record["positions"] = json!([{"symbol": "VTI", "quantity": 3, "cost": 600, "mark": 250}]);
    app.post(record).await;
    let dashboard = app.get("").await;
    let latest = &strategy(&dashboard, "core")["latest"];
    assert_eq!(latest["positions"][0]["value"], 750);
    assert!(close(&latest["positions"][0]["weight"], 0.75));
    assert!(close(&latest["cashWeight"], 0.25));
}

#[tokio::test]
async fn the_same_head_gives_byte_identical_json_and_a_new_record_changes_it() {
    let app = fund_with_history().await;
    let (_, first) = app.get_raw("?period=63").await;
    let (_, second) = app.get_raw("?period=63").await;
    assert_eq!(first, second);
    app.post(snapshot(
        "fresh",
        "live",
        "2026-06-01T20:00:00Z".parse().unwrap(),
        43.0,
        0.0,
    ))
    .await;
    let (_, third) = app.get_raw("?period=63").await;
    assert_ne!(first, third);
    let third: Value = serde_json::from_slice(&third).unwrap();
    assert_eq!(third["window"]["end"], "2026-06-01T20:00:00Z");
    assert!(close(
        &strategy(&third, "fresh")["metrics"]["twr"],
        43.0 / 42.0 - 1.0
    ));
}

#[tokio::test]
async fn an_empty_ledger_has_an_empty_dashboard() {
    let app = App::new();
    let dashboard = app.get("").await;
    assert_eq!(dashboard["window"], json!({"start": null, "end": null}));
    assert_eq!(dashboard["strategies"], json!([]));
    assert_eq!(dashboard["comparison"]["sharedTimestamps"], 0);
    assert_eq!(dashboard["head"]["size"], 0);
}

/// Many long decisions cannot make the dashboard large: the newest 50,
/// each long text cut to 600 characters (599 and "…") with `truncated`,
/// the record's `seq` pointing at it whole in the ledger view; a short
/// decision is shown exactly as stored.
#[tokio::test]
async fn the_dashboard_shows_the_newest_fifty_decisions_with_long_text_cut() {
    let app = App::new();
    let day = weekdays(1)[0];
    app.post(snapshot("core", "live", day, 1000.0, 0.0)).await;
    let long = "é".repeat(4000);
    for i in 0..80 {
        app.post(json!({
            "id": format!("long-{i:03}"), "type": "decision", "visibility": "public", "mode": "live",
            "strategyId": "core", "strategyName": "Core",
            "asOf": (day - Duration::minutes(100 - i)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "source": {"name": "agent", "url": "https://example.com/agent"},
            "action": "research", "summary": long, "thesis": long, "counterEvidence": long, "nextCheck": long
        }))
        .await;
    }
    let short = json!({
        "id": "short", "type": "decision", "visibility": "public", "mode": "live",
        "strategyId": "core", "strategyName": "Core",
        "asOf": (day - Duration::minutes(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "source": {"name": "agent", "url": "https://example.com/agent"},
        "action": "hold", "summary": "Nothing to do."
    });
    app.post(short.clone()).await;

    let (status, body) = app.get_raw("?period=63").await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.len() < 1024 * 1024, "{} bytes", body.len());
    let dashboard: Value = serde_json::from_slice(&body).unwrap();
    let decisions = dashboard["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 50);
    assert_eq!(decisions[0]["record"], short, "the newest first, as stored");
    assert_eq!(decisions[0]["truncated"], false);
    assert_eq!(decisions[1]["record"]["id"], "long-079");
    for decision in &decisions[1..] {
        assert_eq!(decision["truncated"], true);
        for field in ["summary", "thesis", "counterEvidence", "nextCheck"] {
            let text = decision["record"][field].as_str().unwrap();
            assert_eq!(text.chars().count(), 600, "{field}");
            assert!(text.ends_with("é…"), "{field}");
        }
        // The seq leads to the whole record.
        let seq = decision["seq"].as_u64().unwrap();
        let page = app
            .get(&format!("?view=ledger&limit=1&before={}", seq + 1))
            .await;
        assert_eq!(page["entries"][0]["record"]["summary"], long);
    }
}

/// Without a witness policy nothing claims a time: the ledger's entries,
/// each series' recording and the dashboard's witnessing say
/// `unwitnessed`, and the page says why.
#[tokio::test]
async fn without_witnesses_every_answer_says_unwitnessed() {
    let app = App::new();
    let days = weekdays(3);
    for day in &days {
        app.post(snapshot("core", "live", *day, 1000.0, 0.0)).await;
    }
    let ledger = app.get("?view=ledger").await;
    for entry in ledger["entries"].as_array().unwrap() {
        assert_eq!(entry["witnessed"], "unwitnessed", "{entry}");
        assert!(entry.get("lagSeconds").is_none(), "{entry}");
    }
    for period in ["21", "all"] {
        let dashboard = app.get(&format!("?period={period}")).await;
        assert_eq!(dashboard["witnessing"]["state"], "unwitnessed");
        assert_eq!(dashboard["witnessing"]["since"], Value::Null);
        assert_eq!(dashboard["witnessing"]["recordingWindowSeconds"], 3600);
        let strategy = &dashboard["strategies"][0];
        assert_eq!(strategy["recording"], "unwitnessed", "{period}");
        assert_eq!(strategy["sinceOnTime"], Value::Null);
    }
    let (_, page) = app.fetch("/").await;
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("Not witnessed: the log has no witness policy with a quorum"));
    assert!(page.contains("claims no time for any record"));
}

/// A valuation dated after the witnesses saw it (its witnessed time
/// before its `asOf` by more than the clocks' 60 s tolerance) is a clock
/// conflict: counted apart, never on time, it ends the on-time stretch and
/// its lag is left out of the median and the largest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valuation_dated_after_its_witnessed_time_is_a_clock_conflict() {
    let fund = Witnessed::start().await;
    let now = Utc::now();
    // Ten minutes ago (on time), then four minutes ahead (the service
    // accepts up to five): both witnessed now.
    for (minutes, equity) in [(-10, 1000.0), (4, 1010.0)] {
        fund.app
            .post(snapshot(
                "clock",
                "paper",
                now + Duration::minutes(minutes),
                equity,
                0.0,
            ))
            .await;
    }
    fund.cosign().await;
    let contract = fund.app.get("?view=contract").await;
    assert_eq!(contract["log"]["clockToleranceSeconds"], 60);
    for period in ["21", "all"] {
        let dashboard = fund.app.get(&format!("?period={period}")).await;
        let clock = strategy(&dashboard, "clock");
        let recording = &clock["recording"];
        assert_eq!(recording["clockConflict"], 1, "{recording}");
        assert_eq!(
            (recording["onTime"].as_u64(), recording["late"].as_u64()),
            (Some(1), Some(0)),
            "{recording}"
        );
        assert_eq!(recording["onTimeSince"], Value::Null, "{recording}");
        assert_eq!(clock["sinceOnTime"], Value::Null);
        let max = recording["maxLagSeconds"].as_i64().unwrap();
        assert!((600..700).contains(&max), "the on-time one's lag: {max}");
        assert_eq!(recording["medianLagSeconds"].as_f64(), Some(max as f64));
    }
    let ledger = fund.app.get("?view=ledger").await;
    let ahead = &ledger["entries"][0];
    let lag = ahead["lagSeconds"].as_i64().unwrap();
    assert!(
        (-240..-180).contains(&lag),
        "witnessed before its asOf: {lag}"
    );
}

/// A proof at=witnessed from a log that claims no time does not exist:
/// 404 naming `at`, never a 503 that asks to wait for what never comes.
#[tokio::test]
async fn without_witnesses_a_witnessed_proof_is_404() {
    let app = App::new();
    app.post(snapshot("core", "live", weekdays(1)[0], 1000.0, 0.0))
        .await;
    for format in ["json", "tlog-proof"] {
        let (status, body) = app
            .get_raw(&format!("?view=proof&seq=1&at=witnessed&format={format}"))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{format}");
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["details"][0]["parameter"], "at");
    }
}
