//! What the log keeps of its witnesses ([`WitnessMemory`]), on the ledger's
//! own store so that every process and Lambda instance serves the same
//! witnessed checkpoint: per witness, the size of the checkpoint it last
//! cosigned (where the next consistency proof starts); and the newest
//! checkpoint that met the policy's quorum, with its cosignatures.
//!
//! Adapters: the KV REST store (one hash, `P log:witnesses`), the embedded
//! store (`log-witnesses.sqlite3` in the data dir) and [`InProcessWitnesses`]
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
}

/// The log's memory of its witnesses.
#[async_trait]
pub trait WitnessMemory: Send + Sync + 'static {
    /// Everything kept: one store round trip.
    async fn read(&self) -> Result<WitnessState, StoreError>;

    /// Records that `witness` last cosigned size `size` (replacing what
    /// was kept, up or down: a witness that lost its state says so).
    async fn set_size(&self, witness: &str, size: u64) -> Result<(), StoreError>;

    /// Keeps `note` (of tree size `size`) as the witnessed checkpoint unless
    /// a larger one is kept already (atomically; one of the same size is
    /// replaced, as it may carry more cosignatures). `Ok(false)`: a larger
    /// one was kept.
    async fn keep_witnessed(&self, size: u64, note: &str) -> Result<bool, StoreError>;
}

#[async_trait]
impl<T: WitnessMemory + ?Sized> WitnessMemory for std::sync::Arc<T> {
    async fn read(&self) -> Result<WitnessState, StoreError> {
        (**self).read().await
    }

    async fn set_size(&self, witness: &str, size: u64) -> Result<(), StoreError> {
        (**self).set_size(witness, size).await
    }

    async fn keep_witnessed(&self, size: u64, note: &str) -> Result<bool, StoreError> {
        (**self).keep_witnessed(size, note).await
    }
}

/// A memory that lasts as long as the process (tests).
#[derive(Debug, Default)]
pub struct InProcessWitnesses {
    state: Mutex<WitnessState>,
}

#[async_trait]
impl WitnessMemory for InProcessWitnesses {
    async fn read(&self) -> Result<WitnessState, StoreError> {
        Ok(self.state.lock().unwrap_or_else(|p| p.into_inner()).clone())
    }

    async fn set_size(&self, witness: &str, size: u64) -> Result<(), StoreError> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .sizes
            .insert(witness.to_owned(), size);
        Ok(())
    }

    async fn keep_witnessed(&self, size: u64, note: &str) -> Result<bool, StoreError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state
            .witnessed
            .as_ref()
            .is_some_and(|(kept, _)| *kept > size)
        {
            return Ok(false);
        }
        state.witnessed = Some((size, note.to_owned()));
        Ok(true)
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
