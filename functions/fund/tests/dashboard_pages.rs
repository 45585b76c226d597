//! A dashboard of 3 000 strategies answers in pages of at most 4 MiB, live
//! strategies first, each strategy exactly once across the pages that
//! `next` / `after` walk; `strategyId` (repeatable) selects strategies and
//! their decisions; an unknown cursor is 404.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::config::WriteToken;
use freedom_shared::ports::conformance::{candidate, decision};
use freedom_shared::ports::{Candidate, LedgerAppend, LedgerStore};
use freedom_shared::service::MAX_ANSWER_BYTES;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use tower::ServiceExt;

const STRATEGIES: usize = 3_000;

async fn get(router: &Router, query: &str) -> (StatusCode, Vec<u8>) {
    let response = router
        .clone()
        .oneshot(
            Request::get(format!("/api/freedom-fund?{query}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, body.to_vec())
}

/// A snapshot of strategy `i` on 2026-05-0`day` holding 12 positions (so
/// that 3 000 strategies pass 4 MiB with two snapshots each).
fn snapshot(i: usize, mode: &str, day: u32) -> Candidate {
    let positions: Vec<Value> = (0..12)
        .map(|p| json!({"symbol": format!("SYM{p}"), "quantity": 10, "cost": 9.5, "mark": 10 + p}))
        .collect();
    let equity = 1000 + 10 * (0..12).map(|p| 10 + p).sum::<usize>();
    let record = json!({
        "id": format!("s{i}-{day}"), "type": "snapshot", "visibility": "public", "mode": mode,
        "strategyId": format!("st{i:04}"), "strategyName": format!("Strategy number {i}"),
        "asOf": format!("2026-05-0{day}T20:00:00Z"),
        "source": {"name": "test", "url": "https://example.com/t"},
        "currency": "USD", "equity": equity, "flowSincePrevious": 0, "cash": 1000,
        "positions": positions
    });
    candidate(record)
}

/// 3 000 strategies, every tenth live (the rest paper), each with two
/// snapshots, and a decision for two of them.
async fn large() -> (tempfile::TempDir, Router) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteLedgerStore::open(dir.path()).unwrap());
    for day in [4, 5] {
        for i in 0..STRATEGIES {
            let mode = if i % 10 == 0 { "live" } else { "paper" };
            store.append(snapshot(i, mode, day)).await.unwrap();
        }
    }
    store.append(decision("d-a", "st0001", 119)).await.unwrap();
    store.append(decision("d-b", "st0010", 119)).await.unwrap();
    let state = fund::AppState::new(
        store as Arc<dyn LedgerStore>,
        WriteToken::new("pages-token-0123456789"),
    );
    (dir, fund::app(state))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_thousand_strategies_answer_in_pages_under_four_mib() {
    let (_dir, router) = large().await;
    let (status, whole) = get(&router, "period=21").await;
    assert_eq!(status, StatusCode::OK);
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut pages_ids: Vec<BTreeSet<String>> = Vec::new();
    let mut query = "period=21".to_owned();
    let mut first = Some(whole);
    loop {
        let body = match first.take() {
            Some(body) => body,
            None => {
                let (status, body) = get(&router, &query).await;
                assert_eq!(status, StatusCode::OK, "{query}");
                body
            }
        };
        assert!(
            body.len() <= MAX_ANSWER_BYTES,
            "page {}: {} bytes",
            pages_ids.len() + 1,
            body.len()
        );
        let page: Value = serde_json::from_slice(&body).unwrap();
        let strategies = page["strategies"].as_array().unwrap();
        let compared = page["comparison"]["strategies"].as_array().unwrap().len();
        assert!(
            compared <= strategies.len(),
            "the comparison covers this page's series"
        );
        let mut ids = BTreeSet::new();
        for strategy in strategies {
            let id = strategy["strategyId"].as_str().unwrap().to_owned();
            seen.push((id.clone(), strategy["mode"].as_str().unwrap().to_owned()));
            ids.insert(id);
        }
        pages_ids.push(ids);
        match page["next"].as_str() {
            Some(next) => {
                assert!(
                    pages_ids.last().unwrap().contains(next),
                    "next is a strategy of this page"
                );
                query = format!("period=21&after={next}");
            }
            None => break,
        }
    }
    assert!(
        pages_ids.len() >= 2,
        "3 000 strategies do not fit one answer"
    );
    let unique: BTreeSet<_> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no series repeated across pages");
    assert_eq!(seen.len(), STRATEGIES, "no series lost");
    // Live strategies first, then paper-only, each group by id: page by
    // page, every key below the next page's.
    let key = |id: &String| (id[2..].parse::<usize>().unwrap() % 10 != 0, id.clone());
    // Round 4: and in reading order, across the pages and within each,
    // every live strategy before any paper one.
    let read: Vec<_> = seen.iter().map(|(id, _)| key(id)).collect();
    assert!(
        read.windows(2).all(|pair| pair[0] <= pair[1]),
        "live first in reading order"
    );
    for pair in pages_ids.windows(2) {
        let last = pair[0].iter().map(key).max().unwrap();
        let first = pair[1].iter().map(key).min().unwrap();
        assert!(last < first, "pages in order: {last:?} before {first:?}");
    }

    // Named strategies (repeatable): only those, with their decisions.
    let (status, body) = get(&router, "period=21&strategyId=st0001&strategyId=st2999").await;
    assert_eq!(status, StatusCode::OK);
    let named: Value = serde_json::from_slice(&body).unwrap();
    let ids: Vec<&str> = named["strategies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["strategyId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["st0001", "st2999"]);
    let decisions = named["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0]["record"]["id"], "d-a");
    assert_eq!(named["next"], Value::Null);

    let (status, body) = get(&router, "period=21&after=nosuchstrategy").await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "{}",
        String::from_utf8_lossy(&body)
    );
    let (status, _) = get(&router, "period=21&after=a&after=b").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "after is not repeatable");
    for bad in [
        "strategyId=not%20an%20id",
        "strategyId=",
        "after=%00",
        "after=",
    ] {
        let (status, body) = get(&router, &format!("period=21&{bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        let error: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(error["error"]["code"], "invalid_query", "{bad}");
    }
}
