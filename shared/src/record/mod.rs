//! The two public record kinds, snapshot and decision, as typed values.
//!
//! Parse, don't validate: [`Record::parse`] is the only way from a request
//! body to a [`Record`], and it applies every rule of the contract while
//! reading (DESIGN.md "Records"): required fields, constants, enums, the id
//! format, RFC 3339 timestamps with an offset and no later than the
//! service's clock plus [`FUTURE_TOLERANCE_SECONDS`], exact decimals of the
//! right sign, long-only positions, the $0.02 reconciliation (and, without
//! positions, cash no larger than equity + $0.02), text free of control and
//! bidirectional-override characters, no unknown fields, no duplicate keys,
//! no numbers written as strings, and the sensitive-content guard. It reports every broken rule at once, each with the field's path
//! and the rule's name, and never the offending value.
//!
//! A record's canonical form ([`Record::canonical_json`]) is its RFC 8785
//! text, which is what the ledger stores and hashes.

pub mod guard;
pub mod schema;

use crate::canonical::{canonical_json, format_number};
use crate::json::{ExactJson, MalformedJson, parse_exact};
use chrono::{DateTime, FixedOffset, Utc};
use guard::Guard;
use regex::Regex;
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::sync::LazyLock;

/// The reconciliation tolerance: |equity − (cash + Σ quantity × mark)| ≤ this.
pub const RECONCILIATION_TOLERANCE: Decimal = Decimal::from_parts(2, 0, 0, false, 2);
/// Longest identifier (`id`, `strategyId`).
pub const MAX_ID_CHARS: usize = 128;
/// Longest single-line name (`strategyName`, `source.name`, position `symbol`).
pub const MAX_NAME_CHARS: usize = 200;
/// Longest free text (`summary`, `thesis`, `counterEvidence`, `nextCheck`).
pub const MAX_TEXT_CHARS: usize = 4000;
/// Longest `source.url`.
pub const MAX_URL_CHARS: usize = 2048;
/// Most positions in one snapshot.
pub const MAX_POSITIONS: usize = 1000;
/// Most issues one refusal lists; beyond them a last issue (rule
/// `more_issues`) says how many more there are, so a body of thousands of
/// broken members cannot make an answer many times its own size.
pub const MAX_REPORTED_ISSUES: usize = 100;
/// How far past the service's clock an `asOf` may lie (5 minutes of clock
/// skew). One mistyped year must never be able to freeze a strategy (every
/// later snapshot would be `out_of_order`) or move the dashboard's window.
pub const FUTURE_TOLERANCE_SECONDS: i64 = 300;
/// Amounts must stay below this magnitude (10^15 USD).
pub const MAX_AMOUNT: Decimal = Decimal::from_parts(0xA4C6_8000, 0x38D7E, 0, false, 0);

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

static IDENTIFIER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9._:-]{1,128}$").expect("valid"));

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
    pub const ALL: [Action; 5] = [
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
    /// lower case, as RFC 3339 §5.6 allows), within the years
    /// 1970–2200 (the range the ledger indexes to the nanosecond).
    pub fn parse(text: &str) -> Option<AsOf> {
        if !RFC3339.is_match(text) {
            return None;
        }
        let parsed: DateTime<FixedOffset> = DateTime::parse_from_rfc3339(text).ok()?;
        let instant = parsed.with_timezone(&Utc);
        let year = chrono::Datelike::year(&instant);
        (1970..=2200).contains(&year).then(|| AsOf {
            text: text.to_owned(),
            instant,
        })
    }

    /// Whether it is written with a second of 60 (a leap second, which
    /// names no instant of its own: new records may not use it).
    pub fn is_leap_second(&self) -> bool {
        self.text.get(17..19) == Some("60")
    }

    /// The timestamp as the writer gave it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The instant it names.
    pub fn instant(&self) -> DateTime<Utc> {
        self.instant
    }

    /// Nanoseconds since the Unix epoch (fits i64 for the accepted years).
    pub fn nanos(&self) -> i64 {
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
    pub fn market_value(&self) -> Option<Decimal> {
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
        Record::parse_checked(body, Some((guard, now)))
    }

    fn parse_checked(
        body: &[u8],
        write: Option<(&Guard, DateTime<Utc>)>,
    ) -> Result<Record, RecordError> {
        let tree = parse_exact(body)?;
        let mut parser = Parser {
            admitting_at: write.map(|(_, now)| now),
            ..Parser::default()
        };
        let record = parser.record(&tree);
        if let Some((guard, _)) = write {
            let mut sensitive = Parser::default();
            for (path, text) in &parser.strings {
                if let Some(rule) = guard.scan(text) {
                    let field = if path.is_empty() { "(record)" } else { path };
                    sensitive.issue(path, rule.as_str(), format!("{field} {}", rule.describe()));
                }
            }
            if !sensitive.issues.is_empty() {
                return Err(RecordError::Sensitive(sensitive.into_issues()));
            }
        }
        match record {
            Some(record) if parser.issues.is_empty() => Ok(record),
            _ => Err(RecordError::Invalid(parser.into_issues())),
        }
    }

    /// Reads back a record the ledger stored (its canonical text) with the
    /// rules of its shape only: no guard, no clock, and none of the
    /// admission rules added after records were stored (see [`Parser`]).
    /// It was checked when it was written, and whatever the ledger ever
    /// accepted must always read back: it can never be removed.
    pub fn from_canonical(text: &str) -> Result<Record, RecordError> {
        Record::parse_checked(text.as_bytes(), None)
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

    /// The record as a JSON value with the contract's field names. Numbers
    /// are the doubles RFC 8785 prints; [`Record::parse`] has checked that
    /// each keeps its exact decimal value.
    pub fn to_json(&self) -> Value {
        let h = self.header();
        let mut out = Map::new();
        out.insert("id".into(), json!(h.id));
        out.insert("type".into(), json!(self.kind().as_str()));
        out.insert("visibility".into(), json!("public"));
        out.insert("mode".into(), json!(h.mode.as_str()));
        out.insert("strategyId".into(), json!(h.strategy_id));
        out.insert("strategyName".into(), json!(h.strategy_name));
        out.insert("asOf".into(), json!(h.as_of.as_str()));
        out.insert(
            "source".into(),
            json!({"name": h.source.name, "url": h.source.url}),
        );
        match self {
            Record::Snapshot(s) => {
                out.insert("currency".into(), json!("USD"));
                out.insert("equity".into(), decimal_json(s.equity));
                out.insert(
                    "flowSincePrevious".into(),
                    decimal_json(s.flow_since_previous),
                );
                if let Some(cash) = s.cash {
                    out.insert("cash".into(), decimal_json(cash));
                }
                if let Some(positions) = &s.positions {
                    let list: Vec<Value> = positions
                        .iter()
                        .map(|p| {
                            json!({
                                "symbol": p.symbol,
                                "quantity": decimal_json(p.quantity),
                                "cost": decimal_json(p.cost),
                                "mark": decimal_json(p.mark),
                            })
                        })
                        .collect();
                    out.insert("positions".into(), Value::Array(list));
                }
            }
            Record::Decision(d) => {
                out.insert("action".into(), json!(d.action.as_str()));
                out.insert("summary".into(), json!(d.summary));
                for (name, value) in [
                    ("thesis", &d.thesis),
                    ("counterEvidence", &d.counter_evidence),
                    ("nextCheck", &d.next_check),
                ] {
                    if let Some(text) = value {
                        out.insert(name.into(), json!(text));
                    }
                }
            }
        }
        Value::Object(out)
    }

    /// The record's RFC 8785 canonical text: the ledger's leaf bytes.
    pub fn canonical_json(&self) -> String {
        canonical_json(&self.to_json())
    }
}

/// A decimal as a JSON number: an integer when it is one (so it prints
/// without `.0`), else the nearest double (which is exact by construction).
pub fn decimal_json(value: Decimal) -> Value {
    let normalized = value.normalize();
    if normalized.scale() == 0
        && let Ok(int) = i64::try_from(normalized)
    {
        return json!(int);
    }
    let double: f64 = normalized
        .to_string()
        .parse()
        .expect("a decimal's text is a valid float");
    serde_json::Number::from_f64(double)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// The sign rule a number must obey.
#[derive(Clone, Copy)]
enum Sign {
    NonNegative,
    Positive,
    Any,
}

/// The rules for one string field.
#[derive(Clone, Copy)]
enum Text {
    /// `id`, `strategyId`.
    Identifier,
    /// One line, up to [`MAX_NAME_CHARS`].
    Name,
    /// Free text with line breaks, up to [`MAX_TEXT_CHARS`].
    Prose,
    /// An absolute http(s) URL.
    Url,
}

/// Walks an [`ExactJson`] tree, collecting issues (the first
/// [`MAX_REPORTED_ISSUES`], and a count of the rest) and every string (for
/// the guard) as it goes.
///
/// Two kinds of rule apply. The rules of a record's shape (fields, types,
/// constants, identifiers, exact decimals of the right sign, reconciliation)
/// always do. The admission rules apply only to new records, on the write
/// path: the clock (no future `asOf`), and the rules added after records may
/// already have been stored (no leap second, cash within equity without
/// positions, no control or bidirectional-override characters, URLs in
/// printable ASCII). Read-back skips them, so a record the ledger accepted
/// under older rules still reads, and every view over it keeps working.
#[derive(Default)]
struct Parser {
    issues: Vec<FieldIssue>,
    /// Issues found beyond [`MAX_REPORTED_ISSUES`].
    unreported: usize,
    strings: Vec<(String, String)>,
    /// The service's clock when admitting a new record; `None` on read-back.
    admitting_at: Option<DateTime<Utc>>,
}

/// Characters no text field may carry: controls (C0, C1, DEL) and the
/// bidirectional embedding, override and isolate controls, which can make
/// the page show text in another order than the ledger holds it.
fn is_forbidden_in_text(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

/// A member name shown in an error only when it is plainly a name: anything
/// else (it could itself be a secret) is described, not echoed.
fn display_key(key: &str) -> Option<&str> {
    let plain = !key.is_empty()
        && key.len() <= 64
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (plain && Guard::default().scan(key).is_none()).then_some(key)
}

/// An object's members, taken one by one; what is left is unknown.
struct Members<'a> {
    path: String,
    members: Vec<(&'a str, &'a ExactJson)>,
}

impl<'a> Members<'a> {
    /// The first member called `name`; its duplicates (already reported as
    /// `duplicate_key`) go with it, so they are not also unknown fields.
    fn take(&mut self, name: &str) -> Option<&'a ExactJson> {
        let at = self.members.iter().position(|(k, _)| *k == name)?;
        let value = self.members.remove(at).1;
        self.members.retain(|(k, _)| *k != name);
        Some(value)
    }
}

impl Parser {
    fn issue(&mut self, field: &str, rule: &str, message: impl Into<String>) {
        if self.is_full() {
            self.unreported += 1;
        } else {
            self.issues.push(FieldIssue::new(field, rule, message));
        }
    }

    /// Whether further issues are only counted (so their wording, and the
    /// check of a member's name before it is shown, can be skipped).
    fn is_full(&self) -> bool {
        self.issues.len() >= MAX_REPORTED_ISSUES
    }

    /// The issues found, the last one counting those not listed.
    fn into_issues(mut self) -> Vec<FieldIssue> {
        if self.unreported > 0 {
            self.issues.push(FieldIssue::new(
                "",
                "more_issues",
                format!(
                    "{} more issues are not listed; fix these and send the record again",
                    self.unreported
                ),
            ));
        }
        self.issues
    }

    fn object<'a>(&mut self, value: &'a ExactJson, path: &str) -> Option<Members<'a>> {
        let ExactJson::Object(members) = value else {
            let what = if path.is_empty() { "the record" } else { path };
            self.issue(
                path,
                "type",
                format!("{what} must be a JSON object, not {}", value.type_name()),
            );
            return None;
        };
        let mut seen = std::collections::HashSet::new();
        for (key, _) in members {
            if !seen.insert(key.as_str()) {
                if self.is_full() {
                    self.unreported += 1;
                    continue;
                }
                match display_key(key) {
                    Some(name) => {
                        let field = join(path, name);
                        self.issue(
                            &field,
                            "duplicate_key",
                            format!("{field} appears more than once"),
                        )
                    }
                    None => self.issue(
                        path,
                        "duplicate_key",
                        "a member name appears more than once",
                    ),
                }
            }
        }
        Some(Members {
            path: path.to_owned(),
            members: members.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        })
    }

    fn finish(&mut self, members: Members<'_>) {
        for (key, _) in members.members {
            // Duplicates of known names were already reported.
            if self.is_full() {
                self.unreported += 1;
                continue;
            }
            match display_key(key) {
                Some(name) => {
                    let field = join(&members.path, name);
                    self.issue(
                        &field,
                        "unknown_field",
                        format!("{field} is not a field of this record"),
                    )
                }
                None => self.issue(
                    &members.path,
                    "unknown_field",
                    "a member whose name is not shown is not a field of this record",
                ),
            }
        }
    }

    fn required<'a>(&mut self, members: &mut Members<'a>, name: &str) -> Option<&'a ExactJson> {
        let value = members.take(name);
        if value.is_none() {
            let field = join(&members.path, name);
            self.issue(&field, "required", format!("{field} is required"));
        }
        value
    }

    fn string(&mut self, value: &ExactJson, path: &str, rule: Text) -> Option<String> {
        let ExactJson::String(text) = value else {
            let hint = if matches!(value, ExactJson::Null) {
                "; omit an optional field instead of sending null"
            } else {
                ""
            };
            self.issue(
                path,
                "type",
                format!("{path} must be a string, not {}{hint}", value.type_name()),
            );
            return None;
        };
        self.strings.push((path.to_owned(), text.clone()));
        let chars = text.chars().count();
        match rule {
            Text::Identifier => {
                if IDENTIFIER.is_match(text) {
                    return Some(text.clone());
                }
                self.issue(
                    path,
                    "format",
                    format!("{path} must be 1 to {MAX_ID_CHARS} characters of A-Z a-z 0-9 . _ : -"),
                );
                None
            }
            Text::Name | Text::Prose => {
                let (limit, multiline) = if matches!(rule, Text::Name) {
                    (MAX_NAME_CHARS, false)
                } else {
                    (MAX_TEXT_CHARS, true)
                };
                if text.trim().is_empty() {
                    self.issue(path, "empty", format!("{path} must not be empty"));
                    None
                } else if chars > limit {
                    self.issue(
                        path,
                        "too_long",
                        format!("{path} must be at most {limit} characters"),
                    );
                    None
                } else if self.admitting_at.is_some()
                    && text.chars().any(|c| {
                        is_forbidden_in_text(c)
                            && !(multiline && (c == '\n' || c == '\t' || c == '\r'))
                    })
                {
                    self.issue(
                        path,
                        "control_character",
                        format!(
                            "{path} must not contain control characters or bidirectional embedding, override or isolate controls{}",
                            if multiline { " (line breaks and tabs are fine)" } else { "" }
                        ),
                    );
                    None
                } else {
                    Some(text.clone())
                }
            }
            Text::Url => {
                // Printable ASCII only: the URL parser would silently drop
                // tabs and line breaks and convert other characters, and the
                // record keeps the text exactly as sent.
                let printable =
                    self.admitting_at.is_none() || text.chars().all(|c| c.is_ascii_graphic());
                let parsed = printable
                    .then(|| url::Url::parse(text).ok())
                    .flatten()
                    .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
                if chars > MAX_URL_CHARS {
                    self.issue(
                        path,
                        "too_long",
                        format!("{path} must be at most {MAX_URL_CHARS} characters"),
                    );
                    None
                } else if parsed.is_none() {
                    self.issue(
                        path,
                        "format",
                        format!("{path} must be an absolute http or https URL of printable ASCII characters (percent-encode anything else)"),
                    );
                    None
                } else {
                    Some(text.clone())
                }
            }
        }
    }

    fn constant(&mut self, value: &ExactJson, path: &str, expected: &str) {
        if !matches!(value, ExactJson::String(s) if s == expected) {
            self.issue(path, "constant", format!("{path} must be \"{expected}\""));
        }
    }

    fn decimal(&mut self, value: &ExactJson, path: &str, sign: Sign) -> Option<Decimal> {
        let ExactJson::Number(text) = value else {
            let hint = match value {
                ExactJson::String(_) => "; write numbers as JSON numbers, not strings",
                ExactJson::Null => "; omit an optional field instead of sending null",
                _ => "",
            };
            self.issue(
                path,
                "type",
                format!("{path} must be a number, not {}{hint}", value.type_name()),
            );
            return None;
        };
        let Some(number) = exact_decimal(text) else {
            self.issue(
                path,
                "precision",
                format!("{path} must keep its exact value as a double (at most 15 significant digits, magnitude below 1e15)"),
            );
            return None;
        };
        if number.abs() >= MAX_AMOUNT {
            self.issue(
                path,
                "range",
                format!("{path} must be smaller than 1e15 in magnitude"),
            );
            return None;
        }
        let (ok, rule, what) = match sign {
            Sign::NonNegative => (
                !number.is_sign_negative() || number.is_zero(),
                "non_negative",
                "zero or more",
            ),
            Sign::Positive => (
                number > Decimal::ZERO,
                "positive",
                "greater than zero (positions are long-only)",
            ),
            Sign::Any => (true, "", ""),
        };
        if !ok {
            self.issue(path, rule, format!("{path} must be {what}"));
            return None;
        }
        Some(number.normalize())
    }

    fn record(&mut self, value: &ExactJson) -> Option<Record> {
        let mut members = self.object(value, "")?;
        let kind = match self.required(&mut members, "type") {
            Some(ExactJson::String(s)) => match RecordKind::parse(s) {
                Some(kind) => Some(kind),
                None => {
                    self.issue("type", "enum", "type must be \"snapshot\" or \"decision\"");
                    None
                }
            },
            Some(other) => {
                self.issue(
                    "type",
                    "type",
                    format!("type must be a string, not {}", other.type_name()),
                );
                None
            }
            None => None,
        };
        let header = self.header(&mut members);
        let record = match kind {
            Some(RecordKind::Snapshot) => self.snapshot(&mut members, header).map(Record::Snapshot),
            Some(RecordKind::Decision) => self.decision(&mut members, header).map(Record::Decision),
            // Without a type the remaining fields cannot be judged.
            None => return None,
        };
        self.finish(members);
        record
    }

    fn header(&mut self, members: &mut Members<'_>) -> Option<Header> {
        let id = self
            .required(members, "id")
            .and_then(|v| self.string(v, "id", Text::Identifier));
        if let Some(v) = self.required(members, "visibility") {
            self.constant(v, "visibility", "public");
        }
        let mode = self.required(members, "mode").and_then(|v| match v {
            ExactJson::String(s) if Mode::parse(s).is_some() => Mode::parse(s),
            _ => {
                self.issue("mode", "enum", "mode must be \"live\" or \"paper\"");
                None
            }
        });
        let strategy_id = self
            .required(members, "strategyId")
            .and_then(|v| self.string(v, "strategyId", Text::Identifier));
        let strategy_name = self
            .required(members, "strategyName")
            .and_then(|v| self.string(v, "strategyName", Text::Name));
        let as_of = self.required(members, "asOf").and_then(|v| {
            let text = match v {
                ExactJson::String(s) => Some(s),
                _ => None,
            };
            let parsed = text.and_then(|t| AsOf::parse(t));
            let leap_second = self.admitting_at.is_some() && parsed.as_ref().is_some_and(AsOf::is_leap_second);
            let Some(parsed) = parsed.filter(|_| !leap_second) else {
                self.issue(
                    "asOf",
                    "timestamp",
                    "asOf must be an RFC 3339 timestamp with an offset, e.g. 2026-05-04T16:00:00Z, between 1970 and 2200 (seconds 00 to 59)",
                );
                return None;
            };
            let latest_allowed = self.admitting_at.map(|now| {
                now.checked_add_signed(chrono::Duration::seconds(FUTURE_TOLERANCE_SECONDS))
                    .unwrap_or(DateTime::<Utc>::MAX_UTC)
            });
            if let (Some(now), Some(latest)) = (self.admitting_at, latest_allowed)
                && parsed.instant() > latest
            {
                self.issue(
                    "asOf",
                    "future_timestamp",
                    format!(
                        "asOf may be at most {} minutes later than the service's clock ({})",
                        FUTURE_TOLERANCE_SECONDS / 60,
                        now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    ),
                );
                return None;
            }
            Some(parsed)
        });
        let source = self.required(members, "source").and_then(|v| {
            let mut inner = self.object(v, "source")?;
            let name = self
                .required(&mut inner, "name")
                .and_then(|v| self.string(v, "source.name", Text::Name));
            let url = self
                .required(&mut inner, "url")
                .and_then(|v| self.string(v, "source.url", Text::Url));
            self.finish(inner);
            Some(Source {
                name: name?,
                url: url?,
            })
        });
        Some(Header {
            id: RecordId(id?),
            mode: mode?,
            strategy_id: StrategyId(strategy_id?),
            strategy_name: strategy_name?,
            as_of: as_of?,
            source: source?,
        })
    }

    fn snapshot(&mut self, members: &mut Members<'_>, header: Option<Header>) -> Option<Snapshot> {
        if let Some(v) = self.required(members, "currency") {
            self.constant(v, "currency", "USD");
        }
        let equity = self
            .required(members, "equity")
            .and_then(|v| self.decimal(v, "equity", Sign::NonNegative));
        let flow = self
            .required(members, "flowSincePrevious")
            .and_then(|v| self.decimal(v, "flowSincePrevious", Sign::Any));
        let cash_value = members.take("cash");
        let cash = cash_value.and_then(|v| self.decimal(v, "cash", Sign::NonNegative));
        let positions_value = members.take("positions");
        let positions = positions_value.and_then(|v| self.positions(v));
        if positions_value.is_some() && cash_value.is_none() {
            self.issue(
                "cash",
                "required_with_positions",
                "cash is required when positions are given",
            );
        }
        match (equity, cash, &positions) {
            (Some(equity), Some(cash), Some(positions)) => self.reconcile(equity, cash, positions),
            // Cash is part of equity (both are below 1e15: no overflow).
            (Some(equity), Some(cash), None)
                if positions_value.is_none()
                    && self.admitting_at.is_some()
                    && cash - equity > RECONCILIATION_TOLERANCE =>
            {
                self.issue(
                    "cash",
                    "cash_exceeds_equity",
                    "cash is part of equity: it may exceed equity by at most 0.02",
                );
            }
            _ => {}
        }
        let positions = match (positions_value, positions) {
            (Some(_), None) => return None,
            (_, positions) => positions,
        };
        if cash_value.is_some() && cash.is_none() {
            return None;
        }
        Some(Snapshot {
            header: header?,
            equity: equity?,
            flow_since_previous: flow?,
            cash,
            positions,
        })
    }

    fn positions(&mut self, value: &ExactJson) -> Option<Vec<Position>> {
        let ExactJson::Array(items) = value else {
            self.issue(
                "positions",
                "type",
                format!("positions must be an array, not {}", value.type_name()),
            );
            return None;
        };
        if items.len() > MAX_POSITIONS {
            self.issue(
                "positions",
                "too_many",
                format!("positions must have at most {MAX_POSITIONS} entries"),
            );
            return None;
        }
        let mut out = Vec::with_capacity(items.len());
        let mut all_ok = true;
        for (i, item) in items.iter().enumerate() {
            let path = format!("positions[{i}]");
            let Some(mut members) = self.object(item, &path) else {
                all_ok = false;
                continue;
            };
            let field = |name: &str| format!("{path}.{name}");
            let symbol = self
                .required(&mut members, "symbol")
                .and_then(|v| self.string(v, &field("symbol"), Text::Name));
            let quantity = self
                .required(&mut members, "quantity")
                .and_then(|v| self.decimal(v, &field("quantity"), Sign::Positive));
            let cost = self
                .required(&mut members, "cost")
                .and_then(|v| self.decimal(v, &field("cost"), Sign::NonNegative));
            let mark = self
                .required(&mut members, "mark")
                .and_then(|v| self.decimal(v, &field("mark"), Sign::NonNegative));
            self.finish(members);
            match (symbol, quantity, cost, mark) {
                (Some(symbol), Some(quantity), Some(cost), Some(mark)) => out.push(Position {
                    symbol,
                    quantity,
                    cost,
                    mark,
                }),
                _ => all_ok = false,
            }
        }
        all_ok.then_some(out)
    }

    /// |equity − (cash + Σ quantity × mark)| ≤ 0.02, in exact decimals.
    fn reconcile(&mut self, equity: Decimal, cash: Decimal, positions: &[Position]) {
        let total = positions
            .iter()
            .try_fold(cash, |acc, p| acc.checked_add(p.market_value()?));
        match total {
            None => self.issue(
                "positions",
                "range",
                "cash + Σ quantity × mark is too large to compute exactly",
            ),
            Some(total) => {
                let gap = (equity - total).abs();
                if gap > RECONCILIATION_TOLERANCE {
                    self.issue(
                        "equity",
                        "reconciliation",
                        format!(
                            "equity must equal cash + Σ quantity × mark within 0.02; it differs by {}",
                            gap.normalize()
                        ),
                    );
                }
            }
        }
    }

    fn decision(&mut self, members: &mut Members<'_>, header: Option<Header>) -> Option<Decision> {
        let action = self.required(members, "action").and_then(|v| {
            let found = match v {
                ExactJson::String(s) => Action::ALL.into_iter().find(|a| a.as_str() == s),
                _ => None,
            };
            if found.is_none() {
                self.issue(
                    "action",
                    "enum",
                    "action must be one of hold, research, propose, reject, outcome",
                );
            }
            found
        });
        let summary = self
            .required(members, "summary")
            .and_then(|v| self.string(v, "summary", Text::Prose));
        let mut optional = |parser: &mut Parser, name: &str| {
            members
                .take(name)
                .map(|v| parser.string(v, name, Text::Prose))
        };
        let thesis = optional(self, "thesis");
        let counter_evidence = optional(self, "counterEvidence");
        let next_check = optional(self, "nextCheck");
        let all_optional_ok = [&thesis, &counter_evidence, &next_check]
            .iter()
            .all(|o| !matches!(o, Some(None)));
        if !all_optional_ok {
            return None;
        }
        Some(Decision {
            header: header?,
            action: action?,
            summary: summary?,
            thesis: thesis.flatten(),
            counter_evidence: counter_evidence.flatten(),
            next_check: next_check.flatten(),
        })
    }
}

/// The exact decimal a JSON number's text names, if the double RFC 8785
/// prints for it names the same value (so the canonical form loses nothing).
fn exact_decimal(text: &str) -> Option<Decimal> {
    let exact = parse_decimal(text)?;
    let double: f64 = text.parse().ok()?;
    if !double.is_finite() {
        return None;
    }
    let canonical = parse_decimal(&format_number(double))?;
    (canonical == exact).then_some(exact)
}

fn parse_decimal(text: &str) -> Option<Decimal> {
    if text.contains(['e', 'E']) {
        Decimal::from_scientific(text).ok()
    } else {
        Decimal::from_str_exact(text).ok()
    }
}

#[cfg(test)]
mod tests;
