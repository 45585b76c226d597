//! The track record through the router: `period=all`, the series export's
//! answers to good and bad queries, and the feed's. (The figures against
//! quantstats, the CSV against Python's csv module and the feed against
//! feedparser are checked from outside by scripts/check-track-record.py.)

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::config::WriteToken;
use freedom_testkit::sample_ledger;
use http_body_util::BodyExt;
use serde_json::Value;
use std::sync::Arc;
use tower::ServiceExt;

const TOKEN: &str = "track-record-test-token-0123456789";

async fn sample() -> (axum::Router, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    let router = fund::app(fund::AppState::new(Arc::new(store), WriteToken::new(TOKEN)));
    sample_ledger::post_all(&router, TOKEN).await;
    (router, dir)
}

async fn get(router: &axum::Router, uri: &str) -> (StatusCode, HeaderMap, String) {
    let response = router
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (
        parts.status,
        parts.headers,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

#[tokio::test]
async fn since_inception_starts_each_series_at_its_first_snapshot() {
    let (router, _dir) = sample().await;
    let (status, _, body) = get(&router, "/api/freedom-fund?period=all").await;
    assert_eq!(status, StatusCode::OK);
    let all: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(all["period"], "all");
    let strategies = all["strategies"].as_array().unwrap();
    let mut first_instants = Vec::new();
    for strategy in strategies {
        let (id, mode) = (
            strategy["strategyId"].as_str().unwrap(),
            strategy["mode"].as_str().unwrap(),
        );
        let (_, _, csv) = get(
            &router,
            &format!("/api/freedom-fund?view=series&strategyId={id}&mode={mode}&format=csv"),
        )
        .await;
        let first = csv.lines().nth(1).unwrap();
        let first_as_of = first.split(',').next().unwrap();
        assert_eq!(strategy["baseline"]["asOf"], first_as_of, "{id}");
        first_instants.push(
            chrono::DateTime::parse_from_rfc3339(first_as_of)
                .unwrap()
                .to_utc(),
        );
        for metric in [
            "calmar",
            "bestDay",
            "worstDay",
            "currentDrawdown",
            "longestDrawdownDays",
        ] {
            assert!(strategy["metrics"].get(metric).is_some(), "{id}: {metric}");
        }
        for part in ["monthly", "yearly", "underwater", "flows"] {
            assert!(strategy[part].is_array(), "{id}: {part}");
        }
        assert_eq!(
            strategy["underwater"].as_array().unwrap().len(),
            strategy["series"].as_array().unwrap().len()
        );
    }
    let start = chrono::DateTime::parse_from_rfc3339(all["window"]["start"].as_str().unwrap())
        .unwrap()
        .to_utc();
    assert_eq!(Some(start), first_instants.into_iter().min());
    let inception = all["inception"]["asOf"].as_str().unwrap();
    let first_record = sample_ledger::records()[0]["asOf"].clone();
    assert_eq!(inception, first_record);
    assert!(all["inception"]["ageDays"].as_i64().unwrap() >= 0);

    let (status, _, body) = get(&router, "/api/freedom-fund?period=everything").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("or all"), "{body}");
}

#[tokio::test]
async fn the_series_export_answers_every_query_clearly() {
    let (router, _dir) = sample().await;
    let base = "/api/freedom-fund?view=series";
    for (query, parameter) in [
        ("&mode=live", "strategyId"),
        ("&strategyId=core", "mode"),
        ("&strategyId=core&mode=live&format=xml", "format"),
        ("&strategyId=core&mode=demo", "mode"),
        ("&strategyId=core&mode=live&after=-1", "after"),
        ("&strategyId=core&mode=live&after=1e3", "after"),
        ("&strategyId=a%20b&mode=live", "strategyId"),
        (
            "&strategyId=core&mode=live&period=63",
            "accepts: strategyId",
        ),
    ] {
        let (status, _, body) = get(&router, &format!("{base}{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["error"]["code"], "invalid_query", "{query}");
        assert!(body.contains(parameter), "{query}: {body}");
    }
    // A series nobody wrote: the header alone, or no rows.
    let (status, headers, csv) = get(
        &router,
        &format!("{base}&strategyId=nobody&mode=live&format=csv"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        csv,
        "asOf,equity,flowSincePrevious,cash,index,drawdown,seq,leafHash\r\n"
    );
    assert!(headers.get(header::LINK).is_none());
    let (_, _, json) = get(&router, &format!("{base}&strategyId=nobody&mode=paper")).await;
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["rows"], Value::Array(Vec::new()));
    assert_eq!(json["next"], Value::Null);

    // A written series: every snapshot in order; `after` continues from a seq.
    let (_, headers, body) = get(&router, &format!("{base}&strategyId=core&mode=live")).await;
    let page: Value = serde_json::from_str(&body).unwrap();
    let rows = page["rows"].as_array().unwrap();
    assert!(rows.len() >= 3);
    assert_eq!(rows[0]["index"], 1.0);
    assert!(
        rows.windows(2)
            .all(|w| w[0]["seq"].as_u64() < w[1]["seq"].as_u64())
    );
    let second = rows[1]["seq"].as_u64().unwrap();
    let (_, _, rest) = get(
        &router,
        &format!("{base}&strategyId=core&mode=live&after={second}"),
    )
    .await;
    let rest: Value = serde_json::from_str(&rest).unwrap();
    assert_eq!(rest["rows"].as_array().unwrap()[..], rows[2..]);
    // The head's ETag, and 304 for it.
    let etag = headers.get(header::ETAG).unwrap().clone();
    let response = router
        .clone()
        .oneshot(
            Request::get(format!("{base}&strategyId=core&mode=live"))
                .header(header::IF_NONE_MATCH, etag)
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
}

#[tokio::test]
async fn the_feed_lists_the_decisions_newest_first_with_leaf_ids() {
    let (router, _dir) = sample().await;
    let (status, headers, feed) = get(&router, "/feed.atom").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers.get(header::CONTENT_TYPE).unwrap(),
        "application/atom+xml; charset=utf-8"
    );
    assert!(headers.get(header::ETAG).is_some());
    let (_, _, ledger) = get(&router, "/api/freedom-fund?view=ledger&type=decision").await;
    let ledger: Value = serde_json::from_str(&ledger).unwrap();
    let ids: Vec<String> = ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "<id>urn:freedom-fund:leaf:{}</id>",
                e["leafHash"].as_str().unwrap()
            )
        })
        .collect();
    assert!(!ids.is_empty());
    let positions: Vec<usize> = ids.iter().map(|id| feed.find(id).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "newest first");
    let (status, _, _) = get(&router, "/feed.atom?limit=5").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let response = router
        .clone()
        .oneshot(Request::post("/feed.atom").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
}
