//! The ledger's use cases: append a record from a request body, read pages.
//!
//! [`Ledger::append`] is the whole write path: parse the body into a
//! [`Record`] (every contract rule and the guard), prepare its canonical leaf,
//! and hand it to the store, whose append is atomic. A refusal at any step
//! stores nothing. A new leaf is announced to outside consumers
//! (`RecordAppended`, best effort) by the ledger itself, whoever appended.

use crate::clock::{Clock, system_clock};
use crate::merkle::Head;
use crate::ports::event_sink::{Events, OutsideEvent, no_events};
use crate::ports::ledger_store::{
    AppendOutcome, Candidate, Entry, LedgerAppend, LedgerPages, Page, PageQuery, Refusal,
    StoreError,
};
use crate::record::guard::Guard;
use crate::record::{FieldIssue, Mode, Record, RecordError, RecordKind, StrategyId};
use crate::scan::experiments::{Experiment, registered_hash, registration_id};
use crate::scan::report::Registration;
use crate::service::log::{Recorded, WitnessTable, WitnessedTimes, lag_seconds};
use crate::tlog::tiles::MAX_ENTRY_BYTES;
use std::sync::Arc;

/// Largest request body the write path accepts (64 KiB).
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// Longest a client may take to send a request body (408 after it): 64 KiB
/// takes well under a second on any working link.
pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// Default ledger page size.
pub const DEFAULT_PAGE_LIMIT: usize = 100;
/// Largest ledger page size.
pub const MAX_PAGE_LIMIT: usize = 1000;

/// Whether an append stored something new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendStatus {
    /// A new leaf was stored.
    Created,
    /// The identical record was already stored.
    Unchanged,
}

/// What a successful append answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// Created or unchanged.
    pub status: AppendStatus,
    /// The record's entry (new or existing).
    pub entry: Entry,
    /// The head after the append.
    pub head: Head,
}

/// The rule that refuses a record whose canonical form is longer than a
/// log entry can be (its length in an entry bundle is a `u16`).
pub(crate) const ENTRY_SIZE_RULE: &str = "entry_size";

/// Why an append stored nothing.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// The body is not a valid record.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The store's checks refused it.
    #[error("refused by the ledger: {0}")]
    Refused(Refusal),
    /// A snapshot older than the latest of its series: the store's
    /// [`Refusal::OutOfOrder`] with the latest snapshot's `asOf`, read
    /// back so the writer knows what to send after.
    #[error(
        "refused by the ledger: the snapshot is older than the latest of its strategy and mode (seq {latest_seq}{})",
        latest_as_of.as_deref().map(|at| format!(", asOf {at}")).unwrap_or_default()
    )]
    OutOfOrder {
        /// Where the latest snapshot is.
        latest_seq: u64,
        /// Its `asOf` as written (`None` when it could not be read).
        latest_as_of: Option<String>,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The ledger on a store, with the guard that knows the write token and
/// the clock that dates "now".
#[derive(Clone)]
pub struct Ledger {
    /// The one write.
    appends: Arc<dyn LedgerAppend>,
    /// Pages and the head.
    pages: Arc<dyn LedgerPages>,
    guard: Guard,
    clock: Clock,
    events: Events,
    /// The witnessed history a page's entries are dated from.
    times: WitnessedTimes,
}

/// A ledger page with when each entry was in the witnessed log.
#[derive(Debug, Clone)]
pub struct WitnessedPage {
    /// The page.
    pub page: Page,
    /// Its tag: the head's, and the witnessed history's top.
    pub stamp: Head,
    /// Per entry, in the page's order.
    pub recorded: Vec<EntryRecording>,
}

/// When one ledger entry was in the witnessed log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryRecording {
    /// Its witnessed time, pending, or unwitnessed.
    pub witnessed: Recorded,
    /// For a witnessed snapshot: its witnessed time minus its `asOf`.
    pub lag_seconds: Option<i64>,
}

impl Ledger {
    /// A ledger appending through `appends` and reading through `pages`
    /// (one store, through the two), that refuses content `guard` flags,
    /// on the system clock.
    pub fn new(
        appends: Arc<dyn LedgerAppend>,
        pages: Arc<dyn LedgerPages>,
        guard: Guard,
    ) -> Ledger {
        Ledger {
            appends,
            pages,
            guard,
            clock: system_clock(),
            events: no_events(),
            times: WitnessedTimes::default(),
        }
    }

    /// The same ledger dating its pages' entries from the witnessed
    /// history `times` reads.
    pub fn with_witnessed_times(mut self, times: WitnessedTimes) -> Ledger {
        self.times = times;
        self
    }

    /// The same ledger reading `clock` (tests, and the scanner's own clock).
    pub fn with_clock(mut self, clock: Clock) -> Ledger {
        self.clock = clock;
        self
    }

    /// The same ledger also refusing records that carry `secrets` (the
    /// log's signing key in its encodings).
    pub fn with_signing_secrets(mut self, secrets: Vec<String>) -> Ledger {
        self.guard = self.guard.with_signing_secrets(secrets);
        self
    }

    /// The guard records pass, for text that may enter one (the scanner's
    /// provider symbols).
    pub(crate) fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The same ledger announcing each new leaf to `events`.
    pub fn with_events(mut self, events: Events) -> Ledger {
        self.events = events;
        self
    }

    /// Parses `body` and appends it; a new leaf is announced.
    pub async fn append(&self, body: &[u8]) -> Result<Receipt, AppendError> {
        self.submit(body, true).await
    }

    /// A dry run of [`Ledger::append`]: the same verdict (the receipt the
    /// append would make, or the same error), with nothing appended,
    /// announced or moved.
    pub async fn check(&self, body: &[u8]) -> Result<Receipt, AppendError> {
        self.submit(body, false).await
    }

    /// An append (`write`) or its dry run: every check is the same.
    async fn submit(&self, body: &[u8], write: bool) -> Result<Receipt, AppendError> {
        let record = Record::parse(body, &self.guard, (self.clock)())?;
        let candidate = Candidate::new(&record);
        if candidate.canonical.len() > MAX_ENTRY_BYTES {
            return Err(RecordError::Invalid(vec![FieldIssue {
                field: String::new(),
                rule: ENTRY_SIZE_RULE.to_owned(),
                message: format!(
                    "the record's canonical form is {} bytes; a log entry holds at most {MAX_ENTRY_BYTES} (numbers are written in full: 1e14 takes 15 digits)",
                    candidate.canonical.len()
                ),
            }])
            .into());
        }
        let outcome = if write {
            self.appends.append(candidate).await?
        } else {
            self.appends.check(candidate).await?
        };
        match outcome {
            AppendOutcome::Created { entry, head } => {
                if write && self.events.is_enabled() {
                    let event = appended(&record, &entry, head);
                    self.events.publish(vec![event]).await;
                }
                Ok(Receipt {
                    status: AppendStatus::Created,
                    entry,
                    head,
                })
            }
            AppendOutcome::Unchanged { entry, head } => Ok(Receipt {
                status: AppendStatus::Unchanged,
                entry,
                head,
            }),
            AppendOutcome::Refused(Refusal::OutOfOrder { latest_seq }) => {
                let header = record.header();
                let latest_as_of = match self
                    .newest(&header.strategy_id, RecordKind::Snapshot, header.mode)
                    .await
                {
                    Ok(Some(entry)) => Record::from_canonical(&entry.canonical)
                        .ok()
                        .map(|latest| latest.header().as_of.as_str().to_owned()),
                    // The refusal stands without it.
                    Ok(None) | Err(_) => None,
                };
                Err(AppendError::OutOfOrder {
                    latest_seq,
                    latest_as_of,
                })
            }
            AppendOutcome::Refused(refusal) => Err(AppendError::Refused(refusal)),
        }
    }

    /// The ledger's head alone (one store read): what a conditional read
    /// compares its tag with before doing anything else.
    pub(crate) async fn head(&self) -> Result<Head, StoreError> {
        self.pages.head().await
    }

    /// A page of the ledger, newest first.
    pub async fn page(&self, query: &PageQuery) -> Result<Page, StoreError> {
        self.pages.page(query).await
    }

    /// A page of the ledger with each entry's witnessed time (and a
    /// snapshot's lag): the page and the history's top read at once, then
    /// the history over the page's entries (one read more, with witnesses).
    pub async fn witnessed_page(&self, query: &PageQuery) -> Result<WitnessedPage, StoreError> {
        let (page, top) =
            futures_util::future::try_join(self.pages.page(query), self.times.top()).await?;
        let table = match (page.entries.last(), page.entries.first()) {
            (Some(oldest), Some(newest)) => self.times.table(oldest.seq, newest.seq, top).await?,
            // An empty page dates nothing.
            _ => WitnessTable::unwitnessed(),
        };
        let recorded = page
            .entries
            .iter()
            .map(|entry| {
                let witnessed = table.of(entry.seq);
                let lag_seconds = match witnessed {
                    Recorded::Witnessed(at) => match Record::from_canonical(&entry.canonical) {
                        Ok(Record::Snapshot(snapshot)) => {
                            Some(lag_seconds(at, snapshot.header.as_of.instant()))
                        }
                        Ok(Record::Decision(_)) => None,
                        Err(error) => {
                            return Err(StoreError::Corrupt(format!(
                                "stored record {} does not parse: {error}",
                                entry.seq
                            )));
                        }
                    },
                    _ => None,
                };
                Ok(EntryRecording {
                    witnessed,
                    lag_seconds,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(WitnessedPage {
            stamp: crate::service::dashboard::stamped(&page.head, top),
            page,
            recorded,
        })
    }

    /// The newest record of one series of records (`strategy`, `kind`,
    /// `mode`): one page read.
    pub(crate) async fn newest(
        &self,
        strategy: &StrategyId,
        kind: RecordKind,
        mode: Mode,
    ) -> Result<Option<Entry>, StoreError> {
        let page = self
            .page(&series_query(strategy, kind, mode, None, 1))
            .await?;
        Ok(page.entries.into_iter().next())
    }

    /// The record `id` among one series of records (`strategy`, `kind`,
    /// `mode`), newest first, reading at most [`MAX_FIND_PAGES`] pages.
    pub(crate) async fn find(
        &self,
        strategy: &StrategyId,
        kind: RecordKind,
        mode: Mode,
        id: &str,
    ) -> Result<Option<(Entry, Record)>, StoreError> {
        let mut before = None;
        for _ in 0..MAX_FIND_PAGES {
            let page = self
                .page(&series_query(strategy, kind, mode, before, MAX_PAGE_LIMIT))
                .await?;
            for entry in page.entries {
                let record = Record::from_canonical(&entry.canonical).map_err(|e| {
                    StoreError::Corrupt(format!("stored record {} does not parse: {e}", entry.seq))
                })?;
                if record.header().id.as_str() == id {
                    return Ok(Some((entry, record)));
                }
            }
            match page.next {
                Some(next) => before = Some(next),
                None => return Ok(None),
            }
        }
        Ok(None)
    }
}

impl Ledger {
    /// `experiment`'s registration decision as the ledger has it: its seq
    /// and the rule hash its thesis names (`none` when it names none, so it
    /// matches no rule).
    pub(crate) async fn registration(
        &self,
        experiment: &Experiment,
    ) -> Result<Option<Registration>, StoreError> {
        let strategy = StrategyId::parse(experiment.id).ok_or_else(|| {
            StoreError::Corrupt(format!("{} is not a strategy id", experiment.id))
        })?;
        let found = self
            .find(
                &strategy,
                RecordKind::Decision,
                Mode::Paper,
                &registration_id(experiment),
            )
            .await?;
        Ok(found.map(|(entry, record)| {
            let thesis = match &record {
                Record::Decision(decision) => decision.thesis.as_deref(),
                Record::Snapshot(_) => None,
            };
            Registration {
                seq: entry.seq,
                rule_hash: thesis
                    .and_then(registered_hash)
                    .unwrap_or("none")
                    .to_owned(),
            }
        }))
    }
}

/// Most pages [`Ledger::find`] reads.
pub(crate) const MAX_FIND_PAGES: usize = 10;

fn series_query(
    strategy: &StrategyId,
    kind: RecordKind,
    mode: Mode,
    before: Option<u64>,
    limit: usize,
) -> PageQuery {
    PageQuery {
        before,
        limit,
        strategy_id: Some(strategy.clone()),
        kind: Some(kind),
        mode: Some(mode),
    }
}

/// The event for a new leaf: where it is and what it is (from the record's
/// typed fields), not the record itself (readers fetch it from the ledger).
fn appended(record: &Record, entry: &Entry, head: Head) -> OutsideEvent {
    let header = record.header();
    OutsideEvent {
        detail_type: "RecordAppended",
        detail: serde_json::json!({
            "seq": entry.seq,
            "leafHash": entry.leaf_hash,
            "id": header.id.as_str(),
            "type": record.kind().as_str(),
            "mode": header.mode.as_str(),
            "strategyId": header.strategy_id.as_str(),
            "asOf": header.as_of.as_str(),
            "head": head,
        }),
    }
}
