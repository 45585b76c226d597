//! What the fund's handlers share: the use cases, never a store.

use freedom_shared::config::WriteToken;
use freedom_shared::ports::event_sink::Events;
use freedom_shared::ports::ledger_store::{LedgerStore, SeriesReads};
use freedom_shared::record::guard::Guard;
use freedom_shared::service::dashboard::{Dashboards, PeriodCache};
use freedom_shared::service::exports::Exports;
use freedom_shared::service::head_cache::HeadCache;
use freedom_shared::service::ledger::Ledger;
use freedom_shared::service::log::Log;
use freedom_shared::tlog::DEFAULT_ORIGIN;
use freedom_shared::web::Encoded;
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
    /// The page (`GET /`) of the latest head by period, rendered once and
    /// compressed at most once per coding.
    pub pages: Arc<PeriodCache<Arc<Encoded>>>,
    /// The dashboards' JSON bodies of the latest head by period, compressed
    /// at most once per coding.
    pub dashboard_bodies: Arc<PeriodCache<Arc<Encoded>>>,
    /// The contract view's JSON body of the latest head (it names the
    /// experiments' registrations, which are ledger records), compressed at
    /// most once per coding.
    pub contract_bodies: Arc<HeadCache<(), Arc<Encoded>>>,
    /// The ledger as a C2SP transparency log: checkpoints, tiles, proofs.
    pub log: Arc<Log>,
    /// Series exports from any cursor (a few computed at once), and the feed.
    pub exports: Arc<Exports>,
}

impl AppState {
    /// The use cases on `store`, with an unsigned log; the guard also
    /// refuses records containing the token.
    pub fn new(store: Arc<dyn LedgerStore>, write_token: Option<WriteToken>) -> AppState {
        let guard = Guard::new(write_token.as_ref().map(WriteToken::expose));
        AppState {
            ledger: Arc::new(Ledger::new(
                Arc::clone(&store) as _,
                Arc::clone(&store) as _,
                guard,
            )),
            write_token,
            dashboards: Arc::new(Dashboards::new(Arc::clone(&store) as Arc<dyn SeriesReads>)),
            pages: Arc::new(PeriodCache::default()),
            dashboard_bodies: Arc::new(PeriodCache::default()),
            contract_bodies: Arc::new(HeadCache::new(1)),
            log: Arc::new(
                Log::new(Arc::clone(&store) as _, DEFAULT_ORIGIN, None).expect("an unsigned log"),
            ),
            exports: Arc::new(Exports::new(Arc::clone(&store) as _, store)),
        }
    }

    /// The same state publishing the ledger as `log` (built on the same
    /// store: its checkpoints signed with its key, which the guard then
    /// refuses in records).
    pub fn with_log(mut self, log: Log) -> AppState {
        self.ledger =
            Arc::new(Arc::unwrap_or_clone(self.ledger).with_signing_secrets(log.secret_texts()));
        self.log = Arc::new(log);
        self
    }

    /// The same state reading `clock` for "now" (tests).
    pub fn with_clock(mut self, clock: freedom_shared::clock::Clock) -> AppState {
        self.ledger = Arc::new(Arc::unwrap_or_clone(self.ledger).with_clock(clock));
        self
    }

    /// The same state announcing new leaves to `events`.
    pub fn with_events(mut self, events: Events) -> AppState {
        self.ledger = Arc::new(Arc::unwrap_or_clone(self.ledger).with_events(events));
        self
    }
}
