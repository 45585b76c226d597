//! The rooms of the fund's interface, one module per view
//! (mini-redis's `cmd/<command>.rs`): each declares its query parameters
//! (the table the contract view and the OpenAPI document are generated
//! from), parses a typed query from them, holds its handler and its answer
//! type. The router ([`crate::router`]) is the route table and the dispatch
//! alone.
//!
//! - [`dashboard`]: the dashboard (`GET /api/freedom-fund`, no `view`);
//! - [`ledger`]: a ledger page (`view=ledger`) and the append (`POST`);
//! - [`log`]: the proofs (`view=proof`, `view=consistency`) and `/log/*`;
//! - [`exports`]: a series (`view=series`) and `/feed.atom`.
//!
//! The contract view and the OpenAPI document (`view=contract`,
//! `view=openapi`) are [`crate::contract`]'s; the page at `/` is
//! [`crate::page`]'s.
//!
//! Names several views share (`strategyId`, `mode`, `format`, `after`) are
//! written once, here; each view's own, once, in its module.

pub(crate) mod dashboard;
pub(crate) mod exports;
pub(crate) mod ledger;
pub(crate) mod log;

use crate::paths::FUND_PATH;
use freedom_shared::record::{Mode, StrategyId};
use freedom_shared::web::{ApiError, QueryParams};
use serde_json::Value;

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

/// The query parameter that selects a view.
pub(crate) const VIEW: &str = "view";
/// A strategy's id, in several views.
pub(crate) const STRATEGY_ID: &str = "strategyId";
/// A mode (`live`, `paper`), in several views.
pub(crate) const MODE: &str = "mode";
/// The answer's format, in several views.
pub(crate) const FORMAT: &str = "format";
/// A cursor: what comes after it, in several views.
pub(crate) const AFTER: &str = "after";

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

    /// Its parameters besides `view`: its room's table.
    pub fn params(self) -> &'static [Param] {
        match self {
            View::Dashboard => &dashboard::PARAMS,
            View::Ledger => &ledger::PARAMS,
            View::Contract | View::OpenApi => &[],
            View::Proof => &log::PROOF_PARAMS,
            View::Consistency => &log::CONSISTENCY_PARAMS,
            View::Series => &exports::PARAMS,
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
    /// the view accepts, given once (unless repeatable), the required ones
    /// given.
    pub fn parse(query: Option<&str>) -> Result<(View, QueryParams), ApiError> {
        let named = url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
            .find(|(name, _)| name == VIEW)
            .map(|(_, value)| value.into_owned());
        let view = match named.as_deref() {
            None => View::Dashboard,
            Some(name) => View::ALL
                .into_iter()
                .find(|v| v.name() == Some(name))
                .ok_or_else(|| {
                    let names: Vec<&str> = View::ALL.iter().filter_map(|v| v.name()).collect();
                    ApiError::invalid_query(
                        VIEW,
                        format!(
                            "{VIEW} must be one of {}; omit it for the dashboard",
                            names.join(", ")
                        ),
                    )
                })?,
        };
        let mut allowed: Vec<&str> = view.params().iter().map(|p| p.name).collect();
        if view.name().is_some() {
            allowed.push(VIEW);
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

/// A strategy id given as `param`, or 400 `invalid_query` naming the rule.
pub(crate) fn strategy_id(param: &'static str, text: &str) -> Result<StrategyId, ApiError> {
    StrategyId::parse(text).ok_or_else(|| {
        ApiError::invalid_query(
            param,
            format!("{param} must be 1 to 128 characters of A-Z a-z 0-9 . _ : -"),
        )
    })
}

/// A mode given as [`MODE`], or 400 `invalid_query`.
pub(crate) fn mode(text: &str) -> Result<Mode, ApiError> {
    Mode::parse(text)
        .ok_or_else(|| ApiError::invalid_query(MODE, format!("{MODE} must be live or paper")))
}

/// A whole number parameter, 1 or more.
pub(crate) fn positive(params: &QueryParams, param: &Param) -> Result<Option<u64>, ApiError> {
    let name = param.name;
    params
        .get(name)
        .map(|text| {
            text.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                ApiError::invalid_query(name, format!("{name} must be a whole number, 1 or more"))
            })
        })
        .transpose()
}

/// A whole number parameter, 0 or more; `what` says what it is when it is
/// not one.
pub(crate) fn whole(
    params: &QueryParams,
    param: &Param,
    what: &'static str,
) -> Result<Option<u64>, ApiError> {
    let name = param.name;
    params
        .get(name)
        .map(|text| {
            text.parse::<u64>()
                .map_err(|_| ApiError::invalid_query(name, format!("{name} must be {what}")))
        })
        .transpose()
}

/// The address of `view` with `pairs` (each a parameter's name, from a
/// room's table, and its value, in order): how the page and the `Link`
/// headers spell a view. Values are used as given: the callers pass ids,
/// numbers and names that need no escaping.
pub(crate) fn link(view: View, pairs: &[(&str, &str)]) -> String {
    let mut link = String::from(FUND_PATH);
    let mut separator = '?';
    let selector = view.name().map(|name| (VIEW, name));
    for (name, value) in selector.into_iter().chain(pairs.iter().copied()) {
        link.push(separator);
        link.push_str(name);
        link.push('=');
        link.push_str(value);
        separator = '&';
    }
    link
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_selects_its_view_then_names_each_pair_in_order() {
        assert_eq!(
            link(
                View::Series,
                &[(STRATEGY_ID, "a.b"), (MODE, "paper"), (AFTER, "7")]
            ),
            "/api/freedom-fund?view=series&strategyId=a.b&mode=paper&after=7"
        );
        assert_eq!(
            link(View::Dashboard, &[(dashboard::PERIOD.name, "all")]),
            "/api/freedom-fund?period=all"
        );
        assert_eq!(link(View::Contract, &[]), "/api/freedom-fund?view=contract");
    }

    #[test]
    fn every_view_names_each_parameter_once_and_never_view() {
        for view in View::ALL {
            let mut names: Vec<&str> = view.params().iter().map(|p| p.name).collect();
            let count = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), count, "{view:?} names a parameter twice");
            assert!(!names.contains(&VIEW), "{view:?} declares {VIEW} itself");
        }
    }
}
