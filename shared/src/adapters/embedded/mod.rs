//! The embedded store: SQLite files in the data dir, for running on one
//! machine with no cloud (freedom-local).
//!
//! - `connection`: opening a database (WAL, `synchronous = FULL`, retry
//!   while another process switches the file to WAL) and running blocking
//!   work off the async runtime: what both stores share.
//! - [`ledger_store`]: the ledger store ([`SqliteLedgerStore`]) in
//!   `ledger.sqlite3`.
//! - `scan_store`: the scanner's lock and fenced state (`SqliteScanStore`)
//!   in `scanner.sqlite3`.
//! - `signed_file`: the log's largest signed checkpoint in a file beside
//!   the signing key ([`SignedFile`]), outside the data dir.
//! - `signer_memory`: the store's copy of it ([`SqliteSignerMemory`]), a
//!   row of `ledger.sqlite3`.
//! - `witness_memory`: the log's memory of its witnesses
//!   ([`SqliteWitnessMemory`]) in `log-witnesses.sqlite3`.

pub(crate) mod connection;
pub(crate) mod ledger_store;
pub use ledger_store::{DATABASE_FILE, LedgerFile, SqliteLedgerStore};
pub(crate) mod scan_store;
pub(crate) mod signed_file;
pub(crate) mod signer_memory;
pub(crate) mod witness_memory;

pub(crate) use scan_store::SqliteScanStore;
pub use signed_file::SignedFile;
pub use signer_memory::SqliteSignerMemory;
pub use witness_memory::SqliteWitnessMemory;
