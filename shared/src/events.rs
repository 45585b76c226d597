//! Events to outside consumers (DESIGN.md "Events to outside consumers"):
//! when `FF_EVENT_BUS_NAME` is set, the functions publish to EventBridge
//! that a record was appended, that a scanner run completed, and each paper
//! trade. Publishing is best effort: entries go in batches of at most 10
//! (the `PutEvents` limit), a failure is logged and never fails the write
//! or the run, and a slow bus is given up after [`PUBLISH_TIMEOUT`].
//!
//! `FF_EVENTBRIDGE_ENDPOINT` overrides the endpoint (tests use moto's
//! server); region and credentials come from the usual AWS variables (on
//! Lambda: the function's role, from `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`).

use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use serde_json::Value;
use std::time::Duration;

/// The `source` of every event.
pub const SOURCE: &str = "freedom-fund";
/// Entries per `PutEvents` call (the service's limit).
pub const BATCH: usize = 10;
/// How long a publish may take before it is abandoned.
pub const PUBLISH_TIMEOUT: Duration = Duration::from_secs(3);

/// One event: its `detail-type` and its JSON detail.
#[derive(Debug, Clone, PartialEq)]
pub struct OutsideEvent {
    /// e.g. `RecordAppended`, `ScannerRunCompleted`, `PaperTrade`.
    pub detail_type: &'static str,
    /// The event's detail.
    pub detail: Value,
}

impl OutsideEvent {
    /// The event for a new leaf: where it is and what it is, not the record
    /// itself (readers fetch it from the ledger).
    pub fn record_appended(receipt: &crate::ledger::Receipt) -> OutsideEvent {
        let record: Value = serde_json::from_str(&receipt.entry.canonical).unwrap_or_default();
        OutsideEvent {
            detail_type: "RecordAppended",
            detail: serde_json::json!({
                "seq": receipt.entry.seq,
                "leafHash": receipt.entry.leaf_hash,
                "id": record["id"], "type": record["type"], "mode": record["mode"],
                "strategyId": record["strategyId"], "asOf": record["asOf"],
                "head": receipt.head,
            }),
        }
    }
}

/// Where events go: an EventBridge bus, or nowhere.
#[derive(Debug, Clone, Default)]
pub struct EventBus {
    target: Option<(aws_sdk_eventbridge::Client, String)>,
}

impl EventBus {
    /// No bus: [`EventBus::publish`] does nothing.
    pub fn none() -> EventBus {
        EventBus::default()
    }

    /// The bus named by `FF_EVENT_BUS_NAME`, if set, with the endpoint in
    /// `FF_EVENTBRIDGE_ENDPOINT` if set.
    pub async fn from_env(lookup: impl Fn(&str) -> Option<String>) -> EventBus {
        let Some(bus) = lookup("FF_EVENT_BUS_NAME").filter(|b| !b.trim().is_empty()) else {
            return EventBus::none();
        };
        let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest());
        let region = lookup("AWS_REGION")
            .or_else(|| lookup("AWS_DEFAULT_REGION"))
            .unwrap_or_else(|| "us-east-1".to_owned());
        loader = loader.region(aws_config::Region::new(region));
        // Lambda puts the role's credentials in these variables; elsewhere
        // the default chain (profiles, instance roles) applies.
        if let (Some(key), Some(secret)) =
            (lookup("AWS_ACCESS_KEY_ID"), lookup("AWS_SECRET_ACCESS_KEY"))
        {
            let credentials = aws_sdk_eventbridge::config::Credentials::new(
                key,
                secret,
                lookup("AWS_SESSION_TOKEN"),
                None,
                "environment",
            );
            loader = loader.credentials_provider(credentials);
        }
        if let Some(endpoint) = lookup("FF_EVENTBRIDGE_ENDPOINT").filter(|e| !e.trim().is_empty()) {
            loader = loader.endpoint_url(endpoint);
        }
        let config = loader.load().await;
        EventBus {
            target: Some((aws_sdk_eventbridge::Client::new(&config), bus)),
        }
    }

    /// Whether events go anywhere.
    pub fn is_configured(&self) -> bool {
        self.target.is_some()
    }

    /// Publishes `events` in batches of [`BATCH`]; returns how many the bus
    /// accepted. Never fails: problems are logged.
    pub async fn publish(&self, events: Vec<OutsideEvent>) -> usize {
        let Some((client, bus)) = &self.target else {
            return 0;
        };
        let mut accepted = 0;
        for batch in events.chunks(BATCH) {
            let entries: Vec<PutEventsRequestEntry> = batch
                .iter()
                .map(|event| {
                    PutEventsRequestEntry::builder()
                        .event_bus_name(bus)
                        .source(SOURCE)
                        .detail_type(event.detail_type)
                        .detail(event.detail.to_string())
                        .build()
                })
                .collect();
            let call = client.put_events().set_entries(Some(entries)).send();
            match tokio::time::timeout(PUBLISH_TIMEOUT, call).await {
                Ok(Ok(output)) => {
                    let failed = output.failed_entry_count().max(0) as usize;
                    if failed > 0 {
                        tracing::warn!(failed, "EventBridge refused some events");
                    }
                    accepted += batch.len().saturating_sub(failed);
                }
                Ok(Err(error)) => {
                    tracing::warn!(error = %aws_sdk_eventbridge::error::DisplayErrorContext(&error), "publishing events failed");
                }
                Err(_) => tracing::warn!("publishing events timed out"),
            }
        }
        accepted
    }
}
