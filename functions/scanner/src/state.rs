//! What the scanner's handlers share: the runner (the scanner's use case)
//! and the write token.

use crate::config::ScannerConfig;
use crate::run::ScanRunner;
use freedom_shared::adapters::stores::Stores;
use freedom_shared::clock::Clock;
use freedom_shared::config::WriteToken;
use freedom_shared::ports::event_sink::Events;
use freedom_shared::record::guard::Guard;
use freedom_shared::service::ledger::Ledger;
use std::sync::Arc;

/// What the scanner handlers share.
#[derive(Clone)]
pub struct AppState {
    /// What runs scans.
    pub runner: Arc<ScanRunner>,
    /// The write token; `None` disables runs by POST (503 `writes_disabled`).
    pub write_token: Option<WriteToken>,
}

impl AppState {
    /// The scanner on `stores` (its lock and state, and the fund ledger its
    /// paper snapshots go to), reading the wall clock.
    pub fn new(
        config: ScannerConfig,
        stores: &Stores,
        write_token: Option<WriteToken>,
    ) -> AppState {
        AppState::with_clock(
            config,
            stores,
            write_token,
            freedom_shared::clock::system_clock(),
        )
    }

    /// The same with an injected clock (tests).
    pub fn with_clock(
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
        let runner = ScanRunner::new(config, Arc::clone(&stores.scan), ledger, clock);
        AppState {
            runner: Arc::new(runner),
            write_token,
        }
    }

    /// The same state publishing to `events`.
    pub fn with_events(self, events: Events) -> AppState {
        let runner = ScanRunner::clone(&self.runner).with_events(events);
        AppState {
            runner: Arc::new(runner),
            write_token: self.write_token,
        }
    }
}
