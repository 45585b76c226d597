//! The experiments in a run: each is registered under the rule in code
//! before it advances (its registration decision found in, or appended to,
//! the ledger; a rule that differs from the registered one does not
//! advance), the registered ones advance, and their paper snapshots, each
//! naming the run's report, go to the ledger.

use super::ScanRunner;
use crate::clock::rfc3339;
use crate::errors::ErrorChain;
use crate::ports::ledger_store::Refusal;
use crate::record::{Mode, RecordKind, StrategyId};
use crate::scan::experiments::{
    EXPERIMENTS, Experiment, RETIRED, Side, TokenMarket, Trade, registration_record, rule_hash,
};
use crate::scan::grid_slot;
use crate::scan::report::{Registration, ScannerState};
use crate::scan::view::{CostModelView, ExperimentStatus, ExperimentView};
use crate::service::ledger::{AppendError, AppendStatus};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

/// The event of a rule in code that differs from its registration.
pub(crate) const RULE_MISMATCH: &str = "experiment_rule_mismatch";

/// The event of a run that could not read the market, so wrote nothing.
pub(crate) const MARKET_EVENT: &str = "market";

/// What to check when the market cannot be read.
const MARKET_FIX: &str =
    "check the network and FF_DEXSCREENER_URL (offline, the provider stand-in's address)";

/// Why this run may write nothing to the ledger (`None` when it may): no
/// token of the universe has a price this run, so there is nothing a book
/// could be valued at or buy, and nothing observed to register under.
pub(crate) fn unread_market(market: &[TokenMarket]) -> Option<String> {
    if market
        .iter()
        .any(|token| token.mid.is_some_and(|mid| mid > Decimal::ZERO))
    {
        return None;
    }
    Some(format!(
        "the market could not be read (no token of the universe has a price this run), so nothing was written to the ledger: no registration, no paper snapshot; {MARKET_FIX}"
    ))
}

/// The registered experiments whose every holding can be valued this run:
/// DexScreener answered for its token (a token it has no pool for is
/// valued at 0) and, where there is a pool, the token's transfer fee is
/// known. Those advance and record. A book holding a token DexScreener did
/// not answer for, or whose mint was not read, stands still (an event says
/// which token), never valued at a price this run did not see.
pub(crate) fn priced_books(
    state: &mut ScannerState,
    experiments: &[ExperimentView],
    market: &[TokenMarket],
    now: DateTime<Utc>,
    degraded: &mut Vec<String>,
) -> Vec<ExperimentView> {
    let mut recording = Vec::with_capacity(experiments.len());
    for view in experiments {
        let unpriced: Vec<String> = state
            .books
            .iter()
            .filter(|book| book.experiment_id == view.experiment_id)
            .flat_map(|book| &book.positions)
            // A blocked holding is worth 0 whatever its price.
            .filter(|held| !held.blocked)
            .filter(|held| {
                !market.iter().any(|token| {
                    token.mint == held.mint
                        && (token.pool.is_none() || token.transfer_fee.is_some())
                })
            })
            .map(|held| held.symbol.clone())
            .collect();
        if unpriced.is_empty() {
            recording.push(view.clone());
            continue;
        }
        let message = format!(
            "{}: no DexScreener answer or no mint read this run for {} that the book holds, so it was not advanced and no paper snapshot was written; {MARKET_FIX}",
            view.experiment_id,
            unpriced.join(", ")
        );
        state.push_event(now, MARKET_EVENT, message.clone());
        degraded.push(message);
    }
    recording
}

impl ScanRunner {
    /// Each experiment's registration: as remembered, else as found in the
    /// ledger, else appended now. A rule in code that differs from the
    /// registered one, or a registration that cannot be had, leaves the
    /// experiment out of this run's advance (and the run degraded).
    /// Without `may_append` (a run that observed nothing), a registration
    /// is only looked up, never appended.
    pub(super) async fn register(
        &self,
        state: &mut ScannerState,
        now: DateTime<Utc>,
        degraded: &mut Vec<String>,
        may_append: bool,
    ) -> Vec<ExperimentView> {
        let mut views = Vec::with_capacity(EXPERIMENTS.len());
        for experiment in &EXPERIMENTS {
            let hash = rule_hash(experiment);
            let registration = match state.registrations.get(experiment.id) {
                Some(known) => Ok(Some(known.clone())),
                None => self.registration(experiment, now, may_append).await,
            };
            let registration = match registration {
                Ok(registration) => registration,
                Err(message) => {
                    state.push_event(now, "ledger", message.clone());
                    degraded.push(message);
                    None
                }
            };
            let status = match &registration {
                None => ExperimentStatus::Unregistered,
                Some(found) if found.rule_hash == hash => ExperimentStatus::Active,
                Some(found) => {
                    let message = format!(
                        "{}: the rule in code ({hash}) is not the registered one ({}, seq {}); not advanced",
                        experiment.id, found.rule_hash, found.seq
                    );
                    state.push_event(now, RULE_MISMATCH, message.clone());
                    degraded.push(message);
                    ExperimentStatus::RuleMismatch
                }
            };
            if let Some(found) = &registration {
                state
                    .registrations
                    .insert(experiment.id.to_owned(), found.clone());
            }
            views.push(ExperimentView {
                experiment_id: experiment.id.to_owned(),
                rule_hash: hash,
                registered_seq: registration.map(|r| r.seq),
                status,
                cost_model: CostModelView::current(),
            });
        }
        views
    }

    /// `experiment`'s registration in the ledger, appended when there is
    /// none and `may_append`; `Err` says why it could not be had.
    async fn registration(
        &self,
        experiment: &Experiment,
        now: DateTime<Utc>,
        may_append: bool,
    ) -> Result<Option<Registration>, String> {
        if let Some(found) = self.find_registration(experiment).await? {
            return Ok(Some(found));
        }
        if !may_append {
            return Ok(None);
        }
        let record = registration_record(experiment, now);
        match self.ledger.append(record.to_string().as_bytes()).await {
            Ok(receipt) => {
                if receipt.status == AppendStatus::Created {
                    tracing::info!(
                        experiment = experiment.id,
                        seq = receipt.entry.seq,
                        "registered"
                    );
                }
                Ok(Some(Registration {
                    seq: receipt.entry.seq,
                    rule_hash: rule_hash(experiment),
                }))
            }
            // Registered meanwhile (another writer, the same id): read it.
            Err(AppendError::Refused(Refusal::IdConflict { .. })) => {
                self.find_registration(experiment).await
            }
            Err(error) => Err(format!(
                "{}: the registration could not be appended: {}",
                experiment.id,
                ErrorChain(&error)
            )),
        }
    }

    /// `experiment`'s registration decision as the ledger has it.
    async fn find_registration(
        &self,
        experiment: &Experiment,
    ) -> Result<Option<Registration>, String> {
        self.ledger.registration(experiment).await.map_err(|error| {
            format!(
                "{}: the ledger could not be read for its registration: {}",
                experiment.id,
                ErrorChain(&error)
            )
        })
    }

    /// Looks up, once each, the last paper snapshot of every retired
    /// experiment (the report lists it).
    pub(super) async fn find_retired(&self, state: &mut ScannerState) {
        for (id, _) in RETIRED {
            if state.retired.contains_key(id) {
                continue;
            }
            let strategy = StrategyId::parse(id).expect("experiment ids are strategy ids");
            match self
                .ledger
                .newest(&strategy, RecordKind::Snapshot, Mode::Paper)
                .await
            {
                Ok(Some(entry)) => {
                    state.retired.insert(id.to_owned(), entry.seq);
                }
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(error = %ErrorChain(&error), "a retired experiment's last snapshot could not be looked up")
                }
            }
        }
    }

    /// Advances every registered experiment's book to `market`.
    pub(super) fn advance(
        &self,
        state: &mut ScannerState,
        experiments: &[ExperimentView],
        market: &[TokenMarket],
        now: DateTime<Utc>,
    ) -> Vec<Trade> {
        let mut all_fills = Vec::new();
        state.last_advanced_at = Some(now);
        for experiment in active(experiments) {
            let fills = state.book_mut(experiment).advance(experiment, market, now);
            for fill in &fills {
                state.push_event(now, "trade", trade_message(experiment, fill));
            }
            all_fills.extend(fills);
        }
        all_fills
    }

    /// Appends each registered experiment's paper snapshot for this slot,
    /// its `source.url` naming the run's report (`report_hash`). A refusal
    /// is an event of the next report, and degrades the next run.
    pub(super) async fn append_snapshots(
        &self,
        state: &mut ScannerState,
        experiments: &[ExperimentView],
        now: DateTime<Utc>,
        report_hash: &str,
    ) {
        let slot = grid_slot(now);
        for experiment in active(experiments) {
            let book = state.book_mut(experiment);
            let Some(record) =
                book.snapshot_record(experiment, slot, &format!("sha256:{report_hash}"))
            else {
                let message = format!(
                    "{}: the book's value cannot be computed or recorded exactly; no {} snapshot",
                    experiment.id,
                    rfc3339(slot)
                );
                state.push_event(now, "ledger", message.clone());
                state.carried.push(message);
                continue;
            };
            let message = match self.ledger.append(record.to_string().as_bytes()).await {
                // The ledger announces a new leaf itself.
                Ok(_) => continue,
                Err(AppendError::Refused(refusal)) => format!(
                    "{}: the {} snapshot was not appended ({refusal})",
                    experiment.id,
                    rfc3339(slot)
                ),
                Err(error @ AppendError::OutOfOrder { .. }) => format!(
                    "{}: the {} snapshot was not appended ({error})",
                    experiment.id,
                    rfc3339(slot)
                ),
                Err(AppendError::Record(error)) => {
                    format!("{}: the paper snapshot was refused: {error}", experiment.id)
                }
                Err(AppendError::Store(error)) => {
                    tracing::error!(error = %ErrorChain(&error), "the ledger store failed during a scanner run");
                    format!("{}: the ledger could not be written", experiment.id)
                }
            };
            tracing::warn!(experiment = experiment.id, "{message}");
            state.push_event(now, "ledger", message.clone());
            state.carried.push(message);
        }
    }
}

/// The experiments registered under the rule in code.
fn active(views: &[ExperimentView]) -> impl Iterator<Item = &'static Experiment> + '_ {
    EXPERIMENTS.iter().filter(|experiment| {
        views
            .iter()
            .any(|v| v.experiment_id == experiment.id && v.status == ExperimentStatus::Active)
    })
}

fn trade_message(experiment: &Experiment, fill: &Trade) -> String {
    format!(
        "{}: paper {} {} {} at ${} (swap ${}, fee ${}, network fee ${}{}{})",
        experiment.id,
        if fill.side == Side::Buy {
            "buy"
        } else {
            "sell"
        },
        fill.quantity,
        fill.symbol,
        fill.price,
        fill.notional,
        fill.fee,
        fill.network_fee,
        fill.impact.map_or(String::new(), |impact| format!(
            ", impact {} %",
            (impact * Decimal::ONE_HUNDRED).round_dp(2).normalize()
        )),
        if fill.transfer_fee.is_zero() {
            String::new()
        } else {
            format!(", transfer fee {} tokens", fill.transfer_fee)
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::experiments::Book;
    use crate::scan::experiments::book::Position;

    fn token(mint: &str, mid: Decimal) -> TokenMarket {
        TokenMarket {
            mint: mint.to_owned(),
            symbol: mint.to_uppercase(),
            mid: Some(mid),
            pool: None,
            change_h24: None,
            eligible: true,
            transfer_fee: None,
            blocked: false,
            evidence: Vec::new(),
            pool_evidence: None,
        }
    }

    fn view(experiment: &Experiment) -> ExperimentView {
        ExperimentView {
            experiment_id: experiment.id.to_owned(),
            rule_hash: rule_hash(experiment),
            registered_seq: Some(1),
            status: ExperimentStatus::Active,
            cost_model: CostModelView::current(),
        }
    }

    #[test]
    fn no_price_at_all_is_an_unread_market_and_one_price_is_not() {
        assert!(unread_market(&[]).is_some());
        assert!(unread_market(&[token("a", Decimal::ZERO)]).is_some());
        assert!(unread_market(&[token("a", Decimal::ZERO), token("b", Decimal::ONE)]).is_none());
    }

    #[test]
    fn only_the_book_holding_an_unpriced_token_stands_still() {
        let [holding, other, ..] = &EXPERIMENTS;
        let mut book = Book::new(holding);
        book.positions.push(Position {
            mint: "gone".to_owned(),
            symbol: "GONE".to_owned(),
            quantity: Decimal::ONE,
            cost: Decimal::ONE,
            mark: Decimal::ONE,
            mid_mark: Decimal::ONE,
            blocked: false,
        });
        let mut state = ScannerState {
            books: vec![book, Book::new(other)],
            ..ScannerState::default()
        };
        let mut degraded = Vec::new();
        let recording = priced_books(
            &mut state,
            &[view(holding), view(other)],
            &[token("listed", Decimal::ONE)],
            Utc::now(),
            &mut degraded,
        );
        assert_eq!(recording, vec![view(other)]);
        assert_eq!(degraded.len(), 1);
        assert!(degraded[0].contains("GONE"), "{}", degraded[0]);
    }

    /// A holding DexScreener answered for without a pool is valued at 0,
    /// so its book records; one with a pool but no transfer fee read this
    /// run cannot be valued, so its book stands still.
    #[test]
    fn a_holding_without_a_pool_is_recorded_and_one_without_its_fee_is_not() {
        let experiment = &EXPERIMENTS[1];
        let holding = |mint: &str| {
            let mut book = Book::new(experiment);
            book.positions.push(Position {
                mint: mint.to_owned(),
                symbol: mint.to_uppercase(),
                quantity: Decimal::ONE,
                cost: Decimal::ONE,
                mark: Decimal::ONE,
                mid_mark: Decimal::ONE,
                blocked: false,
            });
            ScannerState {
                books: vec![book],
                ..ScannerState::default()
            }
        };
        let dead = token("dead", Decimal::ONE);
        let unread = TokenMarket {
            pool: crate::scan::experiments::pool::Reserves::new(
                Decimal::ONE,
                Decimal::ONE,
                Decimal::ONE,
            ),
            ..token("unread", Decimal::ONE)
        };
        let market = [dead, unread];
        let mut degraded = Vec::new();
        let recorded = priced_books(
            &mut holding("dead"),
            &[view(experiment)],
            &market,
            Utc::now(),
            &mut degraded,
        );
        assert_eq!((recorded.len(), degraded.len()), (1, 0));
        let recorded = priced_books(
            &mut holding("unread"),
            &[view(experiment)],
            &market,
            Utc::now(),
            &mut degraded,
        );
        assert_eq!((recorded.len(), degraded.len()), (0, 1));
    }
}
