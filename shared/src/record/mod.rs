//! The two public record kinds, snapshot and decision, as typed values.
//!
//! Parse, don't validate: [`Record::parse`] is the only way from a request
//! body to a [`Record`], and it applies every rule of the contract while
//! reading (docs/api.md, "Rules a writer must follow"): required fields, constants, enums, the id
//! format, RFC 3339 timestamps with an offset and no later than the
//! service's clock plus `FUTURE_TOLERANCE_SECONDS`, exact decimals of the
//! right sign, long-only positions, the $0.02 reconciliation (and, without
//! positions, cash no larger than equity + $0.02), text free of control and
//! bidirectional-override characters, no unknown fields, no duplicate keys,
//! no numbers written as strings, and the sensitive-content guard. It reports every broken rule at once, each with the field's path
//! and the rule's name, and never the offending value.
//!
//! A record's canonical form (`Record::canonical_json`) is its RFC 8785
//! text, which is what the ledger stores and hashes.
//!
//! - this module: the record's types and their constructors;
//! - `parse`: the parser that applies every rule;
//! - `number`: exact decimals that keep their value through RFC 8785;
//! - `serialize`: the record back as JSON, and its canonical text;
//! - `guard`: the sensitive-content guard;
//! - `text`: what text fields may hold (predicates the schemas' patterns
//!   are generated from);
//! - `schema`: the records' JSON Schemas.

pub(crate) mod guard;
mod number;
mod parse;
pub(crate) mod schema;
pub use schema::*;
mod serialize;
pub(crate) mod text;

pub(crate) use number::MAX_AMOUNT;
pub use number::decimal_json;

/// The fund interface's schema version (`schemaVersion`).
pub const SCHEMA_VERSION: u32 = 1;

use crate::json::MalformedJson;
use chrono::{DateTime, FixedOffset, Utc};
pub use guard::Guard;
use regex::Regex;
use rust_decimal::Decimal;
use serde::Serialize;
use std::sync::LazyLock;

/// The reconciliation tolerance: |equity − (cash + Σ quantity × mark)| ≤ this.
pub(crate) const RECONCILIATION_TOLERANCE: Decimal = Decimal::from_parts(2, 0, 0, false, 2);
/// Longest identifier (`id`, `strategyId`).
pub(crate) const MAX_ID_CHARS: usize = 128;
/// Longest single-line name (`strategyName`, `source.name`, position `symbol`).
pub(crate) const MAX_NAME_CHARS: usize = 200;
/// Longest free text (`summary`, `thesis`, `counterEvidence`, `nextCheck`).
pub(crate) const MAX_TEXT_CHARS: usize = 4000;
/// Longest `source.url`.
pub(crate) const MAX_URL_CHARS: usize = 2048;
/// Most positions in one snapshot.
pub(crate) const MAX_POSITIONS: usize = 1000;
/// Most issues one refusal lists; beyond them a last issue (rule
/// `more_issues`) says how many more there are, so a body of thousands of
/// broken members cannot make an answer many times its own size.
pub(crate) const MAX_REPORTED_ISSUES: usize = 100;
/// How far past the service's clock an `asOf` may lie (5 minutes of clock
/// skew). One mistyped year must never be able to freeze a strategy (every
/// later snapshot would be `out_of_order`) or move the dashboard's window.
pub(crate) const FUTURE_TOLERANCE_SECONDS: i64 = 300;

/// One broken rule: where, which rule, and a plain explanation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldIssue {
    /// Path of the field, e.g. `positions[2].mark`; empty for the record itself.
    pub field: String,
    /// Stable rule name, e.g. `required`, `reconciliation`, `email`.
    pub rule: String,
    /// What is wrong, in words, without the value.
    pub message: String,
}

impl FieldIssue {
    fn new(field: &str, rule: &str, message: impl Into<String>) -> FieldIssue {
        FieldIssue {
            field: field.to_owned(),
            rule: rule.to_owned(),
            message: message.into(),
        }
    }
}

/// Why a body is not a record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Not JSON at all.
    #[error(transparent)]
    Malformed(#[from] MalformedJson),
    /// JSON, but fields break the contract's rules.
    #[error("the record breaks {} rule(s)", .0.len())]
    Invalid(Vec<FieldIssue>),
    /// Fields carry credentials or private identifiers.
    #[error("the record carries sensitive content in {} field(s)", .0.len())]
    Sensitive(Vec<FieldIssue>),
}

/// A record's stable identifier: 1–128 characters of `A-Z a-z 0-9 . _ : -`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RecordId(String);

/// A strategy's identifier, with the same format as a record id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct StrategyId(String);

/// The identifier format (`id`, `strategyId`), as a regular expression that
/// the parser runs and the JSON Schemas publish.
pub(crate) const ID_PATTERN: &str = "^[A-Za-z0-9._:-]{1,128}$";

pub(crate) static IDENTIFIER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(ID_PATTERN).expect("valid"));

/// The years a new record's `asOf` may be written in (as written, before its
/// offset is applied): the range the ledger indexes to the nanosecond.
pub(crate) const YEARS: std::ops::RangeInclusive<i32> = 1970..=2200;

macro_rules! identifier_type {
    ($name:ident) => {
        impl $name {
            /// Parses an identifier: 1–128 characters of `A-Z a-z 0-9 . _ : -`.
            pub fn parse(text: &str) -> Option<$name> {
                IDENTIFIER.is_match(text).then(|| $name(text.to_owned()))
            }

            /// The identifier's text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}
identifier_type!(RecordId);
identifier_type!(StrategyId);

/// Whether a record is about real money or a paper experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Real account.
    Live,
    /// Simulated account.
    Paper,
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Mode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Mode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "enum": [Mode::Live.as_str(), Mode::Paper.as_str()],
            "description": "live: a real account; paper: a simulated one."
        })
    }
}

impl Mode {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Live => "live",
            Mode::Paper => "paper",
        }
    }

    /// Parses the contract's spelling.
    pub fn parse(text: &str) -> Option<Mode> {
        match text {
            "live" => Some(Mode::Live),
            "paper" => Some(Mode::Paper),
            _ => None,
        }
    }
}

/// A decision's action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Keep what is held.
    Hold,
    /// Look into something.
    Research,
    /// Propose a change (the service approves nothing).
    Propose,
    /// Turn something down.
    Reject,
    /// What came of an earlier decision.
    Outcome,
}

impl Action {
    /// All actions, in the contract's order.
    pub(crate) const ALL: [Action; 5] = [
        Action::Hold,
        Action::Research,
        Action::Propose,
        Action::Reject,
        Action::Outcome,
    ];

    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Hold => "hold",
            Action::Research => "research",
            Action::Propose => "propose",
            Action::Reject => "reject",
            Action::Outcome => "outcome",
        }
    }
}

/// The two record kinds, as the `type` field spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    /// An account valuation.
    Snapshot,
    /// An action with a summary.
    Decision,
}

impl RecordKind {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Snapshot => "snapshot",
            RecordKind::Decision => "decision",
        }
    }

    /// Parses the contract's spelling.
    pub fn parse(text: &str) -> Option<RecordKind> {
        match text {
            "snapshot" => Some(RecordKind::Snapshot),
            "decision" => Some(RecordKind::Decision),
            _ => None,
        }
    }
}

/// A valuation time: RFC 3339 with an explicit offset. Kept as written (the
/// offset is part of the public record); compared as an instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsOf {
    text: String,
    instant: DateTime<Utc>,
}

static RFC3339: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$")
        .expect("valid")
});

impl AsOf {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (`t` and `z` may be
    /// lower case, as RFC 3339 §5.6 allows) whose year, as written or once
    /// the offset is applied, is one of [`YEARS`]. (New records must be
    /// written in those years, which the parser checks; read-back accepts
    /// either, so records stored when the rule looked at the instant's year
    /// still read.)
    pub(crate) fn parse(text: &str) -> Option<AsOf> {
        if !RFC3339.is_match(text) {
            return None;
        }
        let parsed: DateTime<FixedOffset> = DateTime::parse_from_rfc3339(text).ok()?;
        let instant = parsed.with_timezone(&Utc);
        let written = chrono::Datelike::year(&parsed);
        let utc = chrono::Datelike::year(&instant);
        (YEARS.contains(&written) || YEARS.contains(&utc)).then(|| AsOf {
            text: text.to_owned(),
            instant,
        })
    }

    /// Whether its year as written is one of [`YEARS`].
    pub(crate) fn is_written_within_years(&self) -> bool {
        DateTime::parse_from_rfc3339(&self.text)
            .is_ok_and(|parsed| YEARS.contains(&chrono::Datelike::year(&parsed)))
    }

    /// Whether it is written with a second of 60 (a leap second, which
    /// names no instant of its own: new records may not use it).
    pub(crate) fn is_leap_second(&self) -> bool {
        self.text.get(17..19) == Some("60")
    }

    /// The timestamp as the writer gave it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The instant it names.
    pub(crate) fn instant(&self) -> DateTime<Utc> {
        self.instant
    }

    /// Nanoseconds since the Unix epoch (fits i64 for the accepted years).
    pub(crate) fn nanos(&self) -> i64 {
        self.instant
            .timestamp_nanos_opt()
            .expect("accepted years fit in i64 nanoseconds")
    }
}

/// Where the figures come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Name of the source (broker, paper engine...).
    pub name: String,
    /// An http(s) URL for the source.
    pub url: String,
}

/// One long position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// Instrument symbol.
    pub symbol: String,
    /// Units held, > 0 (long-only).
    pub quantity: Decimal,
    /// Cost basis, ≥ 0.
    pub cost: Decimal,
    /// Mark price per unit, ≥ 0.
    pub mark: Decimal,
}

impl Position {
    /// quantity × mark, or `None` if it overflows.
    pub(crate) fn market_value(&self) -> Option<Decimal> {
        self.quantity.checked_mul(self.mark)
    }
}

/// What every record carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Stable identifier (idempotency key).
    pub id: RecordId,
    /// Live or paper.
    pub mode: Mode,
    /// Strategy identifier.
    pub strategy_id: StrategyId,
    /// Strategy display name.
    pub strategy_name: String,
    /// Valuation or decision time.
    pub as_of: AsOf,
    /// Where the figures come from.
    pub source: Source,
}

/// An account valuation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Common fields.
    pub header: Header,
    /// Total account value, ≥ 0, fees included.
    pub equity: Decimal,
    /// Net flow at interval end (deposit positive, withdrawal negative).
    pub flow_since_previous: Decimal,
    /// Cash, ≥ 0; required when positions are given.
    pub cash: Option<Decimal>,
    /// Long positions, if given.
    pub positions: Option<Vec<Position>>,
}

/// An action with a summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Common fields.
    pub header: Header,
    /// What was decided.
    pub action: Action,
    /// One-paragraph summary.
    pub summary: String,
    /// The reasoning behind the decision.
    pub thesis: Option<String>,
    /// What argues against it.
    pub counter_evidence: Option<String>,
    /// When or what to check next.
    pub next_check: Option<String>,
}

/// A public record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// `type: "snapshot"`.
    Snapshot(Snapshot),
    /// `type: "decision"`.
    Decision(Decision),
}

impl Record {
    /// Parses a request body into a record, applying every rule of the
    /// contract and the sensitive-content guard; `now` is the service's
    /// clock, for the rule against future timestamps.
    pub fn parse(body: &[u8], guard: &Guard, now: DateTime<Utc>) -> Result<Record, RecordError> {
        parse::parse_checked(body, Some((guard, now)))
    }

    /// Reads back a record the ledger stored (its canonical text) with the
    /// rules of its shape only: no guard, no clock, and none of the
    /// admission rules added after records were stored (see the `parse` module's `Parser`).
    /// It was checked when it was written, and whatever the ledger ever
    /// accepted must always read back: it can never be removed.
    pub fn from_canonical(text: &str) -> Result<Record, RecordError> {
        parse::parse_checked(text.as_bytes(), None)
    }

    /// Common fields.
    pub fn header(&self) -> &Header {
        match self {
            Record::Snapshot(s) => &s.header,
            Record::Decision(d) => &d.header,
        }
    }

    /// Snapshot or decision.
    pub fn kind(&self) -> RecordKind {
        match self {
            Record::Snapshot(_) => RecordKind::Snapshot,
            Record::Decision(_) => RecordKind::Decision,
        }
    }
}

#[cfg(test)]
mod tests;
