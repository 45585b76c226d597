//! What the log keeps of its witnesses ([`WitnessMemory`]), on the ledger's
//! own store so that every process and Lambda instance serves the same
//! witnessed checkpoint: per witness, the size of the checkpoint it last
//! cosigned (where the next consistency proof starts); the newest
//! checkpoint that met the policy's quorum, with its cosignatures; and the
//! witnessed history: every such checkpoint larger than the one kept
//! before it, with its quorum time, never changed once kept (what a
//! record's witnessed time is read from).
//!
//! Adapters: the KV REST store (the hash `P log:witnesses`, the sorted sets
//! `P log:witnessed` and `P log:witnessed:times`), the embedded store
//! (`log-witnesses.sqlite3` in the data dir) and [`InProcessWitnesses`]
//! (tests).

use super::ledger_store::StoreError;
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// What is kept of the witnesses, read in one go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WitnessState {
    /// Per witness (by its key's text), the size it last cosigned.
    pub sizes: BTreeMap<String, u64>,
    /// The newest witnessed checkpoint (the log's signed note with the
    /// cosignatures appended), and its size.
    pub witnessed: Option<(u64, String)>,
    /// The size of the largest checkpoint in the witnessed history.
    pub history_top: Option<u64>,
}

/// A checkpoint of the witnessed history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptCheckpoint {
    /// Its tree size.
    pub size: u64,
    /// Its quorum time when it was kept (seconds since the epoch): the
    /// earliest instant its cosignatures met the policy's quorum.
    pub quorum_time: u64,
    /// The log's signed note with the cosignatures appended.
    pub note: String,
}

/// How much of the witnessed history one read may return.
pub(crate) const MAX_HISTORY_READ: usize = 10_000;

/// The log's memory of its witnesses.
#[async_trait]
pub trait WitnessMemory: Send + Sync + 'static {
    /// Everything kept: one store round trip.
    async fn read(&self) -> Result<WitnessState, StoreError>;

    /// Records that `witness` last cosigned size `size` (replacing what
    /// was kept, up or down: a witness that lost its state says so).
    async fn set_size(&self, witness: &str, size: u64) -> Result<(), StoreError>;

    /// Keeps `note` (of tree size `size`) as the witnessed checkpoint
    /// unless a larger one is kept already (one of the same size is
    /// replaced, as it may carry more cosignatures), and, when it has a
    /// quorum time (a policy with a quorum), adds it to the witnessed
    /// history if it is larger than every checkpoint there (an entry of the
    /// history never changes), with that time or, when it is earlier, the
    /// time of the latest entry (times never decrease with size: a record
    /// in the log by an earlier time is in it by a later one). One atomic
    /// step. `Ok(false)`: a larger one was kept.
    async fn keep_witnessed(
        &self,
        size: u64,
        note: &str,
        quorum_time: Option<u64>,
    ) -> Result<bool, StoreError>;

    /// The witnessed history from its earliest checkpoint of size at least
    /// `from` on, smallest first, at most `limit` (capped at
    /// 10,000): one store read.
    async fn history(&self, from: u64, limit: usize) -> Result<Vec<KeptCheckpoint>, StoreError>;

    /// As [`WitnessMemory::history`], without the notes (sizes and quorum
    /// times only: what a dashboard needs, a fraction of the bytes).
    async fn history_times(&self, from: u64, limit: usize) -> Result<Vec<(u64, u64)>, StoreError>;
}

#[async_trait]
impl<T: WitnessMemory + ?Sized> WitnessMemory for std::sync::Arc<T> {
    async fn read(&self) -> Result<WitnessState, StoreError> {
        (**self).read().await
    }

    async fn set_size(&self, witness: &str, size: u64) -> Result<(), StoreError> {
        (**self).set_size(witness, size).await
    }

    async fn keep_witnessed(
        &self,
        size: u64,
        note: &str,
        quorum_time: Option<u64>,
    ) -> Result<bool, StoreError> {
        (**self).keep_witnessed(size, note, quorum_time).await
    }

    async fn history(&self, from: u64, limit: usize) -> Result<Vec<KeptCheckpoint>, StoreError> {
        (**self).history(from, limit).await
    }

    async fn history_times(&self, from: u64, limit: usize) -> Result<Vec<(u64, u64)>, StoreError> {
        (**self).history_times(from, limit).await
    }
}

/// A memory that lasts as long as the process (tests). A clone is a copy
/// of what it holds then (the custody simulator's backups).
#[derive(Debug, Default)]
pub struct InProcessWitnesses {
    state: Mutex<(WitnessState, BTreeMap<u64, KeptCheckpoint>)>,
}

impl Clone for InProcessWitnesses {
    fn clone(&self) -> InProcessWitnesses {
        InProcessWitnesses {
            state: Mutex::new(self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()),
        }
    }
}

#[async_trait]
impl WitnessMemory for InProcessWitnesses {
    async fn read(&self) -> Result<WitnessState, StoreError> {
        Ok(self
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .clone())
    }

    async fn set_size(&self, witness: &str, size: u64) -> Result<(), StoreError> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .sizes
            .insert(witness.to_owned(), size);
        Ok(())
    }

    async fn keep_witnessed(
        &self,
        size: u64,
        note: &str,
        quorum_time: Option<u64>,
    ) -> Result<bool, StoreError> {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (state, history) = &mut *guard;
        if state
            .witnessed
            .as_ref()
            .is_some_and(|(kept, _)| *kept > size)
        {
            return Ok(false);
        }
        state.witnessed = Some((size, note.to_owned()));
        if let Some(quorum_time) = quorum_time
            && state.history_top.is_none_or(|top| top < size)
        {
            state.history_top = Some(size);
            let latest = history.values().next_back().map_or(0, |k| k.quorum_time);
            history.insert(
                size,
                KeptCheckpoint {
                    size,
                    quorum_time: quorum_time.max(latest),
                    note: note.to_owned(),
                },
            );
        }
        Ok(true)
    }

    async fn history(&self, from: u64, limit: usize) -> Result<Vec<KeptCheckpoint>, StoreError> {
        let guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        Ok(guard
            .1
            .range(from..)
            .take(limit.min(MAX_HISTORY_READ))
            .map(|(_, kept)| kept.clone())
            .collect())
    }

    async fn history_times(&self, from: u64, limit: usize) -> Result<Vec<(u64, u64)>, StoreError> {
        let kept = self.history(from, limit).await?;
        Ok(kept.into_iter().map(|k| (k.size, k.quorum_time)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_in_process_memory_passes_the_witness_memory_suite() {
        crate::ports::conformance::run_witness_memory(|| async {
            let memory = std::sync::Arc::new(InProcessWitnesses::default());
            (std::sync::Arc::clone(&memory), memory)
        })
        .await;
    }
}
