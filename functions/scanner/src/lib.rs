//! # scanner
//!
//! The scanner function: `/api/freedom-scanner`. `GET` answers the latest
//! report with one store read (every named part empty before the first run)
//! and never starts a run. `POST` (with the write token) runs the scanner
//! once and answers the new report, or `409 scanner_busy` while another run
//! holds the lock. The schedule (EventBridge, or freedom-local's timer)
//! calls the same [`ScanRunner::run`](freedom_shared::service::ScanRunner::run).
//! The crate is the scanner's edge only, read top-down:
//!
//! - `lambda` (feature `lambda`, the default): the Lambda runtime loop
//!   (HTTP and the schedule), the `scanner` binary;
//! - `router`: the route, its views and the one mapping of a run's error;
//! - [`compose`]: the composition root the Lambda start-up and
//!   freedom-local share (the providers' HTTP clients, the ledger, the
//!   runner);
//! - [`state`]: what the handlers share.
//!
//! The run is a use case of the common crate
//! (`freedom_shared::service::scan`), asking its providers through ports
//! (`freedom_shared::ports::providers`) whose HTTP adapters are
//! `freedom_shared::adapters::providers`; the configuration is
//! `freedom_shared::config::scanner`; the checks, experiments, state and
//! report are [`freedom_shared::scan`].

pub mod compose;
#[cfg(feature = "lambda")]
pub mod lambda;
mod router;
pub mod state;

pub use router::{SCANNER_PATH, app, routes};
pub use state::AppState;
