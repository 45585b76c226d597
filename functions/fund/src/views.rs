//! The fund's JSON answers that are not the shared crate's own (the
//! dashboard is [`freedom_shared::service::dashboard`]'s): their fields and
//! their JSON Schemas, which the contract publishes.

use freedom_shared::merkle::{Digest, Head};
use freedom_shared::ports::ledger_store::{Entry, StoreError};
use freedom_shared::record::SCHEMA_VERSION;
use freedom_shared::service::ledger::{AppendStatus, Receipt};
use freedom_shared::tlog::proof::{Consistency, Inclusion};
use freedom_shared::web::ApiError;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::value::RawValue;

/// A page of the ledger (`?view=ledger`), newest first.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LedgerView {
    /// Always 1.
    schema_version: u32,
    /// The head the page was read at.
    head: Head,
    /// Entries, newest first: at most `limit`, and at most 1 MiB of body.
    entries: Vec<EntryView>,
    /// The cursor for the next page (`before`), or null on the last page.
    next: Option<u64>,
}

impl LedgerView {
    /// The page of `entries` read at `head`, continued before `next`.
    pub(crate) fn new(
        head: Head,
        entries: Vec<Entry>,
        next: Option<u64>,
    ) -> Result<LedgerView, ApiError> {
        Ok(LedgerView {
            schema_version: SCHEMA_VERSION,
            head,
            entries: entries
                .into_iter()
                .map(EntryView::new)
                .collect::<Result<Vec<_>, _>>()?,
            next,
        })
    }
}

/// One ledger entry: a record with its place in the log.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntryView {
    /// Its position, 1-based (leaf index + 1).
    seq: u64,
    /// `SHA-256(0x00 || canonical record)`.
    leaf_hash: Digest,
    /// The record, in its canonical form (the leaf bytes).
    #[schemars(schema_with = "freedom_shared::record::schema::record_ref")]
    record: Box<RawValue>,
}

impl EntryView {
    fn new(entry: Entry) -> Result<EntryView, ApiError> {
        let record = RawValue::from_string(entry.canonical).map_err(|e| {
            ApiError::from(StoreError::Corrupt(format!(
                "stored record {} is not JSON: {e}",
                entry.seq
            )))
        })?;
        Ok(EntryView {
            seq: entry.seq,
            leaf_hash: entry.leaf_hash,
            record,
        })
    }
}

/// What an append answers (201 created, 200 unchanged).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "AppendReceipt")]
pub(crate) struct AppendBody {
    /// `created` (a new leaf) or `unchanged` (identical content stored already).
    #[schemars(schema_with = "append_status")]
    status: &'static str,
    /// The record's position.
    seq: u64,
    /// The record's leaf hash.
    leaf_hash: Digest,
    /// The head after the append.
    head: Head,
    /// The record as stored (its canonical form).
    #[schemars(schema_with = "freedom_shared::record::schema::record_ref")]
    record: Box<RawValue>,
}

/// The words an append answers with, by outcome.
const CREATED: &str = "created";
const UNCHANGED: &str = "unchanged";

fn append_status(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"enum": [CREATED, UNCHANGED]})
}

impl AppendBody {
    /// The answer to an append that ended in `receipt`.
    pub(crate) fn new(receipt: Receipt) -> Result<AppendBody, ApiError> {
        let entry = EntryView::new(receipt.entry)?;
        Ok(AppendBody {
            status: match receipt.status {
                AppendStatus::Created => CREATED,
                AppendStatus::Unchanged => UNCHANGED,
            },
            seq: entry.seq,
            leaf_hash: entry.leaf_hash,
            head: receipt.head,
            record: entry.record,
        })
    }

    /// The outcome's word (`created` or `unchanged`).
    pub(crate) fn status(&self) -> &'static str {
        self.status
    }

    /// The record's position.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }
}

/// The inclusion proof of one record (`?view=proof`).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProofView {
    /// The record's position, 1-based.
    seq: u64,
    /// Its leaf index (`seq - 1`).
    leaf_index: u64,
    /// The size of the tree the proof is for.
    tree_size: u64,
    /// The record's leaf hash.
    leaf_hash: Digest,
    /// RFC 9162 §2.1.3 audit path, from the leaf's sibling up.
    inclusion: Vec<Digest>,
    /// The signed checkpoint of that tree (c2sp.org/tlog-checkpoint).
    checkpoint: String,
}

impl ProofView {
    /// Record `seq`'s proof, under the signed `checkpoint`.
    pub(crate) fn new(seq: u64, inclusion: Inclusion, checkpoint: &str) -> ProofView {
        ProofView {
            seq,
            leaf_index: inclusion.leaf_index,
            tree_size: inclusion.tree_size,
            leaf_hash: inclusion.leaf_hash,
            inclusion: inclusion.path,
            checkpoint: checkpoint.to_owned(),
        }
    }
}

/// A consistency proof between two sizes of the log (`?view=consistency`).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConsistencyView {
    /// The older size.
    from: u64,
    /// The newer size.
    to: u64,
    /// RFC 9162 §2.1.4 proof (empty when `from` is 0 or equals `to`).
    consistency: Vec<Digest>,
    /// The signed checkpoint of the tree of `to` leaves.
    checkpoint: String,
}

impl ConsistencyView {
    /// The proof, under the signed `checkpoint` of its newer size.
    pub(crate) fn new(proof: Consistency, checkpoint: &str) -> ConsistencyView {
        ConsistencyView {
            from: proof.from,
            to: proof.to,
            consistency: proof.path,
            checkpoint: checkpoint.to_owned(),
        }
    }
}
