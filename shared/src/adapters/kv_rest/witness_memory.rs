//! The KV REST adapter of [`WitnessMemory`]: one hash, `P log:witnesses`
//! (`P` the prefix), with a field `size:<witness key>` per witness and the
//! fields `witnessed` and `witnessed_size`. A read is one `HGETALL`; the
//! witnessed checkpoint moves only up, by a script (sizes compared as
//! decimals, length first: Lua's numbers are doubles).

use super::client::{Command, KvClient, Script, as_array, as_string};
use crate::ports::StoreError;
use crate::ports::witness_memory::{WitnessMemory, WitnessState};
use async_trait::async_trait;
use std::sync::LazyLock;

static KEEP_IF_NOT_SMALLER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local kept = redis.call('HGET', KEYS[1], 'witnessed_size')
if kept and (#kept > #ARGV[1] or (#kept == #ARGV[1] and kept > ARGV[1])) then return 0 end
redis.call('HSET', KEYS[1], 'witnessed_size', ARGV[1], 'witnessed', ARGV[2])
return 1",
    )
});

/// The log's memory of its witnesses on the KV REST store.
#[derive(Debug, Clone)]
pub struct KvWitnessMemory {
    client: KvClient,
    key: String,
}

impl KvWitnessMemory {
    /// The memory under `prefix` on the store `client` talks to.
    pub fn new(client: KvClient, prefix: &str) -> KvWitnessMemory {
        KvWitnessMemory {
            client,
            key: format!("{prefix}log:witnesses"),
        }
    }
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("the witnesses' hash: {what}"))
}

#[async_trait]
impl WitnessMemory for KvWitnessMemory {
    async fn read(&self) -> Result<WitnessState, StoreError> {
        let value = self
            .client
            .command(&Command::new("HGETALL").arg(&self.key))
            .await?;
        let fields = as_array(&value)?;
        let mut state = WitnessState::default();
        let mut witnessed = None;
        let mut witnessed_size = None;
        for pair in fields.chunks(2) {
            let [field, value] = pair else {
                return Err(corrupt("an odd number of fields"));
            };
            let (Some(field), Some(value)) = (as_string(field)?, as_string(value)?) else {
                return Err(corrupt("a field that is not a string"));
            };
            match field {
                "witnessed" => witnessed = Some(value.to_owned()),
                "witnessed_size" => {
                    witnessed_size = Some(value.parse::<u64>().map_err(|_| corrupt("a size"))?)
                }
                _ => {
                    if let Some(witness) = field.strip_prefix("size:") {
                        let size = value.parse::<u64>().map_err(|_| corrupt("a size"))?;
                        state.sizes.insert(witness.to_owned(), size);
                    }
                }
            }
        }
        state.witnessed = witnessed_size.zip(witnessed);
        Ok(state)
    }

    async fn set_size(&self, witness: &str, size: u64) -> Result<(), StoreError> {
        self.client
            .command(
                &Command::new("HSET")
                    .arg(&self.key)
                    .arg(format!("size:{witness}"))
                    .arg(size),
            )
            .await?;
        Ok(())
    }

    async fn keep_witnessed(&self, size: u64, note: &str) -> Result<bool, StoreError> {
        let reply = KEEP_IF_NOT_SMALLER
            .run(
                &self.client,
                std::slice::from_ref(&self.key),
                &[size.to_string(), note.to_owned()],
            )
            .await?;
        Ok(reply.as_i64() == Some(1))
    }
}
