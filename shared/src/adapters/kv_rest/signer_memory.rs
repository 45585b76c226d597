//! The KV REST adapter of [`SignerMemory`]: the log's largest signed
//! checkpoint under a key of its own, `P log:signed` (`P` the prefix), apart
//! from every key the ledger uses, so losing one of those never loses this.
//! It is advanced by a compare-and-swap script, so Lambda instances racing
//! to sign new heads never move it back.

use super::client::{Command, KvClient, Script, as_string};
use crate::ports::StoreError;
use crate::ports::signer_memory::SignerMemory;
use async_trait::async_trait;
use std::sync::LazyLock;

static COMPARE_AND_SET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1",
    )
});

/// The signer's memory on the KV REST store.
#[derive(Debug, Clone)]
pub struct KvSignerMemory {
    client: KvClient,
    key: String,
}

impl KvSignerMemory {
    /// The memory under `prefix` on the store `client` talks to.
    pub fn new(client: KvClient, prefix: &str) -> KvSignerMemory {
        KvSignerMemory {
            client,
            key: format!("{prefix}log:signed"),
        }
    }
}

#[async_trait]
impl SignerMemory for KvSignerMemory {
    async fn recall(&self) -> Result<Option<String>, StoreError> {
        let value = self
            .client
            .command(&Command::new("GET").arg(&self.key))
            .await?;
        Ok(as_string(&value)?.map(str::to_owned))
    }

    async fn remember(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError> {
        let reply = COMPARE_AND_SET
            .run(
                &self.client,
                std::slice::from_ref(&self.key),
                &[previous.unwrap_or_default().to_owned(), next.to_owned()],
            )
            .await?;
        Ok(reply.as_i64() == Some(1))
    }

    fn describe(&self) -> String {
        format!("the KV key {}", self.key)
    }
}
