//! The `fund` binary: the fund function's Lambda package ([`fund::lambda`]).
//!
//! It serves the router through the Lambda Runtime API, so it needs
//! `AWS_LAMBDA_RUNTIME_API` (set by Lambda, by `sam local` and by
//! `cargo lambda watch`). To serve the fund on a plain port, run
//! freedom-local, which serves both functions on the embedded store.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match fund::lambda::serve().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => freedom_shared::errors::fatal("fund", error.as_ref()),
    }
}
