//! The head: every reader's first read (a conditional request compares its
//! tag with it before any other work), so each reader's trait extends this
//! one and a use case holding any of them can read it.

use super::StoreError;
use crate::merkle::Head;
use async_trait::async_trait;

/// Reading the ledger's current head.
#[async_trait]
pub trait HeadReads: Send + Sync {
    /// The current head (one store read: one KV round trip, one SQLite
    /// row).
    async fn head(&self) -> Result<Head, StoreError>;
}
