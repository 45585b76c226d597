//! proptest strategies for JSON documents, shared by this crate's property
//! tests and other crates' (feature `strategies`).

use proptest::prelude::*;
use serde_json::Value;

/// Arbitrary JSON documents: every type, nested up to 6 levels, with keys
/// and strings from all of Unicode.
pub fn json_tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("\\PC{0,6}", inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// JSON number texts, including those no double holds exactly, those beyond
/// a double's range and those beyond a decimal's precision.
pub fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        r"-?(0|[1-9][0-9]{0,30})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,4})?",
        prop::sample::select(vec![
            "0",
            "-0",
            "1e-28",
            "1e-29",
            "1e15",
            "999999999999999",
            "1e400",
            "-1e400",
            "0.1",
            "0.30000000000000004",
            "123456789012345678901234567890",
        ])
        .prop_map(str::to_owned),
    ]
}
