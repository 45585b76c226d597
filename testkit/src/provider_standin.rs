//! A local stand-in for the scanner's three providers, answering in their
//! real shapes (docs/providers.md), with injectable latency and
//! failures. The scanner's production code talks to it by base URL:
//!
//! - DexScreener: `GET /tokens/v1/solana/{mint,…}` (more than 30 mints → 400);
//! - RugCheck: `GET /v1/tokens/{mint}/report/summary` (unknown → 404 `{"error"}`);
//! - Solana RPC: `POST /rpc` `getMultipleAccounts` (more than 100 keys → the
//!   `-32602 "Too many inputs provided; max 100"` error).
//!
//! It also runs as a program (`provider-standin`), so a user can watch the
//! scanner work with no internet.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Which provider a fault or a count is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// DexScreener.
    DexScreener,
    /// RugCheck.
    RugCheck,
    /// Solana JSON-RPC.
    Solana,
}

/// A failure to answer one request with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// This HTTP status with a JSON error body (a 429 carries `Retry-After: 0`).
    Status(u16),
    /// A 200 whose body is not JSON.
    Malformed,
    /// Never answer.
    Hang,
}

/// A token as the stand-in knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct StandInToken {
    /// Mint address (base58, 32 bytes).
    pub mint: String,
    /// Ticker the stand-in gives it.
    pub symbol: String,
    /// USD price as DexScreener writes it (a decimal string).
    pub price_usd: String,
    /// USD liquidity of its main pool.
    pub liquidity_usd: f64,
    /// 24-hour change in percent.
    pub change_h24: f64,
    /// Whether DexScreener has pools for it.
    pub indexed: bool,
    /// Whether its main pool lists it as the quote token (priced via SOL).
    pub quote_side: bool,
    /// Whether its mint account exists.
    pub exists: bool,
    /// Mint authority (`None` = revoked).
    pub mint_authority: Option<String>,
    /// Freeze authority (`None` = revoked).
    pub freeze_authority: Option<String>,
    /// RugCheck risks as (name, level); `None` = RugCheck has no report.
    pub risks: Option<Vec<(String, String)>>,
    /// RugCheck's `lpLockedPct` (`None`: `null`, no LP figure).
    pub lp_locked_pct: Option<f64>,
    /// Token-2022 extensions as the RPC's `jsonParsed` form lists them
    /// (`{"extension": <name>, "state": {...}}`); any makes it a
    /// Token-2022 mint, none a plain SPL Token mint.
    pub extensions: Vec<Value>,
    /// Its largest holders as (owner, share of supply in percent), largest
    /// first; `None` gives the usual spread (the main pool 40 %, the burn
    /// address 10 %, eighteen holders 2 % each).
    pub holders: Option<Vec<(String, f64)>>,
    /// Its main pool's reserves as DexScreener writes them
    /// (`liquidity.base`, `liquidity.quote`, the pair's base side first);
    /// `None` gives half of `liquidity_usd` on each side at the pair's
    /// prices (SOL at $150).
    pub reserves: Option<(f64, f64)>,
}

impl StandInToken {
    /// The same token with `extensions` (a Token-2022 mint).
    pub fn with_extensions(mut self, extensions: Vec<Value>) -> StandInToken {
        self.extensions = extensions;
        self
    }

    /// The address of its main pool (DexScreener's `pairAddress`).
    pub fn pool(&self) -> String {
        format!("Pair{}", &self.mint[..20])
    }

    /// Its main pool's reserves as the stand-in reports them: (base,
    /// quote), the pair's base side first ([`StandInToken::reserves`]).
    pub fn pool_reserves(&self) -> (f64, f64) {
        self.reserves.unwrap_or_else(|| {
            let price: f64 = self.price_usd.parse().unwrap_or(0.0);
            let half = self.liquidity_usd / 2.0;
            let (mine, sol) = (half / price, half / SOL_USD);
            if self.quote_side {
                (sol, mine)
            } else {
                (mine, sol)
            }
        })
    }

    /// Its largest holders as (token account, owner, amount).
    fn largest(&self) -> Vec<(String, String, u128)> {
        let spread = match &self.holders {
            Some(holders) => holders.clone(),
            None => {
                let mut holders = vec![(self.pool(), 40.0), (BURN.to_owned(), 10.0)];
                holders.extend((0..18).map(|i| (format!("Holder{i:02}{}", &self.mint[..16]), 2.0)));
                holders
            }
        };
        spread
            .into_iter()
            .enumerate()
            .map(|(i, (owner, percent))| {
                (
                    format!("Acct{i:02}{}", &self.mint[..20]),
                    owner,
                    (SUPPLY as f64 * percent / 100.0) as u128,
                )
            })
            .collect()
    }
}

/// Every stand-in mint's supply, in smallest units (6 decimals).
const SUPPLY: u64 = 999_987_654_321_000;
/// Solana's burn address.
const BURN: &str = "1nc1nerator11111111111111111111111111111111";
/// The Token-2022 program.
const TOKEN_2022: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
/// The SPL Token program.
const SPL_TOKEN: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

/// Three sample tokens (a clean one, a risky one, one no provider knows)
/// plus one clean, liquid token, so a run has something eligible.
pub fn fixture_tokens() -> Vec<StandInToken> {
    vec![
        StandInToken {
            mint: "FakeA1phaMintTestTestTestTestTestTestTespump".into(),
            symbol: "FALPHA".into(),
            price_usd: "0.00004687".into(),
            liquidity_usd: 18432.55,
            change_h24: -31.05,
            indexed: true,
            quote_side: false,
            exists: true,
            mint_authority: None,
            freeze_authority: None,
            risks: Some(vec![]),
            lp_locked_pct: Some(100.0),
            extensions: Vec::new(),
            holders: None,
            reserves: None,
        },
        StandInToken {
            mint: "FakeBravoMintTestTestTestTestTestTestTestTes".into(),
            symbol: "FBRAVO".into(),
            price_usd: "0.01284".into(),
            liquidity_usd: 412905.33,
            change_h24: 8.4,
            indexed: true,
            quote_side: false,
            exists: true,
            mint_authority: Some("FakeMintAuthBravoTestTestTestTestTestTestTes".into()),
            freeze_authority: Some("FakeFreezeAuthBravoTestTestTestTestTestTestT".into()),
            risks: Some(vec![
                ("Mint Authority still enabled".into(), "danger".into()),
                ("Freeze Authority still enabled".into(), "danger".into()),
                ("Single holder ownership".into(), "danger".into()),
                ("Mutable metadata".into(), "warn".into()),
            ]),
            lp_locked_pct: Some(0.0),
            extensions: Vec::new(),
            holders: None,
            reserves: None,
        },
        StandInToken {
            mint: "FakeCharMintNoPairsTestTestTestTestTestTestT".into(),
            symbol: "FCHAR".into(),
            price_usd: "0".into(),
            liquidity_usd: 0.0,
            change_h24: 0.0,
            indexed: false,
            quote_side: false,
            exists: false,
            mint_authority: None,
            freeze_authority: None,
            risks: None,
            lp_locked_pct: None,
            extensions: Vec::new(),
            holders: None,
            reserves: None,
        },
        StandInToken {
            mint: "FakeDe1taMintTestTestTestTestTestTestTestTe".into(),
            symbol: "FDELTA".into(),
            price_usd: "2.5".into(),
            liquidity_usd: 1_250_000.0,
            change_h24: 4.2,
            indexed: true,
            quote_side: true,
            exists: true,
            mint_authority: None,
            freeze_authority: None,
            risks: Some(vec![("Mutable metadata".into(), "warn".into())]),
            lp_locked_pct: Some(100.0),
            extensions: Vec::new(),
            holders: None,
            reserves: None,
        },
    ]
}

/// `count` clean, liquid tokens with distinct, valid addresses.
pub fn synthetic_tokens(count: usize) -> Vec<StandInToken> {
    (0..count)
        .map(|i| {
            let mut bytes = [7u8; 32];
            bytes[..8].copy_from_slice(&(i as u64 + 1).to_be_bytes());
            StandInToken {
                mint: bs58::encode(bytes).into_string(),
                symbol: format!("SYN{i}"),
                price_usd: format!("{}.{:02}", 1 + i % 50, i % 100),
                liquidity_usd: 100_000.0 + 1_000.0 * i as f64,
                change_h24: (i % 21) as f64 - 10.0,
                indexed: true,
                quote_side: i % 7 == 3,
                exists: true,
                mint_authority: None,
                freeze_authority: None,
                risks: Some(vec![]),
                lp_locked_pct: Some(100.0),
                extensions: Vec::new(),
                holders: None,
                reserves: None,
            }
        })
        .collect()
}

/// Wrapped SOL's mint: every stand-in pool is against it, and it is
/// quoted itself at a SOL/USDC pair (and read as a plain SPL mint) when
/// asked for, whether or not it is one of the stand-in's tokens.
pub const SOL: &str = "So11111111111111111111111111111111111111112";
/// USDC's mint, the quote side of SOL's own pair.
pub const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
/// SOL's price at the stand-in, in USD.
pub const SOL_USD: f64 = 150.0;
/// The USD liquidity of SOL's own pair at the stand-in (half on each side).
pub const SOL_PAIR_LIQUIDITY_USD: f64 = 20_000_000.0;

/// Wrapped SOL as the stand-in knows it when it is not one of its tokens.
fn wrapped_sol() -> StandInToken {
    StandInToken {
        mint: SOL.into(),
        symbol: "SOL".into(),
        price_usd: format!("{SOL_USD}"),
        liquidity_usd: SOL_PAIR_LIQUIDITY_USD,
        change_h24: 1.0,
        indexed: true,
        quote_side: false,
        exists: true,
        mint_authority: None,
        freeze_authority: None,
        risks: Some(Vec::new()),
        lp_locked_pct: None,
        extensions: Vec::new(),
        holders: None,
        reserves: Some((
            SOL_PAIR_LIQUIDITY_USD / 2.0 / SOL_USD,
            SOL_PAIR_LIQUIDITY_USD / 2.0,
        )),
    }
}

#[derive(Default)]
struct Plan {
    once: HashMap<Provider, VecDeque<Fault>>,
    always: HashMap<Provider, Fault>,
    requests: HashMap<Provider, usize>,
    largest_batch: HashMap<Provider, usize>,
    authorization_seen: bool,
    /// Extra time one provider's answers take.
    latency: HashMap<Provider, Duration>,
}

struct Shared {
    tokens: Mutex<Vec<StandInToken>>,
    wallets: HashMap<String, Value>,
    latency_ms: AtomicU64,
    plan: Mutex<Plan>,
    /// The SHA-256 (hex) of every body answered with JSON.
    sent: Mutex<Vec<String>>,
}

/// A running stand-in; it stops with the runtime that started it.
#[derive(Clone)]
pub struct ProviderStandIn {
    url: String,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ProviderStandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderStandIn")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl ProviderStandIn {
    /// Serves `tokens` on a free loopback port.
    pub async fn start(tokens: Vec<StandInToken>) -> std::io::Result<ProviderStandIn> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        Self::serve(listener, tokens)
    }

    /// Serves `tokens` on `listener`.
    pub fn serve(
        listener: tokio::net::TcpListener,
        tokens: Vec<StandInToken>,
    ) -> std::io::Result<ProviderStandIn> {
        let url = format!("http://{}", listener.local_addr()?);
        let wallet = "FakeTokenAcctA1phaTestTestTestTestTestTestTe".to_owned();
        let wallets = HashMap::from([(
            wallet,
            token_account("FakeA1phaMintTestTestTestTestTestTestTespump"),
        )]);
        let shared = Arc::new(Shared {
            tokens: Mutex::new(tokens),
            wallets,
            latency_ms: AtomicU64::new(0),
            plan: Mutex::default(),
            sent: Mutex::default(),
        });
        let app = Router::new()
            .route("/tokens/v1/solana/{mints}", get(dexscreener))
            .route("/v1/tokens/{mint}/report/summary", get(rugcheck))
            .route("/rpc", post(solana))
            .with_state(Arc::clone(&shared));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(ProviderStandIn { url, shared })
    }

    /// The base URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The variables that point the scanner here, with the tokens as its
    /// universe and the fixture token account as its observed wallet.
    pub fn env(&self) -> Vec<(String, String)> {
        let universe: Vec<String> = self
            .shared
            .tokens()
            .iter()
            .map(|t| {
                // A symbol the universe's syntax cannot carry (a test of
                // what DexScreener may name a token) is left out of it.
                if t.symbol.chars().all(|c| c.is_ascii_alphanumeric()) {
                    format!("{}:{}", t.symbol, t.mint)
                } else {
                    t.mint.clone()
                }
            })
            .collect();
        vec![
            ("FF_DEXSCREENER_URL".into(), self.url.clone()),
            ("FF_RUGCHECK_URL".into(), self.url.clone()),
            ("FF_SOLANA_RPC_URL".into(), format!("{}/rpc", self.url)),
            ("FF_SCANNER_UNIVERSE".into(), universe.join(",")),
            (
                "FF_SCANNER_WALLETS".into(),
                "FakeTokenAcctA1phaTestTestTestTestTestTestTe".into(),
            ),
        ]
    }

    /// Changes the token `mint` as `change` says, from the next request on
    /// (a pool that drains, a token DexScreener stops listing, a mint that
    /// gains an authority).
    pub fn update(&self, mint: &str, change: impl FnOnce(&mut StandInToken)) {
        let mut tokens = self.shared.tokens.lock().unwrap_or_else(|p| p.into_inner());
        let token = tokens
            .iter_mut()
            .find(|t| t.mint == mint)
            .expect("a token of the stand-in");
        change(token);
    }

    /// Every answer waits `latency` first.
    pub fn set_latency(&self, latency: Duration) {
        self.shared
            .latency_ms
            .store(latency.as_millis() as u64, Ordering::SeqCst);
    }

    /// Every answer of `provider` alone waits `latency` (on top of
    /// [`ProviderStandIn::set_latency`]'s).
    pub fn set_latency_of(&self, provider: Provider, latency: Duration) {
        self.plan().latency.insert(provider, latency);
    }

    /// The next request to `provider` fails with `fault`.
    pub fn inject(&self, provider: Provider, fault: Fault) {
        self.plan()
            .once
            .entry(provider)
            .or_default()
            .push_back(fault);
    }

    /// Every request to `provider` fails with `fault` (or none again).
    pub fn fail_always(&self, provider: Provider, fault: Option<Fault>) {
        match fault {
            Some(fault) => self.plan().always.insert(provider, fault),
            None => self.plan().always.remove(&provider),
        };
    }

    /// Requests `provider` has received.
    pub fn requests(&self, provider: Provider) -> usize {
        self.plan().requests.get(&provider).copied().unwrap_or(0)
    }

    /// The most mints or keys one request to `provider` carried.
    pub fn largest_batch(&self, provider: Provider) -> usize {
        self.plan()
            .largest_batch
            .get(&provider)
            .copied()
            .unwrap_or(0)
    }

    /// The SHA-256 (lowercase hex) of every body the stand-in answered
    /// with, faults aside.
    pub fn sent_bodies(&self) -> Vec<String> {
        self.shared
            .sent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether any RugCheck request carried an Authorization header.
    pub fn rugcheck_saw_authorization(&self) -> bool {
        self.plan().authorization_seen
    }

    fn plan(&self) -> std::sync::MutexGuard<'_, Plan> {
        self.shared.plan.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Shared {
    /// Counts the request and decides whether to fail it.
    async fn admit(&self, provider: Provider, batch: usize) -> Option<Response> {
        let fault = {
            let mut plan = self.plan.lock().unwrap_or_else(|p| p.into_inner());
            *plan.requests.entry(provider).or_default() += 1;
            let largest = plan.largest_batch.entry(provider).or_default();
            *largest = (*largest).max(batch);
            let once = plan.once.get_mut(&provider).and_then(VecDeque::pop_front);
            let fault = once.or_else(|| plan.always.get(&provider).copied());
            (
                fault,
                plan.latency.get(&provider).copied().unwrap_or_default(),
            )
        };
        let (fault, own_latency) = fault;
        let latency = Duration::from_millis(self.latency_ms.load(Ordering::SeqCst)) + own_latency;
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        match fault? {
            Fault::Hang => std::future::pending().await,
            Fault::Malformed => Some(
                (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, "application/json")],
                    "{\"pairs\": [",
                )
                    .into_response(),
            ),
            Fault::Status(status) => {
                let status =
                    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let mut response =
                    (status, axum::Json(json!({"error": "stand-in failure"}))).into_response();
                if status == StatusCode::TOO_MANY_REQUESTS {
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, "0".parse().expect("valid"));
                }
                Some(response)
            }
        }
    }

    fn tokens(&self) -> std::sync::MutexGuard<'_, Vec<StandInToken>> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The token `mint` as it is now (wrapped SOL when it is not one of
    /// the tokens).
    fn token(&self, mint: &str) -> Option<StandInToken> {
        let found = self.tokens().iter().find(|t| t.mint == mint).cloned();
        found.or_else(|| (mint == SOL).then(wrapped_sol))
    }

    /// `value` as a JSON answer with `status`, its bytes' hash recorded.
    fn answer(&self, status: StatusCode, value: &Value) -> Response {
        let body = serde_json::to_vec(value).expect("JSON serialises");
        self.sent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(freedom_shared::scan::sha256_hex(&body));
        (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    }

    /// The token account `address` among the tokens' largest holders.
    fn holder_account(&self, address: &str) -> Option<Value> {
        self.tokens().iter().find_map(|token| {
            token
                .largest()
                .into_iter()
                .find(|(account, _, _)| account == address)
                .map(|(_, owner, amount)| {
                    json!({
                        "data": {"parsed": {"info": {
                            "isNative": false, "mint": token.mint, "owner": owner, "state": "initialized",
                            "tokenAmount": {"amount": amount.to_string(), "decimals": 6}
                        }, "type": "account"}, "program": program_name(token), "space": 165},
                        "executable": false, "lamports": 2_039_280, "owner": program_of(token),
                        "rentEpoch": u64::MAX, "space": 165
                    })
                })
        })
    }
}

fn program_of(token: &StandInToken) -> &'static str {
    if token.extensions.is_empty() {
        SPL_TOKEN
    } else {
        TOKEN_2022
    }
}

fn program_name(token: &StandInToken) -> &'static str {
    if token.extensions.is_empty() {
        "spl-token"
    } else {
        "spl-token-2022"
    }
}

/// One pool of `token` holding `liquidity` USD (its reserves scaled from
/// its main pool's), against SOL, or against USDC for wrapped SOL itself.
fn pair(token: &StandInToken, liquidity: f64, dex: &str) -> Value {
    let me = json!({"address": token.mint, "name": format!("{} (stand-in)", token.symbol), "symbol": token.symbol});
    let price: f64 = token.price_usd.parse().unwrap_or(0.0);
    let (other, other_usd) = if token.mint == SOL {
        (
            json!({"address": USDC, "name": "USD Coin", "symbol": "USDC"}),
            1.0,
        )
    } else {
        (
            json!({"address": SOL, "name": "Wrapped SOL", "symbol": "SOL"}),
            SOL_USD,
        )
    };
    let (base, quote, price_usd, price_native) = if token.quote_side {
        (
            other,
            me,
            format!("{other_usd}"),
            format!("{}", other_usd / price),
        )
    } else {
        (
            me,
            other,
            token.price_usd.clone(),
            format!("{}", price / other_usd),
        )
    };
    let pair_address = if dex == "raydium" {
        token.pool()
    } else {
        format!("Thin{}", &token.mint[..20])
    };
    let scale = if token.liquidity_usd > 0.0 {
        liquidity / token.liquidity_usd
    } else {
        1.0
    };
    let (base_reserve, quote_reserve) = token.pool_reserves();
    json!({
        "chainId": "solana", "dexId": dex,
        "url": format!("https://dexscreener.com/solana/{}", pair_address.to_lowercase()),
        "pairAddress": pair_address, "labels": null,
        "baseToken": base, "quoteToken": quote,
        "priceNative": price_native, "priceUsd": price_usd,
        "txns": {"m5": {"buys": 3, "sells": 2}, "h1": {"buys": 40, "sells": 31}, "h24": {"buys": 900, "sells": 850}},
        "volume": {"h24": liquidity * 0.8, "h1": liquidity * 0.03},
        "priceChange": {"h1": 0.4, "h24": token.change_h24},
        "liquidity": {"usd": liquidity, "base": base_reserve * scale, "quote": quote_reserve * scale},
        "fdv": null, "marketCap": null, "pairCreatedAt": 1_777_787_280_000u64
    })
}

async fn dexscreener(State(shared): State<Arc<Shared>>, Path(mints): Path<String>) -> Response {
    let mints: Vec<&str> = mints.split(',').filter(|m| !m.is_empty()).collect();
    if let Some(failure) = shared.admit(Provider::DexScreener, mints.len()).await {
        return failure;
    }
    if mints.len() > 30 {
        return shared.answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": "at most 30 addresses"}),
        );
    }
    let mut pairs = Vec::new();
    for token in mints
        .iter()
        .filter_map(|m| shared.token(m))
        .filter(|t| t.indexed)
    {
        pairs.push(pair(&token, token.liquidity_usd, "raydium"));
        // A thin second pool: the client must pick the liquid one.
        pairs.push(pair(
            &token,
            (token.liquidity_usd / 50.0).round(),
            "meteora",
        ));
    }
    shared.answer(StatusCode::OK, &Value::Array(pairs))
}

async fn rugcheck(
    State(shared): State<Arc<Shared>>,
    Path(mint): Path<String>,
    headers: HeaderMap,
) -> Response {
    if headers.contains_key(header::AUTHORIZATION) {
        shared
            .plan
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .authorization_seen = true;
    }
    if let Some(failure) = shared.admit(Provider::RugCheck, 1).await {
        return failure;
    }
    let Some(token) = shared.token(&mint).filter(|t| t.risks.is_some()) else {
        return shared.answer(
            StatusCode::NOT_FOUND,
            &json!({"error": "stand-in: token not found"}),
        );
    };
    let risks = token.risks.as_ref().expect("filtered");
    let risks: Vec<Value> = risks
        .iter()
        .map(|(name, level)| json!({"name": name, "value": "", "description": name, "score": 100, "level": level}))
        .collect();
    shared.answer(
        StatusCode::OK,
        &json!({
            "tokenProgram": program_of(&token), "tokenType": "",
            "risks": risks, "score": 1 + 1000 * risks.len(), "score_normalised": 1 + 10 * risks.len(),
            "lpLockedPct": token.lp_locked_pct
        }),
    )
}

fn mint_account(token: &StandInToken) -> Value {
    let mut info = json!({
        "decimals": 6, "freezeAuthority": token.freeze_authority, "isInitialized": true,
        "mintAuthority": token.mint_authority, "supply": SUPPLY.to_string()
    });
    if !token.extensions.is_empty() {
        info["extensions"] = Value::Array(token.extensions.clone());
    }
    json!({
        "data": {"parsed": {"info": info, "type": "mint"}, "program": program_name(token), "space": 82},
        "executable": false, "lamports": 1_461_600, "owner": program_of(token),
        "rentEpoch": u64::MAX, "space": 82
    })
}

fn token_account(mint: &str) -> Value {
    json!({
        "data": {"parsed": {"info": {
            "isNative": false, "mint": mint, "owner": "FakeWa11etA1phaTestTestTestTestTestTestTestT", "state": "initialized",
            "tokenAmount": {"amount": "196612345000000", "decimals": 6, "uiAmount": 196612345.0, "uiAmountString": "196612345"}
        }, "type": "account"}, "program": "spl-token", "space": 165},
        "executable": false, "lamports": 2_039_280, "owner": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        "rentEpoch": u64::MAX, "space": 165
    })
}

async fn solana(
    State(shared): State<Arc<Shared>>,
    axum::Json(request): axum::Json<Value>,
) -> Response {
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    let keys: Vec<String> = match request.pointer("/params/0") {
        Some(Value::Array(keys)) => keys
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(mint)) => vec![mint.clone()],
        _ => Vec::new(),
    };
    if let Some(failure) = shared.admit(Provider::Solana, keys.len()).await {
        return failure;
    }
    let id = request.get("id").cloned().unwrap_or(json!(1));
    let error = |code: i64, message: &str| json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id});
    let context = json!({"apiVersion": "2.2.7", "slot": SLOT});
    let answer = match method {
        "getMultipleAccounts" if keys.len() > 100 => {
            error(-32602, "Too many inputs provided; max 100")
        }
        "getMultipleAccounts" => {
            let values: Vec<Value> = keys
                .iter()
                .map(|key| match (shared.token(key), shared.wallets.get(key)) {
                    (Some(token), _) if token.exists => mint_account(&token),
                    (_, Some(wallet)) => wallet.clone(),
                    _ => shared.holder_account(key).unwrap_or(Value::Null),
                })
                .collect();
            json!({"jsonrpc": "2.0", "result": {"context": context, "value": values}, "id": id})
        }
        "getTokenLargestAccounts" => match keys.first().and_then(|m| shared.token(m)) {
            Some(token) if token.exists => {
                let value: Vec<Value> = token
                    .largest()
                    .into_iter()
                    .take(20)
                    .map(|(address, _, amount)| {
                        json!({"address": address, "amount": amount.to_string(), "decimals": 6,
                               "uiAmount": amount as f64 / 1e6, "uiAmountString": (amount as f64 / 1e6).to_string()})
                    })
                    .collect();
                json!({"jsonrpc": "2.0", "result": {"context": context, "value": value}, "id": id})
            }
            _ => error(-32602, "Invalid param: could not find mint"),
        },
        _ => error(-32601, "Method not found"),
    };
    shared.answer(StatusCode::OK, &answer)
}

/// The slot every stand-in RPC answer is read at (epoch 800 on mainnet's
/// schedule).
pub const SLOT: u64 = 345_678_901;
