//! Every operation of the interface with every answer it can give: the one
//! table the contract view's endpoint list and the OpenAPI document's paths
//! are both built from. Error answers are [`ApiError`]s, so their statuses,
//! codes and wording come from the one mapping to HTTP.

use freedom_shared::ports::StoreError;
use freedom_shared::web::ApiError;

/// What a successful answer carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// No body (304).
    Empty,
    /// `text/html`: the page.
    Html,
    /// `application/json` with the named component schema.
    Json(&'static str),
    /// `application/json`: the view the query selects (see `views`); a
    /// `.tlog-proof` as `text/plain` for `view=proof&format=tlog-proof`.
    FundView,
    /// `text/plain; charset=utf-8`: a signed checkpoint.
    Checkpoint,
    /// `text/plain; charset=utf-8`: the witness policy.
    Policy,
    /// `application/octet-stream`: a tile.
    Tile,
    /// `application/atom+xml`: the feed.
    Atom,
    /// `application/json`: the scanner's report; `application/octet-stream`:
    /// the evidence `view=evidence` names.
    ScannerView,
}

/// One success (or 304) an operation answers.
#[derive(Debug, Clone, Copy)]
pub struct Success {
    /// The HTTP status.
    pub status: u16,
    /// When.
    pub description: &'static str,
    /// What it carries.
    pub body: Body,
    /// Whether it carries an `ETag` (`"<rootHash>"`, or for a proof the hash
    /// of its bytes).
    pub etag: bool,
}

fn signing_or_store_failures() -> Vec<ApiError> {
    let mut errors = vec![ApiError::SigningUnavailable];
    errors.extend(store_failures());
    errors
}

/// One operation: a method on a path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operation {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The path.
    pub path: &'static str,
    /// The OpenAPI `operationId`.
    pub id: &'static str,
    /// What it does.
    pub summary: &'static str,
    /// Whether it needs `Authorization: Bearer <FF_AGENT_WRITE_TOKEN>`.
    pub bearer: bool,
    /// Whether its errors are HTML pages (the page) rather than the JSON
    /// error body.
    pub html_errors: bool,
    /// Its successes.
    pub successes: &'static [Success],
    /// The errors its own handler answers (the HTTP layer's come on top,
    /// see [`http_layer`]).
    pub errors: fn() -> Vec<ApiError>,
}

const NOT_MODIFIED: Success = Success {
    status: 304,
    description: "If-None-Match named the answer's ETag (the ledger's root hash; for a proof, the hash of its bytes): nothing changed",
    body: Body::Empty,
    etag: true,
};

fn store_failures() -> [ApiError; 2] {
    [
        ApiError::StorageUnavailable(StoreError::unavailable_now("")),
        ApiError::Internal("".into()),
    ]
}

fn invalid_query() -> ApiError {
    ApiError::InvalidQuery {
        message: String::new(),
        details: Vec::new(),
    }
}

fn unauthorized() -> ApiError {
    ApiError::Unauthorized {
        message: "",
        presented: false,
    }
}

/// What the local HTTP layer answers by itself before any route (API
/// Gateway answers its own under Lambda).
pub(crate) fn http_layer() -> Vec<ApiError> {
    vec![
        ApiError::BadRequest,
        ApiError::RequestTimeout,
        ApiError::UriTooLong { limit: 0 },
        ApiError::HeaderFieldsTooLarge,
        ApiError::NotImplemented,
        ApiError::NotAcceptable,
    ]
}

/// The interface, operation by operation.
pub(crate) const OPERATIONS: &[Operation] = &[
    Operation {
        method: "GET",
        path: "/",
        id: "readPage",
        summary: "The public page: the dashboard as server-rendered HTML, no scripts",
        bearer: false,
        html_errors: true,
        successes: &[
            Success {
                status: 200,
                description: "the page",
                body: Body::Html,
                etag: true,
            },
            NOT_MODIFIED,
        ],
        errors: || {
            let mut errors = vec![invalid_query()];
            errors.extend(store_failures());
            errors
        },
    },
    Operation {
        method: "GET",
        path: "/api/freedom-fund",
        id: "readFund",
        summary: "The dashboard (default; period=all since inception), a ledger page, the contract view, the OpenAPI document, a proof (inclusion or consistency) with its signed checkpoint, or a series export (CSV or JSON, paged)",
        bearer: false,
        html_errors: false,
        successes: &[
            Success {
                status: 200,
                description: "the view the query selects",
                body: Body::FundView,
                etag: true,
            },
            NOT_MODIFIED,
        ],
        errors: || {
            let mut errors = vec![
                invalid_query(),
                ApiError::BeyondLog {
                    message: String::new(),
                    parameter: "",
                },
                ApiError::NoSuchStrategy,
                ApiError::Busy,
                // view=proof&at=witnessed before a witnessed checkpoint holds the record.
                ApiError::NotWitnessed,
            ];
            errors.extend(signing_or_store_failures());
            errors
        },
    },
    Operation {
        method: "GET",
        path: "/feed.atom",
        id: "readFeed",
        summary: "The latest 50 decisions as an Atom 1.0 feed (RFC 4287), newest first; entry ids urn:freedom-fund:leaf:<leafHash>",
        bearer: false,
        html_errors: false,
        successes: &[
            Success {
                status: 200,
                description: "the feed",
                body: Body::Atom,
                etag: true,
            },
            NOT_MODIFIED,
        ],
        errors: || {
            let mut errors = vec![invalid_query()];
            errors.extend(store_failures());
            errors
        },
    },
    Operation {
        method: "GET",
        path: "/log/checkpoint",
        id: "readCheckpoint",
        summary: "The log's signed checkpoint (c2sp.org/tlog-checkpoint): origin, size, base64 root, Ed25519 signature; with a witness policy, the newest checkpoint that meets its quorum with the witnesses' cosignature lines after the log's (c2sp.org/tlog-cosignature); head=1: the log-signed head alone; Cache-Control: no-cache",
        bearer: false,
        html_errors: false,
        successes: &[Success {
            status: 200,
            description: "the witnessed checkpoint (with a policy), else or with head=1 the checkpoint of the current head, signed with the log's key",
            body: Body::Checkpoint,
            etag: false,
        }],
        errors: || {
            let mut errors = vec![invalid_query(), ApiError::NotWitnessed];
            errors.extend(signing_or_store_failures());
            errors
        },
    },
    Operation {
        method: "GET",
        path: "/log/policy",
        id: "readPolicy",
        summary: "The log's witness policy (c2sp.org/tlog-policy text): its witnesses, their keys and URLs, the groups and the quorum a served checkpoint meets",
        bearer: false,
        html_errors: false,
        successes: &[Success {
            status: 200,
            description: "the policy as configured (FF_LOG_POLICY)",
            body: Body::Policy,
            etag: false,
        }],
        errors: || vec![invalid_query(), ApiError::NotFound],
    },
    Operation {
        method: "GET",
        path: "/log/witnessed/{size}",
        id: "readWitnessedCheckpoint",
        summary: "The earliest witnessed checkpoint of size at least n, with its cosignatures: its quorum time (the earliest instant its cosignatures dated up to then meet the policy's quorum) is the witnessed time of every record from the previous one's size + 1 to its size; immutable once it exists (Cache-Control: public, max-age=31536000, immutable)",
        bearer: false,
        html_errors: false,
        successes: &[Success {
            status: 200,
            description: "the checkpoint signed by the log with the witnesses' cosignature lines after the log's",
            body: Body::Checkpoint,
            etag: false,
        }],
        errors: || {
            let mut errors = vec![invalid_query(), ApiError::NotFound];
            errors.extend(signing_or_store_failures());
            errors
        },
    },
    Operation {
        method: "POST",
        path: "/log/cosign",
        id: "cosignNow",
        summary: "Run a cosigning round now (after one already running): the newest checkpoint brought to every witness whose cosignature of it is not kept, with the consistency proof from the size it last cosigned (c2sp.org/tlog-witness)",
        bearer: true,
        html_errors: false,
        successes: &[Success {
            status: 200,
            description: "what the round did: each witness's outcome (cosigned, held, skipped, alarm; clockSkewSeconds when its cosignature is dated outside the round), whether the quorum is met, the witnessed size served; answered within the witnesses' timeout and a second",
            body: Body::Json("CosignRound"),
            etag: false,
        }],
        errors: || {
            let mut errors = vec![
                invalid_query(),
                unauthorized(),
                ApiError::WritesDisabled,
                ApiError::NotFound,
            ];
            errors.extend(signing_or_store_failures());
            errors
        },
    },
    Operation {
        method: "GET",
        path: "/log/tile/{tile}",
        id: "readTile",
        summary: "A tile of the log (c2sp.org/tlog-tiles, height 8): `<L>/<N>[.p/<W>]` (hashes) or `entries/<N>[.p/<W>]` (records, each behind a big-endian uint16 length), N in x001/x234/067 form",
        bearer: false,
        html_errors: false,
        successes: &[Success {
            status: 200,
            description: "the tile; a full one never changes (Cache-Control: public, max-age=31536000, immutable), a partial one is no-cache",
            body: Body::Tile,
            etag: false,
        }],
        errors: || {
            let mut errors = vec![invalid_query(), ApiError::NoSuchTile];
            errors.extend(store_failures());
            errors
        },
    },
    Operation {
        method: "POST",
        path: "/api/freedom-fund",
        id: "appendRecord",
        summary: "Append one snapshot or decision (append-only, idempotent by id); executes and approves nothing. With dryRun=1 the same checks answer the same status and body (a receipt marked \"dryRun\": true) and nothing is appended",
        bearer: true,
        html_errors: false,
        successes: &[
            Success {
                status: 201,
                description: "appended (with dryRun=1: would be appended; nothing was)",
                body: Body::Json("AppendReceipt"),
                etag: false,
            },
            Success {
                status: 200,
                description: "the same id with identical content (after canonicalisation) is stored already; nothing changed",
                body: Body::Json("AppendReceipt"),
                etag: false,
            },
        ],
        errors: || {
            let mut errors = vec![
                ApiError::MalformedJson(String::new()),
                invalid_query(),
                unauthorized(),
                ApiError::RequestTimeout,
                ApiError::IdConflict { existing_seq: 0 },
                ApiError::DuplicateSnapshot { existing_seq: 0 },
                ApiError::OutOfOrder {
                    latest_seq: 0,
                    latest_as_of: None,
                },
                ApiError::PayloadTooLarge { limit: 0 },
                ApiError::UnsupportedMediaType,
                ApiError::EncodedBody,
                ApiError::ValidationFailed(Vec::new()),
                ApiError::SensitiveContent(Vec::new()),
                ApiError::WritesDisabled,
            ];
            errors.extend(store_failures());
            errors
        },
    },
    Operation {
        method: "GET",
        path: "/api/freedom-scanner",
        id: "readScanner",
        summary: "The latest scanner report (every part empty before the first run), or with view=evidence&sha256=<hex> the exact bytes kept under that hash (a provider answer or a report, for seven days); never starts a run",
        bearer: false,
        html_errors: false,
        successes: &[Success {
            status: 200,
            description: "the report, or the evidence's bytes",
            body: Body::ScannerView,
            etag: false,
        }],
        errors: || {
            let mut errors = vec![invalid_query(), ApiError::NoSuchEvidence];
            errors.extend(store_failures());
            errors
        },
    },
    Operation {
        method: "POST",
        path: "/api/freedom-scanner",
        id: "runScanner",
        summary: "Run the scanner once: public data, fixed paper experiments; no trading",
        bearer: true,
        html_errors: false,
        successes: &[Success {
            status: 200,
            description: "the new report",
            body: Body::Json("ScannerReport"),
            etag: false,
        }],
        errors: || {
            let mut errors = vec![
                invalid_query(),
                unauthorized(),
                ApiError::ScannerBusy,
                ApiError::WritesDisabled,
            ];
            errors.extend(store_failures());
            errors
        },
    },
];
