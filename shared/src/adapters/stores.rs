//! Which stores a process uses, chosen once at start-up from configuration
//! and from the adapters this binary was built with: the KV REST store when
//! its variables are set (feature `kv`), else the embedded store in the data
//! dir (feature `embedded`). A binary with neither adapter for the
//! configuration it is given refuses to start, saying which is missing.

use crate::config::KvConfig;
use crate::ports::{LedgerStore, ScanStore, SignerMemory, StoreError, WitnessMemory};
use std::path::Path;
use std::sync::Arc;

/// The stores one process uses.
#[derive(Clone)]
pub struct Stores {
    /// The fund's ledger.
    pub ledger: Arc<dyn LedgerStore>,
    /// The scanner run's lock and state.
    pub scan: Arc<dyn ScanStore>,
    /// The store's copy of the largest checkpoint the log's signer signed,
    /// under a key (KV) or in a row (SQLite) of its own. It is restored or
    /// lost with the store, so freedom-local also keeps one beside its key
    /// file and the witnesses are the memory of last resort.
    pub signer_memory: Arc<dyn SignerMemory>,
    /// What the log keeps of its witnesses, on the same store.
    pub witness_memory: Arc<dyn WitnessMemory>,
    /// Which store this is, for the start-up log (never the token).
    pub description: String,
}

impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stores")
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

impl Stores {
    /// The KV REST store when `kv` is configured (nothing is written to the
    /// data dir then), else the embedded store in `data_dir`.
    pub fn open(kv: Option<&KvConfig>, data_dir: &Path) -> Result<Stores, StoreError> {
        match kv {
            Some(config) => Stores::kv_rest(config),
            None => Stores::embedded(data_dir),
        }
    }

    /// The KV REST store described by `config`.
    #[cfg(feature = "kv")]
    pub(crate) fn kv_rest(config: &KvConfig) -> Result<Stores, StoreError> {
        use super::kv_rest::{
            KvClient, KvLedgerStore, KvScanStore, KvSignerMemory, KvWitnessMemory,
        };
        let client = KvClient::new(config);
        Ok(Stores {
            ledger: Arc::new(KvLedgerStore::new(client.clone(), &config.prefix)),
            scan: Arc::new(KvScanStore::new(client.clone(), &config.prefix)),
            signer_memory: Arc::new(KvSignerMemory::new(client.clone(), &config.prefix)),
            witness_memory: Arc::new(KvWitnessMemory::new(client, &config.prefix)),
            description: format!(
                "KV REST store at {} (from {}, key prefix {:?})",
                config.url, config.source, config.prefix
            ),
        })
    }

    /// The KV REST store described by `config`: not built into this binary.
    #[cfg(not(feature = "kv"))]
    pub(crate) fn kv_rest(_config: &KvConfig) -> Result<Stores, StoreError> {
        Err(StoreError::unavailable_now(
            "this binary has no KV REST store adapter (feature kv)",
        ))
    }

    /// The embedded store in `data_dir`.
    #[cfg(feature = "embedded")]
    pub(crate) fn embedded(data_dir: &Path) -> Result<Stores, StoreError> {
        use super::embedded::{
            SqliteLedgerStore, SqliteScanStore, SqliteSignerMemory, SqliteWitnessMemory,
        };
        Ok(Stores {
            ledger: Arc::new(SqliteLedgerStore::open(data_dir)?),
            scan: Arc::new(SqliteScanStore::open(data_dir)?),
            signer_memory: Arc::new(SqliteSignerMemory::open(data_dir)?),
            witness_memory: Arc::new(SqliteWitnessMemory::open(data_dir)?),
            description: format!("embedded store (SQLite) in {}", data_dir.display()),
        })
    }

    /// The embedded store: not built into this binary.
    #[cfg(not(feature = "embedded"))]
    pub(crate) fn embedded(_data_dir: &Path) -> Result<Stores, StoreError> {
        Err(StoreError::unavailable_now(
            "this binary has no embedded store (feature embedded): configure the KV REST store",
        ))
    }
}
