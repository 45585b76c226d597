//! The fund's query values, parsed: each a typed value or a 400
//! `invalid_query` naming the parameter and its rule. Which parameters a
//! view accepts at all is the contract's ([`crate::contract::views`]).

use freedom_shared::ports::ledger_store::PageQuery;
use freedom_shared::record::{Mode, RecordKind, StrategyId};
use freedom_shared::service::dashboard::Selection;
use freedom_shared::service::exports::ExportFormat;
use freedom_shared::service::ledger::{DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT};
use freedom_shared::web::{ApiError, QueryParams};
use std::collections::BTreeSet;

/// A `strategyId` query value, or 400 `invalid_query` naming the rule.
pub(crate) fn strategy_id_param(text: &str) -> Result<StrategyId, ApiError> {
    StrategyId::parse(text).ok_or_else(|| {
        ApiError::invalid_query(
            "strategyId",
            "strategyId must be 1 to 128 characters of A-Z a-z 0-9 . _ : -",
        )
    })
}

/// The strategies a dashboard request selects: each `strategyId` given
/// (repeatable), from after the strategy `after` names.
pub(crate) fn dashboard_selection(params: &QueryParams) -> Result<Selection, ApiError> {
    let named = params
        .get_all("strategyId")
        .into_iter()
        .map(|text| strategy_id_param(text).map(|id| id.as_str().to_owned()))
        .collect::<Result<BTreeSet<String>, ApiError>>()?;
    let after = params
        .get("after")
        .map(|text| {
            StrategyId::parse(text)
                .map(|id| id.as_str().to_owned())
                .ok_or_else(|| {
                    ApiError::invalid_query(
                        "after",
                        "after must be a strategy id (an earlier answer's next)",
                    )
                })
        })
        .transpose()?;
    Ok(Selection {
        strategies: (!named.is_empty()).then_some(named),
        after,
    })
}

/// A `mode` query value, or 400 `invalid_query`.
pub(crate) fn mode_param(text: &str) -> Result<Mode, ApiError> {
    Mode::parse(text).ok_or_else(|| ApiError::invalid_query("mode", "mode must be live or paper"))
}

/// The ledger page a `view=ledger` query asks for.
pub(crate) fn page_query(params: &QueryParams) -> Result<PageQuery, ApiError> {
    let limit = match params.get("limit") {
        None => DEFAULT_PAGE_LIMIT,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_PAGE_LIMIT).contains(n))
            .ok_or_else(|| {
                ApiError::invalid_query(
                    "limit",
                    format!("limit must be a whole number from 1 to {MAX_PAGE_LIMIT}"),
                )
            })?,
    };
    let before = params
        .get("before")
        .map(|text| {
            text.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                ApiError::invalid_query("before", "before must be a sequence number (1 or more)")
            })
        })
        .transpose()?;
    let strategy_id = params
        .get("strategyId")
        .map(strategy_id_param)
        .transpose()?;
    let kind = params
        .get("type")
        .map(|text| {
            RecordKind::parse(text)
                .ok_or_else(|| ApiError::invalid_query("type", "type must be snapshot or decision"))
        })
        .transpose()?;
    let mode = params.get("mode").map(mode_param).transpose()?;
    Ok(PageQuery {
        before,
        limit,
        strategy_id,
        kind,
        mode,
    })
}

/// A whole number parameter, 1 or more.
pub(crate) fn positive(params: &QueryParams, name: &'static str) -> Result<Option<u64>, ApiError> {
    params
        .get(name)
        .map(|text| {
            text.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                ApiError::invalid_query(name, format!("{name} must be a whole number, 1 or more"))
            })
        })
        .transpose()
}

/// A whole number parameter, 0 or more, with the rule `rule` when it is not.
pub(crate) fn whole(
    params: &QueryParams,
    name: &'static str,
    rule: &'static str,
) -> Result<Option<u64>, ApiError> {
    params
        .get(name)
        .map(|text| {
            text.parse::<u64>()
                .map_err(|_| ApiError::invalid_query(name, rule))
        })
        .transpose()
}

/// The `format` values of `view=proof`.
pub(crate) const PROOF_FORMATS: [&str; 2] = ["json", "tlog-proof"];

/// How `view=proof` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProofFormat {
    /// A [`crate::views::ProofView`] (the default).
    Json,
    /// A C2SP `.tlog-proof` file.
    TlogProof,
}

/// The `format` of `view=proof`.
pub(crate) fn proof_format(params: &QueryParams) -> Result<ProofFormat, ApiError> {
    match params.get("format") {
        None | Some("json") => Ok(ProofFormat::Json),
        Some("tlog-proof") => Ok(ProofFormat::TlogProof),
        Some(_) => Err(ApiError::invalid_query(
            "format",
            format!("format must be one of {}", PROOF_FORMATS.join(", ")),
        )),
    }
}

/// The `format` of `view=series` (JSON by default).
pub(crate) fn export_format(params: &QueryParams) -> Result<ExportFormat, ApiError> {
    match params.get("format") {
        None => Ok(ExportFormat::Json),
        Some(text) => ExportFormat::parse(text)
            .ok_or_else(|| ApiError::invalid_query("format", "format must be json or csv")),
    }
}
