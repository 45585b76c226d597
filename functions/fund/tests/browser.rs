//! The public page in a real browser: headless Chromium driven by
//! playwright-core (`scripts/browser/page-check.mjs`) against the fund router
//! on a loopback port, over the sample ledger. `scripts/test` installs
//! Chromium and the npm package when missing.
//!
//! The screenshots go to `$FF_SCREENSHOT_DIR` when set (docs/page.md's come
//! from `scripts/screenshots`, which sets it to `docs`), else to a
//! temporary directory, with the hash of the HTML they show; the test fails
//! when that hash is not the one beside docs/page.md's screenshots (the page
//! changed and they were not regenerated).

use freedom_shared::adapters::SqliteLedgerStore;
use freedom_shared::config::Benchmarks;
use freedom_shared::config::WriteToken;
use freedom_shared::record::StrategyId;
use freedom_testkit::sample_ledger;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

const TOKEN: &str = "browser-test-token-0123456789";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Serves a fund router over a fresh embedded store holding `records` on
/// a loopback port of this runtime, comparing paper series with
/// `equal-weight` (the sample's) so the page shows a benchmark table; the
/// store's directory lives as long as the returned guard.
async fn serve(records: Vec<serde_json::Value>) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteLedgerStore::open(dir.path()).unwrap();
    let benchmarks = Benchmarks {
        live: None,
        paper: StrategyId::parse("equal-weight"),
    };
    let router = fund::app(
        fund::AppState::new(Arc::new(store), WriteToken::new(TOKEN)).with_benchmarks(benchmarks),
    );
    sample_ledger::post_records(&router, TOKEN, records).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (base, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_works_in_headless_chromium() {
    let script_dir = workspace_root().join("scripts/browser");
    assert!(
        script_dir.join("node_modules/playwright-core").exists()
            && script_dir.join("node_modules/axe-core").exists(),
        "playwright-core or axe-core is not installed: run `npm ci` in scripts/browser (scripts/test does)"
    );
    // The sample ledger (two months, five strategies), an empty one, a
    // year of history for three strategies, and a careless writer's.
    let (base, _sample) = serve(sample_ledger::records()).await;
    let (empty_base, _empty) = serve(Vec::new()).await;
    let (year_base, _year) = serve(sample_ledger::year_records()).await;
    let (careless_base, _careless) = serve(sample_ledger::careless_records()).await;

    let screenshots = tempfile::tempdir().unwrap();
    let screenshot_dir = std::env::var_os("FF_SCREENSHOT_DIR")
        .map(|d| workspace_root().join(d))
        .unwrap_or_else(|| screenshots.path().to_owned());
    let mut command = Command::new("node");
    command
        .arg("page-check.mjs")
        .arg(&base)
        .arg(&empty_base)
        .arg(&year_base)
        .arg(&careless_base)
        .arg(&screenshot_dir)
        .current_dir(&script_dir);
    // The server runs on this runtime's other worker while node waits.
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("node runs");
    assert!(
        output.status.success(),
        "browser checks failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(screenshot_dir.join("page.png").exists());
    // docs/page.md's screenshots show the page as it is built: the HTML they were
    // taken of is the HTML served now (renderer and fonts aside).
    let shown = |dir: &Path| {
        std::fs::read_to_string(dir.join("page-screenshots.sha256"))
            .ok()
            .and_then(|text| text.split_whitespace().next().map(str::to_owned))
    };
    assert_eq!(
        shown(&screenshot_dir),
        shown(&workspace_root().join("docs")),
        "the page changed since docs/page.md's screenshots were taken: run scripts/screenshots"
    );
}
