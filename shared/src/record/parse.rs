//! The record parser: one walk over an exact JSON tree that applies every
//! rule of the contract, collects every broken rule with its field's path,
//! and gathers every string for the sensitive-content guard.

use super::guard::Guard;
use super::number::{MAX_AMOUNT, exact_decimal};
use super::text::{
    URL_PATTERN, is_blank, is_forbidden_beyond_bmp, is_forbidden_in_text, is_prose_break,
};
use super::{
    Action, AsOf, Decision, FUTURE_TOLERANCE_SECONDS, FieldIssue, Header, IDENTIFIER, MAX_ID_CHARS,
    MAX_NAME_CHARS, MAX_POSITIONS, MAX_REPORTED_ISSUES, MAX_TEXT_CHARS, MAX_URL_CHARS, Mode,
    Position, RECONCILIATION_TOLERANCE, Record, RecordError, RecordId, RecordKind, Snapshot,
    Source, StrategyId, YEARS,
};
use crate::clock::{rfc3339, whole_seconds};
use crate::json::{ExactJson, parse_exact};
use chrono::{DateTime, Utc};
use regex::Regex;
use rust_decimal::Decimal;
use std::sync::LazyLock;

static URL: LazyLock<Regex> = LazyLock::new(|| Regex::new(URL_PATTERN).expect("valid"));

/// Parses `body` into a record: with `write` (the guard and the service's
/// clock) every rule applies, as for a new record; without, only the rules
/// of a record's shape, as for one read back from the ledger.
pub(super) fn parse_checked(
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

    /// A text field under `rule`, every way it can fail reported. (Long:
    /// one pass over the rule's checks in the order the contract lists
    /// them, each with its own message.)
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
                if text.chars().all(is_blank) {
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
                    && text
                        .chars()
                        .any(|c| is_forbidden_in_text(c) && !(multiline && is_prose_break(c)))
                {
                    self.issue(
                        path,
                        "control_character",
                        format!(
                            "{path} must not contain control characters, bidirectional controls or marks, line or paragraph separators, annotation characters or noncharacters{}",
                            if multiline { " (line breaks and tabs are fine)" } else { "" }
                        ),
                    );
                    None
                } else if self.admitting_at.is_some() && text.chars().any(is_forbidden_beyond_bmp) {
                    self.issue(
                        path,
                        "hidden_character",
                        format!("{path} must not contain tag characters or noncharacters"),
                    );
                    None
                } else {
                    Some(text.clone())
                }
            }
            Text::Url => {
                // New records: URL_PATTERN (http(s), printable ASCII); the
                // URL parser would silently drop tabs and line breaks and
                // convert other characters, and the record keeps the text
                // exactly as sent.
                let printable = self.admitting_at.is_none() || URL.is_match(text);
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

    /// The fields every record has. (Long: one read per header field, in
    /// the schema's order, so every problem of a record is reported at once.)
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
            // New records: no leap second, and the year as written (which the
            // published schema can state) within the range.
            let refused_for_new = self.admitting_at.is_some()
                && parsed
                    .as_ref()
                    .is_some_and(|t| t.is_leap_second() || !t.is_written_within_years());
            let Some(parsed) = parsed.filter(|_| !refused_for_new) else {
                self.issue(
                    "asOf",
                    "timestamp",
                    format!(
                        "asOf must be an RFC 3339 timestamp with an offset, e.g. 2026-05-04T16:00:00Z, written in the years {} to {} (seconds 00 to 59)",
                        YEARS.start(),
                        YEARS.end()
                    ),
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
                        rfc3339(whole_seconds(now))
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
                            "equity must equal cash + Σ quantity × mark within 0.02; cash + Σ quantity × mark is {}, which differs by {}",
                            total.normalize(),
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
