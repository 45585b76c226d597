//! The HTTP adapter of [`WitnessClient`], on the process's one outbound
//! client (`super::outbound`): `add-checkpoint` and the monitoring read;
//! a body of at most 16 KiB is read.

use super::outbound;
use crate::ports::witness_client::{WitnessClient, WitnessReply};
use crate::tlog::witness::MAX_BODY_BYTES;
use async_trait::async_trait;
use std::time::Duration;

/// Witnesses over HTTP.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpWitnesses;

#[async_trait]
impl WitnessClient for HttpWitnesses {
    async fn add_checkpoint(
        &self,
        prefix: &str,
        body: &str,
        timeout: Duration,
    ) -> Result<WitnessReply, String> {
        let client = outbound::client().map_err(|e| e.to_string())?;
        let request = client
            .post(format!("{}/add-checkpoint", prefix.trim_end_matches('/')))
            .header(reqwest::header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(body.to_owned());
        reply(request, timeout).await
    }

    async fn latest_checkpoint(
        &self,
        prefix: &str,
        origin_hash: &str,
        timeout: Duration,
    ) -> Result<WitnessReply, String> {
        let client = outbound::client().map_err(|e| e.to_string())?;
        let request = client.get(format!(
            "{}/{origin_hash}/checkpoint",
            prefix.trim_end_matches('/')
        ));
        reply(request, timeout).await
    }
}

/// Sends `request` and reads at most 16 KiB of its answer.
async fn reply(
    request: reqwest::RequestBuilder,
    timeout: Duration,
) -> Result<WitnessReply, String> {
    let answer = outbound::send(request, timeout, MAX_BODY_BYTES)
        .await
        .map_err(|e| e.to_string())?;
    let content_type = answer
        .headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        });
    Ok(WitnessReply {
        status: answer.status.as_u16(),
        content_type,
        body: String::from_utf8_lossy(&answer.body).into_owned(),
    })
}
