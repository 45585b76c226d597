//! What the fund's handlers share: the use cases, never a store, and no
//! bytes (each read use case keeps its own answers per head).

use freedom_shared::config::Benchmarks;
use freedom_shared::config::WriteToken;
use freedom_shared::ports::Events;
use freedom_shared::ports::{LedgerStore, ScanStore, SeriesReads};
use freedom_shared::record::Guard;
use freedom_shared::service::Contracts;
use freedom_shared::service::Dashboards;
use freedom_shared::service::Exports;
use freedom_shared::service::Ledger;
use freedom_shared::service::Log;
use freedom_shared::service::Pages;
use freedom_shared::tlog::DEFAULT_ORIGIN;
use std::sync::Arc;

/// What the fund handlers share: the use cases, each on the one ledger
/// store (no handler touches a store), and the write token.
#[derive(Clone)]
pub struct AppState {
    /// The ledger: appends (which announce their events) and pages. (Every
    /// field is shared: axum clones the state for each request.)
    pub ledger: Arc<Ledger>,
    /// The write token; `None` disables writes (503 `writes_disabled`).
    pub write_token: Option<WriteToken>,
    /// Dashboards of the latest head, answered from memory when repeated.
    pub dashboards: Arc<Dashboards>,
    /// The page's data (`GET /`), its HTML kept per head and period.
    pub pages: Arc<Pages>,
    /// The contract view's registrations, its JSON kept per head.
    pub contracts: Arc<Contracts>,
    /// The ledger as a C2SP transparency log: checkpoints, tiles, proofs.
    pub log: Arc<Log>,
    /// Series exports from any cursor (a few computed at once), and the feed.
    pub exports: Arc<Exports>,
    /// Where the scanner saves how its last run ended, which the page
    /// shows (kept only to build the page again when the ledger or log is
    /// replaced).
    scanner: Option<Arc<dyn ScanStore>>,
}

impl AppState {
    /// The use cases on `store`, with an unsigned log; the guard also
    /// refuses records containing the token.
    pub fn new(store: Arc<dyn LedgerStore>, write_token: Option<WriteToken>) -> AppState {
        let guard = Guard::new(write_token.as_ref().map(WriteToken::expose));
        let ledger = Arc::new(Ledger::new(
            Arc::clone(&store) as _,
            Arc::clone(&store) as _,
            guard,
        ));
        let dashboards = Arc::new(Dashboards::new(Arc::clone(&store) as Arc<dyn SeriesReads>));
        let log = Arc::new(
            Log::new(Arc::clone(&store) as _, DEFAULT_ORIGIN, None).expect("an unsigned log"),
        );
        AppState {
            pages: Arc::new(Pages::new(
                Arc::clone(&dashboards),
                Arc::clone(&ledger),
                Arc::clone(&log),
            )),
            contracts: Arc::new(Contracts::new(Arc::clone(&ledger))),
            ledger,
            write_token,
            dashboards,
            log,
            exports: Arc::new(Exports::new(Arc::clone(&store) as _, store)),
            scanner: None,
        }
    }

    /// The same state with the page and the contract read through the
    /// current ledger and log (after one of them was replaced).
    fn rewired(mut self) -> AppState {
        let pages = Pages::new(
            Arc::clone(&self.dashboards),
            Arc::clone(&self.ledger),
            Arc::clone(&self.log),
        );
        self.pages = Arc::new(match &self.scanner {
            Some(store) => pages.with_scanner(Arc::clone(store)),
            None => pages,
        });
        self.contracts = Arc::new(Contracts::new(Arc::clone(&self.ledger)));
        self
    }

    /// The same state publishing the ledger as `log` (built on the same
    /// store: its checkpoints signed with its key, which the guard then
    /// refuses in records).
    pub fn with_log(mut self, log: Log) -> AppState {
        self.ledger = Arc::new(
            Arc::unwrap_or_clone(self.ledger)
                .with_signing_secrets(log.secret_texts())
                .with_witnessed_times(log.witnessed_times()),
        );
        self.dashboards = Arc::new(self.dashboards.with_witnessed_times(log.witnessed_times()));
        self.log = Arc::new(log);
        self.rewired()
    }

    /// The same state comparing each mode's series with `benchmarks`.
    pub fn with_benchmarks(mut self, benchmarks: Benchmarks) -> AppState {
        self.dashboards = Arc::new(self.dashboards.with_benchmarks(benchmarks));
        self.rewired()
    }

    /// The same state with the page showing how the scanner's last run,
    /// saved in `store`, ended.
    pub fn with_scanner(mut self, store: Arc<dyn ScanStore>) -> AppState {
        self.scanner = Some(store);
        self.rewired()
    }

    /// The same state reading `clock` for "now" (tests).
    pub fn with_clock(mut self, clock: freedom_shared::clock::Clock) -> AppState {
        self.ledger = Arc::new(Arc::unwrap_or_clone(self.ledger).with_clock(clock));
        self.rewired()
    }

    /// The same state announcing new leaves to `events`.
    pub fn with_events(mut self, events: Events) -> AppState {
        self.ledger = Arc::new(Arc::unwrap_or_clone(self.ledger).with_events(events));
        self.rewired()
    }
}
