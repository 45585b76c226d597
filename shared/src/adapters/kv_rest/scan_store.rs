//! The KV REST adapter of [`ScanStore`].
//!
//! Keys (under the prefix `P`): `P scanner:lock` holds the holder's token
//! with a Redis expiry (`SET … NX PX ms`); `P scanner:state:{name}` holds each
//! state value. Release is a compare-and-delete script, and a fenced write is a
//! script that checks the lock's token before writing every entry, so both
//! are atomic on the server.

use super::client::{Command, KvClient, Script, as_array, as_string};
use crate::ports::StoreError;
use crate::ports::scan_store::{Evidence, LockToken, ScanStore, StateEntry, checked_evidence};
use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;
use std::sync::LazyLock;
use std::time::Duration;

static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0",
    )
});

static WRITE_FENCED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
for i = 2, #KEYS do redis.call('SET', KEYS[i], ARGV[i]) end
return 1",
    )
});

/// The scanner run's lock and state on the KV REST store.
#[derive(Debug, Clone)]
pub struct KvScanStore {
    client: KvClient,
    prefix: String,
}

impl KvScanStore {
    /// The scan store under `prefix` on the store `client` talks to.
    pub fn new(client: KvClient, prefix: impl Into<String>) -> KvScanStore {
        KvScanStore {
            client,
            prefix: prefix.into(),
        }
    }

    fn lock_key(&self) -> String {
        format!("{}scanner:lock", self.prefix)
    }

    fn state_key(&self, name: &str) -> String {
        format!("{}scanner:state:{name}", self.prefix)
    }

    fn evidence_key(&self, sha256: &str) -> String {
        format!("{}scanner:evidence:{sha256}", self.prefix)
    }

    /// The sorted set that counts the evidence kept: one member per call
    /// of `keep_evidence`, `<expiry ms>:<bytes>:<first item's hash>`,
    /// scored by its expiry (Redis expires the items; the count is pruned
    /// by the same clock when read).
    fn evidence_count_key(&self) -> String {
        format!("{}scanner:evidence-kept", self.prefix)
    }
}

/// Most bytes of evidence one request carries (the REST protocol takes
/// 10 MB a request; base64 makes bytes a third larger).
const EVIDENCE_REQUEST_BYTES: usize = 4 * 1024 * 1024;

fn is_one(value: &Value) -> bool {
    value.as_i64() == Some(1)
}

#[async_trait]
impl ScanStore for KvScanStore {
    async fn acquire(&self, ttl: Duration) -> Result<Option<LockToken>, StoreError> {
        let token = LockToken::random()?;
        let reply = self
            .client
            .command(
                &Command::new("SET")
                    .arg(self.lock_key())
                    .arg(token.as_str())
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl.as_millis().max(1)),
            )
            .await?;
        Ok((as_string(&reply)? == Some("OK")).then_some(token))
    }

    async fn release(&self, token: &LockToken) -> Result<bool, StoreError> {
        let reply = RELEASE
            .run(
                &self.client,
                &[self.lock_key()],
                &[token.as_str().to_owned()],
            )
            .await?;
        Ok(is_one(&reply))
    }

    async fn write_fenced(
        &self,
        token: &LockToken,
        entries: &[StateEntry],
    ) -> Result<bool, StoreError> {
        let mut keys = vec![self.lock_key()];
        let mut args = vec![token.as_str().to_owned()];
        for (name, value) in entries {
            keys.push(self.state_key(name));
            args.push(value.clone());
        }
        let reply = WRITE_FENCED.run(&self.client, &keys, &args).await?;
        Ok(is_one(&reply))
    }

    async fn read(&self, names: &[&str]) -> Result<Vec<Option<String>>, StoreError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let reply = self
            .client
            .command(&Command::new("MGET").args(names.iter().map(|n| self.state_key(n))))
            .await?;
        as_array(&reply)?
            .iter()
            .map(|v| Ok(as_string(v)?.map(str::to_owned)))
            .collect()
    }

    /// Each item is `SET key <base64> EX <ttl> NX`, a few megabytes a
    /// pipeline; the last pipeline also counts the bytes kept.
    async fn keep_evidence(&self, items: &[Evidence], ttl: Duration) -> Result<(), StoreError> {
        let seconds = ttl.as_secs().max(1);
        let total: u64 = items.iter().map(|(_, body)| body.len() as u64).sum();
        let mut batch: Vec<Command> = Vec::new();
        let mut bytes = 0usize;
        for (sha256, body) in items {
            if bytes > 0 && bytes + body.len() > EVIDENCE_REQUEST_BYTES {
                self.send_evidence(&std::mem::take(&mut batch)).await?;
                bytes = 0;
            }
            bytes += body.len();
            batch.push(
                Command::new("SET")
                    .arg(self.evidence_key(sha256))
                    .arg(BASE64.encode(body))
                    .arg("EX")
                    .arg(seconds)
                    .arg("NX"),
            );
        }
        if let Some((first, _)) = items.first() {
            let expiry_ms =
                now_ms().saturating_add(i64::try_from(seconds * 1000).unwrap_or(i64::MAX));
            batch.push(
                Command::new("ZADD")
                    .arg(self.evidence_count_key())
                    .arg(expiry_ms)
                    .arg(format!("{expiry_ms}:{total}:{first}")),
            );
        }
        self.send_evidence(&batch).await
    }

    /// Drops the counts of expired evidence, then sums the rest (one
    /// pipeline).
    async fn evidence_bytes(&self) -> Result<u64, StoreError> {
        let key = self.evidence_count_key();
        let commands = [
            Command::new("ZREMRANGEBYSCORE")
                .arg(&key)
                .arg("-inf")
                .arg(now_ms()),
            Command::new("ZRANGE").arg(&key).arg(0).arg(-1),
        ];
        let mut results = self.client.pipeline(&commands).await?.into_iter();
        let members = results
            .nth(1)
            .ok_or_else(|| StoreError::Corrupt("the KV store answered too few results".into()))?
            .map_err(|error| StoreError::Corrupt(format!("the evidence count: {error}")))?;
        let mut total: u64 = 0;
        for member in as_array(&members)? {
            let bytes = as_string(member)?
                .and_then(|m| m.split(':').nth(1))
                .and_then(|b| b.parse::<u64>().ok())
                .ok_or_else(|| StoreError::Corrupt("an evidence count is malformed".into()))?;
            total = total.saturating_add(bytes);
        }
        Ok(total)
    }

    async fn evidence(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let reply = self
            .client
            .command(&Command::new("GET").arg(self.evidence_key(sha256)))
            .await?;
        let Some(text) = as_string(&reply)? else {
            return Ok(None);
        };
        let bytes = BASE64.decode(text).map_err(|_| {
            StoreError::Corrupt(format!(
                "the evidence {sha256} is not base64 on the KV store"
            ))
        })?;
        checked_evidence(sha256, bytes, "KV store").map(Some)
    }
}

impl KvScanStore {
    async fn send_evidence(&self, commands: &[Command]) -> Result<(), StoreError> {
        if commands.is_empty() {
            return Ok(());
        }
        for result in self.client.pipeline(commands).await? {
            // The text is the server's own; it names no secret.
            result.map_err(|error| {
                StoreError::Corrupt(format!("the KV store refused to keep evidence: {error}"))
            })?;
        }
        Ok(())
    }
}

/// The clock in milliseconds since the epoch, as the evidence count's
/// expiries are written and pruned.
fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
