//! Ledger pages, newest first, cut by one rule for every adapter.

use super::{Entry, HeadReads, StoreError};
use crate::merkle::Head;
use crate::record::{Mode, RecordKind, StrategyId};
use async_trait::async_trait;

/// Which ledger entries a page holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageQuery {
    /// Only entries with `seq` below this (the cursor).
    pub before: Option<u64>,
    /// At most this many entries.
    pub limit: usize,
    /// Only this strategy.
    pub strategy_id: Option<StrategyId>,
    /// Only this kind.
    pub kind: Option<RecordKind>,
    /// Only this mode.
    pub mode: Option<Mode>,
}

/// Most bytes a ledger page's response body may have (1 MiB): `limit` is a
/// maximum, and a page of large records stops early, with `next` continuing.
/// No page can then pass Lambda's 6 MB response limit or pin memory.
pub(crate) const MAX_PAGE_BYTES: usize = 1024 * 1024;
/// What the page body holds besides its entries (schemaVersion, head, next).
const PAGE_ENVELOPE_BYTES: usize = 512;
/// What one entry adds to the page body besides its record:
/// `{"seq":N,"leafHash":"<64 hex>","record":…},`.
pub(crate) const PAGE_ENTRY_OVERHEAD_BYTES: usize = 128;

impl Entry {
    /// The bytes this entry adds to a ledger page's body (at most).
    pub(crate) fn page_cost(&self) -> usize {
        self.canonical
            .len()
            .saturating_add(PAGE_ENTRY_OVERHEAD_BYTES)
    }
}

/// Builds a ledger page from entries offered newest first: at most `limit`
/// of them and at most [`MAX_PAGE_BYTES`] of body (always at least one
/// entry: a record is at most 64 KiB). Both adapters cut pages with it, so
/// the rule is one.
#[derive(Debug)]
pub(crate) struct PageBuilder {
    limit: usize,
    budget: usize,
    entries: Vec<Entry>,
    more: bool,
}

impl PageBuilder {
    /// A page of at most `limit` entries.
    pub(crate) fn new(limit: usize) -> PageBuilder {
        PageBuilder {
            limit,
            budget: MAX_PAGE_BYTES - PAGE_ENVELOPE_BYTES,
            entries: Vec::new(),
            more: false,
        }
    }

    /// The byte budget still open for entries.
    pub(crate) fn budget(&self) -> usize {
        self.budget
    }

    /// Offers the next older entry; `false` when the page is full (the
    /// entry is not kept, and the page continues with `next`).
    pub(crate) fn offer(&mut self, entry: Entry) -> bool {
        let cost = entry.page_cost();
        if self.entries.len() == self.limit || (!self.entries.is_empty() && cost > self.budget) {
            self.more = true;
            return false;
        }
        self.budget = self.budget.saturating_sub(cost);
        self.entries.push(entry);
        true
    }

    /// Notes that older matching entries remain that were not offered.
    pub(crate) fn more_remain(&mut self) {
        self.more = true;
    }

    /// The page, read at `head`.
    pub(crate) fn finish(self, head: Head) -> Page {
        let next = if self.more {
            self.entries.last().map(|e| e.seq)
        } else {
            None
        };
        Page {
            head,
            entries: self.entries,
            next,
        }
    }
}

/// A page of the ledger, newest first, read at one head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The head the page was read at.
    pub head: Head,
    /// Entries, newest first.
    pub entries: Vec<Entry>,
    /// The cursor for the next page (`before`), when older entries match.
    pub next: Option<u64>,
}

/// Reading the ledger by pages (and the head, as every reader).
#[async_trait]
pub trait LedgerPages: HeadReads {
    /// A page of entries, newest first, and the head it was read at: at
    /// most `query.limit` entries, cut by `PageBuilder` at
    /// `MAX_PAGE_BYTES`, reading no more records than the page holds
    /// (plus one).
    async fn page(&self, query: &PageQuery) -> Result<Page, StoreError>;
}
