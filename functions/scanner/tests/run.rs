//! Scanner runs end to end on the embedded store against the providers'
//! stand-in: the report's shape and checks, the paper snapshots in the fund
//! ledger, the lock (one run at a time, released on degraded runs), the
//! 10-minute deduplication under a controlled clock, degraded runs, and the
//! HTTP routes.

mod support;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::DateTime;
use freedom_shared::adapters::Stores;
use freedom_shared::scan::{CHECK_NAMES, EXPERIMENTS};
use freedom_shared::service::RunError;
use freedom_testkit::provider_standin::{Fault, Provider, SOL, fixture_tokens};
use http_body_util::BodyExt;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use support::*;
use tower::ServiceExt;

#[tokio::test]
async fn a_run_checks_every_token_and_records_paper_snapshots() {
    let h = Harness::new().await;
    let report = h.run().await;
    for part in [
        "version",
        "mode",
        "status",
        "reportAt",
        "observedAt",
        "universe",
        "links",
        "books",
        "history",
        "events",
        "wallets",
    ] {
        assert!(report.get(part).is_some(), "missing {part}");
    }
    assert_eq!(
        (
            report["version"].as_str(),
            report["mode"].as_str(),
            report["status"].as_str()
        ),
        (Some("scanner-1.0"), Some("paper"), Some("ok"))
    );
    assert_eq!(report["observedAt"], "2026-05-04T12:07:00Z");

    // The checks of a plain SPL Token mint with spread holders.
    let spl = |overrides: &[(&str, &str)]| -> Vec<String> {
        CHECK_NAMES
            .iter()
            .map(|name| {
                let status = overrides
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or("pass", |(_, s)| *s);
                format!("{name}={status}")
            })
            .collect()
    };
    assert_eq!(statuses(&report, ALPHA), spl(&[("liquidity", "fail")]));
    assert_eq!(
        statuses(&report, BRAVO),
        spl(&[
            ("mint_authority_revoked", "fail"),
            ("freeze_authority_revoked", "fail"),
            ("no_danger_risk", "fail"),
            ("liquidity_locked", "fail"),
        ])
    );
    // No pool, no mint account, no RugCheck report, no holders to list.
    let mut missing: Vec<(&str, &str)> = CHECK_NAMES.iter().map(|n| (*n, "fail")).collect();
    for unknown in ["no_danger_risk", "holders_spread", "liquidity_locked"] {
        missing.iter_mut().find(|(n, _)| *n == unknown).unwrap().1 = "unknown";
    }
    assert_eq!(statuses(&report, CHAR), spl(&missing));
    assert_eq!(entry(&report, DELTA)["eligible"], true);
    for mint in [ALPHA, BRAVO, CHAR] {
        assert_eq!(entry(&report, mint)["eligible"], false);
    }
    let links: Vec<&str> = report["links"][DELTA]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["provider"].as_str().unwrap())
        .collect();
    assert_eq!(links, ["dexscreener", "rugcheck", "solscan"]);
    assert_eq!(report["wallets"][0]["tokens"][0]["mint"], ALPHA);

    // Four books; equal weight and momentum both hold the one eligible
    // token, the benchmark holds SOL.
    let books = report["books"].as_array().unwrap();
    assert_eq!(books.len(), EXPERIMENTS.len());
    assert!(
        books[0]["positions"].as_array().unwrap().is_empty(),
        "the control holds cash"
    );
    assert_eq!(books[0]["equity"], 10000);
    for book in &books[1..3] {
        assert_eq!(book["positions"][0]["symbol"], "FDELTA", "{book}");
        assert_eq!(book["trades"][0]["side"], "buy");
    }
    assert_eq!(books[3]["experimentId"], "scanner-hold-sol-v3");
    assert_eq!(books[3]["positions"][0]["mint"], SOL, "{}", books[3]);

    // Paper snapshots in the fund ledger, on the 15-minute grid, all at 12:00.
    let snapshots = h.ledger_snapshots().await;
    assert_eq!(snapshots.len(), EXPERIMENTS.len());
    for snapshot in &snapshots {
        assert_eq!(snapshot["mode"], "paper");
        assert_eq!(snapshot["asOf"], "2026-05-04T12:00:00Z");
    }
    // GET answers the same report with one store read and runs nothing.
    let requests = h.stand_in.requests(Provider::DexScreener);
    let stored: Value =
        serde_json::from_str(&h.runner().latest_report().await.unwrap().unwrap()).unwrap();
    assert_eq!(stored, report);
    assert_eq!(h.stand_in.requests(Provider::DexScreener), requests);
}

#[tokio::test]
async fn observations_and_advances_are_deduplicated_within_ten_minutes() {
    let h = Harness::new().await;
    h.run().await;
    h.advance_clock(5);
    let second = h.run().await;
    assert_eq!(
        second["history"][DELTA].as_array().unwrap().len(),
        1,
        "within 10 minutes: one observation"
    );
    assert_eq!(
        h.ledger_snapshots().await.len(),
        EXPERIMENTS.len(),
        "no second advance"
    );
    assert!(event(&second, "experiments", "").is_some());

    h.advance_clock(10); // 12:22: 15 minutes after the first run, next grid slot 12:15
    let third = h.run().await;
    let history = third["history"][DELTA].as_array().unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1]["observedAt"], "2026-05-04T12:22:00Z");
    let snapshots = h.ledger_snapshots().await;
    assert_eq!(snapshots.len(), 2 * EXPERIMENTS.len());
    assert_eq!(snapshots[0]["asOf"], "2026-05-04T12:15:00Z");
    // A token that never had a quote has no history.
    assert!(third["history"].get(CHAR).is_none());
    // RugCheck reports come from the cache on the later runs.
    assert_eq!(h.stand_in.requests(Provider::RugCheck), 4);
}

#[tokio::test]
async fn only_one_run_at_a_time() {
    let h = Harness::new().await;
    // A run in progress elsewhere: hold the lock by hand.
    let held = h.hold_lock().await;
    assert!(matches!(h.runner().run().await, Err(RunError::Busy)));
    assert!(h.stores.scan.release(&held).await.unwrap());

    // Several at once: exactly one runs (the providers answer slowly, so the
    // winner holds the lock while the others try).
    h.stand_in.set_latency(Duration::from_millis(300));
    let runs: Vec<_> = (0..5)
        .map(|_| {
            let scanner = Arc::clone(&h.state.runner);
            tokio::spawn(async move { scanner.run().await })
        })
        .collect();
    let mut finished = 0;
    let mut busy = 0;
    for run in runs {
        match run.await.unwrap() {
            Ok(_) => finished += 1,
            Err(RunError::Busy) => busy += 1,
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!((finished, busy), (1, 4));
    // And the lock is free again.
    let token = h
        .stores
        .scan
        .acquire(Duration::from_secs(60))
        .await
        .unwrap();
    assert!(token.is_some());
}

#[tokio::test]
async fn a_failing_provider_degrades_the_run_and_releases_the_lock() {
    let h = Harness::new().await;
    h.stand_in
        .fail_always(Provider::DexScreener, Some(Fault::Status(500)));
    let report = h.run().await;
    assert_eq!(report["status"], "degraded");
    assert!(statuses(&report, DELTA).starts_with(&[
        "indexed_and_priced=unknown".to_owned(),
        "liquidity=unknown".to_owned()
    ]));
    assert_eq!(entry(&report, DELTA)["eligible"], false);
    assert!(
        event(&report, "provider", "DexScreener").is_some(),
        "{}",
        report["events"]
    );
    assert!(
        h.stores
            .scan
            .acquire(Duration::from_secs(60))
            .await
            .unwrap()
            .is_some(),
        "released"
    );
}

/// The address of a port nothing listens on: a connection is refused.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

/// With no provider reachable a run has observed nothing, so it writes
/// nothing to the public record: no registration, no paper snapshot, however
/// many runs; the report says why and what to check.
#[tokio::test]
async fn with_every_provider_unreachable_runs_leave_the_ledger_untouched() {
    let closed = closed_port();
    let h = Harness::with(|config| {
        for provider in [
            &mut config.dexscreener,
            &mut config.rugcheck,
            &mut config.solana,
        ] {
            provider.base_url = closed.clone();
            provider.retries = 0;
        }
    })
    .await;
    let before = h.stores.ledger.head().await.unwrap();
    for _ in 0..3 {
        let report = h.run().await;
        assert_eq!(report["status"], "degraded");
        assert_eq!(report["lastOkAt"], Value::Null, "no run has succeeded");
        let message = event(&report, "market", "")
            .unwrap_or_else(|| panic!("no market event: {}", report["events"]));
        assert!(
            message.contains("nothing was written") && message.contains("FF_DEXSCREENER_URL"),
            "{message}"
        );
        for experiment in report["experiments"].as_array().unwrap() {
            assert_eq!(experiment["registeredSeq"], Value::Null, "{experiment}");
        }
        h.advance_clock(15);
    }
    assert_eq!(h.stores.ledger.head().await.unwrap(), before);
    assert!(h.ledger_snapshots().await.is_empty());
}

/// Once the market cannot be read, registered experiments stop recording:
/// a book is never valued at prices this run did not see.
#[tokio::test]
async fn a_run_that_cannot_read_the_market_appends_no_snapshot() {
    let h = Harness::new().await;
    h.run().await;
    let after_first = h.stores.ledger.head().await.unwrap();
    assert!(after_first.size > 0, "the first run registers and records");
    h.stand_in
        .fail_always(Provider::DexScreener, Some(Fault::Status(500)));
    for _ in 0..2 {
        h.advance_clock(15);
        let report = h.run().await;
        assert_eq!(report["status"], "degraded");
        assert!(
            event(&report, "market", "").is_some(),
            "{}",
            report["events"]
        );
    }
    assert_eq!(h.stores.ledger.head().await.unwrap(), after_first);
}

/// A client that gives up mid-run closes its connection, and the server
/// drops the handler's future: the run must still end and release the lock
/// (it used to stay held until it expired, 5 minutes later, so scheduled
/// runs were skipped).
#[tokio::test]
async fn a_client_that_disconnects_mid_run_does_not_leave_the_lock_held() {
    use tokio::io::AsyncWriteExt;
    let h = Harness::with(|config| config.collect_budget = Duration::from_millis(800)).await;
    h.stand_in
        .fail_always(Provider::DexScreener, Some(Fault::Hang));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = scanner::app(h.state.clone());
    tokio::spawn(freedom_shared::web::serve(
        listener,
        app,
        freedom_shared::web::ServerLimits::default(),
        std::future::pending(),
    ));
    let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /api/freedom-scanner HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {TOKEN}\r\ncontent-length: 0\r\n\r\n"
    );
    client.write_all(request.as_bytes()).await.unwrap();
    // The run holds the lock once it asks DexScreener (which hangs).
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while h.stand_in.requests(Provider::DexScreener) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(client);
    // The run reaches its budget, saves its report and releases the lock.
    let token = loop {
        if let Some(token) = h
            .stores
            .scan
            .acquire(Duration::from_secs(60))
            .await
            .unwrap()
        {
            break token;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the lock is still held after the client went away"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(h.stores.scan.release(&token).await.unwrap());
    let report = h.runner().latest_report().await.unwrap().expect("saved");
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["status"], "degraded");
}

/// Providers that hang cannot outlast the budget, and do not take the
/// others' answers with them: DexScreener's prices are kept.
#[tokio::test]
async fn a_hanging_provider_cannot_outlast_the_budget() {
    let h = Harness::with(|config| config.collect_budget = Duration::from_millis(400)).await;
    h.stand_in
        .fail_always(Provider::RugCheck, Some(Fault::Hang));
    h.stand_in.fail_always(Provider::Solana, Some(Fault::Hang));
    let report = h.run().await;
    assert_eq!(report["status"], "degraded");
    let events = report["events"].as_array().unwrap();
    for provider in ["RugCheck", "Solana RPC"] {
        assert!(
            events.iter().any(|e| {
                let message = e["message"].as_str().unwrap();
                message.starts_with(provider) && message.contains("deadline")
            }),
            "{provider}: {events:?}"
        );
    }
    let delta = statuses(&report, DELTA);
    assert!(
        delta.contains(&"indexed_and_priced=pass".to_owned()),
        "{delta:?}"
    );
    assert!(
        delta.contains(&"mint_authority_revoked=unknown".to_owned()),
        "{delta:?}"
    );
    assert!(
        delta.contains(&"no_danger_risk=unknown".to_owned()),
        "{delta:?}"
    );
    // Nothing eligible, so nothing bought.
    assert!(
        report["books"][1]["positions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// One slow provider blanks nothing: RugCheck answering each report after
/// 300 ms, one at a time, within a 700 ms budget, leaves the prices and
/// accounts of the first run known, caches the reports that came, and the
/// cache fills across runs until a run is complete (it used to discard
/// everything when the run's budget fired, so the cache never filled).
#[tokio::test]
async fn a_slow_provider_keeps_the_others_answers_and_its_cache_fills_across_runs() {
    let h = Harness::with(|config| {
        config.rugcheck.concurrency = 1;
        config.rugcheck.timeout = Duration::from_secs(2);
        config.collect_budget = Duration::from_millis(700);
    })
    .await;
    h.stand_in
        .set_latency_of(Provider::RugCheck, Duration::from_millis(300));
    let risk_known = |report: &Value| {
        report["universe"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| {
                u["checks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c["name"] == "no_danger_risk" && c["status"] != "unknown")
            })
            .count()
    };
    let tokens = fixture_tokens().len();
    let first = h.run().await;
    assert_eq!(first["status"], "degraded");
    for token in [ALPHA, BRAVO, DELTA] {
        let checks = statuses(&first, token);
        assert!(!checks[0].ends_with("=unknown"), "prices kept: {checks:?}");
        assert!(
            !checks[2].ends_with("=unknown"),
            "accounts kept: {checks:?}"
        );
    }
    let mut known = risk_known(&first);
    let asked = h.stand_in.requests(Provider::RugCheck);
    assert!(
        (1..tokens).contains(&asked),
        "{asked} of {tokens} reports asked for in the first run"
    );
    for run in 2..=tokens + 1 {
        h.advance_clock(15);
        let report = h.run().await;
        let now_known = risk_known(&report);
        assert!(now_known >= known, "run {run}: a cached report is kept");
        known = now_known;
        if report["status"] == "ok" {
            // Each report that arrived was cached and never asked for
            // again; only the one request the deadline cut in each earlier
            // run was asked again.
            let requests = h.stand_in.requests(Provider::RugCheck);
            assert!(requests < tokens + run, "{requests} requests");
            assert!(known > 0);
            return;
        }
    }
    panic!("the cache never filled: {known} of {tokens}");
}

/// A provider's symbol enters a book, a public record and the report only
/// when it is fit for one: a symbol the record rules or the guard would
/// refuse (an e-mail address used to freeze the experiment's public series,
/// every later paper snapshot refused while the run said ok) or one that
/// would be a formula or markup elsewhere is shown as the mint's first 8
/// characters, with an event; hidden characters are removed.
#[tokio::test]
async fn provider_symbols_are_cleaned_before_they_reach_a_book() {
    for (given, shown) in [
        ("ceo@example.com", "FakeDe1t"),
        ("=HYPERLINK(\"https://x.example\")", "FakeDe1t"),
        ("<script>alert(1)</script>", "FakeDe1t"),
        ("DEL\u{202E}TA\u{200B}", "DELTA"),
    ] {
        let mut tokens = fixture_tokens();
        tokens.iter_mut().find(|t| t.mint == DELTA).unwrap().symbol = given.to_owned();
        let h = Harness::with_tokens(tokens, |_| {}).await;
        let report = h.run().await;
        assert_eq!(report["status"], "ok", "{given}: {}", report["events"]);
        assert_eq!(entry(&report, DELTA)["symbol"], shown, "{given}");
        let replaced = report["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "provider" && e["message"].as_str().unwrap().contains(DELTA));
        assert_eq!(replaced, shown != "DELTA", "{given}: an event says so");
        assert!(
            !report.to_string().contains(given),
            "{given} is nowhere in the report"
        );
        // The equal-weight book bought it under the shown symbol.
        let snapshots = h.ledger_snapshots().await;
        let symbols: Vec<&str> = snapshots
            .iter()
            .flat_map(|s| s["positions"].as_array().into_iter().flatten())
            .filter_map(|p| p["symbol"].as_str())
            .collect();
        assert!(symbols.contains(&shown), "{given}: {symbols:?}");
        assert!(!symbols.contains(&given));
    }
}

/// A paper snapshot the ledger refuses leaves a gap in a public series:
/// the run is degraded and says which (it used to say ok).
#[tokio::test]
async fn a_refused_paper_snapshot_makes_the_run_degraded() {
    let h = Harness::new().await;
    // Someone wrote the control experiment's series past the run's slot.
    let record = serde_json::json!({
        "id": "in-the-way", "type": "snapshot", "visibility": "public", "mode": "paper",
        "strategyId": "scanner-control-cash-v3", "strategyName": "In the way",
        "asOf": "2026-05-04T12:05:00Z", "source": {"name": "test", "url": "https://example.com/t"},
        "currency": "USD", "equity": 10000, "flowSincePrevious": 0
    });
    let ledger = freedom_shared::service::Ledger::new(
        std::sync::Arc::clone(&h.stores.ledger) as _,
        std::sync::Arc::clone(&h.stores.ledger) as _,
        freedom_shared::record::Guard::default(),
    );
    ledger.append(record.to_string().as_bytes()).await.unwrap();
    // The snapshot is appended after the report it names is built, so the
    // refusal is the next run's to report, and makes that run degraded.
    h.run().await;
    h.advance_clock(15);
    let report = h.run().await;
    assert_eq!(report["status"], "degraded");
    assert!(
        report["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "ledger"
                && e["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("scanner-control-cash-v3")),
        "{}",
        report["events"]
    );
    h.advance_clock(15);
    assert_eq!(h.run().await["status"], "ok");
}

async fn call(state: &scanner::AppState, request: Request<Body>) -> (StatusCode, Value) {
    let response = scanner::app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn the_routes_read_run_and_refuse() {
    let h = Harness::new().await;
    let get = || {
        Request::get("/api/freedom-scanner")
            .body(Body::empty())
            .unwrap()
    };
    let (status, empty) = call(&h.state, get()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (empty["universe"].clone(), empty["books"].clone()),
        (Value::Array(vec![]), Value::Array(vec![]))
    );
    assert_eq!(
        h.stand_in.requests(Provider::DexScreener),
        0,
        "GET never runs the scanner"
    );

    let post = |token: Option<&str>| {
        let mut request = Request::post("/api/freedom-scanner");
        if let Some(token) = token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        request.body(Body::empty()).unwrap()
    };
    assert_eq!(call(&h.state, post(None)).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(
        call(&h.state, post(Some("wrong"))).await.0,
        StatusCode::UNAUTHORIZED
    );
    let held = h.hold_lock().await;
    let (status, busy) = call(&h.state, post(Some(TOKEN))).await;
    assert_eq!(
        (status, busy["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("scanner_busy"))
    );
    h.stores.scan.release(&held).await.unwrap();
    let (status, report) = call(&h.state, post(Some(TOKEN))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(report["status"], "ok");
    let (_, latest) = call(&h.state, get()).await;
    assert_eq!(latest, report);
    let bad = Request::get("/api/freedom-scanner?run=1")
        .body(Body::empty())
        .unwrap();
    assert_eq!(call(&h.state, bad).await.0, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_run_on_the_kv_store_is_seen_by_another_instance() {
    let redis = freedom_testkit::redis_server::RedisServer::start().unwrap();
    let bridge = freedom_testkit::upstash_bridge::UpstashBridge::start(&redis.url(), "kv-token")
        .await
        .unwrap();
    let kv = bridge.kv_config("ff:");
    let dir = tempfile::tempdir().unwrap();
    let h = Harness::on(
        Stores::open(Some(&kv), dir.path()).unwrap(),
        dir,
        fixture_tokens(),
        |_| {},
    )
    .await;
    let report = h.run().await;
    assert_eq!(report["status"], "ok");
    // Another function instance: same KV store, nothing shared in memory.
    let other_dir = tempfile::tempdir().unwrap();
    let other = Harness::on(
        Stores::open(Some(&kv), other_dir.path()).unwrap(),
        other_dir,
        fixture_tokens(),
        |_| {},
    )
    .await;
    let stored: Value =
        serde_json::from_str(&other.runner().latest_report().await.unwrap().unwrap()).unwrap();
    assert_eq!(stored, report);
    assert_eq!(other.ledger_snapshots().await.len(), EXPERIMENTS.len());
    // Its lock is the same lock.
    let held = other.hold_lock().await;
    assert!(matches!(h.runner().run().await, Err(RunError::Busy)));
    other.stores.scan.release(&held).await.unwrap();
}

fn sha256(bytes: &[u8]) -> String {
    freedom_shared::scan::sha256_hex(bytes)
}

async fn get_raw(state: &scanner::AppState, uri: &str) -> (StatusCode, Vec<u8>) {
    let response = scanner::app(state.clone())
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    (
        status,
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
}

/// Every verdict and fill names the provider answers it rests on; each
/// answer's `bodySha256` is the hash of the exact bytes the provider sent,
/// and those bytes, and the report itself, are served back by hash; every
/// paper snapshot commits to the report's hash; each experiment's
/// registration precedes its first snapshot.
#[tokio::test]
async fn every_verdict_rests_on_answers_kept_as_evidence() {
    let h = Harness::new().await;
    let report = h.run().await;
    let provenance = report["provenance"].as_array().unwrap();
    assert!(!provenance.is_empty());
    let sent = h.stand_in.sent_bodies();
    for entry in provenance {
        let hash = entry["bodySha256"].as_str().unwrap();
        assert!(sent.iter().any(|s| s == hash), "{entry}");
        let kept = h.runner().evidence(hash).await.unwrap().unwrap();
        assert_eq!(sha256(&kept), hash);
        assert_eq!(entry["bytes"], kept.len());
        let provider = entry["provider"].as_str().unwrap();
        assert!(["dexscreener", "rugcheck", "solana-rpc"].contains(&provider));
        if provider == "solana-rpc" {
            // An RPC error object (a mint that does not exist) has no slot.
            assert!(
                entry["slot"] == freedom_testkit::provider_standin::SLOT || entry["slot"].is_null(),
                "{entry}"
            );
        }
    }
    for token in report["universe"].as_array().unwrap() {
        for check in token["checks"].as_array().unwrap() {
            for index in check["evidence"].as_array().unwrap() {
                assert!(index.as_u64().unwrap() < provenance.len() as u64, "{check}");
            }
        }
    }
    let hashes: Vec<&str> = provenance
        .iter()
        .map(|e| e["bodySha256"].as_str().unwrap())
        .collect();
    let book = &report["books"][1];
    let trade = &book["trades"][0];
    assert!(!trade["evidence"].as_array().unwrap().is_empty());
    for hash in trade["evidence"].as_array().unwrap() {
        assert!(hashes.contains(&hash.as_str().unwrap()), "{trade}");
    }
    // The report as stored is kept under its own hash.
    let stored = h.runner().latest_report().await.unwrap().unwrap();
    let report_hash = sha256(stored.as_bytes());
    assert_eq!(
        h.runner().evidence(&report_hash).await.unwrap().unwrap(),
        stored.as_bytes()
    );
    // Registrations precede the first snapshots; snapshots name the report.
    let records = ledger_records(&h).await;
    for experiment in report["experiments"].as_array().unwrap() {
        let id = experiment["experimentId"].as_str().unwrap();
        assert_eq!(experiment["status"], "active");
        let registration = records
            .iter()
            .find(|(_, r)| r["id"] == format!("{id}-registration"))
            .unwrap();
        assert_eq!(experiment["registeredSeq"], registration.0);
        assert!(
            registration.1["thesis"]
                .as_str()
                .unwrap()
                .ends_with(experiment["ruleHash"].as_str().unwrap())
        );
        let snapshot = records
            .iter()
            .find(|(_, r)| r["strategyId"] == id && r["type"] == "snapshot")
            .unwrap();
        assert!(registration.0 < snapshot.0);
        assert_eq!(
            snapshot.1["source"]["url"],
            format!("https://dexscreener.com/solana#report=sha256:{report_hash}")
        );
    }
    // Over HTTP: the bytes, or 404, or 400 for a malformed hash.
    let (status, bytes) = get_raw(
        &h.state,
        &format!("/api/freedom-scanner?view=evidence&sha256={report_hash}"),
    )
    .await;
    assert_eq!(
        (status, bytes.as_slice()),
        (StatusCode::OK, stored.as_bytes())
    );
    let unknown = sha256(b"never sent");
    for (uri, expected) in [
        (
            format!("/api/freedom-scanner?view=evidence&sha256={unknown}"),
            StatusCode::NOT_FOUND,
        ),
        (
            format!(
                "/api/freedom-scanner?view=evidence&sha256={}",
                report_hash.to_uppercase()
            ),
            StatusCode::BAD_REQUEST,
        ),
        (
            "/api/freedom-scanner?view=evidence".to_owned(),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/api/freedom-scanner?sha256={report_hash}"),
            StatusCode::BAD_REQUEST,
        ),
        (
            "/api/freedom-scanner?view=report".to_owned(),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        assert_eq!(get_raw(&h.state, &uri).await.0, expected, "{uri}");
    }
}

/// Two liquid, otherwise clean Token-2022 tokens: one with a transfer hook
/// (it could refuse sells) is never eligible nor bought; one with a 1 %
/// transfer fee is bought, and the fee is charged on the fill.
#[tokio::test]
async fn a_hooked_token_is_never_bought_and_a_fee_token_pays_its_fee() {
    use serde_json::json;
    let mut tokens = freedom_testkit::provider_standin::synthetic_tokens(2);
    let hooked = tokens[0].clone().with_extensions(vec![json!({
        "extension": "transferHook",
        "state": {"authority": null, "programId": "HookProgram11111111111111111111111111111111"}
    })]);
    let taxed = tokens[1].clone().with_extensions(vec![json!({
        "extension": "transferFeeConfig",
        "state": {
            "transferFeeConfigAuthority": null, "withdrawWithheldAuthority": null, "withheldAmount": 0,
            "olderTransferFee": {"epoch": 0, "maximumFee": 1_000_000_000_000u64, "transferFeeBasisPoints": 100},
            "newerTransferFee": {"epoch": 0, "maximumFee": 1_000_000_000_000u64, "transferFeeBasisPoints": 100}
        }
    })]);
    tokens = vec![hooked.clone(), taxed.clone()];
    let h = Harness::with_tokens(tokens, |_| {}).await;
    let report = h.run().await;
    assert_eq!(report["status"], "ok", "{}", report["events"]);
    assert_eq!(entry(&report, &hooked.mint)["eligible"], false);
    assert!(statuses(&report, &hooked.mint).contains(&"no_transfer_hook=fail".to_owned()));
    assert_eq!(entry(&report, &taxed.mint)["eligible"], true);
    for book in &report["books"].as_array().unwrap()[1..] {
        let positions = book["positions"].as_array().unwrap();
        assert!(
            positions.iter().all(|p| p["mint"] != hooked.mint.as_str()),
            "{book}"
        );
    }
    // Equal weight holds the fee token, and paid the fee on the fill (the
    // momentum book holds neither: their 24-hour change is not positive).
    let trade = &report["books"][1]["trades"][0];
    assert_eq!(trade["mint"], taxed.mint.as_str(), "{}", report["books"][1]);
    let (quantity, fee) = (
        trade["quantity"].as_f64().unwrap(),
        trade["transferFee"].as_f64().unwrap(),
    );
    // 1 % of the tokens sent: received = sent - fee, fee = sent / 100.
    assert!((fee / (quantity + fee) - 0.01).abs() < 1e-6, "{trade}");
}

/// A rule in code that differs from the one registered is not advanced:
/// no snapshot under a rule that was not declared.
#[tokio::test]
async fn a_rule_that_differs_from_its_registration_is_not_advanced() {
    let h = Harness::new().await;
    let ledger = freedom_shared::service::Ledger::new(
        Arc::clone(&h.stores.ledger) as _,
        Arc::clone(&h.stores.ledger) as _,
        freedom_shared::record::Guard::default(),
    );
    let mut other = freedom_shared::scan::registration_record(
        &freedom_shared::scan::EXPERIMENTS[1],
        DateTime::from_timestamp(1_777_896_000, 0).unwrap(),
    );
    other["thesis"] = serde_json::json!(format!(
        "Another rule.\nruleHash: sha256:{}",
        "0".repeat(64)
    ));
    ledger.append(other.to_string().as_bytes()).await.unwrap();
    let report = h.run().await;
    assert_eq!(report["status"], "degraded");
    assert_eq!(report["experiments"][1]["status"], "rule_mismatch");
    assert!(event(&report, "experiment_rule_mismatch", "").is_some());
    let snapshots = h.ledger_snapshots().await;
    assert_eq!(snapshots.len(), EXPERIMENTS.len() - 1);
    assert!(
        snapshots
            .iter()
            .all(|s| s["strategyId"] != "scanner-equal-weight-v3")
    );
}

/// An RPC URL's API key (in its path or query) and a base URL's
/// credentials never reach provenance or the report.
#[tokio::test]
async fn no_secret_of_a_provider_url_reaches_the_report() {
    let h = Harness::with(|config| {
        config.solana.base_url = format!("{}?api-key=SECRETKEY123", config.solana.base_url);
        config.dexscreener.base_url = config
            .dexscreener
            .base_url
            .replace("http://", "http://user:hunter2secret@");
    })
    .await;
    let report = h.run().await;
    let text = report.to_string();
    assert!(!report["provenance"].as_array().unwrap().is_empty());
    for secret in ["SECRETKEY123", "hunter2secret", "api-key"] {
        assert!(!text.contains(secret), "{secret} in the report");
    }
}

/// The retired experiments are listed with their last paper snapshot;
/// one that never wrote to this ledger is not listed.
#[tokio::test]
async fn retired_experiments_are_listed_with_their_last_snapshot() {
    let fresh = Harness::new().await;
    assert_eq!(fresh.run().await["retired"], serde_json::json!([]));
    let h = Harness::new().await;
    let ledger = freedom_shared::service::Ledger::new(
        Arc::clone(&h.stores.ledger) as _,
        Arc::clone(&h.stores.ledger) as _,
        freedom_shared::record::Guard::default(),
    );
    let mut seqs = Vec::new();
    for (version, minute) in [("v1", "11:30"), ("v2", "11:45")] {
        let old = serde_json::json!({
            "id": format!("scanner-control-cash-{version}-x"), "type": "snapshot", "visibility": "public",
            "mode": "paper", "strategyId": format!("scanner-control-cash-{version}"), "strategyName": "Scanner control: cash only (paper)",
            "asOf": format!("2026-05-04T{minute}:00Z"), "source": {"name": "test", "url": "https://dexscreener.com/solana"},
            "currency": "USD", "equity": 10000, "flowSincePrevious": 0, "cash": 10000, "positions": []
        });
        seqs.push(
            ledger
                .append(old.to_string().as_bytes())
                .await
                .unwrap()
                .entry
                .seq,
        );
    }
    let report = h.run().await;
    let retired = report["retired"].as_array().unwrap();
    assert_eq!(retired.len(), 2, "{retired:?}");
    for (listed, (version, seq)) in retired.iter().zip(["v1", "v2"].iter().zip(&seqs)) {
        assert_eq!(
            listed["experimentId"],
            format!("scanner-control-cash-{version}")
        );
        assert_eq!(listed["lastSnapshotSeq"], *seq);
    }
    // No retired book is kept or advanced: every snapshot this run wrote
    // is a v3 one.
    assert!(
        report["books"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["experimentId"].as_str().unwrap().ends_with("-v3"))
    );
    let snapshots = h.ledger_snapshots().await;
    assert_eq!(snapshots.len(), 2 + EXPERIMENTS.len());
    assert!(
        snapshots[..EXPERIMENTS.len()]
            .iter()
            .all(|s| s["strategyId"].as_str().unwrap().ends_with("-v3"))
    );
}

/// Round 4: evidence was bounded by time only (0.85–1.13 MB a run at 200
/// tokens, 0.6–0.8 GB over the seven days it is kept). Evidence is now kept
/// gzip-compressed and a run at 200 tokens keeps its report and the bodies
/// that fit its budget, the rest as their hash (`"kept": false` in the
/// provenance, 404 at the evidence view, an event saying so); and a
/// simulated fortnight of the 15-minute schedule, each run offered bodies
/// of the sizes this one received, never keeps more than the documented
/// total at once.
#[tokio::test]
async fn evidence_is_bounded_by_bytes_a_run_and_in_all() {
    use freedom_shared::scan::{
        EVIDENCE_BYTES_PER_RUN, EVIDENCE_BYTES_TOTAL, bodies_to_keep, evidence_room, pack_evidence,
    };
    let harness = Harness::with_tokens(
        freedom_testkit::provider_standin::synthetic_tokens(200),
        |_| {},
    )
    .await;
    let report = harness.run().await;
    let report_text = report.to_string();
    let report_stored = pack_evidence(report_text.as_bytes()).1.len() as u64;
    let provenance = report["provenance"].as_array().unwrap();
    let offered: u64 = provenance
        .iter()
        .map(|e| e["bytes"].as_u64().unwrap())
        .sum();
    let kept_now = harness.stores.scan.evidence_bytes().await.unwrap();
    assert!(
        kept_now <= EVIDENCE_BYTES_PER_RUN,
        "one run kept {kept_now} bytes as stored"
    );
    let not_kept: Vec<&Value> = provenance.iter().filter(|e| e["kept"] == false).collect();
    for entry in &not_kept {
        let hash = entry["bodySha256"].as_str().unwrap();
        assert_eq!(
            harness.runner().evidence(hash).await.unwrap(),
            None,
            "{hash}"
        );
    }
    for entry in provenance.iter().filter(|e| e["kept"] == true).take(5) {
        let hash = entry["bodySha256"].as_str().unwrap();
        let body = harness.runner().evidence(hash).await.unwrap().unwrap();
        assert_eq!(
            body.len() as u64,
            entry["bytes"].as_u64().unwrap(),
            "{hash}"
        );
    }
    let events = report["events"].as_array().unwrap();
    assert_eq!(
        events.iter().any(|e| e["kind"] == "evidence"),
        !not_kept.is_empty(),
        "the report says what was left out, when anything was"
    );

    // Two weeks at the schedule, each run offered bodies of these sizes
    // (uncompressed: more than they take stored) and this report, each kept
    // for seven days: never more than the total at once.
    let runs_kept = 7 * 24 * 4;
    let sizes: Vec<(String, u64)> = provenance
        .iter()
        .enumerate()
        .map(|(i, e)| (format!("{i}"), e["bytes"].as_u64().unwrap() + 32))
        .collect();
    let mut window: std::collections::VecDeque<u64> = std::collections::VecDeque::new();
    let mut most = 0u64;
    for _ in 0..2 * runs_kept {
        if window.len() == runs_kept {
            window.pop_front();
        }
        let room = evidence_room(window.iter().sum());
        let kept = bodies_to_keep(
            room,
            report_stored,
            sizes.iter().map(|(h, b)| (h.as_str(), *b)),
        );
        let bodies: u64 = sizes
            .iter()
            .filter(|(h, _)| kept.contains(h.as_str()))
            .map(|(_, b)| b)
            .sum();
        let report = if report_stored <= room {
            report_stored
        } else {
            0
        };
        window.push_back(report + bodies);
        most = most.max(window.iter().sum());
    }
    assert!(
        most <= EVIDENCE_BYTES_TOTAL,
        "at most {most} bytes kept at once, the total is {EVIDENCE_BYTES_TOTAL}"
    );
    println!(
        "200 tokens: report {} bytes ({report_stored} stored), bodies {offered} bytes offered a run, {kept_now} bytes kept by one run; at most {most} bytes kept over seven days",
        report_text.len()
    );
}
