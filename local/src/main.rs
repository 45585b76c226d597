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
use std::net::SocketAddr;
use std::path::PathBuf;

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
    let fund_state = fund::AppState::new(stores.ledger, write_token);
    let app = fund::routes(fund_state)
        .merge(scanner::routes())
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
        tracing::info!(
            "scanner schedule: every 15 minutes once the scanner's run is available; this build serves its read endpoint only"
        );
    }
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    tracing::info!("freedom-local stopped");
    Ok(())
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
