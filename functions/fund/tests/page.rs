//! The public page at `GET /`, read as HTML with scripts off: what it says
//! about each strategy, the chart, the period switch, the journal and the
//! ledger, its headers (CSP, ETag), and its answers to bad input.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::config::WriteToken;
use freedom_shared::ports::LedgerStore;
use freedom_testkit::sample_ledger;
use http_body_util::BodyExt;
use serde_json::Value;
use std::sync::Arc;
use tower::ServiceExt;

mod support;

const TOKEN: &str = "page-test-token-0123456789";

struct App {
    router: Router,
    _dir: tempfile::TempDir,
}

async fn send(router: &Router, request: Request<Body>) -> (StatusCode, HeaderMap, String) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    // Tiles are binary: only their status matters here.
    (
        status,
        headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).unwrap()
}

async fn app_with(records: &[Value]) -> App {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    let router = fund::app(fund::AppState::new(Arc::new(store), WriteToken::new(TOKEN)));
    for record in records {
        let request = Request::post("/api/freedom-fund")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(record.to_string()))
            .unwrap();
        let (status, _, body) = send(&router, request).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    App { router, _dir: dir }
}

async fn sample() -> App {
    app_with(&sample_ledger::records()).await
}

async fn dashboard_json(router: &Router, period: u32) -> Value {
    let (_, _, body) = send(router, get(&format!("/api/freedom-fund?period={period}"))).await;
    serde_json::from_str(&body).unwrap()
}

/// The text of the element whose `id` is given, tags stripped.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let end = html[start..]
        .find("</section>")
        .map_or(html.len(), |e| start + e);
    &html[start..end]
}

#[tokio::test]
async fn the_page_is_html_with_a_tight_policy_and_the_roots_etag() {
    let app = sample().await;
    let (status, headers, html) = send(&app.router, get("/")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(
        csp.starts_with("default-src 'none'; style-src 'sha256-"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe") && !csp.contains("script-src") && !csp.contains("http"));
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert!(html.starts_with("<!DOCTYPE html><html lang=\"en\">"));
    assert!(!html.contains("<script"), "no scripts at all");

    let dashboard = dashboard_json(&app.router, 63).await;
    let root = dashboard["head"]["rootHash"].as_str().unwrap();
    assert_eq!(headers[header::ETAG], format!("\"{root}\""));
    assert!(
        section(&html, "ledger").contains(root),
        "the page shows the current root"
    );
    let revalidate = Request::get("/")
        .header(header::IF_NONE_MATCH, format!("\"{root}\""))
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        send(&app.router, revalidate).await.0,
        StatusCode::NOT_MODIFIED
    );
}

#[tokio::test]
async fn nothing_on_the_page_points_to_another_host() {
    let app = sample().await;
    let (_, _, html) = send(&app.router, get("/?period=21")).await;
    for attribute in ["href=\"", "src=\""] {
        for (at, _) in html.match_indices(attribute) {
            let value = &html[at + attribute.len()..];
            let value = &value[..value.find('"').unwrap()];
            assert!(
                value.starts_with('/') || value.starts_with('#') || value == "data:,",
                "{attribute}{value}"
            );
        }
    }
}

#[tokio::test]
async fn the_chart_draws_one_curve_per_strategy_live_solid_and_paper_dashed() {
    let app = sample().await;
    let (_, _, html) = send(&app.router, get("/")).await;
    let dashboard = dashboard_json(&app.router, 63).await;
    let strategies = dashboard["strategies"].as_array().unwrap();
    assert_eq!(strategies.len(), 5);
    let chart = section(&html, "chart-title");
    for strategy in strategies {
        let (id, mode) = (
            strategy["strategyId"].as_str().unwrap(),
            strategy["mode"].as_str().unwrap(),
        );
        let group = format!("<g data-strategy=\"{id}\" data-mode=\"{mode}\"><path class=\"curve c");
        let at = chart
            .find(&group)
            .unwrap_or_else(|| panic!("no curve for {id}"));
        let class_end = chart[at + group.len()..].find('"').unwrap();
        let class = &chart[at + group.len()..at + group.len() + class_end];
        assert!(class.ends_with(mode), "{id}: {class}");
    }
    assert_eq!(chart.matches("<path class=\"curve").count(), 5);
    assert!(
        chart.contains("<title id=\"growth-svg-title\">"),
        "the chart has an accessible name"
    );
}

#[tokio::test]
async fn the_period_switch_links_every_period_and_marks_the_current_one() {
    let app = sample().await;
    for (period, label, title) in [
        ("21", "1M", "21 trading days"),
        ("63", "3M", "63 trading days"),
        ("126", "6M", "126 trading days"),
        ("252", "1Y", "252 trading days"),
        ("all", "All", "since inception"),
    ] {
        let (status, _, html) = send(&app.router, get(&format!("/?period={period}"))).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains(&format!(
            "<a href=\"/?period={period}\" aria-current=\"page\" title=\"{title}\">{label}</a>"
        )));
        assert_eq!(html.matches("aria-current=\"page\"").count(), 1);
        for other in ["21", "63", "126", "252", "all"] {
            assert!(html.contains(&format!("href=\"/?period={other}\"")));
        }
    }
    let (_, _, short) = send(&app.router, get("/?period=21")).await;
    let (_, _, long) = send(&app.router, get("/?period=63")).await;
    assert_ne!(short, long, "the period changes what is shown");
}

#[tokio::test]
async fn strategies_show_their_metrics_and_their_states_never_as_zero() {
    let app = sample().await;
    let (_, _, html) = send(&app.router, get("/")).await;
    let dashboard = dashboard_json(&app.router, 63).await;
    let core = dashboard["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["strategyId"] == "core")
        .unwrap();
    let twr = core["metrics"]["twr"].as_f64().unwrap();
    let card = section(&html, "strategies");
    assert!(
        card.contains(&format!("{:+.2} %", twr * 100.0)),
        "core's TWR is shown"
    );
    // A loss is written with the minus sign (U+2212), as amounts are.
    let drawdown = core["metrics"]["maxDrawdown"].as_f64().unwrap();
    assert!(drawdown < 0.0);
    assert!(
        card.contains(&format!("−{:.2} %", -drawdown * 100.0))
            && !card.contains(&format!("-{:.2} %", -drawdown * 100.0)),
        "core's max drawdown is shown with a minus sign"
    );
    // A level has no direction, so no plus sign; a return keeps its sign.
    let volatility = core["metrics"]["volatility"].as_f64().unwrap() * 100.0;
    assert!(volatility > 0.0);
    assert!(
        card.contains(&format!(">{volatility:.2} %<"))
            && !card.contains(&format!("+{volatility:.2} %")),
        "volatility carries no plus sign"
    );
    assert!(
        card.contains("href=\"#formula-twr\""),
        "the formula is one click away"
    );
    assert!(html.contains("id=\"formula-twr\""));

    let newcomer_start = card.find("id=\"strategy-paper-newcomer\"").unwrap();
    let newcomer = &card[newcomer_start..];
    let newcomer = &newcomer[..newcomer.find("</article>").unwrap()];
    assert!(newcomer.contains("baseline only"));
    assert!(newcomer.contains("n/a"));
    assert!(
        !newcomer.contains("+0.00 %"),
        "a baseline is not a 0 % return"
    );

    let income_start = card.find("id=\"strategy-live-income\"").unwrap();
    assert!(card[income_start..].contains(">stale<"));
    let equal_start = card.find("id=\"strategy-paper-equal-weight\"").unwrap();
    let equal = &card[equal_start..];
    let equal = &equal[..equal.find("</article>").unwrap()];
    assert!(
        !equal.contains(">misaligned<"),
        "skipping one valuation in five is not misaligned"
    );
    // Latest positions, with cash.
    let core_start = card.find("id=\"strategy-live-core\"").unwrap();
    let core_card = &card[core_start..];
    assert!(
        core_card.contains("<th class=\"name\" scope=\"row\"><bdi>VTI</bdi></th>")
            && core_card.contains(">Cash<")
    );
}

#[tokio::test]
async fn a_series_valuing_at_another_hour_is_labelled_misaligned() {
    let mut records = sample_ledger::records();
    let dates = sample_ledger::valuation_dates();
    for (i, date) in dates[dates.len() - 10..].iter().enumerate() {
        let mut record = records
            .iter()
            .find(|r| r["strategyId"] == "momentum")
            .unwrap()
            .clone();
        record["id"] = Value::from(format!("offhour-{i}"));
        record["strategyId"] = Value::from("offhour");
        record["strategyName"] = Value::from("Off-hour (paper)");
        record["asOf"] = Value::from(date.replace("T20:00", "T17:00"));
        records.push(record);
    }
    let app = app_with(&records).await;
    let (_, _, html) = send(&app.router, get("/?period=21")).await;
    let card = |id: &str| {
        let start = html.find(&format!("id=\"strategy-paper-{id}\"")).unwrap();
        let rest = &html[start..];
        rest[..rest.find("</article>").unwrap()].to_owned()
    };
    assert!(card("offhour").contains(">misaligned<"));
    assert!(!card("momentum").contains(">misaligned<"));
    let json = dashboard_json(&app.router, 21).await;
    assert_eq!(
        json["comparison"]["misaligned"],
        serde_json::json!([{"strategyId": "offhour", "mode": "paper"}])
    );
}

#[tokio::test]
async fn a_series_with_no_valuation_in_the_window_is_left_off_the_chart_and_named() {
    // A paper series valued twice in January, long before the 21-day
    // window: only its baseline is known there.
    let mut records = sample_ledger::records();
    let template = records
        .iter()
        .find(|r| r["strategyId"] == "momentum")
        .unwrap()
        .clone();
    for (i, as_of) in ["2026-01-05T20:00:00Z", "2026-01-06T20:00:00Z"]
        .iter()
        .enumerate()
    {
        let mut record = template.clone();
        record["id"] = Value::from(format!("january-{i}"));
        record["strategyId"] = Value::from("january");
        record["strategyName"] = Value::from("January only (paper)");
        record["asOf"] = Value::from(*as_of);
        records.push(record);
    }
    let app = app_with(&records).await;
    let (_, _, html) = send(&app.router, get("/?period=21")).await;
    let json = dashboard_json(&app.router, 21).await;
    assert_eq!(json["comparison"]["sharedTimestamps"], 0);
    assert_eq!(
        json["comparison"]["disjoint"],
        serde_json::json!([
            {"strategyId": "income", "mode": "live"},
            {"strategyId": "january", "mode": "paper"}
        ]),
        "the comparison names the series that left no instant shared: the sample's stale \
         strategy ends before the newcomer begins, and January's has no valuation in the window"
    );

    let chart = section(&html, "chart-title");
    assert!(
        !chart.contains("data-strategy=\"january\""),
        "no curve for a series with no valuation in the window"
    );
    assert!(
        chart.contains("Left off the chart, with no valuation in this window: ")
            && chart.contains("<bdi>January only</bdi></a> (paper)"),
        "the page says which series it left off"
    );
    // The axis is the window: no tick reaches back to January.
    let svg = &chart[..chart.find("</svg>").unwrap()];
    assert!(
        !svg.contains("Jan") && !svg.contains("2026-01"),
        "the time axis stays in the window"
    );

    let strategies = section(&html, "strategies");
    assert!(
        strategies.contains("No instant can be shared while a series ends before another begins")
            && strategies.contains("<bdi>january</bdi> (paper)"),
        "the comparison note names the cause"
    );
    assert!(
        !html.contains("(paper) (paper)") && !html.contains("January only (paper)</bdi>"),
        "no name repeats its mode"
    );
}

#[tokio::test]
async fn the_journal_shows_each_decision_with_the_snapshots_around_it() {
    let app = sample().await;
    let (_, _, html) = send(&app.router, get("/")).await;
    let journal = section(&html, "journal");
    assert_eq!(journal.matches("<article class=\"decision\">").count(), 3);
    assert!(journal.contains("Rotate half of the momentum book into QQQ"));
    assert!(journal.contains(
        "<dt>Thesis</dt><dd><bdi>Twelve-week momentum turned positive and breadth confirms it.</bdi></dd>"
    ));
    assert!(journal.contains("<dt>Counter-evidence</dt>"));
    assert!(
        journal
            .contains("<dt>Next check</dt><dd><bdi>Re-check after the May CPI print.</bdi></dd>")
    );
    // The momentum decision is at 21:30 on day 12; its neighbours are the
    // 20:00 snapshots of day 12 and day 13.
    let dates = sample_ledger::valuation_dates();
    let (before, after) = (&dates[12][..10], &dates[13][..10]);
    assert!(
        journal.contains(&format!(
            "before: <time datetime=\"{}\">{before} 20:00 UTC</time> at <span class=\"num\">$",
            dates[12]
        )) && journal.contains(&format!(
            "after: <time datetime=\"{}\">{after} 20:00 UTC</time> at <span class=\"num\">$",
            dates[13]
        )),
        "{journal}"
    );
}

#[tokio::test]
async fn text_from_records_is_escaped() {
    let mut records = sample_ledger::records();
    let last = records
        .iter()
        .rposition(|r| r["type"] == "decision")
        .unwrap();
    records[last]["summary"] = Value::from("Check <script>alert(1)</script> & \"quotes\"");
    let app = app_with(&records).await;
    let (_, _, html) = send(&app.router, get("/")).await;
    assert!(!html.contains("<script>"));
    assert!(html.contains("Check &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;"));
}

#[tokio::test]
async fn an_empty_ledger_and_bad_input_get_clear_pages() {
    let app = app_with(&[]).await;
    let (status, _, html) = send(&app.router, get("/")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("No snapshots yet.") && html.contains("No strategy has a snapshot yet."));

    for bad in [
        "/?period=5",
        "/?period=abc",
        "/?other=1",
        "/?period=21&period=63",
    ] {
        let (status, headers, html) = send(&app.router, get(bad)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
        assert!(html.contains("<h1>Not a page</h1>"), "{bad}");
    }
    let post = Request::post("/").body(Body::empty()).unwrap();
    assert_eq!(
        send(&app.router, post).await.0,
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[tokio::test]
async fn the_page_shows_how_to_verify_the_record_and_every_link_answers() {
    use freedom_shared::service::Log;
    use freedom_shared::tlog::note::SigningKey;
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn LedgerStore> = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
    let key = SigningKey::from_seed("fund.example.com/log", [5; 32]).unwrap();
    let log = Log::new(
        Arc::clone(&store) as _,
        "fund.example.com/log",
        Some(key.clone()),
    )
    .unwrap();
    let router = fund::app(fund::AppState::new(store, WriteToken::new(TOKEN)).with_log(log));
    sample_ledger::post_all(&router, TOKEN).await;
    let (_, _, html) = send(&router, get("/")).await;
    let verify = section(&html, "verify-title");
    let (_, _, checkpoint) = send(&router, get("/log/checkpoint")).await;
    let first_line = checkpoint.lines().next().unwrap();
    assert!(verify.contains(first_line) && verify.contains(checkpoint.lines().nth(2).unwrap()));
    assert!(verify.contains(&key.verifier().to_text()));
    assert!(verify.contains("freedom-verify"));
    // Each entry links its proof, and every log link on the page answers.
    let ledger = section(&html, "ledger-title");
    assert_eq!(
        ledger.matches("format=tlog-proof").count(),
        fund::page::LATEST_ENTRIES
    );
    for (at, _) in html.match_indices("href=\"") {
        let target = &html[at + 6..];
        let target = target[..target.find('"').unwrap()].replace("&amp;", "&");
        if target.starts_with("/log/") || target.contains("view=proof") {
            let (status, _, body) = send(&router, get(&target)).await;
            assert_eq!(status, StatusCode::OK, "{target}: {body}");
        }
    }
    // ... and beside it the record's JSON: the one entry it names.
    let records: Vec<String> = ledger
        .match_indices("a class=\"record\" href=\"")
        .map(|(at, _)| {
            let target = &ledger[at + "a class=\"record\" href=\"".len()..];
            target[..target.find('"').unwrap()].replace("&amp;", "&")
        })
        .collect();
    assert_eq!(records.len(), fund::page::LATEST_ENTRIES);
    for target in records {
        let before: u64 = target
            .split("before=")
            .nth(1)
            .and_then(|rest| rest.split('&').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{target}"));
        let (status, _, body) = send(&router, get(&target)).await;
        assert_eq!(status, StatusCode::OK, "{target}: {body}");
        let page: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(page["entries"].as_array().unwrap().len(), 1, "{target}");
        assert_eq!(page["entries"][0]["seq"], before - 1, "{target}");
        assert!(page["entries"][0]["record"].is_object());
    }
    // Unsigned, the page says so rather than showing a key.
    let (_, _, unsigned) = send(&sample().await.router, get("/")).await;
    assert!(section(&unsigned, "verify-title").contains("no signing key configured"));
}

/// Valuations dated after the witnesses saw them (a clock conflict): the
/// strategy's recording line says how many and why they are not counted
/// as on time, and the ledger table marks each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_says_when_a_clock_conflict_keeps_valuations_from_counting_on_time() {
    use chrono::{Duration, Utc};
    let fund = support::Witnessed::start().await;
    let now = Utc::now();
    // "clock": on time, then two valued ahead of the witnesses (the
    // service accepts up to five minutes ahead); "ahead": one, ahead.
    for (strategy, minutes, equity) in [
        ("clock", -10, 1000.0),
        ("clock", 2, 1005.0),
        ("clock", 4, 1010.0),
        ("ahead", 3, 500.0),
    ] {
        fund.app
            .post(support::snapshot(
                strategy,
                "paper",
                now + Duration::minutes(minutes),
                equity,
                0.0,
            ))
            .await;
    }
    fund.cosign().await;
    let (status, html) = fund.app.fetch("/").await;
    assert_eq!(status, StatusCode::OK);
    let html = String::from_utf8(html).unwrap();
    assert!(
        html.contains("2 valuations are dated after the witnesses saw them: a clock is wrong, or the valuation was dated ahead of when it was written, so they are not counted as on time."),
        "{}",
        section(&html, "strategies-title")
    );
    assert!(
        html.contains("1 valuation is dated after the witnesses saw it: a clock is wrong, or the valuation was dated ahead of when it was written, so it is not counted as on time."),
        "the singular"
    );
    assert!(
        !html.contains("No valuation of this period is in the witnessed log yet"),
        "a resolved conflict is not pending"
    );
    assert!(
        html.contains("or dated after the witnesses saw them (a clock is wrong, or a valuation dated ahead), so nothing shows they were recorded as they happened"),
        "the chart says why a stretch is lighter"
    );
    assert!(
        html.contains("One dated more than 60 s after the witnesses saw it is a clock conflict"),
        "what witnessed time says names the tolerance"
    );
    let ledger = section(&html, "ledger-title");
    assert_eq!(
        ledger.matches("clock conflict: dated ").count(),
        3,
        "{ledger}"
    );
}
