//! # scanner
//!
//! The scanner function: `/api/freedom-scanner`. `GET` answers the latest
//! report with one store read (every named part empty before the first run)
//! and never starts a run. `POST` (with the write token) runs the scanner
//! once and answers the new report, or `409 scanner_busy` while another run
//! holds the lock. The schedule (EventBridge, or freedom-local's timer)
//! calls the same [`run::ScanRunner::run`].
//!
//! - [`providers`]: DexScreener, RugCheck and Solana RPC clients;
//! - [`run`]: one run, under the lock;
//! - `lambda` (feature `lambda`, the default): the Lambda runtime loop
//!   (HTTP and the schedule), the `scanner` binary;
//! - [`config`]: the universe, wallets and provider URLs;
//! - [`state`] and `router`: what the handlers share, and the route.
//!
//! The checks, experiments, state and report are in
//! [`freedom_shared::scan`].

pub mod config;
#[cfg(feature = "lambda")]
pub mod lambda;
pub mod providers;
mod router;
pub mod run;
pub mod state;

pub use freedom_shared::scan::report::empty_report;
pub use router::{SCANNER_PATH, app, routes};
pub use state::AppState;
