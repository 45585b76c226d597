//! The ledger: a page of it (`GET /api/freedom-fund?view=ledger`, newest
//! first) and the append (`POST`: writes enabled → bearer token → no query
//! but `dryRun=1` → JSON content type → no content coding → size → the ledger's own
//! checks). Its parameters, typed query, handlers and answer types; the
//! work is [`freedom_shared::service::ledger`]'s.

use super::{MODE, Param, STRATEGY_ID, mode, strategy_id};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use freedom_shared::merkle::{Digest, Head};
use freedom_shared::ports::{Entry, PageQuery, StoreError};
use freedom_shared::record::identifier_schema;
use freedom_shared::record::{Mode, RecordKind, SCHEMA_VERSION};
use freedom_shared::service::{
    AppendStatus, BODY_TIMEOUT, DEFAULT_PAGE_LIMIT, EntryRecording, MAX_BODY_BYTES, MAX_PAGE_LIMIT,
    Receipt, Recorded,
};
use freedom_shared::web::{ApiError, QueryParams, authorize, with_etag};
use http_body_util::BodyExt;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use serde_json::value::RawValue;
use tracing::instrument;

/// How many entries a page holds at most.
pub(crate) const LIMIT: Param = Param {
    name: "limit",
    required: false,
    repeatable: false,
    description: "most entries on the page (a page also stops before 1 MiB of body)",
    schema: || json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LIMIT, "default": DEFAULT_PAGE_LIMIT}),
};

/// The cursor.
pub(crate) const BEFORE: Param = Param {
    name: "before",
    required: false,
    repeatable: false,
    description: "the cursor: only entries with a smaller seq (a page's `next`)",
    schema: || json!({"type": "integer", "minimum": 1, "maximum": u64::MAX}),
};

/// One strategy's records only.
const STRATEGY: Param = Param {
    name: STRATEGY_ID,
    required: false,
    repeatable: false,
    description: "only this strategy's records",
    schema: || identifier_schema("a strategy id"),
};

/// One type of records only.
pub(crate) const TYPE: Param = Param {
    name: "type",
    required: false,
    repeatable: false,
    description: "only records of this type",
    schema: || json!({"enum": [RecordKind::Snapshot.as_str(), RecordKind::Decision.as_str()]}),
};

/// One mode's records only.
const IN_MODE: Param = Param {
    name: MODE,
    required: false,
    repeatable: false,
    description: "only records in this mode",
    schema: || json!({"enum": [Mode::Live.as_str(), Mode::Paper.as_str()]}),
};

/// A ledger page's parameters.
pub(crate) const PARAMS: [Param; 5] = [LIMIT, BEFORE, STRATEGY, TYPE, IN_MODE];

/// The ledger page `params` (already checked against [`PARAMS`]) asks for.
fn page_query(params: &QueryParams) -> Result<PageQuery, ApiError> {
    let limit = match params.get(LIMIT.name) {
        None => DEFAULT_PAGE_LIMIT,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_PAGE_LIMIT).contains(n))
            .ok_or_else(|| {
                ApiError::invalid_query(
                    LIMIT.name,
                    format!(
                        "{} must be a whole number from 1 to {MAX_PAGE_LIMIT}",
                        LIMIT.name
                    ),
                )
            })?,
    };
    let before = params
        .get(BEFORE.name)
        .map(|text| {
            text.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                ApiError::invalid_query(
                    BEFORE.name,
                    format!("{} must be a sequence number (1 or more)", BEFORE.name),
                )
            })
        })
        .transpose()?;
    let strategy_id = params
        .get(STRATEGY.name)
        .map(|text| strategy_id(STRATEGY.name, text))
        .transpose()?;
    let kind = params
        .get(TYPE.name)
        .map(|text| {
            RecordKind::parse(text).ok_or_else(|| {
                ApiError::invalid_query(
                    TYPE.name,
                    format!("{} must be snapshot or decision", TYPE.name),
                )
            })
        })
        .transpose()?;
    let mode = params.get(IN_MODE.name).map(mode).transpose()?;
    Ok(PageQuery {
        before,
        limit,
        strategy_id,
        kind,
        mode,
    })
}

/// `?view=ledger[&before=SEQ][&limit=N][&strategyId=S][&type=T][&mode=M]`.
pub(crate) async fn page(
    state: &AppState,
    params: &QueryParams,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let query = page_query(params)?;
    let read = state.ledger.witnessed_page(&query).await?;
    let stamp = read.stamp;
    let body = LedgerView::new(
        read.page.head,
        read.page.entries,
        read.recorded,
        read.page.next,
    )?;
    Ok(with_etag(headers, &stamp, axum::Json(body)))
}

fn is_json_content_type(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
        && parts.all(|parameter| {
            let (name, value) = parameter.split_once('=').unwrap_or((parameter, ""));
            !name.trim().eq_ignore_ascii_case("charset")
                || value.trim().trim_matches('"').eq_ignore_ascii_case("utf-8")
        })
}

/// The body, whole, within [`MAX_BODY_BYTES`] and [`BODY_TIMEOUT`].
async fn read_body(body: Body, headers: &HeaderMap) -> Result<axum::body::Bytes, ApiError> {
    let too_large = ApiError::PayloadTooLarge {
        limit: MAX_BODY_BYTES,
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(too_large);
    }
    let collected = tokio::time::timeout(
        BODY_TIMEOUT,
        http_body_util::Limited::new(body, MAX_BODY_BYTES).collect(),
    )
    .await
    .map_err(|_| ApiError::RequestTimeout)?;
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error)
            if error
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(too_large)
        }
        Err(_) => Err(ApiError::MalformedJson(
            "the body could not be read completely".into(),
        )),
    }
}

/// `dryRun=1` on the append: the verdict without the write.
pub(crate) const DRY_RUN: Param = Param {
    name: "dryRun",
    required: false,
    repeatable: false,
    description: "1: a dry run: the status and body the append would answer now (its receipt with \"dryRun\": true, or the same error), with nothing appended and no head moved",
    schema: || json!({"type": "string", "enum": ["1"]}),
};

/// Whether the append's query asks for a dry run (only `dryRun=1`).
fn dry_run(params: &QueryParams) -> Result<bool, ApiError> {
    match params.get(DRY_RUN.name) {
        None => Ok(false),
        Some("1") => Ok(true),
        Some(_) => Err(ApiError::invalid_query(
            DRY_RUN.name,
            "dryRun takes exactly 1 (or leave it out to append)",
        )),
    }
}

/// `POST /api/freedom-fund`: appends one record (`dryRun=1`: checks it only).
#[instrument(skip_all, fields(seq = tracing::field::Empty))]
pub(crate) async fn append(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let (parts, body) = request.into_parts();
    let query = parts.uri.query();
    authorize(&parts.headers, query, state.write_token.as_ref())?;
    let dry = dry_run(&QueryParams::parse(query, &[DRY_RUN.name])?)?;
    if !is_json_content_type(&parts.headers) {
        return Err(ApiError::UnsupportedMediaType);
    }
    // A compressed body is not read as if it were plain JSON.
    if parts.headers.contains_key(header::CONTENT_ENCODING) {
        return Err(ApiError::EncodedBody);
    }
    let bytes = read_body(body, &parts.headers).await?;
    let receipt = if dry {
        state.ledger.check(&bytes).await?
    } else {
        state.ledger.append(&bytes).await?
    };
    let status = match receipt.status {
        AppendStatus::Created => StatusCode::CREATED,
        AppendStatus::Unchanged => StatusCode::OK,
    };
    let body = AppendBody::new(receipt, dry)?;
    tracing::Span::current().record("seq", body.seq());
    tracing::info!(status = body.status(), dry_run = dry, "append");
    Ok((status, axum::Json(body)).into_response())
}

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
    /// The page of `entries` read at `head` (each `recorded` so), continued
    /// before `next`.
    pub(crate) fn new(
        head: Head,
        entries: Vec<Entry>,
        recorded: Vec<EntryRecording>,
        next: Option<u64>,
    ) -> Result<LedgerView, ApiError> {
        Ok(LedgerView {
            schema_version: SCHEMA_VERSION,
            head,
            entries: entries
                .into_iter()
                .zip(recorded)
                .map(|(entry, recorded)| EntryView::new(entry, recorded))
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
    #[schemars(schema_with = "freedom_shared::record::record_ref")]
    record: Box<RawValue>,
    /// When it was in the witnessed log: the quorum time of the earliest
    /// witnessed checkpoint that holds it and that checkpoint's size; null
    /// while none does; `"unwitnessed"` when the log has no witness policy
    /// with a quorum.
    #[schemars(schema_with = "witnessed_schema")]
    witnessed: Recorded,
    /// For a witnessed snapshot: its witnessed time minus its `asOf`, in
    /// seconds (on time up to `log.recordingWindowSeconds`, late above; below
    /// minus `log.clockToleranceSeconds`, a clock conflict).
    #[serde(skip_serializing_if = "Option::is_none")]
    lag_seconds: Option<i64>,
}

/// The schema of an entry's `witnessed`.
fn witnessed_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "oneOf": [
            {
                "type": "object",
                "required": ["at", "size"],
                "additionalProperties": false,
                "properties": {
                    "at": {"type": "string", "format": "date-time"},
                    "size": {"type": "integer", "minimum": 1}
                }
            },
            {"type": "null"},
            {"const": "unwitnessed"}
        ]
    })
}

impl EntryView {
    fn new(entry: Entry, recorded: EntryRecording) -> Result<EntryView, ApiError> {
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
            witnessed: recorded.witnessed,
            lag_seconds: recorded.lag_seconds,
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
    #[schemars(schema_with = "freedom_shared::record::record_ref")]
    record: Box<RawValue>,
    /// Present (true) only on a dry run's answer: nothing was appended,
    /// and `seq` and `head` are what the append would make now.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(default)]
    dry_run: bool,
}

/// The words an append answers with, by outcome.
const CREATED: &str = "created";
const UNCHANGED: &str = "unchanged";

fn append_status(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"enum": [CREATED, UNCHANGED]})
}

impl AppendBody {
    /// The answer to an append (or, `dry_run`, its dry run) that ended in
    /// `receipt`.
    pub(crate) fn new(receipt: Receipt, dry_run: bool) -> Result<AppendBody, ApiError> {
        // The append's answer says nothing of witnessing: it comes first.
        let entry = EntryView::new(
            receipt.entry,
            EntryRecording {
                witnessed: Recorded::Pending,
                lag_seconds: None,
            },
        )?;
        Ok(AppendBody {
            status: match receipt.status {
                AppendStatus::Created => CREATED,
                AppendStatus::Unchanged => UNCHANGED,
            },
            seq: entry.seq,
            leaf_hash: entry.leaf_hash,
            head: receipt.head,
            record: entry.record,
            dry_run,
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
