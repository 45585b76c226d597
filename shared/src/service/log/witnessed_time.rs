//! Witnessed time: when each record was in the log, on the word of a
//! quorum of witnesses (docs/log.md, "Witnessed time").
//!
//! Every checkpoint that met the quorum and is larger than the last one
//! kept joins the witnessed history with its **quorum time**: the earliest
//! instant at which its cosignatures dated up to then satisfied the policy
//! (`Policy::quorum_time`). The **witnessed time of record `seq`** is the
//! quorum time of the earliest kept checkpoint of size ≥ `seq`: the record
//! was in the log no later than then. An entry of the history never
//! changes and a smaller one never joins, so a witnessed time, once given,
//! never changes. Without a policy with a quorum nothing is witnessed and
//! every answer says so ([`Recorded::Unwitnessed`]) rather than guessing.
//!
//! A snapshot's **lag** is its witnessed time minus its `asOf`: on time
//! within [`RECORDING_WINDOW_SECONDS`], late beyond (disclosed, never
//! refused), pending while not yet witnessed.

use super::{Log, LogError};
use crate::ports::StoreError;
use crate::ports::witness_memory::{KeptCheckpoint, MAX_HISTORY_READ, WitnessMemory};
use crate::tlog::checkpoint::Checkpoint;
use crate::tlog::policy::Policy;
use crate::tlog::proof::Inclusion;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::sync::{Arc, OnceLock};

/// How long after its valuation a snapshot may enter the witnessed log and
/// still count as recorded as it happened (one hour; `log.recordingWindowSeconds`
/// in the contract).
pub const RECORDING_WINDOW_SECONDS: i64 = 3_600;

/// When a record was in the witnessed log: the quorum time of the earliest
/// kept checkpoint that holds it, and that checkpoint's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WitnessedAt {
    /// The quorum time, RFC 3339 (UTC, seconds).
    #[serde(serialize_with = "crate::clock::serialize_epoch_seconds")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub at: i64,
    /// The size of the checkpoint (`GET /log/witnessed/<seq>` answers it).
    pub size: u64,
}

/// What the log can say of when a record was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The log has no policy with a quorum: it claims no time.
    Unwitnessed,
    /// Not in a kept checkpoint yet.
    Pending,
    /// In the witnessed log by then.
    Witnessed(WitnessedAt),
}

impl WitnessedAt {
    /// The quorum time as RFC 3339 (UTC, whole seconds).
    pub fn rfc3339(&self) -> String {
        crate::clock::epoch_seconds_rfc3339(self.at)
    }
}

impl Serialize for Recorded {
    /// As the ledger view writes it: `{"at", "size"}`, `null` while
    /// pending, `"unwitnessed"` without a policy.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Recorded::Unwitnessed => serializer.serialize_str("unwitnessed"),
            Recorded::Pending => serializer.serialize_none(),
            Recorded::Witnessed(at) => at.serialize(serializer),
        }
    }
}

/// The part of the witnessed history a read covers: the quorum times of
/// the kept checkpoints from the earliest of size ≥ `from`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WitnessTable {
    /// Whether the log is witnessed at all.
    witnessed: bool,
    /// The first record the table can answer for.
    from: u64,
    /// (size, quorum time), sizes increasing.
    kept: Vec<(u64, u64)>,
}

impl WitnessTable {
    /// The table of a log without witnesses: every record is unwitnessed.
    pub fn unwitnessed() -> WitnessTable {
        WitnessTable::default()
    }

    /// A table of `kept` (size, quorum time) from record `from` on.
    pub fn new(from: u64, mut kept: Vec<(u64, u64)>) -> WitnessTable {
        kept.sort_unstable();
        kept.dedup_by_key(|(size, _)| *size);
        WitnessTable {
            witnessed: true,
            from,
            kept,
        }
    }

    /// Whether the log is witnessed.
    pub fn is_witnessed(&self) -> bool {
        self.witnessed
    }

    /// When record `seq` was in the witnessed log, as far as the table knows
    /// (a record before the table's reach reads as pending).
    pub fn of(&self, seq: u64) -> Recorded {
        if !self.witnessed {
            return Recorded::Unwitnessed;
        }
        if seq < self.from {
            return Recorded::Pending;
        }
        let at = self.kept.partition_point(|(size, _)| *size < seq);
        match self.kept.get(at) {
            Some(&(size, time)) => match i64::try_from(time) {
                Ok(at) => Recorded::Witnessed(WitnessedAt { at, size }),
                Err(_) => Recorded::Pending,
            },
            None => Recorded::Pending,
        }
    }
}

/// A snapshot's lag in seconds: its witnessed time minus its `asOf`
/// (negative when the valuation is dated after it was witnessed).
pub fn lag_seconds(witnessed: WitnessedAt, as_of: DateTime<Utc>) -> i64 {
    witnessed.at.saturating_sub(as_of.timestamp())
}

/// The witnessed history as the read use cases see it: the policy and the
/// memory the log keeps it in. Cheap to clone.
#[derive(Clone, Default)]
pub struct WitnessedTimes {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    memory: Arc<dyn WitnessMemory>,
    /// The first kept checkpoint's quorum time: when witnessing began
    /// (never changes once known).
    began: OnceLock<u64>,
}

impl std::fmt::Debug for WitnessedTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WitnessedTimes")
            .field("witnessed", &self.inner.is_some())
            .finish()
    }
}

impl WitnessedTimes {
    /// The history kept in `memory` under `policy`: witnessed only when the
    /// policy has a quorum.
    pub(crate) fn new(policy: &Policy, memory: Arc<dyn WitnessMemory>) -> WitnessedTimes {
        if policy.needs_no_cosignature() {
            return WitnessedTimes::default();
        }
        WitnessedTimes {
            inner: Some(Arc::new(Inner {
                memory,
                began: OnceLock::new(),
            })),
        }
    }

    /// Whether the log claims witnessed times at all.
    pub fn is_witnessed(&self) -> bool {
        self.inner.is_some()
    }

    /// The size of the largest kept checkpoint (one store read): what a
    /// view that shows witnessed times is a function of, beside the head.
    pub async fn top(&self) -> Result<Option<u64>, StoreError> {
        match &self.inner {
            Some(inner) => Ok(inner.memory.read().await?.history_top),
            None => Ok(None),
        }
    }

    /// The table for records `from..=through`, up to the kept checkpoint of
    /// size `top` (what the caller read with the head, so the answer is a
    /// function of both): one store read, none without witnesses or when
    /// nothing needs a time.
    pub async fn table(
        &self,
        from: u64,
        through: u64,
        top: Option<u64>,
    ) -> Result<WitnessTable, StoreError> {
        let Some(inner) = &self.inner else {
            return Ok(WitnessTable::unwitnessed());
        };
        let from = from.max(1);
        let Some(top) = top.filter(|top| *top >= from && through >= from) else {
            return Ok(WitnessTable::new(from, Vec::new()));
        };
        // Each kept checkpoint holds at least one record more than the last.
        let limit = usize::try_from(through.min(top) - from)
            .unwrap_or(usize::MAX)
            .saturating_add(2)
            .min(MAX_HISTORY_READ);
        let kept = inner.memory.history_times(from, limit).await?;
        Ok(WitnessTable::new(
            from,
            kept.into_iter().filter(|(size, _)| *size <= top).collect(),
        ))
    }

    /// The earliest kept checkpoint of size ≥ `size` (one store read).
    pub async fn checkpoint(&self, size: u64) -> Result<Option<KeptCheckpoint>, StoreError> {
        match &self.inner {
            Some(inner) => Ok(inner.memory.history(size, 1).await?.pop()),
            None => Ok(None),
        }
    }

    /// When witnessing began: the first kept checkpoint's quorum time
    /// (seconds since the epoch; one store read until it is known).
    pub async fn began(&self) -> Result<Option<i64>, StoreError> {
        let Some(inner) = &self.inner else {
            return Ok(None);
        };
        if let Some(time) = inner.began.get() {
            return Ok(i64::try_from(*time).ok());
        }
        let first = inner.memory.history_times(0, 1).await?;
        Ok(first.first().and_then(|&(_, time)| {
            let _ = inner.began.set(time);
            i64::try_from(time).ok()
        }))
    }
}

/// The first line of a witnessed proof's `extra` data.
pub const CONSISTENCY_EXTRA: &str = "freedom-fund/consistency-to-served@v1";

/// A record's inclusion proof against the earliest witnessed checkpoint
/// that holds it (`view=proof&at=witnessed`).
#[derive(Debug, Clone)]
pub struct WitnessedInclusion {
    /// The proof, against `checkpoint`'s tree.
    pub inclusion: Inclusion,
    /// That checkpoint's note with its cosignatures.
    pub checkpoint: String,
    /// The consistency proof from it to the served checkpoint, as the
    /// proof file's `extra` data: [`CONSISTENCY_EXTRA`], a line
    /// `<from> <to>`, one base64 hash a line, an empty line, and the served
    /// checkpoint with its cosignatures. `None` when it is the served one.
    pub extra: Option<Vec<u8>>,
}

impl Log {
    /// The earliest kept checkpoint of size ≥ `size`, checked to be signed
    /// by this log (one store read). `None` while none is.
    pub async fn witnessed_checkpoint(
        &self,
        size: u64,
    ) -> Result<Option<KeptCheckpoint>, LogError> {
        Ok(self.opened_witnessed(size).await?.map(|(kept, _)| kept))
    }

    /// [`Log::witnessed_checkpoint`] with the checkpoint it opened.
    async fn opened_witnessed(
        &self,
        size: u64,
    ) -> Result<Option<(KeptCheckpoint, Checkpoint)>, LogError> {
        let Some(kept) = self.witnessed_times().checkpoint(size.max(1)).await? else {
            return Ok(None);
        };
        let verifier = self.signer()?.verifier();
        match Checkpoint::open(&kept.note, &verifier) {
            Ok(checkpoint) if checkpoint.size == kept.size => Ok(Some((kept, checkpoint))),
            _ => {
                tracing::error!(
                    size = kept.size,
                    "a kept witnessed checkpoint is not signed by this log's key: not served"
                );
                Ok(None)
            }
        }
    }

    /// Record `seq`'s inclusion proof against the earliest witnessed
    /// checkpoint that holds it and is of size at least `at_least` (when
    /// given), and the consistency proof from there to the served
    /// checkpoint. [`LogError::NotWitnessed`] while no kept checkpoint is;
    /// [`LogError::BeyondLog`] (parameter `at`) when the log has no policy
    /// with a quorum.
    pub async fn witnessed_inclusion(
        &self,
        seq: u64,
        at_least: Option<u64>,
    ) -> Result<WitnessedInclusion, LogError> {
        // A log that claims no time has no witnessed checkpoint, ever: the
        // proof asked for does not exist (404), where a witnessed log's
        // record not yet cosigned is only a wait (503).
        if !self.witnessed_times().is_witnessed() {
            return Err(LogError::BeyondLog {
                parameter: "at",
                message: "this log has no witness policy with a quorum, so no checkpoint is witnessed and there is no proof at=witnessed".into(),
            });
        }
        let head = self.store.head().await?.size;
        if let Some(size) = at_least.filter(|size| *size > head) {
            return Err(LogError::BeyondLog {
                parameter: "size",
                message: format!("the log has {head} records; there is no tree of {size}"),
            });
        }
        if seq > head {
            return Err(LogError::BeyondLog {
                parameter: "seq",
                message: format!("the log has {head} records; there is no record {seq}"),
            });
        }
        let (kept, checkpoint) = self
            .opened_witnessed(seq.max(at_least.unwrap_or(0)))
            .await?
            .ok_or(LogError::NotWitnessed)?;
        let (inclusion, _) = self.inclusion(seq, Some(kept.size)).await?;
        if checkpoint.root != inclusion.root {
            return Err(LogError::Store(StoreError::Corrupt(
                "a kept witnessed checkpoint names another root than the ledger's tree".into(),
            )));
        }
        let served = self.proof_anchor().await?;
        let extra = match served {
            Some(served) if served.size > kept.size => {
                let (proof, _) = self
                    .consistency_signed(kept.size, Some(served.size))
                    .await?;
                let mut text = format!("{CONSISTENCY_EXTRA}\n{} {}\n", proof.from, proof.to);
                for hash in &proof.path {
                    text.push_str(&BASE64.encode(hash.0));
                    text.push('\n');
                }
                text.push('\n');
                text.push_str(&served.note);
                Some(text.into_bytes())
            }
            _ => None,
        };
        Ok(WitnessedInclusion {
            inclusion,
            checkpoint: kept.note,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_takes_the_time_of_the_earliest_checkpoint_that_holds_it() {
        let table = WitnessTable::new(1, vec![(3, 100), (7, 200), (8, 250)]);
        let at = |seq| match table.of(seq) {
            Recorded::Witnessed(w) => Some((w.at, w.size)),
            _ => None,
        };
        assert_eq!(at(1), Some((100, 3)));
        assert_eq!(at(3), Some((100, 3)));
        assert_eq!(at(4), Some((200, 7)));
        assert_eq!(at(8), Some((250, 8)));
        assert_eq!(table.of(9), Recorded::Pending);
        assert_eq!(WitnessTable::unwitnessed().of(1), Recorded::Unwitnessed);
        let later = WitnessTable::new(5, vec![(7, 200)]);
        assert_eq!(later.of(4), Recorded::Pending, "before the table's reach");
        let huge = WitnessTable::new(1, vec![(2, u64::MAX)]);
        assert_eq!(huge.of(1), Recorded::Pending, "a time past i64 is no time");
    }

    #[test]
    fn a_lag_never_overflows() {
        let far = DateTime::<Utc>::MIN_UTC;
        let witnessed = WitnessedAt {
            at: i64::MAX,
            size: 1,
        };
        assert_eq!(lag_seconds(witnessed, far), i64::MAX);
    }
}
