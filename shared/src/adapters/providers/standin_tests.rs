//! Each provider's HTTP adapter against the stand-in (real response
//! shapes), through its port:
//! batching at 30 and 100, 429 then success, 500, timeouts, malformed JSON,
//! either side of a pair, not-indexed and missing tokens, no credentials
//! sent to RugCheck.

use crate::adapters::DexScreener;
use crate::adapters::RugCheck;
use crate::adapters::SolanaRpc;
use crate::adapters::{Http, ProviderConfig};
use crate::ports::providers::{ChainAccounts, MarketData, ProviderError, RiskAnswer, TokenRisk};
use crate::scan::MintAccount;
use crate::scan::accounts::{AccountSlot, mint_account, wallet_view};
use freedom_testkit::provider_standin::{
    Fault, Provider, ProviderStandIn, fixture_tokens, synthetic_tokens,
};
use rust_decimal::Decimal;
use std::str::FromStr;
use std::time::Duration;

fn config(base_url: String) -> ProviderConfig {
    ProviderConfig {
        base_url,
        timeout: Duration::from_millis(500),
        retries: 2,
        backoff: Duration::from_millis(1),
        concurrency: 4,
        spacing: Duration::ZERO,
        deadline: Duration::from_secs(30),
    }
}

/// Far enough away for any of these calls.
fn later() -> std::time::Instant {
    std::time::Instant::now() + Duration::from_secs(30)
}

fn mints(tokens: &[freedom_testkit::provider_standin::StandInToken]) -> Vec<String> {
    tokens.iter().map(|t| t.mint.clone()).collect()
}

#[tokio::test]
async fn dexscreener_batches_by_30_and_reads_either_side_of_a_pair() {
    let tokens = synthetic_tokens(65);
    let stand_in = ProviderStandIn::start(tokens.clone()).await.unwrap();
    let client = DexScreener::new(Http::new(config(stand_in.url().into())));
    let data = client.quotes(&mints(&tokens), later()).await;
    assert!(data.failures.is_empty(), "{:?}", data.failures);
    assert_eq!(stand_in.requests(Provider::DexScreener), 3);
    assert_eq!(stand_in.largest_batch(Provider::DexScreener), 30);
    assert_eq!(data.quotes.len(), 65);
    for token in &tokens {
        let quote = data.quotes[&token.mint].as_ref().expect("indexed");
        // The most liquid of the two pools, whichever side the token is on.
        assert_eq!(
            quote.price_usd,
            Some(Decimal::from_str(&token.price_usd).unwrap().normalize()),
            "{}",
            token.symbol
        );
        assert_eq!(
            quote.liquidity_usd,
            Some(Decimal::from_str(&format!("{}", token.liquidity_usd)).unwrap())
        );
        assert_eq!(quote.symbol, token.symbol);
    }
}

#[tokio::test]
async fn a_token_without_pairs_is_answered_as_not_indexed() {
    let stand_in = ProviderStandIn::start(fixture_tokens()).await.unwrap();
    let client = DexScreener::new(Http::new(config(stand_in.url().into())));
    let data = client.quotes(&mints(&fixture_tokens()), later()).await;
    assert_eq!(
        data.quotes["FakeCharMintNoPairsTestTestTestTestTestTestT"],
        None
    );
    let alpha = data.quotes["FakeA1phaMintTestTestTestTestTestTestTespump"]
        .as_ref()
        .unwrap();
    assert_eq!(
        alpha.price_usd,
        Some(Decimal::from_str("0.00004687").unwrap())
    );
    let delta = data.quotes["FakeDe1taMintTestTestTestTestTestTestTestTe"]
        .as_ref()
        .unwrap();
    assert_eq!(
        delta.price_usd,
        Some(Decimal::from_str("2.5").unwrap()),
        "priced from the quote side"
    );
}

#[tokio::test]
async fn a_429_is_retried_and_persistent_failures_are_reported() {
    let tokens = synthetic_tokens(5);
    let stand_in = ProviderStandIn::start(tokens.clone()).await.unwrap();
    let client = DexScreener::new(Http::new(config(stand_in.url().into())));
    stand_in.inject(Provider::DexScreener, Fault::Status(429));
    let data = client.quotes(&mints(&tokens), later()).await;
    assert!(data.failures.is_empty());
    assert_eq!(data.quotes.len(), 5);
    assert_eq!(
        stand_in.requests(Provider::DexScreener),
        2,
        "one 429, one success"
    );

    stand_in.fail_always(Provider::DexScreener, Some(Fault::Status(500)));
    let data = client.quotes(&mints(&tokens), later()).await;
    assert!(
        matches!(data.failures[..], [ProviderError::Status(500)]),
        "{:?}",
        data.failures
    );
    assert!(data.quotes.is_empty());
    assert_eq!(
        stand_in.requests(Provider::DexScreener),
        2 + 3,
        "the first try and two retries"
    );

    stand_in.fail_always(Provider::DexScreener, Some(Fault::Malformed));
    let data = client.quotes(&mints(&tokens), later()).await;
    assert!(
        matches!(data.failures[..], [ProviderError::Malformed(_)]),
        "{:?}",
        data.failures
    );
}

#[tokio::test]
async fn a_hanging_provider_times_out() {
    let tokens = synthetic_tokens(3);
    let stand_in = ProviderStandIn::start(tokens.clone()).await.unwrap();
    let mut quick = config(stand_in.url().into());
    quick.timeout = Duration::from_millis(200);
    quick.retries = 1;
    let client = DexScreener::new(Http::new(quick));
    stand_in.fail_always(Provider::DexScreener, Some(Fault::Hang));
    let data = client.quotes(&mints(&tokens), later()).await;
    assert!(
        matches!(
            data.failures[..],
            [ProviderError::Timeout(after)] if after == Duration::from_millis(200)
        ),
        "{:?}",
        data.failures
    );
    assert_eq!(stand_in.requests(Provider::DexScreener), 2);
}

#[tokio::test]
async fn rugcheck_reports_no_report_and_no_credentials() {
    let stand_in = ProviderStandIn::start(fixture_tokens()).await.unwrap();
    let client = RugCheck::new(Http::new(config(stand_in.url().into())));
    let (RiskAnswer::Report(bravo), received) = client
        .report("FakeBravoMintTestTestTestTestTestTestTestTes", later())
        .await
        .unwrap()
    else {
        panic!("bravo has a report")
    };
    assert_eq!(
        bravo.risks.iter().filter(|r| r.level == "danger").count(),
        3
    );
    // Provenance: the request without the base URL's path, the exact bytes.
    assert_eq!(received.provider, "rugcheck");
    assert!(
        received
            .request
            .ends_with("/v1/tokens/FakeBravoMintTestTestTestTestTestTestTestTes/report/summary"),
        "{}",
        received.request
    );
    assert_eq!(received.status, 200);
    assert!(serde_json::from_slice::<serde_json::Value>(&received.body).is_ok());
    let (none, refusal) = client
        .report("FakeCharMintNoPairsTestTestTestTestTestTestT", later())
        .await
        .unwrap();
    assert_eq!(none, RiskAnswer::NoReport);
    assert_eq!(refusal.status, 404);
    stand_in.inject(Provider::RugCheck, Fault::Status(503));
    stand_in.inject(Provider::RugCheck, Fault::Status(503));
    stand_in.inject(Provider::RugCheck, Fault::Status(503));
    let failed = client
        .report("FakeBravoMintTestTestTestTestTestTestTestTes", later())
        .await;
    assert!(
        matches!(failed, Err(ProviderError::Status(503))),
        "{failed:?}"
    );
    assert!(!stand_in.rugcheck_saw_authorization());
}

#[tokio::test]
async fn solana_batches_by_100_and_reads_mints_nulls_and_token_accounts() {
    let mut tokens = synthetic_tokens(150);
    tokens.extend(fixture_tokens());
    let stand_in = ProviderStandIn::start(tokens.clone()).await.unwrap();
    let client = SolanaRpc::new(Http::new(config(format!("{}/rpc", stand_in.url()))));
    let mut keys = mints(&tokens);
    keys.push("FakeTokenAcctA1phaTestTestTestTestTestTestTe".into());
    let accounts = client.accounts(&keys, later()).await;
    assert!(accounts.failures.is_empty(), "{:?}", accounts.failures);
    assert_eq!(stand_in.requests(Provider::Solana), 2);
    assert_eq!(stand_in.largest_batch(Provider::Solana), 100);
    assert_eq!(accounts.accounts.len(), keys.len());
    let MintAccount::Mint(bravo) =
        mint_account(&accounts.accounts["FakeBravoMintTestTestTestTestTestTestTestTes"])
    else {
        panic!("bravo is a parsed mint")
    };
    assert_eq!(
        bravo.mint_authority,
        crate::scan::Authority::HeldBy("FakeMintAuthBravoTestTestTestTestTestTestTes".into())
    );
    assert_eq!(
        bravo.freeze_authority,
        crate::scan::Authority::HeldBy("FakeFreezeAuthBravoTestTestTestTestTestTestT".into())
    );
    assert_eq!(
        mint_account(&accounts.accounts["FakeCharMintNoPairsTestTestTestTestTestTestT"]),
        MintAccount::Missing
    );
    let wallet = wallet_view(
        "FakeTokenAcctA1phaTestTestTestTestTestTestTe",
        accounts
            .accounts
            .get("FakeTokenAcctA1phaTestTestTestTestTestTestTe"),
    );
    assert_eq!(wallet.tokens[0].amount, "196612345");
    // base64 data (no parser applied) is not a parsed mint.
    let raw = serde_json::json!({"data": ["AAAA", "base64"], "lamports": 1, "owner": "x", "executable": false, "rentEpoch": u64::MAX, "space": 82});
    let raw: AccountSlot = serde_json::from_value(raw).unwrap();
    assert_eq!(
        mint_account(&raw),
        MintAccount::NotAMint {
            program: Some("x".into())
        }
    );
}

#[tokio::test]
async fn an_rpc_error_envelope_is_a_failure() {
    let stand_in = ProviderStandIn::start(fixture_tokens()).await.unwrap();
    let client = SolanaRpc::new(Http::new(config(format!("{}/rpc", stand_in.url()))));
    stand_in.fail_always(Provider::Solana, Some(Fault::Status(500)));
    let accounts = client
        .accounts(
            &["FakeBravoMintTestTestTestTestTestTestTestTes".to_owned()],
            later(),
        )
        .await;
    assert!(
        matches!(accounts.failures[..], [ProviderError::Status(500)]),
        "{:?}",
        accounts.failures
    );
}

/// A provider's redirect is a failed answer: it is never followed (the RPC
/// POST body used to be re-sent to whatever host and port it named).
#[tokio::test]
async fn redirects_are_failed_answers_and_never_followed() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reached = Arc::new(AtomicUsize::new(0));
    let target = {
        let reached = Arc::clone(&reached);
        axum::Router::new().fallback(move || {
            reached.fetch_add(1, Ordering::SeqCst);
            async { "{}" }
        })
    };
    let serve = |app: axum::Router| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    };
    let target_url = serve(target).await;
    let redirector = {
        let location = format!("{target_url}/elsewhere");
        axum::Router::new().fallback(move || {
            let location = location.clone();
            async move {
                (
                    axum::http::StatusCode::TEMPORARY_REDIRECT,
                    [(axum::http::header::LOCATION, location)],
                )
            }
        })
    };
    let base = serve(redirector).await;
    let rpc = SolanaRpc::new(Http::new(config(format!("{base}/rpc"))));
    let accounts = rpc
        .accounts(
            &["FakeBravoMintTestTestTestTestTestTestTestTes".to_owned()],
            later(),
        )
        .await;
    assert!(
        matches!(accounts.failures[..], [ProviderError::Status(307)]),
        "{:?}",
        accounts.failures
    );
    let rugcheck = RugCheck::new(Http::new(config(base.clone())));
    assert!(matches!(
        rugcheck
            .report("FakeBravoMintTestTestTestTestTestTestTestTes", later())
            .await,
        Err(ProviderError::Status(307))
    ));
    let dex = DexScreener::new(Http::new(config(base)));
    let quotes = dex
        .quotes(
            &["FakeBravoMintTestTestTestTestTestTestTestTes".to_owned()],
            later(),
        )
        .await;
    assert!(!quotes.failures.is_empty());
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the redirect's target was never asked"
    );
}
