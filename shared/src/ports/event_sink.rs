//! Events to outside consumers (docs/design.md, "Events to outside consumers"): a
//! record appended, a scanner run completed, a paper trade. Publishing is
//! best effort: a sink logs its failures and never fails the write or the
//! run that published. The adapter is [`crate::adapters::eventbridge`].

use async_trait::async_trait;
use serde_json::Value;
use std::sync::Arc;

/// One event: its kind (EventBridge's `detail-type`) and its JSON detail.
#[derive(Debug, Clone, PartialEq)]
pub struct OutsideEvent {
    /// `RecordAppended`, `ScannerRunCompleted` or `PaperTrade`.
    pub detail_type: &'static str,
    /// The event's detail.
    pub detail: Value,
}

/// Where events go.
#[async_trait]
pub trait EventSink: Send + Sync + 'static {
    /// Publishes `events`; answers how many the destination accepted. Never
    /// fails: problems are logged.
    async fn publish(&self, events: Vec<OutsideEvent>) -> usize;

    /// Whether events go anywhere (so callers can skip building them).
    fn is_enabled(&self) -> bool {
        true
    }
}

/// The event sink a function holds (shared, cheap to clone).
pub type Events = Arc<dyn EventSink>;

/// The sink for a deployment without an event bus: publishes nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoEvents;

#[async_trait]
impl EventSink for NoEvents {
    async fn publish(&self, _events: Vec<OutsideEvent>) -> usize {
        0
    }

    fn is_enabled(&self) -> bool {
        false
    }
}

/// No events: the default of every function.
pub fn no_events() -> Events {
    Arc::new(NoEvents)
}

/// A sink that keeps every event in memory, in order: for tests that check
/// what a use case published.
#[derive(Debug, Default)]
pub struct Recorded {
    events: std::sync::Mutex<Vec<OutsideEvent>>,
}

impl Recorded {
    /// Every event published so far.
    pub fn events(&self) -> Vec<OutsideEvent> {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[async_trait]
impl EventSink for Recorded {
    async fn publish(&self, events: Vec<OutsideEvent>) -> usize {
        let count = events.len();
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(events);
        count
    }
}
