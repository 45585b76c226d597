//! The event sink on Amazon EventBridge: when `FF_EVENT_BUS_NAME` is set, the
//! functions publish what they did (DESIGN.md "Events to outside
//! consumers"). Entries go in batches of at most 10 (the `PutEvents` limit);
//! a failure is logged and never fails the write or the run, and a slow bus
//! is given up after [`PUBLISH_TIMEOUT`].
//!
//! The SDK's configuration comes from `aws_config`'s default chain (region,
//! credentials, and endpoint: `AWS_ENDPOINT_URL_EVENTBRIDGE` points it at
//! another endpoint, as the tests do with moto's server). Its HTTP client is
//! built here on rustls with *ring* and the operating system's root
//! certificates, the TLS stack of [`super::outbound`], so a binary links one
//! crypto provider and one root store.

use crate::ports::event_sink::{EventSink, OutsideEvent};
use async_trait::async_trait;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use std::time::Duration;

/// The `source` of every event.
pub const SOURCE: &str = "freedom-fund";
/// Entries per `PutEvents` call (the service's limit).
pub const BATCH: usize = 10;
/// How long a publish may take before it is abandoned.
pub const PUBLISH_TIMEOUT: Duration = Duration::from_secs(3);

/// Publishes to one EventBridge bus.
#[derive(Debug, Clone)]
pub struct EventBridgeSink {
    client: aws_sdk_eventbridge::Client,
    bus: String,
}

impl EventBridgeSink {
    /// A sink publishing to `bus` with `config` (see [`sdk_config`]).
    pub fn new(config: &aws_config::SdkConfig, bus: impl Into<String>) -> EventBridgeSink {
        EventBridgeSink {
            client: aws_sdk_eventbridge::Client::new(config),
            bus: bus.into(),
        }
    }

    /// The sink for the bus named by `FF_EVENT_BUS_NAME`, configured by the
    /// default chain; `None` when no bus is named.
    pub async fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Option<EventBridgeSink> {
        let bus = lookup("FF_EVENT_BUS_NAME").filter(|b| !b.trim().is_empty())?;
        Some(EventBridgeSink::new(
            &sdk_config(aws_config::defaults(aws_config::BehaviorVersion::latest())).await,
            bus,
        ))
    }
}

/// Loads the SDK configuration `loader` describes, on the HTTP client of this
/// crate's TLS stack (rustls on *ring*, the system's root certificates).
pub async fn sdk_config(loader: aws_config::ConfigLoader) -> aws_config::SdkConfig {
    let http_client = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
        .build_https();
    loader.http_client(http_client).load().await
}

#[async_trait]
impl EventSink for EventBridgeSink {
    async fn publish(&self, events: Vec<OutsideEvent>) -> usize {
        let mut accepted = 0;
        for batch in events.chunks(BATCH) {
            let entries: Vec<PutEventsRequestEntry> = batch
                .iter()
                .map(|event| {
                    PutEventsRequestEntry::builder()
                        .event_bus_name(&self.bus)
                        .source(SOURCE)
                        .detail_type(event.detail_type)
                        .detail(event.detail.to_string())
                        .build()
                })
                .collect();
            let call = self.client.put_events().set_entries(Some(entries)).send();
            match tokio::time::timeout(PUBLISH_TIMEOUT, call).await {
                Ok(Ok(output)) => {
                    let failed = usize::try_from(output.failed_entry_count()).unwrap_or(0);
                    if failed > 0 {
                        tracing::warn!(failed, "EventBridge refused some events");
                    }
                    accepted += batch.len().saturating_sub(failed);
                }
                Ok(Err(error)) => {
                    tracing::warn!(
                        error = %aws_sdk_eventbridge::error::DisplayErrorContext(&error),
                        "publishing events failed"
                    );
                }
                Err(_) => tracing::warn!("publishing events timed out"),
            }
        }
        accepted
    }
}
