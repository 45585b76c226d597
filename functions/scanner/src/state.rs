//! What the scanner's handlers share: the runner (the scanner's use case)
//! and the write token. [`crate::compose`] builds it.

use freedom_shared::config::WriteToken;
use freedom_shared::ports::Events;
use freedom_shared::service::ScanRunner;
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
    /// The same state publishing to `events`.
    pub fn with_events(self, events: Events) -> AppState {
        let runner = ScanRunner::clone(&self.runner).with_events(events);
        AppState {
            runner: Arc::new(runner),
            write_token: self.write_token,
        }
    }
}
