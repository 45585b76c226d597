//! The event sink on Amazon EventBridge: when `FF_EVENT_BUS_NAME` is set, the
//! functions publish what they did (docs/design.md, "Events to outside
//! consumers"). Entries go in batches of at most 10 (the `PutEvents` limit);
//! a failure is logged and never fails the write or the run, and a slow bus
//! is given up after `PUBLISH_TIMEOUT`.
//!
//! The SDK's configuration comes from `aws_config`'s default chain (region,
//! credentials, and endpoint: `AWS_ENDPOINT_URL_EVENTBRIDGE` points it at
//! another endpoint, as the tests do with moto's server). Its HTTP calls
//! (`PutEvents`, and the credential providers' own) go through
//! `super::outbound`, the process's one HTTP client: one connection pool,
//! one TLS stack (rustls on *ring*, the system's root certificates). The
//! SDK's own HTTPS client would bring a second TLS configuration and an
//! HTTP/2 stack that `PutEvents` does not need; `OutboundConnector` is the
//! small bridge from the SDK's connector trait to that one client.

use super::outbound::{self, OutboundError};
use crate::ports::event_sink::{EventSink, OutsideEvent};
use async_trait::async_trait;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, SharedHttpClient, SharedHttpConnector, http_client_fn,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::http::StatusCode;
use aws_smithy_types::body::SdkBody;
use std::time::Duration;

/// The `source` of every event.
pub(crate) const SOURCE: &str = "freedom-fund";
/// Entries per `PutEvents` call (the service's limit).
pub(crate) const BATCH: usize = 10;
/// How long a publish may take before it is abandoned.
pub(crate) const PUBLISH_TIMEOUT: Duration = Duration::from_secs(3);
/// How long one SDK request may take when the SDK sets no read timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest answer the SDK's calls read (`PutEvents` answers are small).
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// Publishes to one EventBridge bus.
#[derive(Debug, Clone)]
pub(crate) struct EventBridgeSink {
    client: aws_sdk_eventbridge::Client,
    bus: String,
    timeout: Duration,
}

impl EventBridgeSink {
    /// A sink publishing to `bus` with `config` (see [`sdk_config`]).
    pub(crate) fn new(config: &aws_config::SdkConfig, bus: impl Into<String>) -> EventBridgeSink {
        EventBridgeSink {
            client: aws_sdk_eventbridge::Client::new(config),
            bus: bus.into(),
            timeout: PUBLISH_TIMEOUT,
        }
    }

    /// The same sink giving each `PutEvents` call `timeout` instead of
    /// `PUBLISH_TIMEOUT` (a stand-in that delivers slowly, in tests).
    #[cfg(test)]
    pub(crate) fn with_publish_timeout(mut self, timeout: Duration) -> EventBridgeSink {
        self.timeout = timeout;
        self
    }

    /// The sink for the bus named by `FF_EVENT_BUS_NAME`, configured by the
    /// default chain; `None` when no bus is named.
    pub(crate) async fn from_env(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Option<EventBridgeSink> {
        let bus = lookup("FF_EVENT_BUS_NAME").filter(|b| !b.trim().is_empty())?;
        Some(EventBridgeSink::new(
            &sdk_config(aws_config::defaults(aws_config::BehaviorVersion::latest())).await,
            bus,
        ))
    }
}

/// Loads the SDK configuration `loader` describes, with every HTTP call on
/// the process's one outbound client (`OutboundConnector`).
pub(crate) async fn sdk_config(loader: aws_config::ConfigLoader) -> aws_config::SdkConfig {
    loader.http_client(outbound_http_client()).load().await
}

/// The SDK's HTTP client: [`OutboundConnector`] with the SDK's read timeout.
fn outbound_http_client() -> SharedHttpClient {
    http_client_fn(|settings, _components| {
        SharedHttpConnector::new(OutboundConnector {
            timeout: settings.read_timeout().unwrap_or(REQUEST_TIMEOUT),
        })
    })
}

/// The AWS SDK's HTTP connector on [`super::outbound`]: sends the SDK's
/// request (its body is in memory: `PutEvents` and the credential providers
/// never stream) and hands back status, header fields and body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutboundConnector {
    timeout: Duration,
}

impl HttpConnector for OutboundConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let timeout = self.timeout;
        HttpConnectorFuture::new(async move {
            let client = outbound::client().map_err(|e| ConnectorError::other(e.into(), None))?;
            let method = reqwest::Method::from_bytes(request.method().as_bytes())
                .map_err(|e| ConnectorError::user(e.into()))?;
            let mut builder = client.request(method, request.uri());
            for (name, value) in request.headers() {
                builder = builder.header(name, value);
            }
            let body = request
                .body()
                .bytes()
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            let answer = outbound::send(builder.body(body), timeout, MAX_ANSWER_BYTES)
                .await
                .map_err(|error| match error {
                    OutboundError::Timeout(_) => ConnectorError::timeout(error.into()),
                    error => ConnectorError::io(error.into()),
                })?;
            let status = StatusCode::try_from(answer.status.as_u16())
                .map_err(|e| ConnectorError::other(e.into(), None))?;
            let mut response = HttpResponse::new(status, SdkBody::from(answer.body));
            for (name, value) in &answer.headers {
                // A field the SDK cannot hold (not UTF-8) is left out.
                if let Ok(value) = value.to_str() {
                    let _ = response
                        .headers_mut()
                        .try_append(name.as_str().to_owned(), value.to_owned());
                }
            }
            Ok(response)
        })
    }
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
            match tokio::time::timeout(self.timeout, call).await {
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

#[cfg(test)]
#[path = "eventbridge_moto_tests.rs"]
mod moto_tests;
