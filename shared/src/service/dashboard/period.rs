//! The dashboard's periods: a count of trading days, or since inception.

use serde::Serialize;

/// The allowed periods, in trading days.
pub(crate) const PERIODS: [u32; 4] = [21, 63, 126, 252];
/// The period when none is asked for.
pub(crate) const DEFAULT_PERIOD: u32 = 63;
/// The unit of `period`: trading days.
pub(crate) const UNIT: &str = "tradingDays";
/// The `period` value that selects the record since inception.
pub(crate) const ALL: &str = "all";

/// A dashboard period: a count of trading days, one of `PERIODS`, or the
/// whole record since inception (`ALL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    /// The latest N trading days.
    TradingDays(u32),
    /// Since inception: each series from its first snapshot.
    All,
}

impl Serialize for Period {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Period::TradingDays(days) => serializer.serialize_u32(*days),
            Period::All => serializer.serialize_str(ALL),
        }
    }
}

/// A `period` that is neither one of [`PERIODS`] nor [`ALL`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("period must be one of 21, 63, 126, 252 (trading days) or all; the default is 63")]
pub struct InvalidPeriod;

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Period {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Period".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "oneOf": [
                {"type": "integer", "enum": PERIODS,
                 "description": "Trading days (Monday to Friday by UTC date)."},
                {"const": ALL, "description": "Since inception."}
            ]
        })
    }
}

/// The schema of the dashboard's `unit`.
#[cfg(feature = "schema")]
pub(super) fn trading_days_unit(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"const": UNIT})
}

impl Period {
    /// Every period, in the order the page offers them.
    pub const ALL_PERIODS: [Period; 5] = [
        Period::TradingDays(PERIODS[0]),
        Period::TradingDays(PERIODS[1]),
        Period::TradingDays(PERIODS[2]),
        Period::TradingDays(PERIODS[3]),
        Period::All,
    ];

    /// Parses the query value; `None` gives the default.
    pub fn parse(value: Option<&str>) -> Result<Period, InvalidPeriod> {
        let Some(text) = value else {
            return Ok(Period::TradingDays(DEFAULT_PERIOD));
        };
        if text == ALL {
            return Ok(Period::All);
        }
        let days: u32 = text.parse().map_err(|_| InvalidPeriod)?;
        if PERIODS.contains(&days) && text == days.to_string() {
            Ok(Period::TradingDays(days))
        } else {
            Err(InvalidPeriod)
        }
    }

    /// Number of trading days; `None` for since inception.
    pub fn days(self) -> Option<u32> {
        match self {
            Period::TradingDays(days) => Some(days),
            Period::All => None,
        }
    }

    /// The JSON Schema of the `period` query value: one of the windows
    /// in trading days, or `all`, 63 by default.
    pub fn query_schema() -> serde_json::Value {
        serde_json::json!({"oneOf": [
            {"type": "integer", "enum": PERIODS},
            {"const": ALL}
        ], "default": DEFAULT_PERIOD})
    }

    /// The query value that selects it (`63`, `all`).
    pub fn query_value(self) -> String {
        match self {
            Period::TradingDays(days) => days.to_string(),
            Period::All => ALL.to_owned(),
        }
    }
}
