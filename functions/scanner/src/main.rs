//! The `scanner` binary: the scanner function on a local listener
//! (`FF_ADDR`, default `127.0.0.1:3002`).

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let addr = std::env::var("FF_ADDR").unwrap_or_else(|_| "127.0.0.1:3002".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    tracing::info!(addr = %listener.local_addr()?, "scanner listening");
    axum::serve(listener, scanner::app()).await?;
    Ok(())
}
