//! The `scanner` binary: the scanner function on a local listener.
//!
//! `FF_ADDR` (default `127.0.0.1:3002`) and `FF_DATA_DIR` (default `./data`)
//! as for `fund`; the KV variables select the KV REST store. Runs happen on
//! `POST /api/freedom-scanner` (freedom-local adds the 15-minute schedule).
//! Under AWS Lambda (`AWS_LAMBDA_RUNTIME_API` set) one runtime loop serves
//! HTTP and the EventBridge schedule ([`scanner::lambda`]). Locally the
//! listener is [`freedom_shared::server`].

use freedom_shared::config;
use freedom_shared::server::{self, ServerLimits};
use freedom_shared::store::Stores;
use scanner::config::ScannerConfig;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    // Boxed: the run's future is deep enough to pass the compiler's layout
    // depth limit when inlined into `main`'s.
    match Box::pin(run()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => server::fatal("scanner", error.as_ref()),
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let lookup = |name: &str| std::env::var(name).ok();
    if config::is_lambda(lookup) {
        return scanner::lambda::serve()
            .await
            .map_err(|e| e.to_string().into());
    }
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let addr = lookup("FF_ADDR").unwrap_or_else(|| "127.0.0.1:3002".into());
    let write_token = config::write_token(lookup)?;
    let scanner_config = ScannerConfig::from_env(lookup)?;
    let stores = Stores::from_env(lookup)?;
    let state = scanner::AppState::new(scanner_config, &stores, write_token)
        .with_events(freedom_shared::events::EventBus::from_env(lookup).await);
    let (limits, _) = ServerLimits::default().fitted_to_descriptors();
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    tracing::info!(addr = %listener.local_addr()?, store = %stores.description, "scanner listening");
    server::serve(
        listener,
        scanner::app(state),
        limits,
        server::shutdown_signal(),
    )
    .await?;
    Ok(())
}
