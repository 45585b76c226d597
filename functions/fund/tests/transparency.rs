//! The ledger as a C2SP transparency log, checked from outside: Cloudflare's
//! `signed_note` and `tlog_tiles` crates (cloudflare/azul, written against
//! the same specifications by someone else) verify the service's
//! checkpoints, authenticate its tiles against the signed root, and check
//! its inclusion and consistency proofs; both stores publish the same log
//! for the same records; and the HTTP side answers as docs/design.md says.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use freedom_shared::adapters::KvClient;
use freedom_shared::adapters::KvLedgerStore;
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::config::WriteToken;
use freedom_shared::ports::conformance::decision;
use freedom_shared::ports::{Candidate, HeadReads, LedgerAppend, LedgerStore};
use freedom_shared::ports::{InProcess, SignerMemory};
use freedom_shared::service::Log;
use freedom_shared::tlog::note::SigningKey;
use freedom_shared::tlog::tiles::split_bundle;
use freedom_testkit::redis_server::RedisServer;
use freedom_testkit::upstash_bridge::UpstashBridge;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use tlog_tiles::{Hash, Tile, TileHashReader, TileReader};
use tower::ServiceExt;

const TOKEN: &str = "transparency-token-0123456789";
const ORIGIN: &str = "fund.example.com/log";

fn signing_key() -> SigningKey {
    SigningKey::from_seed(ORIGIN, [42; 32]).unwrap()
}

fn app(store: Arc<dyn LedgerStore>, key: Option<SigningKey>) -> Router {
    let log = Log::new(Arc::clone(&store) as _, ORIGIN, key).unwrap();
    fund::app(fund::AppState::new(store, WriteToken::new(TOKEN)).with_log(log))
}

struct Answer {
    status: StatusCode,
    headers: header::HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|_| panic!("not JSON: {}", self.text()))
    }
}

async fn get(router: &Router, uri: &str) -> Answer {
    let request = Request::get(uri).body(Body::empty()).unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body: body.collect().await.unwrap().to_bytes().to_vec(),
    }
}

fn records(count: usize) -> Vec<Candidate> {
    (0..count)
        .map(|i| decision(&format!("d{i}"), "s", (i % 300) as i64))
        .collect()
}

async fn sqlite_with(candidates: Vec<Candidate>) -> (tempfile::TempDir, Arc<SqliteLedgerStore>) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    store.append_batch(candidates).await.unwrap();
    (dir, Arc::new(store))
}

/// The tiles of a tree, fetched over HTTP, served to `tlog_tiles` (whose
/// paths carry the height: `tile/8/<L>/<N>`; the C2SP paths do not).
struct FetchedTiles(HashMap<Tile, Vec<u8>>);

impl FetchedTiles {
    async fn fetch(router: &Router, size: u64) -> FetchedTiles {
        let mut tiles = HashMap::new();
        for tile in Tile::new_tiles(8, 0, size) {
            let path = tile.path().replacen("tile/8/", "/log/tile/", 1);
            let answer = get(router, &path).await;
            assert_eq!(answer.status, StatusCode::OK, "{path}");
            assert_eq!(
                answer.headers[header::CONTENT_TYPE],
                "application/octet-stream"
            );
            let expected_cache = if path.contains(".p/") {
                "no-cache"
            } else {
                "public, max-age=31536000, immutable"
            };
            assert_eq!(
                answer.headers[header::CACHE_CONTROL],
                expected_cache,
                "{path}"
            );
            tiles.insert(tile, answer.body);
        }
        FetchedTiles(tiles)
    }
}

impl TileReader for FetchedTiles {
    fn height(&self) -> u8 {
        8
    }

    fn read_tiles(&self, tiles: &[Tile]) -> Result<Vec<Vec<u8>>, tlog_tiles::Error> {
        tiles
            .iter()
            .map(|tile| {
                self.0
                    .get(tile)
                    .cloned()
                    .ok_or(tlog_tiles::Error::InvalidTile)
            })
            .collect()
    }

    fn save_tiles(&self, _tiles: &[Tile], _data: &[Vec<u8>]) {}
}

fn hash_of(value: &Value) -> Hash {
    Hash::parse_hash(&base64_of_hex(value.as_str().unwrap())).unwrap()
}

fn base64_of_hex(hex_text: &str) -> String {
    use base64::Engine as _;
    let bytes: Vec<u8> = (0..hex_text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex_text[i..i + 2], 16).unwrap())
        .collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Opens a checkpoint with `signed_note` and reads it with `tlog_tiles`.
fn open_checkpoint(note: &str, verifier_key: &str) -> tlog_tiles::Checkpoint {
    let verifier = signed_note::StandardVerifier::new(verifier_key).unwrap();
    let parsed = signed_note::Note::from_bytes(note.as_bytes()).unwrap();
    let (verified, _) = parsed
        .verify(&signed_note::VerifierList::new(vec![Box::new(verifier)]))
        .unwrap();
    assert_eq!(verified.len(), 1);
    tlog_tiles::Checkpoint::from_bytes(parsed.text()).unwrap()
}

#[tokio::test]
async fn the_standard_crates_verify_the_checkpoint_tiles_and_proofs() {
    let candidates = records(600);
    let (_dir, store) = sqlite_with(candidates.clone()).await;
    let router = app(store, Some(signing_key()));
    let contract = get(&router, "/api/freedom-fund?view=contract").await.json();
    let verifier_key = contract["log"]["verifierKey"].as_str().unwrap().to_owned();
    assert_eq!(contract["log"]["origin"], ORIGIN);
    assert_eq!(contract["log"]["prefix"], "/log");
    // The custody's rules and their numbers, as the contract states them.
    assert_eq!(contract["log"]["witnessTimeoutSeconds"], 5);
    assert_eq!(contract["log"]["clockToleranceSeconds"], 60);
    assert_eq!(contract["log"]["recordingWindowSeconds"], 3600);
    for rule in [
        "answeredSet",
        "oneWitnessCannotStopTheLog",
        "rounds",
        "witnessesRemember",
    ] {
        assert!(contract["log"][rule].is_string(), "{rule}");
    }

    let answer = get(&router, "/log/checkpoint").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.headers[header::CONTENT_TYPE],
        "text/plain; charset=utf-8"
    );
    assert_eq!(answer.headers[header::CACHE_CONTROL], "no-cache");
    let checkpoint = open_checkpoint(&answer.text(), &verifier_key);
    assert_eq!((checkpoint.origin(), checkpoint.size()), (ORIGIN, 600));
    let head = get(&router, "/api/freedom-fund?view=ledger&limit=1")
        .await
        .json()["head"]
        .clone();
    assert_eq!(*checkpoint.hash(), hash_of(&head["rootHash"]));

    // Every tile authenticates against the signed root, and the tree hash
    // re-derives from them.
    let tiles = FetchedTiles::fetch(&router, 600).await;
    let reader = TileHashReader::new(600, *checkpoint.hash(), &tiles);
    assert_eq!(
        tlog_tiles::tree_hash(600, &reader).unwrap(),
        *checkpoint.hash()
    );

    // Entry bundles hold the leaves' bytes.
    let mut leaves = Vec::new();
    for path in [
        "/log/tile/entries/000",
        "/log/tile/entries/001",
        "/log/tile/entries/002.p/88",
    ] {
        let answer = get(&router, path).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        leaves.extend(
            split_bundle(&answer.body)
                .unwrap()
                .into_iter()
                .map(<[u8]>::to_vec),
        );
    }
    assert_eq!(leaves.len(), 600);
    for (leaf, candidate) in leaves.iter().zip(&candidates) {
        assert_eq!(leaf.as_slice(), candidate.canonical.as_bytes());
    }

    // Inclusion: the service's proof equals tlog_tiles' own from the tiles,
    // and tlog_tiles accepts it.
    for (seq, size) in [
        (1, 600),
        (256, 600),
        (257, 600),
        (600, 600),
        (3, 3),
        (300, 513),
    ] {
        let proof = get(
            &router,
            &format!("/api/freedom-fund?view=proof&seq={seq}&size={size}"),
        )
        .await;
        assert_eq!(proof.status, StatusCode::OK, "{}", proof.text());
        let proof = proof.json();
        let ours: Vec<Hash> = proof["inclusion"]
            .as_array()
            .unwrap()
            .iter()
            .map(hash_of)
            .collect();
        let signed = open_checkpoint(proof["checkpoint"].as_str().unwrap(), &verifier_key);
        assert_eq!(signed.size(), size);
        let leaf = tlog_tiles::record_hash(&leaves[seq as usize - 1]);
        assert_eq!(hash_of(&proof["leafHash"]), leaf);
        let theirs = tlog_tiles::prove_record(size, seq - 1, &reader).unwrap();
        assert_eq!(ours, theirs, "seq {seq} in {size}");
        tlog_tiles::check_record(&ours, size, *signed.hash(), seq - 1, leaf).unwrap();
    }

    // Consistency: equal to tlog_tiles' proof, and accepted by it.
    for (from, to) in [(1, 600), (255, 256), (256, 600), (599, 600), (7, 300)] {
        let answer = get(
            &router,
            &format!("/api/freedom-fund?view=consistency&from={from}&to={to}"),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
        let answer = answer.json();
        let ours: Vec<Hash> = answer["consistency"]
            .as_array()
            .unwrap()
            .iter()
            .map(hash_of)
            .collect();
        let theirs = tlog_tiles::prove_tree(to, from, &reader).unwrap();
        assert_eq!(ours, theirs, "{from} -> {to}");
        let old = tlog_tiles::tree_hash(from, &reader).unwrap();
        let new = open_checkpoint(answer["checkpoint"].as_str().unwrap(), &verifier_key);
        tlog_tiles::check_tree(&ours, to, *new.hash(), from, old).unwrap();
    }
}

#[tokio::test]
async fn a_tlog_proof_file_carries_the_same_proof_and_checkpoint() {
    let (_dir, store) = sqlite_with(records(20)).await;
    let router = app(store, Some(signing_key()));
    let json = get(&router, "/api/freedom-fund?view=proof&seq=7")
        .await
        .json();
    let file = get(
        &router,
        "/api/freedom-fund?view=proof&seq=7&format=tlog-proof",
    )
    .await;
    assert_eq!(
        file.headers[header::CONTENT_TYPE],
        "text/plain; charset=utf-8"
    );
    let proof = freedom_shared::tlog::proof::TlogProof::parse(&file.text()).unwrap();
    assert_eq!(proof.index, 6);
    assert_eq!(proof.checkpoint, json["checkpoint"].as_str().unwrap());
    let hashes: Vec<String> = proof.path.iter().map(|h| h.to_hex()).collect();
    assert_eq!(json!(hashes), json["inclusion"]);
    assert!(file.text().starts_with("c2sp.org/tlog-proof@v1\nindex 6\n"));
}

#[tokio::test]
async fn both_stores_publish_the_same_log_for_the_same_records() {
    let candidates = records(300);
    let (_dir, sqlite) = sqlite_with(candidates.clone()).await;
    let server = RedisServer::start().unwrap();
    let bridge = UpstashBridge::start(&server.url(), "kv-token")
        .await
        .unwrap();
    let kv = Arc::new(KvLedgerStore::new(
        KvClient::new(&bridge.kv_config("ff:")),
        "ff:",
    ));
    for candidate in candidates {
        kv.append(candidate).await.unwrap();
    }
    let on_sqlite = app(sqlite, Some(signing_key()));
    let on_kv = app(kv, Some(signing_key()));
    let paths = [
        "/log/checkpoint",
        "/log/tile/0/000",
        "/log/tile/0/001.p/44",
        "/log/tile/1/000.p/1",
        "/log/tile/entries/000",
        "/log/tile/entries/001.p/44",
        "/api/freedom-fund?view=proof&seq=299",
        "/api/freedom-fund?view=proof&seq=5&size=17&format=tlog-proof",
        "/api/freedom-fund?view=consistency&from=100",
    ];
    for path in paths {
        let (a, b) = (get(&on_sqlite, path).await, get(&on_kv, path).await);
        assert_eq!(a.status, StatusCode::OK, "{path}: {}", a.text());
        assert_eq!((a.status, &a.body), (b.status, &b.body), "{path}");
    }
}

#[tokio::test]
async fn tiles_and_trees_beyond_the_log_are_404_and_bad_proof_queries_400() {
    let (_dir, store) = sqlite_with(records(300)).await;
    let router = app(store, Some(signing_key()));
    for path in [
        "/log/tile/0/002",
        "/log/tile/0/001",
        "/log/tile/0/001.p/45",
        "/log/tile/1/000",
        "/log/tile/2/000.p/1",
        "/log/tile/entries/001",
        "/log/tile/0/x001/000",
        "/log/tile/0/1",
        "/log/tile/9/000",
        "/log/tile/entries/x999/x999/x999/x999/x999/x999/999",
        "/log/tile/",
    ] {
        let answer = get(&router, path).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(answer.json()["error"]["code"], "not_found", "{path}");
    }
    // A narrower partial tile than the head's is an older tree's: the
    // same first hashes, so it is served (a reader holding an older
    // checkpoint needs it).
    let current = get(&router, "/log/tile/0/001.p/44").await;
    let older = get(&router, "/log/tile/0/001.p/43").await;
    assert_eq!(older.status, StatusCode::OK);
    assert_eq!(older.body, current.body[..43 * 32]);
    let entries = get(&router, "/log/tile/entries/001.p/44").await.body;
    let older_entries = get(&router, "/log/tile/entries/001.p/3").await;
    assert_eq!(older_entries.status, StatusCode::OK);
    assert_eq!(
        split_bundle(&older_entries.body).unwrap(),
        split_bundle(&entries).unwrap()[..3]
    );
    let full = get(&router, "/log/tile/0/000").await.body;
    assert_eq!(
        get(&router, "/log/tile/0/000.p/200").await.body,
        full[..200 * 32]
    );
    for (query, parameter) in [
        ("view=proof", "seq"),
        ("view=proof&seq=0", "seq"),
        ("view=proof&seq=5&size=4", "seq"),
        ("view=proof&seq=1&format=xml", "format"),
        ("view=consistency", "from"),
        ("view=consistency&from=5&to=4", "from"),
        ("view=consistency&from=-1", "from"),
        ("view=consistency&from=1&to=18446744073709551616", "to"),
    ] {
        let answer = get(&router, &format!("/api/freedom-fund?{query}")).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{query}");
        let body = answer.json();
        assert_eq!(body["error"]["code"], "invalid_query", "{query}");
        assert_eq!(
            body["error"]["details"][0]["parameter"], parameter,
            "{query}: {body}"
        );
    }
    // A record or tree the log does not have (yet) is 404, like a tile
    // beyond the tree: the request is well formed, the resource is missing.
    for (query, parameter) in [
        ("view=proof&seq=301", "seq"),
        ("view=proof&seq=1&size=301", "size"),
        ("view=proof&seq=400&size=301", "size"),
        ("view=consistency&from=301", "from"),
        ("view=consistency&from=0&to=301", "to"),
        ("view=consistency&from=1&to=18446744073709551615", "to"),
    ] {
        let answer = get(&router, &format!("/api/freedom-fund?{query}")).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{query}");
        let body = answer.json();
        assert_eq!(body["error"]["code"], "not_found", "{query}");
        assert_eq!(
            body["error"]["details"][0]["parameter"], parameter,
            "{query}: {body}"
        );
        assert!(
            body["error"]["message"].as_str().unwrap().contains("300"),
            "{query}: {body}"
        );
    }
    let unknown = get(&router, "/api/freedom-fund?view=proof&seq=1&limit=3")
        .await
        .json();
    assert_eq!(
        unknown["error"]["details"][0]["allowed"],
        json!(["seq", "size", "format", "at", "view"])
    );
    let post = Request::post("/log/checkpoint")
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(post).await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    let head = Request::head("/log/tile/0/000")
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(head).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn without_a_key_checkpoints_and_proofs_are_503_and_everything_else_works() {
    let (_dir, store) = sqlite_with(records(3)).await;
    let router = app(store, None);
    for path in [
        "/log/checkpoint",
        "/api/freedom-fund?view=proof&seq=1",
        "/api/freedom-fund?view=consistency&from=1",
    ] {
        let answer = get(&router, path).await;
        assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{path}");
        assert!(answer.headers.get(header::RETRY_AFTER).is_none());
        assert_eq!(answer.json()["error"]["code"], "signing_unavailable");
    }
    assert_eq!(
        get(&router, "/log/tile/0/000.p/3").await.status,
        StatusCode::OK
    );
    assert_eq!(
        get(&router, "/api/freedom-fund?view=ledger").await.status,
        StatusCode::OK
    );
    let contract = get(&router, "/api/freedom-fund?view=contract").await.json();
    assert_eq!(contract["log"]["verifierKey"], Value::Null);
}

#[tokio::test]
async fn a_record_carrying_the_signing_key_is_refused_and_stores_nothing() {
    let (_dir, store) = sqlite_with(Vec::new()).await;
    let router = app(store, Some(signing_key()));
    let key = signing_key();
    let seed_only = key.to_private_text().rsplit('+').next().unwrap().to_owned();
    let other_log_key = SigningKey::from_seed("other.example/log", [9; 32])
        .unwrap()
        .to_private_text();
    for secret in [key.to_private_text(), seed_only, other_log_key] {
        let record = json!({
            "id": "leak", "type": "decision", "visibility": "public", "mode": "paper",
            "strategyId": "s", "strategyName": "S", "asOf": "2026-05-04T16:00:00Z",
            "source": {"name": "agent", "url": "https://example.com/agent"},
            "action": "hold", "summary": format!("note {secret}")
        });
        let request = Request::post("/api/freedom-fund")
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(record.to_string()))
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&body);
        assert!(text.contains("private_key"), "{text}");
        assert!(!text.contains(&secret), "the secret is never echoed");
    }
    let ledger = get(&router, "/api/freedom-fund?view=ledger").await.json();
    assert_eq!(ledger["head"]["size"], 0);
}

#[tokio::test]
async fn a_store_whose_tiles_disagree_with_its_head_gets_no_signature_on_them() {
    let (dir, store) = sqlite_with(records(300)).await;
    let router = app(store, Some(signing_key()));
    let honest = get(&router, "/log/checkpoint").await.text();
    let database = rusqlite::Connection::open(dir.path().join("ledger.sqlite3")).unwrap();
    let mut tile: Vec<u8> = database
        .query_row(
            "SELECT hashes FROM tiles WHERE level = 0 AND idx = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    tile[40] ^= 1; // the second leaf hash
    let changed = database
        .execute(
            "UPDATE tiles SET hashes = ?1 WHERE level = 0 AND idx = 0",
            [&tile],
        )
        .unwrap();
    assert_eq!(changed, 1);
    // Proofs are computed from the tiles. A root that does not tie to the
    // stored head (directly, or by a consistency proof to it) is never
    // signed, and a proof that does not verify is never served: the answer
    // is 500, and no checkpoint of another root exists.
    for query in [
        "view=proof&seq=1",
        "view=proof&seq=1&size=100",
        "view=proof&seq=200&size=256",
        "view=consistency&from=10",
        "view=consistency&from=0&to=100",
        "view=consistency&from=5&to=100",
    ] {
        let answer = get(&router, &format!("/api/freedom-fund?{query}")).await;
        assert_eq!(
            answer.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{query}: {}",
            answer.text()
        );
        assert_eq!(answer.json()["error"]["code"], "internal_error", "{query}");
    }
    // The checkpoint is the head's, which the tiles do not change.
    assert_eq!(get(&router, "/log/checkpoint").await.text(), honest);
}

#[tokio::test]
async fn one_log_over_a_replaced_store_proves_each_history_from_its_own_tiles() {
    let (_first_dir, first) = sqlite_with(records(300)).await;
    let other: Vec<Candidate> = (0..300)
        .map(|i| decision(&format!("other-{i}"), "t", i))
        .collect();
    let (_second_dir, second) = sqlite_with(other).await;
    // One log signs one history: its memory put under another store (a
    // replaced ledger), it refuses; back on its own, its proofs are still
    // its history's. A new log (a new memory) on the other store proves
    // that history from its own tiles.
    let memory: Arc<dyn SignerMemory> = Arc::new(InProcess::default());
    let log_on = |store: &Arc<SqliteLedgerStore>, memory: &Arc<dyn SignerMemory>| {
        let store: Arc<dyn LedgerStore> = store.clone();
        Log::new(store, ORIGIN, Some(signing_key()))
            .unwrap()
            .with_memory(Arc::clone(memory))
            .with_new_log(true)
    };
    let log = log_on(&first, &memory);
    log.inclusion(1, None).await.unwrap();
    let replaced = log_on(&second, &memory);
    for seq in [1, 150] {
        assert!(matches!(
            replaced.inclusion(seq, None).await,
            Err(freedom_shared::service::LogError::RefusedToSign(_))
        ));
    }
    let fresh: Arc<dyn SignerMemory> = Arc::new(InProcess::default());
    let other_log = log_on(&second, &fresh);
    for (log, store) in [(&log, &first), (&other_log, &second), (&log, &first)] {
        let head = store.head().await.unwrap();
        for seq in [1, 150, 256, 300] {
            let (proof, _) = log.inclusion(seq, None).await.unwrap();
            assert_eq!(proof.root, head.root_hash);
            assert!(freedom_shared::tlog::proof::verify_inclusion(
                seq - 1,
                300,
                &proof.leaf_hash,
                &proof.path,
                &head.root_hash
            ));
        }
        let (consistency, _) = log.consistency(100, None).await.unwrap();
        assert_eq!(consistency.to_root, head.root_hash);
    }
}

/// The log's resources take no query parameters they do not know (400, as
/// the API refuses them), and a tile is served only at its canonical path:
/// a percent-encoded one is not the same resource (404), and is never
/// given the immutable cache of a full tile.
#[tokio::test]
async fn log_resources_refuse_unknown_parameters_and_non_canonical_tile_paths() {
    let (_dir, store) = sqlite_with(records(300)).await;
    let router = app(store, Some(signing_key()));
    for uri in [
        "/log/checkpoint?x=1",
        "/log/checkpoint?cachebust=7",
        "/log/tile/0/000?x=1",
        "/log/tile/entries/000?v=2",
    ] {
        let answer = get(&router, uri).await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{uri}: {}",
            answer.text()
        );
        assert_eq!(answer.json()["error"]["code"], "invalid_query", "{uri}");
    }
    for uri in [
        "/log/tile/%30/000",
        "/log/tile/0/%30%30%30",
        "/log/tile/entries/00%30",
        "/log/tile/0/001.p/%34",
    ] {
        let answer = get(&router, uri).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{uri}");
    }
    assert_eq!(get(&router, "/log/tile/0/000").await.status, StatusCode::OK);
}

/// Round 4: proofs carried no ETag. Each proof answer (JSON, `.tlog-proof`,
/// consistency) carries the tag of its bytes and answers 304 to it; a tag
/// given without its quotes names nothing.
#[tokio::test]
async fn proofs_carry_the_tag_of_their_bytes_and_answer_304_to_it() {
    let (_dir, store) = sqlite_with(records(20)).await;
    let router = app(store, Some(signing_key()));
    for uri in [
        "/api/freedom-fund?view=proof&seq=3",
        "/api/freedom-fund?view=proof&seq=3&format=tlog-proof",
        "/api/freedom-fund?view=consistency&from=4",
    ] {
        let first = get(&router, uri).await;
        assert_eq!(first.status, StatusCode::OK, "{uri}: {}", first.text());
        let tag = first.headers[header::ETAG].to_str().unwrap().to_owned();
        assert!(tag.starts_with('"') && tag.ends_with('"'), "{tag}");
        let conditional = |value: String| {
            Request::get(uri)
                .header(header::IF_NONE_MATCH, value)
                .body(Body::empty())
                .unwrap()
        };
        let again = router
            .clone()
            .oneshot(conditional(tag.clone()))
            .await
            .unwrap();
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{uri}");
        let unquoted = router
            .clone()
            .oneshot(conditional(tag.trim_matches('"').to_owned()))
            .await
            .unwrap();
        assert_eq!(unquoted.status(), StatusCode::OK, "{uri}: an unquoted tag");
    }
}
