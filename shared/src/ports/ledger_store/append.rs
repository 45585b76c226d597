//! The ledger's one write.

use super::{AppendOutcome, Candidate, StoreError};
use async_trait::async_trait;

/// Appending to the ledger.
#[async_trait]
pub trait LedgerAppend: Send + Sync {
    /// Appends `candidate` with the contract's checks, atomically.
    async fn append(&self, candidate: Candidate) -> Result<AppendOutcome, StoreError>;

    /// What [`LedgerAppend::append`] would answer for `candidate` now (the
    /// same checks, the same receipt), with nothing written: a dry run.
    async fn check(&self, candidate: Candidate) -> Result<AppendOutcome, StoreError>;
}
