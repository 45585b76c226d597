//! Answers on the wire: each encoding negotiated by `Accept-Encoding`,
//! bodies that decode to the identity bytes, a tag per representation that
//! every `If-None-Match` form matches, `Vary` on each, tiles and proofs
//! left alone, and a conditional read answered from the head alone (one
//! round trip, counted at the KV REST bridge).

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use freedom_shared::adapters::KvClient;
use freedom_shared::adapters::KvLedgerStore;
use freedom_shared::config::WriteToken;
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::UpstashBridge;
use std::io::Read as _;
use std::sync::Arc;
use tower::ServiceExt;

const TOKEN: &str = "wire-test-token-0123456789";

struct Answer {
    status: StatusCode,
    encoding: Option<String>,
    etag: Option<String>,
    vary: Option<String>,
    body: Vec<u8>,
}

async fn get(
    router: &Router,
    path: &str,
    accept: Option<&str>,
    if_none_match: Option<&str>,
) -> Answer {
    let mut request = Request::get(path);
    if let Some(accept) = accept {
        request = request.header(header::ACCEPT_ENCODING, accept);
    }
    if let Some(tag) = if_none_match {
        request = request.header(header::IF_NONE_MATCH, tag);
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let header = |name: header::HeaderName| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    Answer {
        status: response.status(),
        encoding: header(header::CONTENT_ENCODING),
        etag: header(header::ETAG),
        vary: header(header::VARY),
        body: axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap()
            .to_vec(),
    }
}

fn decode(answer: &Answer) -> Vec<u8> {
    let mut out = Vec::new();
    match answer.encoding.as_deref() {
        Some("br") => {
            brotli::Decompressor::new(&answer.body[..], 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        Some("gzip") => {
            flate2::read::GzDecoder::new(&answer.body[..])
                .read_to_end(&mut out)
                .unwrap();
        }
        None => out = answer.body.clone(),
        Some(other) => panic!("unexpected coding {other}"),
    }
    out
}

async fn sample(store: Arc<dyn freedom_shared::ports::LedgerStore>) -> Router {
    let key =
        freedom_shared::tlog::note::SigningKey::from_seed("wire.example/log", [3; 32]).unwrap();
    let log =
        freedom_shared::service::Log::new(Arc::clone(&store) as _, "wire.example/log", Some(key))
            .unwrap();
    let state = fund::AppState::new(store, WriteToken::new(TOKEN)).with_log(log);
    let router = fund::app(state);
    freedom_testkit::sample_ledger::post_all(&router, TOKEN).await;
    router
}

#[tokio::test]
async fn every_compressible_answer_is_negotiated_and_decodes_to_the_identity_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(freedom_shared::adapters::SqliteLedgerStore::open(dir.path()).unwrap());
    let router = sample(store).await;
    for path in [
        "/api/freedom-fund?period=63",
        "/api/freedom-fund?period=all",
        "/",
        "/api/freedom-fund?view=contract",
        "/api/freedom-fund?view=openapi",
        "/api/freedom-fund?view=ledger&limit=100",
        "/feed.atom",
        "/api/freedom-fund?view=series&strategyId=core&mode=live&format=csv",
    ] {
        let identity = get(&router, path, None, None).await;
        assert_eq!(identity.status, StatusCode::OK, "{path}");
        assert_eq!(
            identity.encoding, None,
            "{path}: no Accept-Encoding, no coding"
        );
        assert!(
            identity.body.len() >= 1024,
            "{path} is large enough to compress"
        );
        for (accept, coding) in [
            ("gzip, deflate, br", Some("br")),
            ("br;q=0.4, gzip;q=0.9", Some("gzip")),
            ("gzip", Some("gzip")),
            ("zstd, compress", None),
            ("br;q=0, gzip;q=0", None),
            ("*", Some("br")),
        ] {
            let answer = get(&router, path, Some(accept), None).await;
            assert_eq!(answer.status, StatusCode::OK, "{path} {accept}");
            assert_eq!(answer.encoding.as_deref(), coding, "{path} {accept}");
            assert_eq!(
                answer.vary.as_deref(),
                Some("accept-encoding"),
                "{path} {accept}"
            );
            assert_eq!(
                decode(&answer),
                identity.body,
                "{path} {accept}: the same bytes"
            );
        }
        let refused = get(&router, path, Some("identity;q=0"), None).await;
        assert_eq!(refused.status, StatusCode::NOT_ACCEPTABLE, "{path}");
        assert_eq!(
            refused.vary.as_deref(),
            Some("accept-encoding"),
            "{path}: a 406 varies by Accept-Encoding too (a cache must not give it to others)"
        );
        let br = get(&router, path, Some("br"), None).await;
        assert!(br.body.len() < identity.body.len(), "{path}: br is smaller");
    }
}

#[tokio::test]
async fn tags_differ_by_representation_and_each_one_matches() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(freedom_shared::adapters::SqliteLedgerStore::open(dir.path()).unwrap());
    let router = sample(store).await;
    for path in ["/api/freedom-fund?period=63", "/"] {
        let identity = get(&router, path, None, None).await.etag.unwrap();
        let br = get(&router, path, Some("br"), None).await.etag.unwrap();
        let gz = get(&router, path, Some("gzip"), None).await.etag.unwrap();
        assert_eq!(br, format!("{}-br\"", identity.trim_end_matches('"')));
        assert_eq!(gz, format!("{}-gz\"", identity.trim_end_matches('"')));
        for tag in [
            &identity,
            &br,
            &gz,
            &format!("W/{br}"),
            &format!("\"other\", {gz}"),
        ] {
            for accept in [None, Some("br"), Some("gzip")] {
                let answer = get(&router, path, accept, Some(tag)).await;
                assert_eq!(
                    answer.status,
                    StatusCode::NOT_MODIFIED,
                    "{path} {tag} {accept:?}"
                );
                assert!(answer.body.is_empty());
                assert_eq!(answer.vary.as_deref(), Some("accept-encoding"));
            }
        }
        let with_br = get(&router, path, Some("br"), Some(&br)).await;
        assert_eq!(
            with_br.etag,
            Some(br.clone()),
            "a 304 names the tag of what a 200 would send"
        );
    }
}

#[tokio::test]
async fn tiles_checkpoints_and_tlog_proofs_are_never_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(freedom_shared::adapters::SqliteLedgerStore::open(dir.path()).unwrap());
    let router = sample(store).await;
    for path in [
        "/log/tile/0/000.p/24",
        "/log/tile/entries/000.p/24",
        "/log/checkpoint",
        "/api/freedom-fund?view=proof&seq=3&format=tlog-proof",
    ] {
        let answer = get(&router, path, Some("br, gzip"), None).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.encoding, None, "{path}");
    }
}

/// The sample on the KV store through a REST bridge that counts round
/// trips (the Redis server lives as long as the first value).
async fn sample_on_kv() -> (RedisServer, UpstashBridge, Router) {
    let server = RedisServer::start().unwrap();
    let bridge = UpstashBridge::start(&server.url(), "kv-token")
        .await
        .unwrap();
    let client = KvClient::new(&bridge.kv_config("ff:"));
    let router = sample(Arc::new(KvLedgerStore::new(client, "ff:"))).await;
    (server, bridge, router)
}

#[tokio::test]
async fn a_matching_conditional_read_costs_one_round_trip_and_no_computation() {
    let (_server, bridge, router) = sample_on_kv().await;
    for path in ["/api/freedom-fund?period=63", "/"] {
        let first = get(&router, path, Some("gzip"), None).await;
        let tag = first.etag.unwrap();
        let before = bridge.requests();
        let answer = get(&router, path, Some("gzip"), Some(&tag)).await;
        assert_eq!(answer.status, StatusCode::NOT_MODIFIED);
        assert_eq!(bridge.requests() - before, 1, "{path}: the head alone");
    }
    // A period never asked for: a 304 without computing it (one round trip;
    // computing it would read the latest snapshots and the window).
    let tag = get(&router, "/api/freedom-fund?period=21", None, None)
        .await
        .etag
        .unwrap();
    let before = bridge.requests();
    let answer = get(&router, "/api/freedom-fund?period=252", None, Some(&tag)).await;
    assert_eq!(answer.status, StatusCode::NOT_MODIFIED);
    assert_eq!(bridge.requests() - before, 1);
}

/// A dashboard read through its HTTP route, counted at the KV REST
/// bridge: cold, the head, then the latest snapshots, then the window (3);
/// warm, the head alone (1); a matching conditional read, the head alone
/// (1). docs/design.md and docs/performance.md state the same figures.
#[tokio::test]
async fn a_dashboard_read_costs_three_round_trips_cold_and_one_warm_or_not_modified() {
    let (_server, bridge, router) = sample_on_kv().await;
    let path = "/api/freedom-fund?period=63";
    let mut counted = Vec::new();
    for if_none_match in [None, None, Some(())] {
        let tag = match if_none_match {
            Some(()) => Some(get(&router, path, None, None).await.etag.unwrap()),
            None => None,
        };
        let before = bridge.requests();
        let answer = get(&router, path, Some("br"), tag.as_deref()).await;
        counted.push((answer.status, bridge.requests() - before));
    }
    assert_eq!(
        counted,
        [
            (StatusCode::OK, 3),
            (StatusCode::OK, 1),
            (StatusCode::NOT_MODIFIED, 1)
        ],
        "cold, warm, 304"
    );
}

#[tokio::test]
async fn the_contract_and_openapi_document_are_made_once_and_served_from_memory() {
    let (_server, bridge, router) = sample_on_kv().await;
    for (path, reads) in [
        // The contract names the experiments' registrations (ledger
        // records): kept per head, so a warm read costs the head alone.
        ("/api/freedom-fund?view=contract", 1),
        // The OpenAPI document never changes while the process runs.
        ("/api/freedom-fund?view=openapi", 0),
    ] {
        let first = get(&router, path, Some("br"), None).await;
        assert_eq!(first.encoding.as_deref(), Some("br"), "{path}");
        for accept in ["br", "gzip", "identity"] {
            let before = bridge.requests();
            let again = get(&router, path, Some(accept), None).await;
            assert_eq!(again.status, StatusCode::OK, "{path}");
            assert_eq!(bridge.requests() - before, reads, "{path} {accept}");
            if accept == "br" {
                assert_eq!(again.body, first.body, "{path}: the same compressed bytes");
            }
        }
    }
}

/// Round 4: a filtered or paged dashboard (made for one request) was
/// compressed at quality 9 per request, about 90 ms of CPU for 3.8 MB that
/// anyone could ask for again and again. It is now compressed at the
/// one-request effort (Brotli 3, gzip 2: a bounded cost per byte), while
/// the whole dashboard, made once per head, keeps the best ratio.
#[tokio::test]
async fn an_answer_made_for_one_request_is_compressed_at_a_bounded_effort() {
    use freedom_shared::web::{Effort, brotli_at, gzip_at};
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(freedom_shared::adapters::SqliteLedgerStore::open(dir.path()).unwrap());
    let router = sample(store).await;
    let filtered = "/api/freedom-fund?period=63&strategyId=core";
    let identity = get(&router, filtered, None, None).await;
    assert_eq!(identity.status, StatusCode::OK);
    assert!(identity.body.len() > 1024, "large enough to compress");
    let br = get(&router, filtered, Some("br"), None).await;
    assert_eq!(br.body, brotli_at(&identity.body, Effort::Once).to_vec());
    let gz = get(&router, filtered, Some("gzip"), None).await;
    assert_eq!(gz.body, gzip_at(&identity.body, Effort::Once).to_vec());
    let whole = "/api/freedom-fund?period=63";
    let identity = get(&router, whole, None, None).await;
    let br = get(&router, whole, Some("br"), None).await;
    assert_eq!(br.body, brotli_at(&identity.body, Effort::Kept).to_vec());
}
