//! The dashboard read model (docs/design.md, "A read").
//!
//! [`Dashboards::read`] is a dashboard read in one call: the head (all a
//! `304` or a warm read costs), then, unless that head's dashboard is
//! kept, [`Dashboards::get`], which makes two store reads on a miss and
//! one on a repeat: (1) the latest snapshot of every strategy with the
//! head, which
//! fixes the window's end; (2) [`SeriesReads::window`]: each strategy's
//! baseline and window snapshots plus the window's decisions, or, since
//! inception, [`SeriesReads::since_inception`]: each series' roll-up (see
//! the `rollup` module) and its snapshots from the open month on, plus the latest
//! decisions (and, after a month closed, one write of the new roll-ups).
//! Nothing else is read, so the cost follows the window (or the open
//! month), not the ledger's length. A warm
//! process answers the same head and period from memory, and the same head
//! always gives byte-identical JSON (everything is sorted, and entries
//! appended after the head are left out).

mod answer;
mod compare;
mod compute;
mod figures;
mod period;
mod recording;
pub(crate) mod rollup;
mod view;

pub(crate) use answer::SelectionError;
pub use answer::{MAX_ANSWER_BYTES, Selection};
pub use figures::{BenchmarkCheckError, check_benchmarks, describe as describe_benchmarks};
pub use period::Period;
pub(crate) use period::UNIT;
pub(crate) use period::{ALL, DEFAULT_PERIOD, PERIODS};
pub(crate) use rollup::ROLLUP_VERSION;
pub use view::*;

pub(crate) use compute::{fold_series, keep_rollups};

use crate::config::Benchmarks;
use crate::merkle::Head;
use crate::ports::ledger_store::{Entry, SeriesReads, StoreError};
use crate::record::{Record, Snapshot};
use crate::service::encoded::Encoded;
use crate::service::head_cache::HeadCache;
use crate::service::log::WitnessedTimes;
use crate::service::read::{Answer, ClientTags, Read};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use compute::compute;
use std::sync::Arc;

/// A rendered dashboard: its head (for the ETag), the typed view (for the
/// page) and its JSON bytes (for the API).
#[derive(Debug, Clone)]
pub struct RenderedDashboard {
    /// The head it was computed at.
    pub head: Head,
    /// The witnessed history's top it was computed with.
    pub top: Option<u64>,
    /// The dashboard itself, every strategy.
    pub view: Arc<Dashboard>,
    /// The JSON of the whole dashboard.
    pub json: Bytes,
    /// Each series' instants, for the comparison of a partial answer.
    timelines: Arc<Vec<compare::Timeline>>,
}

impl RenderedDashboard {
    /// The answer's body for `selection`, at most [`MAX_ANSWER_BYTES`]
    /// (see the `answer` module): the whole dashboard's JSON as it is when
    /// everything is asked for and fits.
    pub(crate) fn answer(&self, selection: &Selection) -> Result<Bytes, SelectionError> {
        answer::answer(&self.view, &self.json, &self.timelines, selection)
    }
}

type Cached = (Arc<Dashboard>, Bytes, Arc<Vec<compare::Timeline>>);

/// What was rendered for the latest head, by period (the dashboard's JSON
/// and the page are kept this way), each computed once however many ask.
pub(crate) type PeriodCache<V> = HeadCache<Period, V>;

/// The dashboard use case: the read model of the ledger in its store, the
/// latest head's dashboards kept in memory by period, and the whole
/// dashboard's answer by period, compressed at most once per coding.
pub struct Dashboards {
    store: Arc<dyn SeriesReads>,
    /// The witnessed history each series' recording is read from.
    times: WitnessedTimes,
    /// The strategy each mode is compared with.
    benchmarks: Benchmarks,
    latest: PeriodCache<Cached>,
    whole_answers: PeriodCache<Arc<Encoded>>,
}

/// Why a dashboard read failed.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The selection names no strategy of the dashboard.
    #[error(transparent)]
    Selection(#[from] SelectionError),
}

impl std::fmt::Debug for Dashboards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dashboards").finish_non_exhaustive()
    }
}

impl Dashboards {
    /// The dashboards of the ledger in `store`.
    pub fn new(store: Arc<dyn SeriesReads>) -> Dashboards {
        Dashboards {
            store,
            times: WitnessedTimes::default(),
            benchmarks: Benchmarks::default(),
            latest: PeriodCache::default(),
            whole_answers: PeriodCache::default(),
        }
    }

    /// Dashboards of the same store whose series show how they were
    /// recorded, from the witnessed history `times` reads (nothing kept
    /// from before is reused).
    pub fn with_witnessed_times(&self, times: WitnessedTimes) -> Dashboards {
        Dashboards {
            times,
            benchmarks: self.benchmarks.clone(),
            ..Dashboards::new(Arc::clone(&self.store))
        }
    }

    /// Dashboards of the same store that compare each mode's series with
    /// `benchmarks` (nothing kept from before is reused).
    pub fn with_benchmarks(&self, benchmarks: Benchmarks) -> Dashboards {
        Dashboards {
            times: self.times.clone(),
            benchmarks,
            ..Dashboards::new(Arc::clone(&self.store))
        }
    }

    /// The benchmarks the dashboards compare with.
    pub fn benchmarks(&self) -> &Benchmarks {
        &self.benchmarks
    }

    /// The witnessed history the dashboards read.
    pub(crate) fn witnessed_times(&self) -> &WitnessedTimes {
        &self.times
    }

    /// The head and the witnessed history's top, read at once (two
    /// concurrent reads with witnesses, the head alone without), and the
    /// tag of what they show.
    pub(crate) async fn stamp(&self) -> Result<(Head, Option<u64>, Head), StoreError> {
        let (head, top) =
            futures_util::future::try_join(self.store.head(), self.times.top()).await?;
        Ok((head, top, stamped(&head, top)))
    }

    /// The dashboard read, in one call: `NotModified` when the client
    /// holds the head's answer (the head alone is read), else the answer
    /// for `period` and `selection` (the head, then, unless this head's
    /// dashboard is kept, the latest snapshots and the window: at most
    /// three round trips cold, one warm). The whole dashboard's answer is
    /// made and kept once per head and period; a page or a filter is made
    /// for this request, compressed at a bounded cost per byte.
    pub async fn read(
        &self,
        client: &ClientTags,
        period: Period,
        selection: &Selection,
    ) -> Result<Read, DashboardError> {
        let (head, top, stamp) = self.stamp().await?;
        if client.holds_head(&stamp) {
            return Ok(Read::NotModified(stamp));
        }
        let rendered = self.get_at(head, top, period).await?;
        let stamp = stamped(&rendered.head, rendered.top);
        let body = if selection.is_everything() {
            self.whole_answers
                .get_or_compute(stamp.root_hash, period, || async {
                    Ok::<_, DashboardError>(Arc::new(Encoded::new(rendered.answer(selection)?)))
                })
                .await?
        } else {
            Arc::new(Encoded::once(rendered.answer(selection)?))
        };
        Ok(Read::Fresh(Answer { head: stamp, body }))
    }

    /// The dashboard for `period` at `head` with the witnessed history up
    /// to `top` (both just read by the caller) when it is kept in memory,
    /// with no store read; else [`Dashboards::get`].
    pub(crate) async fn get_at(
        &self,
        head: Head,
        top: Option<u64>,
        period: Period,
    ) -> Result<RenderedDashboard, StoreError> {
        let stamp = stamped(&head, top);
        if let Some((view, json, timelines)) = self.latest.get(&stamp.root_hash, &period) {
            return Ok(RenderedDashboard {
                head,
                top,
                view,
                json,
                timelines,
            });
        }
        self.get(period).await
    }

    /// The dashboard for `period` at the store's current head: one read
    /// for the head (with every latest snapshot), then, unless this head's
    /// answer is kept, its computation, shared by every request that asks
    /// for the same head and period at the same time.
    pub async fn get(&self, period: Period) -> Result<RenderedDashboard, StoreError> {
        let store = self.store.as_ref();
        let (latest, top) =
            futures_util::future::try_join(store.latest_snapshots(), self.times.top()).await?;
        let head = latest.head;
        let (view, json, timelines) = self
            .latest
            .get_or_compute(stamped(&head, top).root_hash, period, || async {
                let inception = latest.first.as_ref().map(inception_of).transpose()?;
                let (dashboard, timelines) = compute(
                    store,
                    &self.times,
                    &self.benchmarks,
                    (head, top),
                    period,
                    latest.entries,
                    inception,
                )
                .await?;
                // Room for every point at once: growing the buffer copies it.
                let points: usize = dashboard.strategies.iter().map(|s| s.series.len()).sum();
                let mut json = Vec::with_capacity(16 * 1024 + 160 * points);
                serde_json::to_writer(&mut json, &dashboard).expect("the dashboard serialises");
                Ok::<_, StoreError>((Arc::new(dashboard), Bytes::from(json), Arc::new(timelines)))
            })
            .await?;
        Ok(RenderedDashboard {
            head,
            top,
            view,
            json,
            timelines,
        })
    }
}

/// The tag of a view of the ledger at `head` that also shows witnessed
/// times up to the kept checkpoint of size `top`: the head's own without
/// witnessed times, else a hash of both (so a new witnessed checkpoint
/// changes the tag as an append does).
pub(crate) fn stamped(head: &Head, top: Option<u64>) -> Head {
    use sha2::{Digest as _, Sha256};
    let Some(top) = top else {
        return *head;
    };
    let digest = Sha256::new()
        .chain_update(head.root_hash.0)
        .chain_update(b"witnessed\n")
        .chain_update(top.to_be_bytes());
    Head {
        size: head.size,
        root_hash: crate::merkle::Digest(digest.finalize().into()),
    }
}

/// The `asOf` of the ledger's first record, as written and as an instant.
fn inception_of(first: &Entry) -> Result<(String, DateTime<Utc>), StoreError> {
    let record = Record::from_canonical(&first.canonical).map_err(|e| corrupt(first, e))?;
    let as_of = &record.header().as_of;
    Ok((as_of.as_str().to_owned(), as_of.instant()))
}

/// The store's error for a stored record that does not read back.
pub(crate) fn corrupt(entry: &Entry, error: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!(
        "stored record {} does not parse: {error}",
        entry.seq
    ))
}

/// The snapshot a stored entry holds (a decision there is corrupt).
pub(crate) fn snapshot_of(entry: &Entry) -> Result<Snapshot, StoreError> {
    match Record::from_canonical(&entry.canonical).map_err(|e| corrupt(entry, e))? {
        Record::Snapshot(snapshot) => Ok(snapshot),
        Record::Decision(_) => Err(corrupt(entry, "expected a snapshot")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_the_four_allowed_counts_with_63_by_default() {
        assert_eq!(Period::parse(None).unwrap().days(), Some(63));
        for days in PERIODS {
            assert_eq!(
                Period::parse(Some(&days.to_string())).unwrap().days(),
                Some(days)
            );
        }
        assert_eq!(Period::parse(Some("all")), Ok(Period::All));
        for bad in [
            "0",
            "20",
            "64",
            "-21",
            "21.0",
            "021",
            "+21",
            "abc",
            "",
            "252 ",
            "99999999999",
            "ALL",
            "All",
            "all ",
        ] {
            assert_eq!(
                Period::parse(Some(bad)),
                Err(period::InvalidPeriod),
                "{bad}"
            );
        }
    }
}
