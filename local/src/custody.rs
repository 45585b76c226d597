//! Where freedom-local's log remembers the largest checkpoint it signed,
//! and the check at start that the ledger it is about to serve is still
//! there.
//!
//! The memory is a file beside the key file, `<key file>.signed` (also
//! when the key comes from `FF_LOG_SIGNING_KEY`), outside the data dir, the
//! ledger's database and the KV store, so a restored, emptied or replaced
//! data dir, a flushed Redis or a new `FF_KV_PREFIX` cannot make the log
//! forget what it signed; the store keeps a copy of its own, and the log
//! checks the ledger against both. While the log remembers a checkpoint of
//! one record or more,
//! freedom-local refuses to start on a ledger that is missing, empty or not
//! a ledger, naming the file (or the KV store): such a ledger could only
//! grow into a second history. A ledger that is merely older than the
//! memory starts, and the log refuses to sign it (checkpoints and proofs
//! answer 500) while appends and reads go on.

use crate::signing_key::memory_file;
use freedom_shared::adapters::SignedFile;
use freedom_shared::adapters::{LedgerFile, SqliteLedgerStore};
use freedom_shared::config::KvConfig;
use freedom_shared::ports::{LedgerStore, SignerMemory, StoreError};
use freedom_shared::tlog::checkpoint::Checkpoint;
use freedom_shared::tlog::note::VerifierKey;
use std::path::Path;

/// Why freedom-local will not serve the ledger it found.
#[derive(Debug, thiserror::Error)]
pub enum LedgerGone {
    /// The ledger is missing, empty, or not a ledger.
    #[error(
        "{ledger} {what}, but the log has signed a checkpoint of {size} records ({memory}): restore the ledger from a backup; to start a new log instead, move the key and {memory} away"
    )]
    Gone {
        /// The ledger file, or the KV store and prefix.
        ledger: String,
        /// What is wrong with it, in words.
        what: &'static str,
        /// The remembered checkpoint's size.
        size: u64,
        /// Where the memory is.
        memory: String,
    },
    /// The memory or the ledger could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The signer's memory beside `key_file` (whether the key is read from it
/// or from the environment).
pub fn memory(key_file: &Path) -> SignedFile {
    SignedFile::at(&memory_file(key_file))
}

/// The size of the checkpoint `memory` holds, if the key `verifier`
/// verifies signed it (a memory the key did not sign is left for the log
/// to refuse at its first signature, loudly, rather than stop start-up
/// here).
pub async fn remembered_size(
    memory: &SignedFile,
    verifier: &VerifierKey,
) -> Result<u64, LedgerGone> {
    let Some(note) = memory.recall().await? else {
        return Ok(0);
    };
    Ok(Checkpoint::open(&note, verifier).map_or(0, |checkpoint| checkpoint.size))
}

/// Before the stores open: on the embedded store, the ledger file must be
/// there and be a ledger with records while the log remembers `size > 0`
/// (opening would otherwise create an empty one).
pub fn check_before_open(
    size: u64,
    kv: Option<&KvConfig>,
    data_dir: &Path,
    memory: &SignedFile,
) -> Result<(), LedgerGone> {
    if size == 0 || kv.is_some() {
        return Ok(());
    }
    let what = match SqliteLedgerStore::inspect(data_dir) {
        LedgerFile::Ledger { size: 1.. } => return Ok(()),
        LedgerFile::Missing => "is missing",
        LedgerFile::Empty => "is an empty file",
        LedgerFile::NotALedger => "is not a ledger",
        LedgerFile::Ledger { size: 0 } => "holds no records",
    };
    Err(LedgerGone::Gone {
        ledger: SqliteLedgerStore::path_in(data_dir).display().to_string(),
        what,
        size,
        memory: memory.describe(),
    })
}

/// After the stores open: the ledger (on either store) must hold records
/// while the log remembers `size > 0` (a flushed KV store, or a new prefix).
pub async fn check_after_open(
    size: u64,
    ledger: &dyn LedgerStore,
    description: &str,
    memory: &SignedFile,
) -> Result<(), LedgerGone> {
    if size == 0 || ledger.head().await?.size > 0 {
        return Ok(());
    }
    Err(LedgerGone::Gone {
        ledger: description.to_owned(),
        what: "holds no ledger",
        size,
        memory: memory.describe(),
    })
}
