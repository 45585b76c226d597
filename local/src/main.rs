//! `freedom-local`: both functions and the scanner schedule on one machine.
//!
//! ```text
//! freedom-local [--addr 127.0.0.1:3000] [--data-dir ./data] [--no-schedule]
//! ```
//!
//! Serves `/api/freedom-fund` and `/api/freedom-scanner` on one port, on the
//! embedded store in the data dir, or on the KV REST store when its variables
//! are set (DESIGN.md "Configuration"; the data dir is then unused). It logs where it listens and which store
//! it uses, and shuts down cleanly on SIGINT or SIGTERM (in-flight requests
//! finish; every acknowledged append is already on disk).

use clap::Parser;
use freedom_shared::config;
use freedom_shared::store::Stores;
use scanner::config::ScannerConfig;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

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
    /// Do not run the scanner every 15 minutes.
    #[arg(long)]
    no_schedule: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let options = Options::parse();
    let lookup = |name: &str| std::env::var(name).ok();
    let kv = config::kv_config(lookup)?;
    let stores = Stores::open(kv.as_ref(), &options.data_dir)?;
    let write_token = config::write_token(lookup);
    match &write_token {
        None => tracing::warn!(
            "FF_AGENT_WRITE_TOKEN is not set: every POST answers 503 writes_disabled"
        ),
        // Records containing the token are refused; a short token would refuse ordinary words.
        Some(token) if token.expose().chars().count() < 16 => {
            tracing::warn!(
                "FF_AGENT_WRITE_TOKEN is shorter than 16 characters: use a long random token"
            )
        }
        Some(_) => {}
    }
    let events = freedom_shared::events::EventBus::from_env(lookup).await;
    let scanner_state = scanner::AppState::new(
        ScannerConfig::from_env(lookup)?,
        &stores,
        write_token.clone(),
    )
    .with_events(events.clone());
    let fund_state =
        fund::AppState::new(Arc::clone(&stores.ledger), write_token).with_events(events);
    let schedule = scanner_state.scanner.clone();
    let app = fund::routes(fund_state)
        .merge(scanner::routes(scanner_state))
        .fallback(freedom_shared::http::not_found);

    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    tracing::info!(
        addr = %listener.local_addr()?,
        store = %stores.description,
        "freedom-local listening"
    );
    if options.no_schedule {
        tracing::info!("scanner schedule off (--no-schedule)");
    } else {
        tracing::info!("scanner schedule: every 15 minutes, on :00, :15, :30 and :45");
        tokio::spawn(run_every_quarter_hour(schedule));
    }
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    tracing::info!("freedom-local stopped");
    Ok(())
}

/// Runs the scanner at every quarter hour of the wall clock, like the
/// EventBridge rule in production; a run that finds the lock held is skipped.
async fn run_every_quarter_hour(scanner: Arc<scanner::run::Scanner>) {
    loop {
        let now = chrono::Utc::now();
        let next = freedom_shared::scanner::grid_slot(now) + freedom_shared::scanner::LEDGER_GRID;
        let wait = (next - now).to_std().unwrap_or_default();
        tokio::time::sleep(wait).await;
        match scanner.run().await {
            Ok(report) => {
                tracing::info!(status = %report["status"], "scheduled scanner run finished")
            }
            Err(error) => tracing::warn!(%error, "scheduled scanner run did not finish"),
        }
    }
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => tracing::info!("SIGINT received, shutting down"),
        _ = terminate => tracing::info!("SIGTERM received, shutting down"),
    }
}
