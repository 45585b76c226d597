//! RugCheck's and the RPC's answers are read fail-closed: a report whose
//! risks cannot say there is no danger, and a list of largest accounts with
//! an entry that does not read, never pass their check, however the answer
//! is mangled (keys dropped or `null`, levels in another case or with white
//! space or hidden characters, entries of the wrong type, amounts as JSON
//! numbers, exponents, signs, the whale listed last, an empty list).

use super::rugcheck::parse_report;
use super::solana::{parse_accounts, parse_largest};
use crate::scan::checks::{
    CheckStatus, Evidence, HOLDERS_SPREAD, LIQUIDITY_LOCKED, NO_DANGER_RISK, Sources, evaluate,
    status_of,
};
use crate::scan::holders::Holding;
use crate::scan::{MarketQuote, MintAccount, RiskReport};
use proptest::prelude::*;
use rust_decimal::Decimal;
use serde_json::{Value, json};

const POOL: &str = "Pool111111111111111111111111111111111111111";

fn market() -> MarketQuote {
    MarketQuote {
        symbol: "TKN".into(),
        price_usd: Some(Decimal::ONE),
        liquidity_usd: Some(Decimal::from(1_000_000)),
        price_change_h24: None,
        pair_url: None,
        pools: vec![POOL.into()],
        reserves: crate::scan::experiments::pool::Reserves::new(
            Decimal::from(500_000),
            Decimal::from(500_000),
            Decimal::ONE,
        ),
    }
}

fn mint() -> MintAccount {
    MintAccount::parsed(
        Some(crate::scan::mint::SPL_TOKEN_PROGRAM),
        "mint",
        &json!({"decimals": 0, "freezeAuthority": null, "mintAuthority": null, "supply": "1000000"}),
    )
}

/// The status of `name` for a token whose risk report and holdings are these.
fn status(name: &str, risk: Option<&RiskReport>, holdings: Option<&[Holding]>) -> CheckStatus {
    let (market, mint, sources) = (market(), mint(), Sources::default());
    let checks = evaluate(&Evidence {
        market: Some(Some(&market)),
        risk,
        mint: Some(&mint),
        holders: Some(holdings),
        epoch: Some(1),
        sources: &sources,
    });
    status_of(&checks, name).unwrap()
}

/// A level in another form than RugCheck writes it.
fn level_variant() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("Danger")),
        Just(json!("DANGER")),
        Just(json!(" danger")),
        Just(json!("danger ")),
        Just(json!("dan\u{200b}ger")),
        Just(json!("critical")),
        Just(json!("")),
        Just(json!(3)),
        Just(json!(null)),
    ]
}

#[derive(Debug, Clone)]
enum ReportMangle {
    DropRisks,
    NullRisks,
    Level(Value),
    NameOf(Value),
    EntryOf(Value),
    Duplicate,
    LpLocked(Value),
}

fn report_mangle() -> impl Strategy<Value = ReportMangle> {
    prop_oneof![
        Just(ReportMangle::DropRisks),
        Just(ReportMangle::NullRisks),
        level_variant().prop_map(ReportMangle::Level),
        prop_oneof![
            Just(json!(null)),
            Just(json!(7)),
            Just(json!("")),
            Just(json!([]))
        ]
        .prop_map(ReportMangle::NameOf),
        prop_oneof![
            Just(json!(null)),
            Just(json!("danger")),
            Just(json!([1])),
            Just(json!({}))
        ]
        .prop_map(ReportMangle::EntryOf),
        Just(ReportMangle::Duplicate),
        prop_oneof![
            Just(json!(100.01)),
            Just(json!(-5)),
            Just(json!(1e300)),
            Just(json!("95")),
            Just(json!(null)),
        ]
        .prop_map(ReportMangle::LpLocked),
    ]
}

/// A summary with a danger-level risk (or, for the LP mangles, 50 % of the
/// LP locked) mangled by `mangles`.
fn hazardous_summary(mangles: &[ReportMangle], position: usize) -> (Value, bool) {
    let danger =
        json!({"name": "Freeze Authority still enabled", "level": "danger", "score": 7500});
    let mut risks = vec![
        json!({"name": "Low amount of LP Providers", "level": "warn", "score": 400}),
        json!({"name": "Top holders", "level": "info", "score": 100}),
    ];
    risks.insert(position.min(risks.len()), danger);
    let mut summary =
        json!({"tokenProgram": "x", "score": 7900, "score_normalised": 60, "lpLockedPct": 100.0});
    let mut lp_hazard = false;
    for mangle in mangles {
        let at = position.min(risks.len() - 1);
        match mangle {
            ReportMangle::DropRisks | ReportMangle::NullRisks => {}
            ReportMangle::Level(level) if risks[at].is_object() => {
                risks[at]["level"] = level.clone()
            }
            ReportMangle::NameOf(name) if risks[at].is_object() => risks[at]["name"] = name.clone(),
            ReportMangle::Level(_) | ReportMangle::NameOf(_) => {}
            ReportMangle::EntryOf(entry) => risks[at] = entry.clone(),
            ReportMangle::Duplicate => risks.push(risks[at].clone()),
            ReportMangle::LpLocked(pct) => {
                summary["lpLockedPct"] = pct.clone();
                lp_hazard = true;
            }
        }
    }
    summary["risks"] = Value::Array(risks);
    if mangles.iter().any(|m| matches!(m, ReportMangle::DropRisks)) {
        summary.as_object_mut().unwrap().remove("risks");
    }
    if mangles.iter().any(|m| matches!(m, ReportMangle::NullRisks)) {
        summary["risks"] = Value::Null;
    }
    (summary, lp_hazard)
}

/// An amount in another form than a string of digits.
fn amount_variant() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(600_000)),
        Just(json!("6e5")),
        Just(json!("-1")),
        Just(json!("+600000")),
        Just(json!(" 600000")),
        Just(json!("600000.0")),
        Just(json!("")),
        Just(json!(null)),
    ]
}

/// The largest accounts: ten holders of 1 % and a 60 % whale, in the order
/// `keys` gives, the whale's amount mangled when `amount` is given, or the
/// whole list emptied.
fn largest_body(keys: &[u32], amount: Option<Value>, empty: bool) -> (Value, Vec<String>) {
    let mut accounts: Vec<Value> = (0..10)
        .map(|i| json!({"address": format!("Acct{i}"), "amount": "10000", "decimals": 0}))
        .collect();
    let mut whale = json!({"address": "Whale", "amount": "600000", "decimals": 0});
    if let Some(amount) = amount {
        whale["amount"] = amount;
    }
    accounts.push(whale);
    let mut indexed: Vec<(u32, Value)> = accounts
        .into_iter()
        .enumerate()
        .map(|(i, a)| (keys[i % keys.len()], a))
        .collect();
    indexed.sort_by_key(|(k, _)| *k);
    let value: Vec<Value> = if empty {
        Vec::new()
    } else {
        indexed.into_iter().map(|(_, a)| a).collect()
    };
    let addresses = value
        .iter()
        .filter_map(|a| a["address"].as_str().map(str::to_owned))
        .collect();
    (
        json!({"jsonrpc": "2.0", "id": 1, "result": {"context": {"slot": 9}, "value": value}}),
        addresses,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_mangled_report_of_a_dangerous_token_never_passes(
        mangles in prop::collection::vec(report_mangle(), 1..3),
        position in 0usize..3,
    ) {
        let (summary, lp_hazard) = hazardous_summary(&mangles, position);
        let body = serde_json::to_vec(&summary).unwrap();
        let Ok(report) = parse_report(&body) else {
            // A failed answer: no report, so both checks are unknown.
            return Ok(());
        };
        let name = if lp_hazard { LIQUIDITY_LOCKED } else { NO_DANGER_RISK };
        let verdict = status(name, Some(&report), None);
        if lp_hazard {
            prop_assert_ne!(verdict, CheckStatus::Pass, "{}: {:?}", summary, report);
        }
        prop_assert_ne!(
            status(NO_DANGER_RISK, Some(&report), None),
            CheckStatus::Pass,
            "{}: {:?}", summary, report
        );
    }

    #[test]
    fn a_mangled_list_of_largest_accounts_with_a_whale_never_passes(
        keys in prop::collection::vec(any::<u32>(), 11),
        amount in prop::option::of(amount_variant()),
        empty in prop::bool::weighted(0.1),
    ) {
        let (body, addresses) = largest_body(&keys, amount, empty);
        let Ok((Some(balances), _)) = parse_largest(&serde_json::to_vec(&body).unwrap()) else {
            // A failed answer: the holders are not read, the check unknown.
            return Ok(());
        };
        let holdings: Vec<Holding> = balances
            .iter()
            .zip(&addresses)
            .map(|((address, amount), _)| Holding {
                address: address.clone(),
                owner: Some(format!("Owner-{address}")),
                amount: *amount,
            })
            .collect();
        prop_assert_ne!(
            status(HOLDERS_SPREAD, None, Some(&holdings)),
            CheckStatus::Pass,
            "{}", body
        );
    }
}

/// An answer whose object names a key twice is malformed: a reader keeping
/// the last (`"risks": []` after the dangers, `"paused": false` after
/// `true`) would pass what the first says fails.
#[test]
fn an_answer_naming_a_key_twice_is_malformed() {
    let report = br#"{"score": 1, "risks": [{"name": "Freeze", "level": "danger"}], "risks": [], "lpLockedPct": 100}"#;
    assert!(parse_report(report).is_err());
    let accounts = br#"{"jsonrpc": "2.0", "id": 1, "result": {"context": {"slot": 1}, "value": [{"owner": "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb", "lamports": 1, "executable": false, "rentEpoch": 0, "space": 1, "data": {"program": "spl-token-2022", "space": 1, "parsed": {"type": "mint", "info": {"decimals": 0, "mintAuthority": null, "freezeAuthority": null, "supply": "1", "extensions": [{"extension": "pausableConfig", "state": {"authority": null, "paused": true, "paused": false}}]}}}}]}}"#;
    assert!(parse_accounts(accounts, 1).is_err());
    let largest = br#"{"jsonrpc": "2.0", "id": 1, "result": {"context": {"slot": 1}, "value": [{"address": "A", "amount": "600000", "amount": "1"}]}}"#;
    assert!(parse_largest(largest).is_err());
}
