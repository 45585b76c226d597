//! RFC 8785 (JSON Canonicalization Scheme) serialisation.
//!
//! The ledger's leaf bytes are the canonical form of a record, so two writers
//! that agree on a record's content agree on its hash, whatever key order,
//! white space or number spelling (`100` / `100.00` / `1e2`) they used.
//! Rules (RFC 8785 §3.2): no white space; object members sorted by the UTF-16
//! code units of their names; strings with the minimal JSON escapes (which is
//! exactly what serde_json writes); numbers as IEEE 754 doubles in ECMAScript's
//! `Number.prototype.toString` form (provided by `ryu-js`).

use serde_json::Value;

/// The RFC 8785 canonical form of `value`.
///
/// Numbers are taken as IEEE 754 doubles, as RFC 8785 requires; callers that
/// hold exact decimals check first that the double keeps their value
/// (freedom-shared's record parser does). A non-finite number cannot occur in a
/// `serde_json::Value`.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(value, &mut out);
    out
}

/// ECMAScript's shortest round-trip form of a double (`-0` is written `0`).
pub fn format_number(number: f64) -> String {
    if number == 0.0 {
        return "0".to_owned();
    }
    ryu_js::Buffer::new().format(number).to_owned()
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            // as_f64 is total for non-arbitrary-precision numbers.
            out.push_str(&format_number(n.as_f64().unwrap_or(f64::NAN)))
        }
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    // serde_json escapes exactly `"`, `\\` and U+0000..U+001F (with the short
    // forms \b \t \n \f \r and lowercase \u00xx otherwise): RFC 8785 §3.2.2.2.
    out.push_str(&serde_json::to_string(s).expect("a string always serialises"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// RFC 8785 Appendix B: IEEE 754 doubles and their canonical text.
    #[test]
    fn numbers_follow_the_rfc_8785_table() {
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for (bits, want) in cases {
            assert_eq!(
                format_number(f64::from_bits(*bits)),
                *want,
                "bits {bits:#x}"
            );
        }
    }

    /// RFC 8785 §3.2.3: members sorted by UTF-16 code units, not by UTF-8 bytes.
    #[test]
    fn keys_sort_by_utf16_code_units() {
        let value = json!({
            "\u{20ac}": "Euro Sign",
            "\r": "Carriage Return",
            "\u{fb33}": "Hebrew Letter Dalet With Dagesh",
            "1": "One",
            "\u{1f600}": "Emoji: Grinning Face",
            "\u{0080}": "Control",
            "\u{00f6}": "Latin Small Letter O With Diaeresis"
        });
        let text = canonical_json(&value);
        let order: Vec<&str> = [
            "\\r",
            "1",
            "\u{0080}",
            "\u{00f6}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{fb33}",
        ]
        .to_vec();
        let mut last = 0;
        for key in order {
            let at = text.find(&format!("\"{key}\"")).expect("key present");
            assert!(at >= last, "{key} out of order in {text}");
            last = at;
        }
    }

    #[test]
    fn rfc_8785_section_3_2_2_example() {
        let value: Value = serde_json::from_str(
            r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
                "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
                "literals": [null, true, false]}"#,
        )
        .unwrap();
        assert_eq!(
            canonical_json(&value),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }
}
