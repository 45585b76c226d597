//! The providers' stand-in as a program, to watch the scanner work with no
//! internet:
//!
//! ```text
//! cargo run -p freedom-testkit --bin provider-standin [ADDR]   # default 127.0.0.1:4000
//! ```
//!
//! It prints the variables that point the scanner at it (with the fixture
//! tokens as the universe); export them, start freedom-local, and POST
//! `/api/freedom-scanner`.

use freedom_testkit::provider_standin::{ProviderStandIn, fixture_tokens};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:4000".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let stand_in = ProviderStandIn::serve(listener, fixture_tokens())?;
    for (name, value) in stand_in.env() {
        println!("export {name}='{value}'");
    }
    eprintln!("provider stand-in on {} (Ctrl-C to stop)", stand_in.url());
    tokio::signal::ctrl_c().await?;
    Ok(())
}
