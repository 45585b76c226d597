//! The `scanner` binary: the scanner function's Lambda package
//! ([`scanner::lambda`]): one runtime loop serves HTTP and the EventBridge
//! schedule.
//!
//! It needs `AWS_LAMBDA_RUNTIME_API` (set by Lambda, by `sam local` and by
//! `cargo lambda watch`). To run the scanner on a plain port with its
//! quarter-hour schedule, run freedom-local.

use std::process::ExitCode;

// One invocation at a time is all Lambda ever sends an execution
// environment, so one thread runs them: no worker threads to start (and
// none to share a small function's fraction of a vCPU with).
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // Boxed: the run's future is deep enough to pass the compiler's layout
    // depth limit when inlined into `main`'s.
    match Box::pin(scanner::lambda::serve()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => freedom_shared::errors::fatal("scanner", error.as_ref()),
    }
}
