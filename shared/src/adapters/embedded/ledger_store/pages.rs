//! The embedded store's ledger pages.

use super::to_entry;
use super::{SqliteLedgerStore, entry_from_row, read_head, sqlite_failed};
use crate::ports::ledger_store::{LedgerPages, Page, PageBuilder, PageQuery, StoreError};
use crate::record::{Mode, RecordKind};
use async_trait::async_trait;
use rusqlite::{Connection, params};

#[async_trait]
impl LedgerPages for SqliteLedgerStore {
    async fn page(&self, query: &PageQuery) -> Result<Page, StoreError> {
        let query = query.clone();
        self.reader.run(move |conn| read_page(conn, &query)).await
    }
}

fn read_page(conn: &mut Connection, q: &PageQuery) -> Result<Page, StoreError> {
    // One read transaction: the head and the entries come from the same state.
    let tx = conn.transaction().map_err(sqlite_failed)?;
    let head = read_head(&tx)?;
    let before = q
        .before
        .map(|b| b.min(i64::MAX as u64) as i64)
        .unwrap_or(i64::MAX);
    let mut statement = tx
        .prepare(
            "SELECT seq, leaf_hash, canonical FROM records
             WHERE seq < ?1
               AND (?2 IS NULL OR strategy_id = ?2)
               AND (?3 IS NULL OR kind = ?3)
               AND (?4 IS NULL OR mode = ?4)
             ORDER BY seq DESC LIMIT ?5",
        )
        .map_err(sqlite_failed)?;
    let rows = statement
        .query_map(
            params![
                before,
                q.strategy_id.as_ref().map(|s| s.as_str()),
                q.kind.map(RecordKind::as_str),
                q.mode.map(Mode::as_str),
                q.limit as i64 + 1
            ],
            entry_from_row,
        )
        .map_err(sqlite_failed)?;
    // Rows are read one at a time, and no further once the page is full.
    let mut page = PageBuilder::new(q.limit);
    for row in rows {
        if !page.offer(to_entry(row.map_err(sqlite_failed)?)?) {
            break;
        }
    }
    drop(statement);
    tx.commit().map_err(sqlite_failed)?;
    Ok(page.finish(head))
}
