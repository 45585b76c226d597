//! The contract view's data, read in one call ([`Contracts::read`]): each
//! paper experiment's registration as the ledger has it (registrations are
//! ledger records, so the view changes with the head). The JSON is the
//! caller's: it renders the registrations into bytes, which are kept per
//! head and compressed at most once per coding; a warm read costs the head
//! alone.
//!
//! [`rules`] holds the view's rules, limits and scanner declaration,
//! written from the constants the code enforces.

pub(crate) mod rules;
pub use rules::{contract_limits, dashboard_formulas, record_rules, scanner_rules};

use crate::ports::ledger_store::StoreError;
use crate::scan::experiments::EXPERIMENTS;
use crate::scan::report::Registration;
use crate::service::encoded::Encoded;
use crate::service::head_cache::HeadCache;
use crate::service::ledger::Ledger;
use crate::service::read::Answer;
use std::sync::Arc;

/// Each experiment's id and its registration (`None` until registered).
pub type Registrations = [(&'static str, Option<Registration>)];

/// The contract view's use case: the registrations read through the
/// ledger, the rendered view kept for the latest head.
pub struct Contracts {
    ledger: Arc<Ledger>,
    rendered: HeadCache<(), Arc<Encoded>>,
}

impl std::fmt::Debug for Contracts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contracts").finish_non_exhaustive()
    }
}

impl Contracts {
    /// The contract view over `ledger`.
    pub fn new(ledger: Arc<Ledger>) -> Contracts {
        Contracts {
            ledger,
            rendered: HeadCache::new(1),
        }
    }

    /// The contract view at the current head: what `render` makes of the
    /// registrations, made once per head however many ask at once.
    pub async fn read(
        &self,
        render: impl FnOnce(&Registrations) -> Vec<u8>,
    ) -> Result<Answer, StoreError> {
        let head = self.ledger.head().await?;
        let body = self
            .rendered
            .get_or_compute(head.root_hash, (), || async {
                let mut registrations = Vec::with_capacity(EXPERIMENTS.len());
                for experiment in &EXPERIMENTS {
                    registrations
                        .push((experiment.id, self.ledger.registration(experiment).await?));
                }
                Ok::<_, StoreError>(Arc::new(Encoded::new(render(&registrations))))
            })
            .await?;
        Ok(Answer { head, body })
    }
}
