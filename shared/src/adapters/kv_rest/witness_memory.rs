//! The KV REST adapter of [`WitnessMemory`]: one hash, `P log:witnesses`
//! (`P` the prefix), with a field `size:<witness key>` per witness and the
//! fields `witnessed`, `witnessed_size` and `history_top`; and the
//! witnessed history in two sorted sets ordered by member (every score 0):
//! `P log:witnessed`, members `<size, 20 digits>\n<quorum time>\n<note>`, and
//! `P log:witnessed:times`, members `<size, 20 digits> <quorum time>`. A
//! read of the history from a size is one `ZRANGEBYLEX`. A read is one
//! `HGETALL`; the witnessed checkpoint moves only up, and the history only
//! grows, by one script (sizes compared as decimals, length first: Lua's
//! numbers are doubles). The script also keeps the history's times from
//! decreasing with size: a time below the latest member's is written as
//! that one.

use super::client::{Command, KvClient, Script, as_array, as_string};
use crate::ports::StoreError;
use crate::ports::witness_memory::{KeptCheckpoint, MAX_HISTORY_READ, WitnessMemory, WitnessState};
use async_trait::async_trait;
use std::sync::LazyLock;

static KEEP_IF_NOT_SMALLER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local kept = redis.call('HGET', KEYS[1], 'witnessed_size')
if kept and (#kept > #ARGV[1] or (#kept == #ARGV[1] and kept > ARGV[1])) then return 0 end
redis.call('HSET', KEYS[1], 'witnessed_size', ARGV[1], 'witnessed', ARGV[2])
local top = redis.call('HGET', KEYS[1], 'history_top')
if ARGV[3] ~= '' and (not top or #top < #ARGV[1] or (#top == #ARGV[1] and top < ARGV[1])) then
  local time = ARGV[3]
  local latest = redis.call('ZREVRANGEBYLEX', KEYS[3], '+', '-', 'LIMIT', 0, 1)[1]
  if latest then
    local before = string.sub(latest, 22)
    if #before > #time or (#before == #time and before > time) then time = before end
  end
  redis.call('ZADD', KEYS[2], 0, ARGV[4] .. '\\n' .. time .. '\\n' .. ARGV[2])
  redis.call('ZADD', KEYS[3], 0, ARGV[4] .. ' ' .. time)
  redis.call('HSET', KEYS[1], 'history_top', ARGV[1])
end
return 1",
    )
});

/// The log's memory of its witnesses on the KV REST store.
#[derive(Debug, Clone)]
pub struct KvWitnessMemory {
    client: KvClient,
    key: String,
    history_key: String,
    times_key: String,
}

impl KvWitnessMemory {
    /// The memory under `prefix` on the store `client` talks to.
    pub fn new(client: KvClient, prefix: &str) -> KvWitnessMemory {
        KvWitnessMemory {
            client,
            key: format!("{prefix}log:witnesses"),
            history_key: format!("{prefix}log:witnessed"),
            times_key: format!("{prefix}log:witnessed:times"),
        }
    }

    /// The members of `key` from the one of size at least `from` on, at
    /// most `limit`: one `ZRANGEBYLEX`.
    async fn members_from(
        &self,
        key: &str,
        from: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let value = self
            .client
            .command(
                &Command::new("ZRANGEBYLEX")
                    .arg(key)
                    .arg(format!("[{}", padded(from)))
                    .arg("+")
                    .arg("LIMIT")
                    .arg(0)
                    .arg(limit.min(MAX_HISTORY_READ)),
            )
            .await?;
        as_array(&value)?
            .iter()
            .map(|member| match as_string(member) {
                Ok(Some(text)) => Ok(text.to_owned()),
                _ => Err(corrupt("a history member that is not a string")),
            })
            .collect()
    }
}

/// A size as the history's members start: 20 digits, so that their order
/// as text is their order as numbers.
fn padded(size: u64) -> String {
    format!("{size:020}")
}

/// A size as a member starts, read back.
fn size_of(text: &str) -> Result<u64, StoreError> {
    text.get(..20)
        .filter(|_| {
            text.len() == 20
                || text
                    .as_bytes()
                    .get(20)
                    .is_some_and(|b| b.is_ascii_whitespace())
        })
        .and_then(|digits| digits.parse().ok())
        .ok_or_else(|| corrupt("a history member without its size"))
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
                "history_top" => {
                    state.history_top = Some(value.parse::<u64>().map_err(|_| corrupt("a size"))?)
                }
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

    async fn keep_witnessed(
        &self,
        size: u64,
        note: &str,
        quorum_time: Option<u64>,
    ) -> Result<bool, StoreError> {
        let reply = KEEP_IF_NOT_SMALLER
            .run(
                &self.client,
                &[
                    self.key.clone(),
                    self.history_key.clone(),
                    self.times_key.clone(),
                ],
                &[
                    size.to_string(),
                    note.to_owned(),
                    quorum_time.map_or_else(String::new, |time| time.to_string()),
                    padded(size),
                ],
            )
            .await?;
        Ok(reply.as_i64() == Some(1))
    }

    async fn history(&self, from: u64, limit: usize) -> Result<Vec<KeptCheckpoint>, StoreError> {
        self.members_from(&self.history_key, from, limit)
            .await?
            .into_iter()
            .map(|member| {
                let size = size_of(&member)?;
                let (time, note) = member
                    .get(21..)
                    .and_then(|rest| rest.split_once('\n'))
                    .ok_or_else(|| corrupt("a history member"))?;
                Ok(KeptCheckpoint {
                    size,
                    quorum_time: time.parse().map_err(|_| corrupt("a history time"))?,
                    note: note.to_owned(),
                })
            })
            .collect()
    }

    async fn history_times(&self, from: u64, limit: usize) -> Result<Vec<(u64, u64)>, StoreError> {
        self.members_from(&self.times_key, from, limit)
            .await?
            .iter()
            .map(|member| {
                let size = size_of(member)?;
                let time = member
                    .get(21..)
                    .and_then(|t| t.parse::<u64>().ok())
                    .ok_or_else(|| corrupt("a history time"))?;
                Ok((size, time))
            })
            .collect()
    }
}
