//! The KV ledger store's unit tests (the end-to-end ones are in
//! `shared/tests/kv_store.rs`).

use super::series::{above, below_or_at, rollup_batches};
use super::*;
use crate::ports::ledger_store::Rollup;
use crate::record::StrategyId;

#[test]
fn roll_ups_are_written_in_requests_of_bounded_size() {
    let rollup = |bytes: usize| Rollup {
        strategy_id: StrategyId::parse("s").unwrap(),
        mode: Mode::Paper,
        version: 1,
        from_nanos: 0,
        through_seq: 1,
        state: "x".repeat(bytes),
        overwrite: false,
    };
    let sizes = |rollups: &[Rollup], limit| {
        rollup_batches(rollups, limit)
            .iter()
            .map(|batch| batch.iter().map(|r| r.state.len()).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    assert!(rollup_batches(&[], 10).is_empty());
    let rollups = [rollup(4), rollup(5), rollup(2), rollup(12), rollup(1)];
    assert_eq!(
        sizes(&rollups, 10),
        [vec![4, 5], vec![2], vec![12], vec![1]]
    );
    assert_eq!(sizes(&rollups, 100), [vec![4, 5, 2, 12, 1]]);
}

#[test]
fn time_codes_sort_as_the_instants_do() {
    let instants = [
        i64::MIN,
        -1_000,
        -1,
        0,
        1,
        1_767_571_200_000_000_000,
        i64::MAX,
    ];
    let codes: Vec<String> = instants.iter().map(|n| time_code(*n)).collect();
    let mut sorted = codes.clone();
    sorted.sort();
    assert_eq!(codes, sorted);
    assert!(codes.iter().all(|c| c.len() == 16));
}

#[test]
fn bounds_include_the_end_and_exclude_the_start() {
    let member = |t: i64| format!("{}:{}", time_code(t), seq_code(7));
    let t = 1_000;
    // "(" bound: strictly below; "[" bound: at or above.
    assert!(member(t).as_str() < &below_or_at(t)[1..]);
    assert!(member(t + 1).as_str() > &below_or_at(t)[1..]);
    assert!(member(t).as_str() < &above(t)[1..]);
    assert!(member(t + 1).as_str() >= &above(t)[1..]);
    assert_eq!(below_or_at(i64::MAX), "+");
}

#[test]
fn members_and_records_parse_back() {
    assert_eq!(
        member_seq(&format!("{}:{}", time_code(5), seq_code(42))).unwrap(),
        42
    );
    assert!(member_seq("garbage").is_err());
    let leaf = crate::merkle::leaf_hash(b"{}");
    let entry = parse_record(3, &format!("{}{{}}", leaf.to_hex())).unwrap();
    assert_eq!(
        (entry.seq, entry.leaf_hash, entry.canonical.as_str()),
        (3, leaf, "{}")
    );
    assert!(parse_record(3, "short").is_err());
}
