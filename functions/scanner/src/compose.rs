//! The scanner's composition root, which the Lambda start-up
//! ([`crate::lambda`]) and freedom-local both call: the providers' HTTP
//! clients from the configuration, the ledger the paper snapshots go to
//! (with the guard that knows the write token), and the runner on the
//! scan store.

use crate::state::AppState;
use freedom_shared::adapters::{Stores, http_providers};
use freedom_shared::clock::{Clock, system_clock};
use freedom_shared::config::ScannerConfig;
use freedom_shared::config::WriteToken;
use freedom_shared::record::Guard;
use freedom_shared::service::Ledger;
use freedom_shared::service::ScanRunner;
use std::sync::Arc;

/// The scanner on `stores` (its lock and state, and the fund ledger its
/// paper snapshots go to), asking the providers over HTTP, reading the
/// wall clock.
pub fn scanner(
    config: ScannerConfig,
    stores: &Stores,
    write_token: Option<WriteToken>,
) -> AppState {
    scanner_at(config, stores, write_token, system_clock())
}

/// The same reading `clock` (tests).
pub fn scanner_at(
    config: ScannerConfig,
    stores: &Stores,
    write_token: Option<WriteToken>,
    clock: Clock,
) -> AppState {
    let guard = Guard::new(write_token.as_ref().map(WriteToken::expose));
    let ledger = Ledger::new(
        Arc::clone(&stores.ledger) as _,
        Arc::clone(&stores.ledger) as _,
        guard,
    )
    .with_clock(clock.clone());
    let providers = http_providers(&config);
    let runner = ScanRunner::new(config, providers, Arc::clone(&stores.scan), ledger, clock);
    AppState {
        runner: Arc::new(runner),
        write_token,
    }
}
