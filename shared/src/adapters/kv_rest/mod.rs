//! The KV REST store: Redis behind the Upstash REST protocol, the production
//! store (docs/providers.md, "Upstash Redis REST").
//!
//! - [`client`]: the protocol's client (commands, `/pipeline`, `/multi-exec`,
//!   Lua scripts by `EVALSHA`), on the one outbound HTTP client.
//! - `ledger_store`: the ledger store ([`KvLedgerStore`]); its key layout
//!   and round trips are in its doc. `append.lua` and `page.lua` are its
//!   server-side scripts.
//! - `scan_store`: the scanner's lock and fenced state ([`KvScanStore`]).
//! - `signer_memory`: the log's largest signed checkpoint, under a key of
//!   its own ([`KvSignerMemory`]).
//! - `witness_memory`: the size each witness last cosigned and the newest
//!   witnessed checkpoint, in one hash ([`KvWitnessMemory`]).

pub(crate) mod client;
pub use client::{Command, KvClient, KvError};
pub(crate) mod ledger_store;
pub(crate) mod scan_store;
pub(crate) mod signer_memory;
pub(crate) mod witness_memory;

pub use ledger_store::KvLedgerStore;
pub use scan_store::KvScanStore;
pub use signer_memory::KvSignerMemory;
pub use witness_memory::KvWitnessMemory;
