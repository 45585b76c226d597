//! The public page's data, read in one call ([`Pages::read`]): the
//! dashboard of a period, the newest ledger entries, and what the page
//! says about verifying the record (the log's origin, verifier key, the
//! signed checkpoint of the head shown, the witnesses and their
//! cosignatures). The HTML is the caller's: it renders a [`PageData`]
//! into bytes, which are kept per head and period and compressed at most
//! once per coding.
//!
//! The page's tag is the head's root, or, when the log serves witnessed
//! checkpoints, a hash of the root and the witnessed note (`shown_head`),
//! so new cosignatures show without a new record. A `304` costs the
//! witnessed checkpoint (when witnessed) and the head.

use crate::errors::ErrorChain;
use crate::merkle::{Digest, Head};
use crate::ports::ScanStore;
use crate::ports::ledger_store::{Entry, PageQuery, StoreError};
use crate::record::Record;
use crate::scan::ScannerHealth;
use crate::scan::view::HEALTH;
use crate::service::dashboard::{Dashboard, Dashboards, Period, PeriodCache, stamped};
use crate::service::encoded::Encoded;
use crate::service::ledger::Ledger;
use crate::service::log::{
    Log, LogError, Recorded, WitnessSignature, WitnessTable, Witnessed, lag_seconds,
};
use crate::service::read::{Answer, ClientTags, Read};
use sha2::{Digest as _, Sha256};
use std::sync::Arc;

/// How many of the newest ledger entries the page lists.
pub const LATEST_ENTRIES: usize = 10;

/// What the page shows: the dashboard, the newest entries, and how to
/// verify them.
#[derive(Debug)]
pub struct PageData {
    /// The dashboard of the period asked for.
    pub dashboard: Arc<Dashboard>,
    /// The newest [`LATEST_ENTRIES`] entries at the dashboard's head.
    pub latest_entries: Vec<LatestEntry>,
    /// What the page says about verifying the record.
    pub verification: Verification,
    /// How the scanner's last run ended, when the page reads a scan store
    /// and a run has saved its health there.
    pub scanner: Option<ScannerHealth>,
}

/// One of the newest ledger entries: where it is, and its record typed.
#[derive(Debug)]
pub struct LatestEntry {
    /// Its position, 1-based.
    pub seq: u64,
    /// Its leaf hash.
    pub leaf_hash: Digest,
    /// Its record.
    pub record: Record,
    /// When it was in the witnessed log (or why the page cannot say).
    pub recorded: Recorded,
    /// For a witnessed snapshot: its witnessed time minus its `asOf`.
    pub lag_seconds: Option<i64>,
}

impl LatestEntry {
    /// The entry `entry` with its record read back, and when `table` says
    /// it was in the witnessed log.
    fn of(entry: Entry, table: &WitnessTable) -> Result<LatestEntry, StoreError> {
        let record = Record::from_canonical(&entry.canonical).map_err(|error| {
            StoreError::Corrupt(format!(
                "stored record {} does not parse: {error}",
                entry.seq
            ))
        })?;
        Ok(LatestEntry {
            seq: entry.seq,
            leaf_hash: entry.leaf_hash,
            lag_seconds: match (table.of(entry.seq), &record) {
                (Recorded::Witnessed(at), Record::Snapshot(snapshot)) => {
                    Some(lag_seconds(at, snapshot.header.as_of.instant()))
                }
                _ => None,
            },
            record,
            recorded: table.of(entry.seq),
        })
    }
}

/// What the page says about verifying the record: the log's origin, its
/// verifier key and the signed checkpoint of the head shown (both absent
/// when the log has no signing key).
#[derive(Debug, Clone, Default)]
pub struct Verification {
    /// The log's origin.
    pub origin: String,
    /// The verifier key, text form.
    pub verifier_key: Option<String>,
    /// The signed checkpoint of the head the page shows.
    pub checkpoint: Option<String>,
    /// The log's witnesses, when it has a policy.
    pub witnesses: Option<Witnesses>,
}

/// The witnesses the policy lists and who cosigned the served checkpoint.
#[derive(Debug, Clone, Default)]
pub struct Witnesses {
    /// Each witness's policy name and verifier key.
    pub listed: Vec<(String, String)>,
    /// The size of the witnessed checkpoint served, if any.
    pub served_size: Option<u64>,
    /// Its cosignatures (who, with which key, when).
    pub cosignatures: Vec<WitnessSignature>,
}

/// The page's use case: its data from the dashboards, the ledger and the
/// log, and its rendered bytes kept per shown head and period.
pub struct Pages {
    dashboards: Arc<Dashboards>,
    ledger: Arc<Ledger>,
    log: Arc<Log>,
    /// Where the scanner saves its health, when the page shows it.
    scanner: Option<Arc<dyn ScanStore>>,
    rendered: PeriodCache<Arc<Encoded>>,
}

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages").finish_non_exhaustive()
    }
}

impl Pages {
    /// The page over these use cases.
    pub fn new(dashboards: Arc<Dashboards>, ledger: Arc<Ledger>, log: Arc<Log>) -> Pages {
        Pages {
            dashboards,
            ledger,
            log,
            scanner: None,
            rendered: PeriodCache::default(),
        }
    }

    /// The same page, also showing how the scanner's last run on `store`
    /// ended (one more store read a request, the 304 included: the page
    /// changes when a run does).
    pub fn with_scanner(mut self, store: Arc<dyn ScanStore>) -> Pages {
        self.scanner = Some(store);
        self
    }

    /// The page for `period` in one call: `NotModified` when the client
    /// holds the shown head's page; else the page `render` makes of its
    /// data, rendered once per shown head and period however many ask at
    /// once.
    pub async fn read(
        &self,
        client: &ClientTags,
        period: Period,
        render: impl FnOnce(&PageData) -> String,
    ) -> Result<Read, StoreError> {
        // 304 before any work: the head (and, with witnesses, the witnessed
        // checkpoint the page shows, read with the witnessed history's top
        // in one store read) alone decides.
        let witnessed = self.witnessed_shown().await?;
        let scanner = self.scanner_health().await?;
        let head = self.ledger.head().await?;
        let top = witnessed.as_ref().and_then(|w| w.history_top);
        let shown = shown_head(&stamped(&head, top), witnessed.as_ref(), scanner.as_deref());
        if client.holds_head(&shown) {
            return Ok(Read::NotModified(shown));
        }
        let dashboard = self.dashboards.get_at(head, top, period).await?;
        let stamp = stamped(&dashboard.head, dashboard.top);
        let shown = shown_head(&stamp, witnessed.as_ref(), scanner.as_deref());
        let body = self
            .rendered
            .get_or_compute(shown.root_hash, period, || async {
                let mut data = self
                    .data(
                        dashboard.view,
                        dashboard.head,
                        dashboard.top,
                        witnessed.as_ref(),
                    )
                    .await?;
                data.scanner = scanner.as_deref().and_then(|text| {
                    serde_json::from_str(text)
                        .inspect_err(|error| tracing::error!(%error, "the scanner's health is unreadable; the page leaves it out"))
                        .ok()
                });
                Ok::<_, StoreError>(Arc::new(Encoded::new(render(&data))))
            })
            .await?;
        Ok(Read::Fresh(Answer { head: shown, body }))
    }

    /// The scanner's saved health, as stored, when the page shows it.
    async fn scanner_health(&self) -> Result<Option<String>, StoreError> {
        match &self.scanner {
            Some(store) => Ok(store.read(&[HEALTH]).await?.pop().flatten()),
            None => Ok(None),
        }
    }

    /// The witnessed checkpoint the page shows, when the log serves
    /// witnessed checkpoints (one store read), else `None`.
    async fn witnessed_shown(&self) -> Result<Option<Witnessed>, StoreError> {
        if !self.log.serves_witnessed() {
            return Ok(None);
        }
        match self.log.witnessed().await {
            Ok(witnessed) => Ok(witnessed),
            Err(LogError::Store(error)) => Err(error),
            Err(_) => Ok(None),
        }
    }

    /// The page's data for `dashboard` at `head`: with the newest ledger
    /// entries and the signed checkpoint of the head it shows.
    async fn data(
        &self,
        dashboard: Arc<Dashboard>,
        head: Head,
        top: Option<u64>,
        witnessed: Option<&Witnessed>,
    ) -> Result<PageData, StoreError> {
        let latest = PageQuery {
            before: Some(head.size.saturating_add(1)),
            limit: LATEST_ENTRIES,
            strategy_id: None,
            kind: None,
            mode: None,
        };
        let entries = self.ledger.page(&latest).await?.entries;
        let oldest = entries.last().map_or(head.size, |e| e.seq);
        let table = self
            .dashboards
            .witnessed_times()
            .table(oldest, head.size, top)
            .await?;
        let latest_entries = entries
            .into_iter()
            .map(|entry| LatestEntry::of(entry, &table))
            .collect::<Result<Vec<_>, _>>()?;
        // A log that refuses to sign (its store went back) still shows the
        // page, saying so; a store that fails now fails the page.
        let checkpoint = match self.log.signed_checkpoint(head).await {
            Ok(note) => Some(note.to_string()),
            Err(LogError::Store(error)) => return Err(error),
            Err(LogError::SigningUnavailable | LogError::RefusedToSign(_)) => None,
            Err(error) => {
                tracing::error!(error = %ErrorChain(&error), "the page's checkpoint was not signed");
                None
            }
        };
        let verification = Verification {
            origin: self.log.origin().to_owned(),
            verifier_key: self.log.verifier_key().map(|key| key.to_text()),
            checkpoint,
            witnesses: self.log.policy().map(|policy| Witnesses {
                listed: policy
                    .witnesses()
                    .iter()
                    .map(|w| (w.name.clone(), w.key.to_text()))
                    .collect(),
                served_size: witnessed.map(|w| w.size),
                cosignatures: witnessed
                    .map(|w| w.cosignatures.clone())
                    .unwrap_or_default(),
            }),
        };
        Ok(PageData {
            dashboard,
            latest_entries,
            verification,
            scanner: None,
        })
    }
}

/// What the page's cache key and ETag name: the ledger's head, or, when a
/// witnessed checkpoint is served or the scanner's health shown, a hash of
/// the head's root, that checkpoint's note and that health (so new
/// cosignatures and a new scanner run show without a new record).
pub(crate) fn shown_head(
    head: &Head,
    witnessed: Option<&Witnessed>,
    scanner: Option<&str>,
) -> Head {
    if witnessed.is_none() && scanner.is_none() {
        return *head;
    }
    let mut digest = Sha256::new().chain_update(head.root_hash.0);
    if let Some(witnessed) = witnessed {
        digest.update(witnessed.note.as_bytes());
    }
    if let Some(scanner) = scanner {
        digest.update(b"scanner\n");
        digest.update(scanner.as_bytes());
    }
    Head {
        size: head.size,
        root_hash: Digest(digest.finalize().into()),
    }
}
