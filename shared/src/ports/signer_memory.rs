//! Where the log's signer remembers the largest checkpoint it has signed,
//! apart from the ledger's own data ([`SignerMemory`]).
//!
//! The ledger's store can lose a key, be restored from an older backup,
//! be flushed, or be swapped for another under a new prefix; the signing
//! key does not notice. Before it signs, the log checks the head it is
//! asked to sign extends the checkpoint remembered here (see
//! [`crate::service::log::Log`]), so a store that went back or forked never gets
//! a second history signed with the same key. What is remembered is the
//! signed checkpoint itself (its note text), so it can be checked with the
//! verifier key and shown to an operator as evidence.
//!
//! Adapters: a file beside the key for freedom-local
//! (`adapters::embedded::SignedFile`), a KV key of its own under Lambda
//! (`adapters::kv_rest::KvSignerMemory`), and [`InProcess`], which
//! remembers for as long as the process lives (tests, and a log with no
//! other memory configured).

use super::ledger_store::StoreError;
use async_trait::async_trait;
use std::sync::Mutex;

/// The signer's memory of the largest checkpoint it has signed.
#[async_trait]
pub trait SignerMemory: Send + Sync + 'static {
    /// The remembered signed checkpoint (note text), if any.
    async fn recall(&self) -> Result<Option<String>, StoreError>;

    /// Replaces the remembered checkpoint with `next` if it is still
    /// `previous` (compare-and-swap; `None`: nothing remembered), durably
    /// before it answers. `Ok(false)`: another signer moved it first.
    async fn remember(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError>;

    /// Where the memory is, in words, for log lines and start-up refusals
    /// (a file's path, a KV key's name; never a secret).
    fn describe(&self) -> String;
}

#[async_trait]
impl<T: SignerMemory + ?Sized> SignerMemory for std::sync::Arc<T> {
    async fn recall(&self) -> Result<Option<String>, StoreError> {
        (**self).recall().await
    }

    async fn remember(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError> {
        (**self).remember(previous, next).await
    }

    fn describe(&self) -> String {
        (**self).describe()
    }
}

/// A memory that lasts as long as the process: it keeps one process from
/// signing two histories, not a restarted one. A clone is a copy of what it
/// holds then (the custody simulator's backups).
#[derive(Debug, Default)]
pub struct InProcess {
    remembered: Mutex<Option<String>>,
}

impl Clone for InProcess {
    fn clone(&self) -> InProcess {
        InProcess {
            remembered: Mutex::new(
                self.remembered
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
            ),
        }
    }
}

#[async_trait]
impl SignerMemory for InProcess {
    async fn recall(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .remembered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone())
    }

    async fn remember(&self, previous: Option<&str>, next: &str) -> Result<bool, StoreError> {
        let mut remembered = self.remembered.lock().unwrap_or_else(|p| p.into_inner());
        if remembered.as_deref() != previous {
            return Ok(false);
        }
        *remembered = Some(next.to_owned());
        Ok(true)
    }

    fn describe(&self) -> String {
        "the process's memory".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn the_in_process_memory_passes_the_signer_memory_suite() {
        crate::ports::conformance::run_signer_memory(|| async {
            let memory = Arc::new(InProcess::default());
            (Arc::clone(&memory), memory)
        })
        .await;
    }
}
