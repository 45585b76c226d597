//! `freedom-local`: both functions and the scanner schedule on one machine.
//!
//! ```text
//! freedom-local [--addr 127.0.0.1:3000] [--data-dir ./data] [--key-file <data-dir>.key]
//!               [--new-log] [--no-schedule] [--max-connections N] [--head-timeout-secs S]
//!               [--shutdown-grace-secs S] [--cosign-interval-secs S] [--policy-file F]
//! ```
//!
//! Serves `/api/freedom-fund` and `/api/freedom-scanner` on one port, on the
//! embedded store in the data dir, or on the KV REST store when its variables
//! are set (docs/operating.md, "Configuration"; the data dir is then unused). It logs
//! where it listens and which store it uses. The listener is
//! the hardened listener ([`freedom_shared::web::serve`]): request-head and body timeouts, a connection
//! cap below the descriptor limit, JSON errors from the HTTP layer too. On
//! SIGINT or SIGTERM it stops accepting, gives in-flight requests a bounded
//! grace period, and exits (every acknowledged append is already on disk).
//! A configuration mistake stops it at start with one sentence naming the
//! variable. The log's checkpoints are signed with `FF_LOG_SIGNING_KEY`, or
//! with the key kept in the key file (`--key-file`, by default
//! `<data-dir>.key`, outside the data dir; [`signing_key`]); the verifier key
//! is logged at start. The log remembers the largest checkpoint it signed
//! beside the key file (`<key file>.signed`) and in the store, and never
//! signs a head that does not extend both (nor, with a witness policy, what
//! the witnesses hold); a ledger that is gone while it remembers one stops
//! start-up ([`custody`]). With no memory at all (a key from the
//! environment on a fresh data dir), a non-empty ledger is signed only once
//! the witnesses or `--new-log` say so; start-up says which. With a witness
//! policy (`FF_LOG_POLICY`, or a file: `FF_LOG_POLICY_FILE`, `--policy-file`), a cosigning round runs at start and every
//! `--cosign-interval-secs` (60 by default, like the fund's schedule under
//! Lambda), and `/log/checkpoint` serves the newest witnessed checkpoint.

mod custody;
mod signing_key;

use clap::Parser;
use freedom_shared::adapters::Stores;
use freedom_shared::config::ScannerConfig;
use freedom_shared::config::{self, LogConfig};
use freedom_shared::errors::fatal;
use freedom_shared::ports::SignerMemory as _;
use freedom_shared::service::ScanRunner;
use freedom_shared::service::{CosignSchedule, CustodyStatus, Log, UNWITNESSED_CUSTODY};
use freedom_shared::web::{self, ServerLimits};
use fund::compose::LogParts;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(
    name = "freedom-local",
    about = "Run Freedom Fund's fund and scanner functions locally (embedded store, or the KV REST store when configured)"
)]
struct Options {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:3000")]
    addr: SocketAddr,
    /// Directory of the embedded store (unused when the KV REST store is configured).
    #[arg(long, default_value = "./data")]
    data_dir: PathBuf,
    /// The log's signing key file when FF_LOG_SIGNING_KEY is unset (generated on first
    /// start), and beside it, always, `<key file>.signed`, the memory of what it signed.
    /// Default: `<data-dir>.key`, beside the data dir; never inside it.
    #[arg(long)]
    key_file: Option<PathBuf>,
    /// Sign the ledger as it is although nothing remembers what this key signed (a key
    /// from the environment on a fresh store, or a lost memory): say it only when the key
    /// has signed nothing this ledger does not extend. Refused while the key remembers.
    #[arg(long)]
    new_log: bool,
    /// Do not run the scanner every 15 minutes.
    #[arg(long)]
    no_schedule: bool,
    /// The witness policy's file (c2sp.org/tlog-policy text), as
    /// FF_LOG_POLICY_FILE; instead of FF_LOG_POLICY, never with it.
    #[arg(long)]
    policy_file: Option<PathBuf>,
    /// Seconds between cosigning rounds, when FF_LOG_POLICY names witnesses.
    #[arg(long, default_value_t = 60)]
    cosign_interval_secs: u64,
    /// Most connections served at once (lowered below the descriptor limit if need be).
    #[arg(long, default_value_t = ServerLimits::default().max_connections)]
    max_connections: usize,
    /// Seconds a connection has to deliver a whole request head (also closes idle connections).
    #[arg(long, default_value_t = ServerLimits::default().head_timeout.as_secs())]
    head_timeout_secs: u64,
    /// Seconds in-flight requests get to finish after SIGINT or SIGTERM.
    #[arg(long, default_value_t = ServerLimits::default().shutdown_grace.as_secs())]
    shutdown_grace_secs: u64,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let options = Options::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return fatal("freedom-local", &error),
    };
    match runtime.block_on(run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fatal("freedom-local", error.as_ref()),
    }
}

async fn run(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let lookup = |name: &str| std::env::var(name).ok();
    let kv = config::kv_config(lookup)?;
    let write_token = config::write_token(lookup)?;
    let scanner_config = ScannerConfig::from_env(lookup)?;
    let events = events_from_env(lookup).await?;
    let log_config = config::log_config(lookup)?;
    let key_file = match &options.key_file {
        Some(path) => path.clone(),
        None => signing_key::default_key_file(&options.data_dir)?,
    };
    signing_key::place_key_file(&options.data_dir, &key_file)?;
    let key = signing_key::local_key(&log_config, &key_file)?;
    let new_log = options.new_log || log_config.new_log;
    let memory = custody::memory(&key_file);
    let remembered = custody::remembered_size(&memory, &key.verifier()).await?;
    custody::check_before_open(remembered, kv.as_ref(), &options.data_dir, &memory)?;
    let stores = Stores::open(kv.as_ref(), &options.data_dir)?;
    custody::check_after_open(
        remembered,
        stores.ledger.as_ref(),
        &stores.description,
        &memory,
    )
    .await?;
    let log_config = LogConfig {
        origin: key.name().to_owned(),
        origin_configured: log_config.origin_configured,
        signing_key: Some(key),
        new_log,
    };
    let verifier = log_config.signing_key.as_ref().map(|key| key.verifier());
    let policy_file = options
        .policy_file
        .as_ref()
        .map(|path| path.to_string_lossy().into_owned());
    let policy = config::log_policy(
        |name: &str| match (name, &policy_file) {
            ("FF_LOG_POLICY_FILE", Some(path)) => Some(path.clone()),
            _ => lookup(name),
        },
        verifier.as_ref(),
    )?;
    match &policy {
        Some(policy) => tracing::info!(
            witnesses = policy.witnesses().len(),
            "log checkpoints are witnessed (FF_LOG_POLICY); a cosigning round runs every {} s",
            options.cosign_interval_secs
        ),
        None => tracing::warn!(key_memory = %memory.describe(), "{UNWITNESSED_CUSTODY}"),
    }
    let log = LogParts {
        config: log_config,
        key_memory: Some(Arc::new(memory)),
        policy,
    };
    let benchmarks = config::benchmarks(lookup)?;
    freedom_shared::service::check_benchmarks(&benchmarks, stores.ledger.as_ref()).await?;
    let fund_state = fund::compose::fund(&stores, log, write_token.clone(), events.clone())
        .with_benchmarks(benchmarks);
    let custody = fund_state.log.custody_status().await?;
    if new_log && let CustodyStatus::Remembers { size, memory } = &custody {
        return Err(format!(
            "--new-log (or FF_LOG_NEW_LOG) says this key signed nothing the ledger does not extend, but the log remembers signing {size} records ({memory}): drop --new-log; it is for a log with no memory of what its key signed"
        )
        .into());
    }
    if let Some(verifier) = fund_state.log.verifier_key() {
        tracing::info!(origin = fund_state.log.origin(), verifier_key = %verifier.to_text(), custody = %custody, "log checkpoints are signed");
    }
    if write_token.is_none() {
        tracing::warn!("FF_AGENT_WRITE_TOKEN is not set: every POST answers 503 writes_disabled");
    }
    let scanner_state =
        scanner::compose::scanner(scanner_config, &stores, write_token).with_events(events);
    let schedule = Arc::clone(&scanner_state.runner);
    let witnessed_log = fund_state.log.policy().map(|_| Arc::clone(&fund_state.log));
    let app = fund::routes(fund_state)
        .merge(scanner::routes(scanner_state))
        .fallback(freedom_shared::web::not_found);

    let (limits, descriptors) = ServerLimits {
        max_connections: options.max_connections.max(1),
        head_timeout: Duration::from_secs(options.head_timeout_secs.max(1)),
        shutdown_grace: Duration::from_secs(options.shutdown_grace_secs),
        ..ServerLimits::default()
    }
    .fitted_to_descriptors();
    let socket = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|error| {
            format!(
                "cannot listen on {}: {error} (another process may hold it; choose another address with --addr)",
                options.addr
            )
        })?;
    tracing::info!(
        addr = %socket.local_addr()?,
        store = %stores.description,
        max_connections = limits.max_connections,
        descriptor_limit = descriptors,
        "freedom-local listening"
    );
    if options.no_schedule {
        tracing::info!("scanner schedule off (--no-schedule)");
    } else {
        tracing::info!("scanner schedule: every 15 minutes, on :00, :15, :30 and :45");
        tokio::spawn(run_every_quarter_hour(Arc::clone(&schedule)));
    }
    let (stop, stopping) = watch::channel(false);
    if let Some(log) = witnessed_log {
        tokio::spawn(cosign_every(
            log,
            Duration::from_secs(options.cosign_interval_secs.max(1)),
            stopping.clone(),
        ));
    }
    let shutdown = async move {
        web::shutdown_signal().await;
        let _ = stop.send(true);
    };
    web::serve(socket, app, limits, shutdown).await?;
    // A run still under way is cut off when the process exits: its lock is
    // given back first, so the next start can run at once.
    schedule.release_held().await;
    tracing::info!("freedom-local stopped");
    Ok(())
}

/// Where events go: the bus `FF_EVENT_BUS_NAME` names when this binary has
/// the EventBridge adapter (feature `eventbridge`).
#[cfg(feature = "eventbridge")]
async fn events_from_env(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<freedom_shared::ports::Events, config::ConfigError> {
    Ok(freedom_shared::adapters::from_env(lookup).await)
}

/// Where events go: nowhere; a bus named for this build (without the
/// EventBridge adapter) stops start-up rather than dropping events unseen.
#[cfg(not(feature = "eventbridge"))]
async fn events_from_env(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<freedom_shared::ports::Events, config::ConfigError> {
    match lookup("FF_EVENT_BUS_NAME") {
        Some(bus) if !bus.trim().is_empty() => Err(config::ConfigError::NoEventBridge),
        _ => Ok(freedom_shared::ports::no_events()),
    }
}

/// Runs the cosigning rounds [`CosignSchedule`] plans, like the fund's
/// once-a-minute EventBridge rule in production: the first at once when
/// the ledger holds records (the checkpoint served after a restart is
/// witnessed within seconds), then one `interval` after each round ended,
/// whatever it did, so an idle process sleeps. A round asks no witness
/// unless the head moved or one is behind. A failing round is logged as a
/// warning when its reason changes (then at debug level), and at shutdown
/// a round under way is cut short with one line.
async fn cosign_every(log: Arc<Log>, interval: Duration, mut stopping: watch::Receiver<bool>) {
    let head = log.head().await.map_or(0, |head| head.size);
    let mut schedule = CosignSchedule::new(interval, chrono::Utc::now(), head);
    let mut last_failure: Option<String> = None;
    loop {
        let wait = schedule.wait(chrono::Utc::now());
        tokio::select! {
            () = stopped(&mut stopping) => return,
            () = tokio::time::sleep(wait) => {}
        }
        tokio::select! {
            () = stopped(&mut stopping) => {
                tracing::info!("shutting down: the cosigning round under way was cut short");
                return;
            }
            outcome = log.cosign(false) => match outcome {
                Ok(round) => {
                    last_failure = None;
                    if round.asked {
                        tracing::info!(
                            tree_size = round.tree_size,
                            quorum_met = round.quorum_met,
                            witnessed_size = round.witnessed_size,
                            "cosigning round"
                        );
                    }
                }
                Err(error) => {
                    let reason = error.to_string();
                    if last_failure.as_deref() == Some(reason.as_str()) {
                        tracing::debug!(%reason, "cosigning round did not finish");
                    } else {
                        tracing::warn!(%reason, "cosigning round did not finish; the next one retries");
                        last_failure = Some(reason);
                    }
                }
            },
        }
        schedule.ran(chrono::Utc::now());
    }
}

/// Resolves once `stopping` says the process is shutting down (or its
/// sender is gone).
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    let _ = stopping.wait_for(|stopping| *stopping).await;
}

/// Runs the scanner at every quarter hour of the wall clock, like the
/// EventBridge rule in production; a run that finds the lock held is skipped.
async fn run_every_quarter_hour(runner: Arc<ScanRunner>) {
    loop {
        let now = chrono::Utc::now();
        let next = freedom_shared::scan::next_grid_slot(now);
        let wait = (next - now).to_std().unwrap_or_default();
        tokio::time::sleep(wait).await;
        match runner.run().await {
            Ok(report) => {
                tracing::info!(
                    status = report.status.map_or("none", |s| s.as_str()),
                    "scheduled scanner run finished"
                )
            }
            Err(error) => tracing::warn!(%error, "scheduled scanner run did not finish"),
        }
    }
}
