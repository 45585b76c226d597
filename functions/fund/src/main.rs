//! The `fund` binary: the fund function on a local listener.
//!
//! `FF_ADDR` (default `127.0.0.1:3001`) and `FF_DATA_DIR` (default `./data`)
//! choose where it listens and where the embedded store lives; with the KV
//! variables set it uses the KV REST store instead. Under AWS Lambda
//! (`AWS_LAMBDA_RUNTIME_API` set) it serves the same router through the
//! Lambda runtime ([`fund::lambda`]). Locally the listener is
//! [`freedom_shared::server`] (timeouts, connection cap, bounded shutdown).

use freedom_shared::config;
use freedom_shared::server::{self, ServerLimits};
use freedom_shared::store::Stores;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => server::fatal("fund", error.as_ref()),
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let lookup = |name: &str| std::env::var(name).ok();
    if config::is_lambda(lookup) {
        return fund::lambda::serve()
            .await
            .map_err(|e| e.to_string().into());
    }
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let addr = lookup("FF_ADDR").unwrap_or_else(|| "127.0.0.1:3001".into());
    let write_token = config::write_token(lookup)?;
    let stores = Stores::from_env(lookup)?;
    let state = fund::AppState::new(stores.ledger, write_token)
        .with_events(freedom_shared::events::EventBus::from_env(lookup).await);
    let (limits, _) = ServerLimits::default().fitted_to_descriptors();
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    tracing::info!(addr = %listener.local_addr()?, store = %stores.description, "fund listening");
    server::serve(
        listener,
        fund::app(state),
        limits,
        server::shutdown_signal(),
    )
    .await?;
    Ok(())
}
