//! The scanner's persisted state and its report.
//!
//! State (kept between runs, written only while the run holds the lock):
//! the experiments' books, each token's observations (at most
//! [`HISTORY_PER_TOKEN`], tokens that left the universe dropped), the latest
//! [`MAX_EVENTS`] events, the RugCheck cache, and when the experiments last
//! advanced. The report is what `GET /api/freedom-scanner` answers.

use super::checks::Check;
use super::experiments::{Book, EXPERIMENTS, Experiment, RETIRED};
use super::holders::CachedHolders;
use super::provenance::ProvenanceEntry;
use super::view::{
    Amount, BookView, EventView, ExperimentView, Instant, LinkView, ObservationView, Report,
    RetiredView, RunStatus, UniverseView,
};
use super::{
    CachedRisk, DEDUP_WINDOW, HISTORY_PER_TOKEN, MAX_EVENT_CHARS, MAX_EVENTS, UniverseToken,
    WalletView,
};
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One observation of a token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Observation {
    /// When the run observed the token (the run's start).
    pub observed_at: DateTime<Utc>,
    /// USD price, when known.
    pub price_usd: Option<Decimal>,
    /// USD liquidity, when known.
    pub liquidity_usd: Option<Decimal>,
}

/// Something a run did or met (a provider failure, a paper trade…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Event {
    /// When it happened.
    pub at: DateTime<Utc>,
    /// e.g. `run`, `provider`, `trade`, `ledger`.
    pub kind: String,
    /// What happened, in a sentence.
    pub message: String,
}

/// What the scanner keeps between runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScannerState {
    /// One paper book per experiment.
    pub books: Vec<Book>,
    /// Observations per mint, oldest first.
    pub history: BTreeMap<String, Vec<Observation>>,
    /// The latest events, oldest first.
    pub events: Vec<Event>,
    /// RugCheck answers per mint.
    pub risk_cache: BTreeMap<String, CachedRisk>,
    /// The largest holders per mint.
    #[serde(default)]
    pub holders_cache: BTreeMap<String, CachedHolders>,
    /// Each experiment's registration as found in (or written to) the
    /// ledger.
    #[serde(default)]
    pub registrations: BTreeMap<String, Registration>,
    /// Each retired experiment's last paper snapshot in the ledger, once
    /// looked up.
    #[serde(default)]
    pub retired: BTreeMap<String, u64>,
    /// When the experiments last advanced.
    pub last_advanced_at: Option<DateTime<Utc>>,
    /// When a run last ended `ok`.
    #[serde(default)]
    pub last_ok_at: Option<DateTime<Utc>>,
    /// What went wrong after the last report was built (a paper snapshot
    /// the ledger refused): the next run reports it and is degraded.
    #[serde(default)]
    pub carried: Vec<String>,
}

/// An experiment's registration decision in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    /// Its place in the ledger.
    pub seq: u64,
    /// The rule hash it names (`sha256:<hex>`).
    pub rule_hash: String,
}

impl ScannerState {
    /// The book of `experiment`, created with the start capital if new.
    pub(crate) fn book_mut(&mut self, experiment: &Experiment) -> &mut Book {
        if let Some(index) = self
            .books
            .iter()
            .position(|b| b.experiment_id == experiment.id)
        {
            return &mut self.books[index];
        }
        self.books.push(Book::new(experiment));
        self.books.last_mut().expect("just pushed")
    }

    /// Records `observation` of `mint` unless one was taken within the
    /// dedup window before it; says whether it was recorded.
    pub(crate) fn observe(&mut self, mint: &str, observation: Observation) -> bool {
        let list = self.history.entry(mint.to_owned()).or_default();
        if let Some(last) = list.last()
            && observation.observed_at - last.observed_at < DEDUP_WINDOW
        {
            return false;
        }
        list.push(observation);
        let excess = list.len().saturating_sub(HISTORY_PER_TOKEN);
        list.drain(..excess);
        true
    }

    /// Whether the experiments may advance at `now`: not within the dedup
    /// window of their last advance, and not in the same 15-minute ledger
    /// slot (whose paper snapshots are already written, so a second advance
    /// would leave the books ahead of the ledger).
    pub(crate) fn may_advance(&self, now: DateTime<Utc>) -> bool {
        self.last_advanced_at.is_none_or(|last| {
            now - last >= DEDUP_WINDOW && super::grid_slot(now) > super::grid_slot(last)
        })
    }

    /// Adds an event, keeping the latest [`MAX_EVENTS`]. Its message may
    /// carry a provider's text (an RPC error, a symbol): hidden characters
    /// are removed and it is cut to [`MAX_EVENT_CHARS`], here, where every
    /// event passes.
    pub(crate) fn push_event(&mut self, at: DateTime<Utc>, kind: &str, message: impl Into<String>) {
        self.events.push(Event {
            at,
            kind: kind.to_owned(),
            message: super::text::visible(&message.into(), MAX_EVENT_CHARS),
        });
        let excess = self.events.len().saturating_sub(MAX_EVENTS);
        self.events.drain(..excess);
    }

    /// Marks the cached answers' provenance entries whose body is among
    /// `dropped` (past the run's evidence budget) as not kept.
    pub(crate) fn mark_not_kept(&mut self, dropped: &std::collections::BTreeSet<String>) {
        for cached in self.risk_cache.values_mut() {
            super::provenance::mark_not_kept(&mut cached.provenance, dropped);
        }
        for cached in self.holders_cache.values_mut() {
            super::provenance::mark_not_kept(&mut cached.provenance, dropped);
        }
    }

    /// Drops history and cached answers of tokens no longer in
    /// `universe` and the books of retired experiments (their last
    /// snapshot stays in the ledger), and bounds every cached report (a
    /// state saved before reports were bounded shrinks at its next run).
    pub(crate) fn prune(&mut self, universe: &[UniverseToken]) {
        let keep = |mint: &String| universe.iter().any(|t| &t.mint == mint);
        self.history.retain(|mint, _| keep(mint));
        self.risk_cache.retain(|mint, _| keep(mint));
        self.holders_cache.retain(|mint, _| keep(mint));
        self.books
            .retain(|book| EXPERIMENTS.iter().any(|e| e.id == book.experiment_id));
        for cached in self.risk_cache.values_mut() {
            cached.report = cached.report.take().map(super::RiskReport::bounded);
        }
    }
}

/// One universe entry of the report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UniverseEntry {
    /// Mint address.
    pub mint: String,
    /// Ticker shown in the report: DexScreener's, else the configured one.
    pub symbol: String,
    /// USD price, when known.
    pub price_usd: Option<Decimal>,
    /// USD liquidity, when known.
    pub liquidity_usd: Option<Decimal>,
    /// Every check passed.
    pub eligible: bool,
    /// The checks.
    pub checks: Vec<Check>,
    /// The provider links.
    pub links: Vec<(String, String)>,
}

/// A finished run's report, as JSON.
pub(crate) struct ReportParts<'a> {
    /// How the run ended.
    pub status: RunStatus,
    /// When the report was written.
    pub report_at: DateTime<Utc>,
    /// When the data was observed (the run's start).
    pub observed_at: DateTime<Utc>,
    /// The universe with checks.
    pub universe: &'a [UniverseEntry],
    /// The state after the run (books, history, events).
    pub state: &'a ScannerState,
    /// Observed public accounts.
    pub wallets: &'a [WalletView],
    /// Every provider answer the run used (checks and fills name them by
    /// index and hash).
    pub provenance: &'a [ProvenanceEntry],
    /// Each experiment's rule and registration this run.
    pub experiments: &'a [ExperimentView],
}

impl From<&Observation> for ObservationView {
    fn from(observation: &Observation) -> ObservationView {
        ObservationView {
            observed_at: Instant(observation.observed_at),
            price_usd: observation.price_usd.map(Amount),
            liquidity_usd: observation.liquidity_usd.map(Amount),
        }
    }
}

impl From<&Event> for EventView {
    fn from(event: &Event) -> EventView {
        EventView {
            at: Instant(event.at),
            kind: event.kind.clone(),
            message: event.message.clone(),
        }
    }
}

impl ReportParts<'_> {
    /// The report with every named part.
    pub(crate) fn report(&self) -> Report {
        let universe = self
            .universe
            .iter()
            .map(|u| UniverseView {
                mint: u.mint.clone(),
                symbol: u.symbol.clone(),
                price_usd: u.price_usd.map(Amount),
                liquidity_usd: u.liquidity_usd.map(Amount),
                eligible: u.eligible,
                checks: u.checks.clone(),
            })
            .collect();
        let links = self
            .universe
            .iter()
            .map(|u| {
                let list = u
                    .links
                    .iter()
                    .map(|(provider, url)| LinkView {
                        provider: provider.clone(),
                        url: url.clone(),
                    })
                    .collect();
                (u.mint.clone(), list)
            })
            .collect();
        let books = EXPERIMENTS
            .iter()
            .filter_map(|e| self.state.books.iter().find(|b| b.experiment_id == e.id))
            .map(BookView::from)
            .collect();
        let history = self
            .state
            .history
            .iter()
            .map(|(mint, list)| {
                (
                    mint.clone(),
                    list.iter().map(ObservationView::from).collect(),
                )
            })
            .collect();
        Report {
            status: Some(self.status),
            report_at: Some(Instant(self.report_at)),
            observed_at: Some(Instant(self.observed_at)),
            last_ok_at: self.state.last_ok_at.map(Instant),
            universe,
            links,
            books,
            history,
            events: self.state.events.iter().map(EventView::from).collect(),
            wallets: self.wallets.to_vec(),
            experiments: self.experiments.to_vec(),
            // Only those this ledger holds a snapshot of: a fresh ledger
            // lists none.
            retired: RETIRED
                .iter()
                .filter_map(|(id, _)| {
                    let seq = self.state.retired.get(*id).copied()?;
                    Some(RetiredView {
                        experiment_id: (*id).to_owned(),
                        last_snapshot_seq: Some(seq),
                    })
                })
                .collect(),
            provenance: self.provenance.to_vec(),
            ..Report::empty()
        }
    }
}

#[cfg(test)]
mod tests {

    /// Round 4: provider text reached the events with its bidirectional
    /// overrides; every event is now cleaned where it is added.
    #[test]
    fn an_event_carries_no_hidden_character_and_no_endless_text() {
        let mut state = ScannerState::default();
        let at = chrono::DateTime::from_timestamp(1_777_896_000, 0).unwrap();
        state.push_event(
            at,
            "provider",
            format!("RPC said: \u{202E}gnp.exe\u{2066}{}", "x".repeat(5000)),
        );
        let message = &state.events[0].message;
        assert!(message.starts_with("RPC said: gnp.exe"), "{message}");
        assert!(!message.chars().any(crate::scan::text::is_hidden));
        assert_eq!(message.chars().count(), MAX_EVENT_CHARS);
    }

    use super::*;

    fn observation(minute: i64) -> Observation {
        Observation {
            observed_at: DateTime::from_timestamp(1_777_896_000 + minute * 60, 0).unwrap(),
            price_usd: Some(Decimal::ONE),
            liquidity_usd: None,
        }
    }

    /// Round 4: the bound counted risk names only, so many one-letter
    /// dangers kept a report of hundreds of KiB (24 such tokens held the
    /// state over 8 MB). A token's whole cached report is now bounded.
    #[test]
    fn a_cached_report_of_many_tiny_risks_stays_within_its_bound() {
        use crate::scan::{CachedRisk, MAX_RISK_BYTES, Risk, RiskReport};
        let many = RiskReport {
            lp_locked_pct: Some(100.0),
            unreadable: None,
            reading: crate::scan::RISK_READING,
            score: Some(1.0),
            score_normalised: Some(1.0),
            risks: (0..20_000)
                .map(|_| Risk {
                    name: "n".into(),
                    level: "danger".into(),
                    score: Some(7500.0),
                })
                .collect(),
        }
        .bounded();
        assert!(!many.risks.is_empty(), "the dangers are still known");
        let mut state = ScannerState::default();
        for token in 0..24 {
            state.risk_cache.insert(
                format!("mint{token}"),
                CachedRisk {
                    fetched_at: observation(0).observed_at,
                    report: Some(many.clone()),
                    provenance: Vec::new(),
                },
            );
        }
        let per_token = serde_json::to_vec(&state.risk_cache["mint0"])
            .unwrap()
            .len();
        assert!(
            per_token <= MAX_RISK_BYTES,
            "{per_token} bytes for one token"
        );
        let all = serde_json::to_vec(&state).unwrap().len();
        assert!(all <= 24 * MAX_RISK_BYTES, "{all} bytes for 24 tokens");
    }

    /// A state saved before reports were bounded shrinks at its next run:
    /// tokens out of the universe go, and every kept report is bounded.
    #[test]
    fn pruning_keeps_the_universe_s_reports_bounded() {
        use crate::scan::{CachedRisk, MAX_RISK_BYTES, Risk, RiskReport, UniverseToken};
        let huge = RiskReport {
            lp_locked_pct: None,
            unreadable: None,
            reading: crate::scan::RISK_READING,
            score: None,
            score_normalised: None,
            risks: (0..2000)
                .map(|i| Risk {
                    name: "n".repeat(1000),
                    level: if i % 2 == 0 { "danger" } else { "info" }.into(),
                    score: None,
                })
                .collect(),
        };
        let mut state = ScannerState::default();
        for mint in ["kept", "gone"] {
            state.risk_cache.insert(
                mint.into(),
                CachedRisk {
                    fetched_at: observation(0).observed_at,
                    report: Some(huge.clone()),
                    provenance: Vec::new(),
                },
            );
        }
        state.prune(&[UniverseToken {
            mint: "kept".into(),
            symbol: "K".into(),
        }]);
        assert_eq!(state.risk_cache.len(), 1);
        let kept = state.risk_cache["kept"].report.as_ref().unwrap();
        assert!(kept.risks.iter().all(|r| r.level == "danger"));
        assert!(kept.risks.iter().map(|r| r.name.len()).sum::<usize>() <= MAX_RISK_BYTES);
    }

    #[test]
    fn observations_within_ten_minutes_are_one() {
        let mut state = ScannerState::default();
        assert!(state.observe("m", observation(0)));
        assert!(!state.observe("m", observation(9)));
        assert!(state.observe("m", observation(10)));
        assert!(state.observe("other", observation(10)));
        assert_eq!(state.history["m"].len(), 2);
    }

    #[test]
    fn history_and_events_stay_bounded() {
        let mut state = ScannerState::default();
        for i in 0..(HISTORY_PER_TOKEN as i64 + 20) {
            state.observe("m", observation(i * 15));
            state.push_event(observation(i).observed_at, "run", "x");
        }
        assert_eq!(state.history["m"].len(), HISTORY_PER_TOKEN);
        assert_eq!(
            state.history["m"][0].observed_at,
            observation(20 * 15).observed_at
        );
        for _ in 0..MAX_EVENTS {
            state.push_event(observation(0).observed_at, "run", "y");
        }
        assert_eq!(state.events.len(), MAX_EVENTS);
    }

    #[test]
    fn experiments_advance_at_most_once_per_window() {
        let mut state = ScannerState::default();
        let start = observation(0).observed_at;
        assert!(state.may_advance(start));
        state.last_advanced_at = Some(start);
        assert!(!state.may_advance(observation(9).observed_at));
        // 12:14 is ten minutes on, but still the 12:00 ledger slot.
        assert!(!state.may_advance(observation(14).observed_at));
        assert!(state.may_advance(observation(15).observed_at));
        state.last_advanced_at = Some(observation(8).observed_at);
        assert!(
            !state.may_advance(observation(17).observed_at),
            "9 minutes on"
        );
        assert!(state.may_advance(observation(18).observed_at));
    }
}
