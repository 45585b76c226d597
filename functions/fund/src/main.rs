//! The `fund` binary: the fund function's Lambda package ([`fund::lambda`]).
//!
//! It serves the router through the Lambda Runtime API, so it needs
//! `AWS_LAMBDA_RUNTIME_API` (set by Lambda, by `sam local` and by
//! `cargo lambda watch`). To serve the fund on a plain port, run
//! freedom-local, which serves both functions on the embedded store.

use std::process::ExitCode;

// One invocation at a time is all Lambda ever sends an execution
// environment, so one thread runs them: no worker threads to start (and
// none to share a small function's fraction of a vCPU with).
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match fund::lambda::serve().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => freedom_shared::errors::fatal("fund", error.as_ref()),
    }
}
