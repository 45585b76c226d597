//! The KV store's ledger pages: one run of `page.lua`.

use super::super::client::{Script, as_array, as_string};
use super::{KvLedgerStore, parse_head, parse_seq, seq_record_pairs};
use crate::ports::ledger_store::{
    LedgerPages, PAGE_ENTRY_OVERHEAD_BYTES, Page, PageBuilder, PageQuery, StoreError,
};
use crate::record::{Mode, RecordKind};
use async_trait::async_trait;
use std::sync::LazyLock;

static PAGE_SCRIPT: LazyLock<Script> =
    LazyLock::new(|| Script::new(concat!(include_str!("head.lua"), include_str!("page.lua"))));

#[async_trait]
impl LedgerPages for KvLedgerStore {
    /// One round trip: `page.lua` reads the head, merges the page's
    /// indexes (for a filtered page) and reads the records up to the page's
    /// byte budget, at one moment.
    async fn page(&self, q: &PageQuery) -> Result<Page, StoreError> {
        let filtered = q.strategy_id.is_some() || q.kind.is_some() || q.mode.is_some();
        let mut keys = vec![self.key("head"), self.key("ids")];
        if filtered {
            let kinds = q
                .kind
                .map_or(vec![RecordKind::Snapshot, RecordKind::Decision], |k| {
                    vec![k]
                });
            let modes = q.mode.map_or(vec![Mode::Live, Mode::Paper], |m| vec![m]);
            for kind in &kinds {
                for mode in &modes {
                    keys.push(self.index_key(
                        *kind,
                        *mode,
                        q.strategy_id.as_ref().map(|s| s.as_str()),
                    ));
                }
            }
        }
        let mut page = PageBuilder::new(q.limit);
        let args = [
            self.record_key_prefix(),
            page.budget().to_string(),
            PAGE_ENTRY_OVERHEAD_BYTES.to_string(),
            q.before.map_or("+inf".to_owned(), |b| format!("({b}")),
            q.limit.to_string(),
        ];
        let value = PAGE_SCRIPT.run(&self.client, &keys, &args).await?;
        let fields = as_array(&value)?;
        let head = parse_head(fields)?;
        let candidates: usize = parse_seq(
            fields
                .get(2)
                .map(as_string)
                .transpose()?
                .flatten()
                .unwrap_or("0"),
        )?
        .try_into()
        .unwrap_or(usize::MAX);
        let read = seq_record_pairs(fields.get(3..).unwrap_or_default())?;
        if candidates > read.len() {
            page.more_remain();
        }
        for entry in read {
            if !page.offer(entry) {
                break;
            }
        }
        Ok(page.finish(head))
    }
}
