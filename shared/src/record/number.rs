//! Numbers in records: exact decimals that must keep their value through
//! RFC 8785, which prints every number as the nearest IEEE double. A number
//! is accepted only if that double names the same decimal, so the canonical
//! form (and the leaf hash) loses nothing.

use crate::canonical::format_number;
use rust_decimal::Decimal;
use serde_json::{Value, json};

/// Amounts must stay below this magnitude (10^15 USD).
pub(crate) const MAX_AMOUNT: Decimal = Decimal::from_parts(0xA4C6_8000, 0x38D7E, 0, false, 0);

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

/// The exact decimal a JSON number's text names, if the double RFC 8785
/// prints for it names the same value (so the canonical form loses nothing).
pub(super) fn exact_decimal(text: &str) -> Option<Decimal> {
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
