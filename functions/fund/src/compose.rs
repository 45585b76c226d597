//! The fund's composition root, which the Lambda start-up
//! ([`crate::lambda`]) and freedom-local both call: the log is assembled
//! here once (its key and origin, its memories, its witnesses over HTTP,
//! its events), then the use cases on the same store ([`AppState`]).
//!
//! What differs by runtime stays with the caller: where the signing key
//! comes from (the environment, or freedom-local's key file), the memory
//! that travels with the key (freedom-local's file beside it; none under
//! Lambda), and what start-up checks before serving.

use crate::state::AppState;
use freedom_shared::adapters::HttpWitnesses;
use freedom_shared::adapters::Stores;
use freedom_shared::config::{LogConfig, WriteToken};
use freedom_shared::ports::Events;
use freedom_shared::ports::SignerMemory;
use freedom_shared::service::Log;
use freedom_shared::tlog::policy::Policy;
use std::sync::Arc;

/// How the fund's log is signed, remembered and witnessed.
pub struct LogParts {
    /// Its origin, key and the operator's `--new-log` word.
    pub config: LogConfig,
    /// The memory that travels with the key (freedom-local's file beside
    /// the key file), first; the store's own memory always follows it.
    pub key_memory: Option<Arc<dyn SignerMemory>>,
    /// The witness policy, when checkpoints are witnessed.
    pub policy: Option<Policy>,
}

/// The fund on `stores`: its log as `log` describes it, the use cases on
/// the same store, writes authorised by `write_token`, events to `events`.
pub fn fund(
    stores: &Stores,
    log: LogParts,
    write_token: Option<WriteToken>,
    events: Events,
) -> AppState {
    let new_log = log.config.new_log;
    let memories: Vec<Arc<dyn SignerMemory>> = log
        .key_memory
        .into_iter()
        .chain([Arc::clone(&stores.signer_memory)])
        .collect();
    let mut signed = Log::configured(Arc::clone(&stores.ledger) as _, log.config)
        .with_memories(memories)
        .with_new_log(new_log)
        .with_events(events.clone());
    if let Some(policy) = log.policy {
        signed = signed.with_witnesses(
            policy,
            Arc::clone(&stores.witness_memory),
            Arc::new(HttpWitnesses),
        );
    }
    AppState::new(Arc::clone(&stores.ledger), write_token)
        .with_events(events)
        .with_log(signed)
        .with_scanner(Arc::clone(&stores.scan))
}
