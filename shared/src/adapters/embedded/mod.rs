//! The embedded store: SQLite files in the data dir, for running on one
//! machine with no cloud (freedom-local).
//!
//! - [`connection`]: opening a database (WAL, `synchronous = FULL`, retry
//!   while another process switches the file to WAL) and running blocking
//!   work off the async runtime: what both stores share.
//! - [`ledger_store`]: the ledger store ([`SqliteLedgerStore`]) in
//!   `ledger.sqlite3`.
//! - [`scan_store`]: the scanner's lock and fenced state ([`SqliteScanStore`])
//!   in `scanner.sqlite3`.

pub mod connection;
pub mod ledger_store;
pub mod scan_store;

pub use ledger_store::SqliteLedgerStore;
pub use scan_store::SqliteScanStore;
