//! Publishing to EventBridge (moto's server standing in): events arrive with
//! their source, detail-type and detail, in batches of at most 10; a bus that
//! is down fails nothing.

use super::{EventBridgeSink, sdk_config};
use crate::ports::{EventSink, NoEvents, OutsideEvent};
use aws_config::{BehaviorVersion, Region};
use aws_sdk_eventbridge::config::Credentials;
use freedom_testkit::moto::MotoServer;
use serde_json::json;

/// The sink for `bus` on `moto`, configured as the default chain would be
/// from the variables [`MotoServer::env`] gives a process. moto delivers
/// each event to its SQS target in about 0.3 s, so a batch of 10 takes
/// about 3 s there: the test gives each call far longer than production's
/// `PUBLISH_TIMEOUT`.
async fn sink(moto: &MotoServer, bus: &str) -> EventBridgeSink {
    let loader = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
        .endpoint_url(moto.endpoint());
    EventBridgeSink::new(&sdk_config(loader).await, bus)
        .with_publish_timeout(std::time::Duration::from_secs(60))
}

#[tokio::test]
async fn events_arrive_in_batches_and_a_missing_bus_fails_nothing() {
    let moto = MotoServer::start();
    let queue = moto.sink("ff-test-bus");
    let bus = sink(&moto, "ff-test-bus").await;
    assert!(bus.is_enabled());
    let events: Vec<OutsideEvent> = (0..23)
        .map(|i| OutsideEvent {
            detail_type: "PaperTrade",
            detail: json!({"n": i}),
        })
        .collect();
    assert_eq!(bus.publish(events).await, 23, "three batches: 10, 10, 3");
    let mut arrived = moto.drain(&queue);
    assert_eq!(arrived.len(), 23);
    arrived.sort_by_key(|e| e["detail"]["n"].as_i64());
    assert_eq!(arrived[7]["source"], "freedom-fund");
    assert_eq!(arrived[7]["detail-type"], "PaperTrade");
    assert_eq!(arrived[7]["detail"], json!({"n": 7}));

    // A bus that does not exist: refused, logged, nothing fails.
    let missing = sink(&moto, "no-such-bus").await;
    let accepted = missing
        .publish(vec![OutsideEvent {
            detail_type: "PaperTrade",
            detail: json!({}),
        }])
        .await;
    assert_eq!(accepted, 0);
    // And no bus configured publishes nothing.
    assert!(EventBridgeSink::from_env(|_| None).await.is_none());
    assert!(!NoEvents.is_enabled());
    assert_eq!(NoEvents.publish(vec![]).await, 0);
}
