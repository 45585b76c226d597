//! The views of `GET /api/freedom-fund`, each with exactly the query
//! parameters it accepts. The handler validates queries with these tables
//! and the OpenAPI document publishes them, so the two cannot differ.

use freedom_shared::record::schema::identifier_schema;
use freedom_shared::record::{Mode, RecordKind};
use freedom_shared::service::dashboard::{DEFAULT_PERIOD, PERIODS};
use freedom_shared::service::ledger::{DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT};
use freedom_shared::web::{ApiError, QueryParams};
use serde_json::{Value, json};

/// One query parameter of a view.
pub(crate) struct Param {
    /// Its name in the query.
    pub name: &'static str,
    /// Whether the view needs it (a missing one is 400 `invalid_query`).
    pub required: bool,
    /// Whether it may be given more than once (each value counts).
    pub repeatable: bool,
    /// What it does.
    pub description: &'static str,
    /// Its JSON Schema (query values are strings on the wire; numbers are
    /// their decimal spelling).
    pub schema: fn() -> Value,
}

/// The dashboard's parameters: the period, and which strategies.
const DASHBOARD_PARAMS: [Param; 3] = [
    PERIOD,
    Param {
        name: "strategyId",
        required: false,
        repeatable: true,
        description: "only this strategy (repeatable: each one named); with it, the decisions are those of the strategies named",
        schema: || identifier_schema("a strategy id"),
    },
    Param {
        name: "after",
        required: false,
        repeatable: false,
        description: "the cursor: the strategies after this one (an earlier answer's next); strategies come those with a live series first, then the paper-only ones, each by id, and an answer stops before passing 4 MiB",
        schema: || identifier_schema("a strategy id"),
    },
];

/// The dashboard's period (also the page's, at `/`).
pub(crate) const PERIOD: Param = Param {
    name: "period",
    required: false,
    repeatable: false,
    description: "the window in trading days (Monday to Friday by UTC date), or all (since inception)",
    schema: || {
        json!({"oneOf": [
            {"type": "integer", "enum": PERIODS},
            {"const": freedom_shared::service::dashboard::ALL}
        ], "default": DEFAULT_PERIOD})
    },
};

const SERIES_PARAMS: [Param; 4] = [
    Param {
        name: "strategyId",
        required: true,
        repeatable: false,
        description: "the series' strategy",
        schema: || identifier_schema("a strategy id"),
    },
    Param {
        name: "mode",
        required: true,
        repeatable: false,
        description: "the series' mode",
        schema: || json!({"enum": [Mode::Live.as_str(), Mode::Paper.as_str()]}),
    },
    Param {
        name: "format",
        required: false,
        repeatable: false,
        description: "json (default) or csv (RFC 4180, header asOf,equity,flowSincePrevious,cash,index,drawdown,seq,leafHash)",
        schema: || json!({"enum": freedom_shared::service::exports::ExportFormat::NAMES, "default": "json"}),
    },
    Param {
        name: "after",
        required: false,
        repeatable: false,
        description: "the cursor: only snapshots with a larger seq (a page's `next`, also in its Link header)",
        schema: || json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
    },
];

const LEDGER_PARAMS: [Param; 5] = [
    Param {
        name: "limit",
        required: false,
        repeatable: false,
        description: "most entries on the page (a page also stops before 1 MiB of body)",
        schema: || json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LIMIT, "default": DEFAULT_PAGE_LIMIT}),
    },
    Param {
        name: "before",
        required: false,
        repeatable: false,
        description: "the cursor: only entries with a smaller seq (a page's `next`)",
        schema: || json!({"type": "integer", "minimum": 1, "maximum": u64::MAX}),
    },
    Param {
        name: "strategyId",
        required: false,
        repeatable: false,
        description: "only this strategy's records",
        schema: || identifier_schema("a strategy id"),
    },
    Param {
        name: "type",
        required: false,
        repeatable: false,
        description: "only records of this type",
        schema: || json!({"enum": [RecordKind::Snapshot.as_str(), RecordKind::Decision.as_str()]}),
    },
    Param {
        name: "mode",
        required: false,
        repeatable: false,
        description: "only records in this mode",
        schema: || json!({"enum": [Mode::Live.as_str(), Mode::Paper.as_str()]}),
    },
];

const PROOF_PARAMS: [Param; 3] = [
    Param {
        name: "seq",
        required: true,
        repeatable: false,
        description: "the record's sequence number (1 to the tree's size)",
        schema: || json!({"type": "integer", "minimum": 1, "maximum": u64::MAX}),
    },
    Param {
        name: "size",
        required: false,
        repeatable: false,
        description: "the tree the proof is for (default: the head); at most the head's size",
        schema: || json!({"type": "integer", "minimum": 1, "maximum": u64::MAX}),
    },
    Param {
        name: "format",
        required: false,
        repeatable: false,
        description: "json (default), or tlog-proof for a c2sp.org/tlog-proof file (text/plain)",
        schema: || json!({"enum": crate::params::PROOF_FORMATS, "default": "json"}),
    },
];

const CONSISTENCY_PARAMS: [Param; 2] = [
    Param {
        name: "from",
        required: true,
        repeatable: false,
        description: "the older tree size (0 to the newer)",
        schema: || json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
    },
    Param {
        name: "to",
        required: false,
        repeatable: false,
        description: "the newer tree size (default: the head); at most the head's size",
        schema: || json!({"type": "integer", "minimum": 1, "maximum": u64::MAX}),
    },
];

/// A view of `GET /api/freedom-fund`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// The dashboard (no `view` parameter).
    Dashboard,
    /// `view=ledger`: a page of the ledger.
    Ledger,
    /// `view=contract`: the contract view.
    Contract,
    /// `view=openapi`: the OpenAPI document.
    OpenApi,
    /// `view=proof`: a record's inclusion proof with a signed checkpoint.
    Proof,
    /// `view=consistency`: a consistency proof between two tree sizes.
    Consistency,
    /// `view=series`: one series' every snapshot, CSV or JSON, paged.
    Series,
}

impl View {
    /// Every view, in the order the documents list them.
    pub const ALL: [View; 7] = [
        View::Dashboard,
        View::Ledger,
        View::Contract,
        View::OpenApi,
        View::Proof,
        View::Consistency,
        View::Series,
    ];

    /// The `view` value that selects it (the dashboard has none).
    pub fn name(self) -> Option<&'static str> {
        match self {
            View::Dashboard => None,
            View::Ledger => Some("ledger"),
            View::Contract => Some("contract"),
            View::OpenApi => Some("openapi"),
            View::Proof => Some("proof"),
            View::Consistency => Some("consistency"),
            View::Series => Some("series"),
        }
    }

    /// Its parameters besides `view`.
    pub fn params(self) -> &'static [Param] {
        match self {
            View::Dashboard => &DASHBOARD_PARAMS,
            View::Ledger => &LEDGER_PARAMS,
            View::Contract | View::OpenApi => &[],
            View::Proof => &PROOF_PARAMS,
            View::Consistency => &CONSISTENCY_PARAMS,
            View::Series => &SERIES_PARAMS,
        }
    }

    /// What it answers.
    pub fn summary(self) -> &'static str {
        match self {
            View::Dashboard => {
                "the dashboard for the period (default 63 trading days; all for since inception)"
            }
            View::Ledger => {
                "a page of the ledger, newest first: {schemaVersion, head, entries: [{seq, leafHash, record}], next}"
            }
            View::Contract => {
                "the contract view: record schemas, endpoints, statuses, rules, limits"
            }
            View::OpenApi => "this interface as an OpenAPI 3.1 document",
            View::Proof => {
                "a record's RFC 9162 inclusion proof with the signed checkpoint it leads to: {seq, leafIndex, treeSize, leafHash, inclusion, checkpoint}, or a .tlog-proof file"
            }
            View::Consistency => {
                "an RFC 9162 consistency proof from an older tree size to a newer one: {from, to, consistency, checkpoint}"
            }
            View::Series => {
                "one series' every snapshot in time order, as CSV or JSON, in pages of at most 1 MiB (Link: rel=next while more remain)"
            }
        }
    }

    /// The view `query` selects, and its parameters, each checked to be one
    /// the view accepts, given once.
    pub fn parse(query: Option<&str>) -> Result<(View, QueryParams), ApiError> {
        let named = url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
            .find(|(name, _)| name == "view")
            .map(|(_, value)| value.into_owned());
        let view = match named.as_deref() {
            None => View::Dashboard,
            Some(name) => View::ALL
                .into_iter()
                .find(|v| v.name() == Some(name))
                .ok_or_else(|| {
                    let names: Vec<&str> = View::ALL.iter().filter_map(|v| v.name()).collect();
                    ApiError::invalid_query(
                        "view",
                        format!(
                            "view must be one of {}; omit it for the dashboard",
                            names.join(", ")
                        ),
                    )
                })?,
        };
        let mut allowed: Vec<&str> = view.params().iter().map(|p| p.name).collect();
        if view.name().is_some() {
            allowed.push("view");
        }
        let repeatable: Vec<&str> = view
            .params()
            .iter()
            .filter(|p| p.repeatable)
            .map(|p| p.name)
            .collect();
        let params = QueryParams::parse_repeating(query, &allowed, &repeatable)?;
        if let Some(missing) = view
            .params()
            .iter()
            .find(|p| p.required && params.get(p.name).is_none())
        {
            return Err(ApiError::invalid_query(
                missing.name,
                format!("{} is required: {}", missing.name, missing.description),
            ));
        }
        Ok((view, params))
    }
}
