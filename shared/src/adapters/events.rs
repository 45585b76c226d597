//! Where a process's events go, chosen once at start-up: the EventBridge bus
//! `FF_EVENT_BUS_NAME` names, or nowhere when it is unset.

use super::eventbridge::EventBridgeSink;
use crate::ports::event_sink::{Events, no_events};
use std::sync::Arc;

/// The event sink configured by `FF_EVENT_BUS_NAME`, or none when unset.
pub async fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Events {
    match EventBridgeSink::from_env(lookup).await {
        Some(sink) => Arc::new(sink),
        None => no_events(),
    }
}
