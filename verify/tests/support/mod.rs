//! What the tests against a served log share: a fund service on a
//! loopback port over records appended straight to its store (so a test
//! can serve a log whose records break the ledger's rules), with an
//! optional change to the bodies served at one path.
#![allow(dead_code)]

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::ports::Candidate;
use freedom_shared::ports::conformance::decision;
use freedom_shared::service::Log;
use freedom_shared::tlog::note::SigningKey;
use std::sync::Arc;

pub const ORIGIN: &str = "fund.example.com/log";

pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_seed(ORIGIN, [seed; 32]).unwrap()
}

pub fn records(prefix: &str, count: usize) -> Vec<Candidate> {
    (0..count)
        .map(|i| decision(&format!("{prefix}{i}"), "s", i as i64))
        .collect()
}

/// Changes the body served at one path.
#[derive(Clone)]
pub struct Tamper {
    /// The bodies at paths (with their queries) starting with this change
    /// (or equal to it, when `exact`).
    pub path_and_query_prefix: &'static str,
    /// Whether the path and query must equal the prefix.
    pub exact: bool,
    /// How.
    pub change: Arc<dyn Fn(Vec<u8>) -> Vec<u8> + Send + Sync>,
}

/// A fund service on a loopback port; the base URL and the data dir.
pub struct Running {
    /// `http://<addr>/`.
    pub base: String,
    /// The store's folder.
    pub dir: tempfile::TempDir,
}

pub async fn serve(
    candidates: Vec<Candidate>,
    signing: SigningKey,
    tamper: Option<Tamper>,
) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    store.append_batch(candidates).await.unwrap();
    let store: Arc<dyn freedom_shared::ports::LedgerStore> = Arc::new(store);
    let log = Log::new(Arc::clone(&store) as _, ORIGIN, Some(signing)).unwrap();
    let mut router: Router = fund::app(fund::AppState::new(store, None).with_log(log));
    if let Some(tamper) = tamper {
        router = router.layer(axum::middleware::from_fn(
            move |request: Request, next: Next| {
                let tamper = tamper.clone();
                async move {
                    let target = request
                        .uri()
                        .path_and_query()
                        .map(|p| p.as_str().to_owned());
                    let response = next.run(request).await;
                    let prefix = tamper.path_and_query_prefix;
                    if !target.is_some_and(|t| {
                        if tamper.exact {
                            t == prefix
                        } else {
                            t.starts_with(prefix)
                        }
                    }) {
                        return response;
                    }
                    let (mut parts, body) = response.into_parts();
                    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
                    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
                    Response::from_parts(parts, Body::from((tamper.change)(bytes.to_vec())))
                }
            },
        ));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    Running { base, dir }
}
