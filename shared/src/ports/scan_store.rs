//! The scan store: the scanner run's lock and its fenced state.
//!
//! A run takes the lock with a random token and an expiry longer than a run
//! may last ([`ScanStore::acquire`]); only the holder releases it
//! ([`ScanStore::release`], compare-and-delete). Every state write the run
//! makes goes through [`ScanStore::write_fenced`], which succeeds only while
//! the token still holds the lock: a run that overran its expiry, after which
//! another run took the lock, can no longer overwrite the newer run's state.
//!
//! It also keeps the runs' evidence: provider bodies and reports under the
//! SHA-256 of their bytes, for a limited time ([`ScanStore::keep_evidence`]).
//!
//! Adapters: `adapters::embedded::SqliteScanStore` (one file in the data
//! dir; the same guarantees across processes sharing it) and
//! `adapters::kv_rest::KvScanStore` (`SET NX PX` and Lua checks).

use super::StoreError;
use async_trait::async_trait;
use std::time::Duration;

/// Proof of holding the scanner lock: 128 random bits, as hex.
#[derive(Clone, PartialEq, Eq)]
pub struct LockToken(String);

impl std::fmt::Debug for LockToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not a secret, but there is no reason to print it either.
        f.write_str("LockToken(..)")
    }
}

impl LockToken {
    /// A fresh random token from the operating system's generator.
    pub(crate) fn random() -> Result<LockToken, StoreError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)
            .map_err(|e| StoreError::unavailable("no randomness for a lock token", e))?;
        Ok(LockToken(hex::encode(bytes)))
    }

    /// The token's text, as stored.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// One named value the scanner keeps (its report, its books, its caches).
pub(crate) type StateEntry = (String, String);

/// The scanner run's lock and state.
#[async_trait]
pub trait ScanStore: Send + Sync + 'static {
    /// Takes the lock for `ttl` if nobody holds it or the holder's expiry has
    /// passed; `None` when another holder has it.
    async fn acquire(&self, ttl: Duration) -> Result<Option<LockToken>, StoreError>;

    /// Releases the lock if `token` still holds it; `false` (and nothing
    /// changed) when it does not.
    async fn release(&self, token: &LockToken) -> Result<bool, StoreError>;

    /// Writes every entry together, only while `token` holds the lock;
    /// `false` (and nothing written) when it does not.
    async fn write_fenced(
        &self,
        token: &LockToken,
        entries: &[StateEntry],
    ) -> Result<bool, StoreError>;

    /// The values stored under `names`, in order (`None` where absent).
    async fn read(&self, names: &[&str]) -> Result<Vec<Option<String>>, StoreError>;

    /// Keeps each item's bytes under its SHA-256 (lowercase hex) for `ttl`:
    /// the named bytes, or their gzip
    /// ([`crate::scan::provenance::pack_evidence`]). Evidence is
    /// content-addressed, so this needs no lock: an item kept already stays
    /// as it is.
    async fn keep_evidence(&self, items: &[Evidence], ttl: Duration) -> Result<(), StoreError>;

    /// The bytes kept under `sha256`, while they are kept (`None` once
    /// expired or never kept). Bytes that do not hash to `sha256` are
    /// [`StoreError::Corrupt`], never served.
    async fn evidence(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// How many bytes of evidence are kept and not yet expired (the sum of
    /// the items' lengths, each counted when kept; an item kept again may
    /// be counted again, which errs on the side of keeping less): what the
    /// scanner's evidence budget is measured against.
    async fn evidence_bytes(&self) -> Result<u64, StoreError>;
}

/// One item of evidence: the SHA-256 (lowercase hex) of the bytes it names,
/// and its bytes as stored (those bytes, or their gzip).
pub(crate) type Evidence = (String, bytes::Bytes);

/// The bytes evidence `stored` under `sha256` names (kept as they are, or
/// gzip-compressed: [`crate::scan::provenance::pack_evidence`]), checked
/// against the name; else the store's copy is corrupt (the adapters' check
/// on every read).
#[cfg(any(feature = "kv", feature = "embedded"))]
pub(crate) fn checked_evidence(
    sha256: &str,
    stored: Vec<u8>,
    store: &str,
) -> Result<Vec<u8>, StoreError> {
    crate::scan::provenance::unpack_evidence(sha256, stored).ok_or_else(|| {
        StoreError::Corrupt(format!(
            "the {store}'s evidence {sha256} does not hash to its name"
        ))
    })
}
