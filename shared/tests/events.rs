//! Publishing to EventBridge (moto's server standing in): events arrive with
//! their source, detail-type and detail, in batches of at most 10; a bus that
//! is down fails nothing.

use freedom_shared::events::{EventBus, OutsideEvent};
use freedom_testkit::moto::MotoServer;
use serde_json::json;

#[tokio::test]
async fn events_arrive_in_batches_and_a_missing_bus_fails_nothing() {
    let moto = MotoServer::start();
    let queue = moto.sink("ff-test-bus");
    let env = moto.env("ff-test-bus");
    let bus =
        EventBus::from_env(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
            .await;
    assert!(bus.is_configured());
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
    let env = moto.env("no-such-bus");
    let missing =
        EventBus::from_env(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
            .await;
    let accepted = missing
        .publish(vec![OutsideEvent {
            detail_type: "PaperTrade",
            detail: json!({}),
        }])
        .await;
    assert_eq!(accepted, 0);
    // And no bus configured publishes nothing.
    assert_eq!(EventBus::from_env(|_| None).await.publish(vec![]).await, 0);
}
