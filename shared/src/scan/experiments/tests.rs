use super::book::MAX_BOOK_USD;
use super::*;
use crate::record::Record;
use crate::record::guard::Guard;
use crate::scan::mint::FeeInForce;
use pool::Reserves;
use std::str::FromStr;

/// A token at mid `mid` whose pool holds `depth` USDC (quote at $1) and
/// tokens worth as much at the mid.
fn token(mint: &str, mid: &str, depth: i64, change: f64, eligible: bool) -> TokenMarket {
    let mid = Decimal::from_str(mid).unwrap();
    let depth = Decimal::from(depth);
    TokenMarket {
        mint: mint.into(),
        symbol: mint.to_uppercase(),
        mid: Some(mid),
        pool: depth
            .checked_div(mid)
            .and_then(|tokens| Reserves::new(tokens, depth, Decimal::ONE)),
        change_h24: Some(change),
        eligible,
        transfer_fee: Some(FeeInForce::NONE),
        blocked: false,
        evidence: vec!["ab".repeat(32)],
        pool_evidence: Some("ab".repeat(32)),
    }
}

fn d(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

const REPORT: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

fn at(minute: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_777_896_000 + minute * 60, 0).unwrap()
}

#[test]
fn the_book_limit_is_ten_trillion_dollars() {
    assert_eq!(MAX_BOOK_USD, Decimal::from(10_000_000_000_000u64));
}

#[test]
fn the_control_never_trades() {
    let mut book = Book::new(&EXPERIMENTS[0]);
    let fills = book.advance(
        &EXPERIMENTS[0],
        &[token("a", "1", 1_000_000, 5.0, true)],
        at(0),
    );
    assert!(fills.is_empty());
    assert_eq!(book.equity(), Some(START_CAPITAL_USD));
}

/// One eligible token at mid 2 in a pool of 500 000 tokens and 1 000 000
/// USDC: the whole book goes in (1 % of the quote reserve), as the
/// constant-product pool fills it (figures from Python's decimal module).
#[test]
fn a_buy_is_the_constant_product_fill_with_every_fee() {
    let mut book = Book::new(&EXPERIMENTS[1]);
    let fills = book.advance(
        &EXPERIMENTS[1],
        &[token("a", "2", 1_000_000, 1.0, true)],
        at(0),
    );
    assert_eq!(fills.len(), 1);
    let fill = &fills[0];
    assert_eq!(fill.side, Side::Buy);
    // T = 10 000 − 0.02; fee = 0.25 % of it = 25.00; 9 974.98 USDC in;
    // 500 000 × 9 974.98 / 1 009 974.98, 12 significant digits, toward zero.
    assert_eq!(
        (fill.notional, fill.fee, fill.network_fee),
        (d("9999.98"), d("25"), d("0.02"))
    );
    assert_eq!(fill.quantity, d("4938.23124212"));
    assert_eq!(fill.price, d("2.01994996001"));
    assert_eq!(fill.impact, Some(d("0.009975")));
    assert_eq!(fill.reserves, token("a", "2", 1_000_000, 1.0, true).pool);
    assert_eq!(book.cash, Decimal::ZERO);
    // Marked at what selling it all would fetch: 1.97548510543 a unit, so
    // the book is worth 9 755.40, not the 9 876.46 its mid would say.
    let position = &book.positions[0];
    assert_eq!(
        (position.mark, position.mid_mark),
        (d("1.97548510543"), d("2"))
    );
    assert_eq!(book.equity(), Some(d("9755.40")));
}

#[test]
fn an_ineligible_holding_is_sold_with_costs_and_the_cash_reconciles() {
    let mut book = Book::new(&EXPERIMENTS[1]);
    book.advance(
        &EXPERIMENTS[1],
        &[token("a", "2", 1_000_000, 1.0, true)],
        at(0),
    );
    let quantity = book.positions[0].quantity;
    let fills = book.advance(
        &EXPERIMENTS[1],
        &[token("a", "2", 1_000_000, 1.0, false)],
        at(15),
    );
    assert_eq!(fills.len(), 1);
    assert_eq!((fills[0].side, fills[0].quantity), (Side::Sell, quantity));
    assert!(book.positions.is_empty());
    // 1 000 000 × 4 938.23… / 504 938.23… = 9 779.87 out, 24.45 swap fee,
    // 0.02 network fee: exactly what the mark said the holding would fetch.
    assert_eq!(
        (fills[0].notional, fills[0].fee),
        (d("9779.87"), d("24.45"))
    );
    assert_eq!(book.cash, d("9755.40"));
    assert_eq!(fills[0].cash_after, book.cash);
    assert_eq!(START_CAPITAL_USD - book.cash, d("244.60"));
}

#[test]
fn equal_weight_spreads_and_momentum_picks_the_risers() {
    let market = [
        token("a", "1", 5_000_000, 10.0, true),
        token("b", "4", 5_000_000, -3.0, true),
        token("c", "0.5", 5_000_000, 25.0, true),
        token("d", "9", 5_000_000, 50.0, false),
    ];
    let mut equal = Book::new(&EXPERIMENTS[1]);
    equal.advance(&EXPERIMENTS[1], &market, at(0));
    let held: Vec<&str> = equal.positions.iter().map(|p| p.mint.as_str()).collect();
    assert_eq!(held, ["a", "b", "c"]);
    let values: Vec<Decimal> = equal
        .positions
        .iter()
        .map(|p| p.quantity * p.mid_mark)
        .collect();
    let spread = values.iter().max().unwrap() - values.iter().min().unwrap();
    assert!(spread < Decimal::from(5), "{values:?}");
    let mut momentum = Book::new(&EXPERIMENTS[2]);
    momentum.advance(&EXPERIMENTS[2], &market, at(0));
    let held: Vec<&str> = momentum.positions.iter().map(|p| p.mint.as_str()).collect();
    assert_eq!(held, ["c", "a"], "rising eligible tokens, best first");
    // Unchanged prices next time: within the band, no churn.
    assert!(
        momentum
            .advance(&EXPERIMENTS[2], &market, at(15))
            .is_empty()
    );
}

/// Prices and liquidity come from a provider: any decimal at all. No
/// value may make a book panic, and whatever it holds afterwards still
/// makes a snapshot the ledger accepts (or none, when its value cannot
/// be computed).
#[test]
fn extreme_provider_values_never_panic_a_book() {
    let extremes = [
        "79228162514264337593543950335",
        "0.0000000000000000000000000001",
        "999999999999999",
        "0.000000000001",
        "1",
    ];
    let extremes: Vec<Decimal> = extremes.iter().map(|e| d(e)).collect();
    for &mid in &extremes {
        for (&reserve, &quote_usd) in extremes.iter().zip(extremes.iter().rev()) {
            let market = [TokenMarket {
                mid: Some(mid),
                pool: Reserves::new(reserve, mid.max(reserve), quote_usd),
                ..token("a", "1", 0, 5.0, true)
            }];
            for experiment in &EXPERIMENTS {
                let mut book = Book::new(experiment);
                book.advance(experiment, &market, at(0));
                let sell_off = [TokenMarket {
                    eligible: false,
                    ..market[0].clone()
                }];
                book.advance(experiment, &sell_off, at(15));
                book.advance(experiment, &market, at(30));
                let _ = serde_json::to_value(crate::scan::view::BookView::from(&book));
                if let Some(record) = book.snapshot_record(experiment, at(30), REPORT) {
                    let parsed =
                        Record::parse(record.to_string().as_bytes(), &Guard::default(), Utc::now());
                    assert!(parsed.is_ok(), "{mid} {reserve}: {record}: {parsed:?}");
                }
            }
        }
    }
}

#[test]
fn the_paper_snapshot_is_a_valid_reconciling_ledger_record() {
    let mut book = Book::new(&EXPERIMENTS[1]);
    let market = [
        token("a", "0.00004687", 400_000, 1.0, true),
        token("b", "123.456789", 900_000, 1.0, true),
    ];
    book.advance(&EXPERIMENTS[1], &market, at(0));
    let record = book
        .snapshot_record(&EXPERIMENTS[1], at(0), REPORT)
        .unwrap();
    let parsed = Record::parse(record.to_string().as_bytes(), &Guard::default(), Utc::now());
    assert!(parsed.is_ok(), "{record}: {parsed:?}");
    assert_eq!(record["asOf"], "2026-05-04T12:00:00Z");
    assert_eq!(record["id"], "scanner-equal-weight-v3-20260504T1200Z");
    assert_eq!(
        record["source"]["url"],
        format!("https://dexscreener.com/solana#report={REPORT}")
    );
}

/// A paper round trip of a token with a 2 % transfer fee (capped far
/// above) in a pool of 10 000 000 tokens and 10 000 000 USDC (mid 1),
/// figures from Python's decimal module:
///
/// Buy with the whole book: the swap takes 9 999.98 (0.02 goes to the
/// network), 25.00 of it the swap fee; the pool sends 10 000 000 ×
/// 9 974.98 / 10 009 974.98 = 9 965.03989263 tokens (12 significant
/// digits, toward zero); the transfer fee is 2 % of them rounded up to the
/// token's 6 decimals, 199.300798; the book receives 9 765.73909463, at
/// 1.02142601839 a token.
///
/// Sell them all: the transfer fee is 2 % of the tokens sent, 195.314782;
/// the pool receives the rest and pays out 9 561.27; swap fee 23.90,
/// network fee 0.02; cash 9 537.35. The round trip loses 462.65: the two
/// transfer fees, the two swap fees, two network fees and the pool's
/// depth.
#[test]
fn a_round_trip_of_a_2_percent_fee_token_pays_both_transfer_fees_to_the_cent() {
    let fee = FeeInForce {
        basis_points: 200,
        maximum: Decimal::from(1_000_000_000u64),
        decimals: 6,
    };
    let market = |eligible: bool| TokenMarket {
        transfer_fee: Some(fee),
        ..token("t", "1", 10_000_000, 5.0, eligible)
    };
    let mut book = Book::new(&EXPERIMENTS[1]);
    let bought = book.advance(&EXPERIMENTS[1], &[market(true)], at(0));
    assert_eq!(bought.len(), 1);
    assert_eq!(bought[0].fee, Decimal::from(25));
    assert_eq!(bought[0].price, d("1.02142601839"));
    assert_eq!(bought[0].transfer_fee, d("199.300798"));
    assert_eq!(bought[0].quantity, d("9765.73909463"));
    assert_eq!(book.cash, Decimal::ZERO);
    let sold = book.advance(&EXPERIMENTS[1], &[market(false)], at(15));
    assert_eq!(sold.len(), 1);
    assert_eq!(sold[0].side, Side::Sell);
    assert_eq!(sold[0].price, d("0.979062995159"));
    assert_eq!(sold[0].transfer_fee, d("195.314782"));
    assert_eq!((sold[0].notional, sold[0].fee), (d("9561.27"), d("23.90")));
    assert_eq!(book.cash, d("9537.35"));
    assert_eq!(START_CAPITAL_USD - book.cash, d("462.65"));
    // Without the fee the same round trip loses only the swap costs.
    let mut plain = Book::new(&EXPERIMENTS[1]);
    plain.advance(
        &EXPERIMENTS[1],
        &[token("t", "1", 10_000_000, 5.0, true)],
        at(0),
    );
    plain.advance(
        &EXPERIMENTS[1],
        &[token("t", "1", 10_000_000, 5.0, false)],
        at(15),
    );
    assert_eq!(START_CAPITAL_USD - plain.cash, d("69.79"));
}

#[test]
fn a_held_token_that_turns_blocked_is_worth_nothing_and_never_sold() {
    let mut book = Book::new(&EXPERIMENTS[1]);
    book.advance(
        &EXPERIMENTS[1],
        &[token("t", "2", 10_000_000, 5.0, true)],
        at(0),
    );
    assert_eq!(book.positions.len(), 1);
    let paused = TokenMarket {
        blocked: true,
        ..token("t", "3", 10_000_000, 5.0, false)
    };
    let fills = book.advance(&EXPERIMENTS[1], std::slice::from_ref(&paused), at(15));
    assert!(fills.is_empty(), "a blocked holding is not sold: {fills:?}");
    let position = &book.positions[0];
    assert!(position.blocked);
    // Its marks are kept for the reader; its value is not.
    assert_eq!(position.mid_mark, Decimal::from(3));
    assert!(position.mark > Decimal::ZERO);
    assert_eq!(position.value(), Some(Decimal::ZERO));
    assert_eq!(book.equity(), Some(book.cash));
    // Once blocked, always blocked: it stays worth 0 when the pause lifts.
    book.advance(
        &EXPERIMENTS[1],
        &[token("t", "3", 10_000_000, 5.0, true)],
        at(30),
    );
    assert!(book.positions[0].blocked);
    assert_eq!(book.equity(), Some(book.cash));
    // The ledger's snapshot values it at 0 and still reconciles.
    let record = book
        .snapshot_record(&EXPERIMENTS[1], at(30), REPORT)
        .unwrap();
    assert_eq!(record["positions"][0]["mark"], 0);
    let parsed = Record::parse(record.to_string().as_bytes(), &Guard::default(), Utc::now());
    assert!(parsed.is_ok(), "{record}: {parsed:?}");
}

#[test]
fn a_token_whose_fee_is_not_known_this_run_is_neither_bought_nor_sold() {
    let unknown_fee = TokenMarket {
        transfer_fee: None,
        ..token("t", "1", 10_000_000, 5.0, true)
    };
    let mut book = Book::new(&EXPERIMENTS[1]);
    assert!(
        book.advance(&EXPERIMENTS[1], std::slice::from_ref(&unknown_fee), at(0))
            .is_empty()
    );
    book.advance(
        &EXPERIMENTS[1],
        &[token("t", "1", 10_000_000, 5.0, true)],
        at(15),
    );
    let held = TokenMarket {
        eligible: false,
        ..unknown_fee
    };
    assert!(book.advance(&EXPERIMENTS[1], &[held], at(30)).is_empty());
    assert_eq!(book.positions.len(), 1);
}

#[test]
fn each_rule_is_registered_by_a_valid_decision_naming_its_hash() {
    for experiment in &EXPERIMENTS {
        let record = registration_record(experiment, at(0));
        let parsed = Record::parse(record.to_string().as_bytes(), &Guard::default(), Utc::now());
        let Ok(Record::Decision(decision)) = parsed else {
            panic!("{record}: {parsed:?}")
        };
        let hash = rule_hash(experiment);
        assert_eq!(
            hash,
            format!(
                "sha256:{}",
                crate::scan::provenance::sha256_hex(rule_text(experiment).as_bytes())
            )
        );
        assert_eq!(
            registered_hash(decision.thesis.as_deref().unwrap()),
            Some(hash.as_str())
        );
        assert!(record["source"]["url"].as_str().unwrap().ends_with(&hash));
        assert_eq!(record["id"], registration_id(experiment));
        assert_eq!(record["mode"], "paper");
        assert_eq!(record["action"], "research");
        // The full rule names every check (but the benchmark's, which
        // applies none) and every parameter of the cost model.
        let text = rule_text(experiment);
        if experiment.rule == Rule::HoldSol {
            assert!(text.contains("Eligible: not applied"), "{text}");
        } else {
            for name in crate::scan::checks::CHECK_NAMES {
                assert!(text.contains(name), "{name}");
            }
        }
        for parameter in [
            "constant-product",
            "liquidity.base and liquidity.quote",
            "at most 2 % of the reserve it draws on",
            "a swap fee of 0.25 %",
            "a network fee of $0.02 a fill",
            "transfer fee in force",
            "MEV (front-running, sandwiches) is not modelled",
            "what selling all of it in one swap now would return after every fee",
            "marked 0",
        ] {
            assert!(text.contains(parameter), "{}: {parameter}", experiment.id);
        }
    }
    // Four rules, four hashes; the retired ids are not reused.
    let hashes: std::collections::BTreeSet<_> = EXPERIMENTS.iter().map(rule_hash).collect();
    assert_eq!(hashes.len(), 4);
    assert!(
        EXPERIMENTS
            .iter()
            .all(|e| RETIRED.iter().all(|(id, _)| *id != e.id))
    );
    assert_eq!(registered_hash("no hash here"), None);
    assert_eq!(registered_hash("ruleHash: sha256:nothex"), None);
}

/// A target of 10 % of a pool's quote reserve is reached over five runs,
/// no fill taking more than 2 % of the reserve it draws on, and the book
/// then holds still (its exit value is below its mid value, which does not
/// make it buy again).
#[test]
fn a_large_target_is_reached_over_several_runs_two_percent_at_a_time() {
    // 100 000 USDC in the pool: the book's 10 000 is 10 % of it.
    let market = [token("a", "1", 100_000, 1.0, true)];
    let pool = market[0].pool.unwrap();
    let mut book = Book::new(&EXPERIMENTS[1]);
    let mut runs = 0;
    let mut minute = 0;
    while book.cash > d("200") {
        let fills = book.advance(&EXPERIMENTS[1], &market, at(minute));
        minute += 15;
        runs += 1;
        assert_eq!(fills.len(), 1, "run {runs}");
        let swapped = fills[0].notional - fills[0].fee;
        assert!(swapped <= pool.quote * MAX_RESERVE_SHARE, "{swapped}");
        assert!(runs <= 6, "{book:?}");
    }
    assert_eq!(runs, 5);
    for _ in 0..3 {
        assert!(
            book.advance(&EXPERIMENTS[1], &market, at(minute))
                .is_empty()
        );
        minute += 15;
    }
    // Selling 10 % of the token reserve takes five runs too.
    let sell_off = [TokenMarket {
        eligible: false,
        ..market[0].clone()
    }];
    let held = book.positions[0].quantity;
    let mut sold = Decimal::ZERO;
    while !book.positions.is_empty() {
        let fills = book.advance(&EXPERIMENTS[1], &sell_off, at(minute));
        minute += 15;
        assert_eq!(fills.len(), 1);
        assert!(fills[0].quantity <= pool.token * MAX_RESERVE_SHARE);
        sold += fills[0].quantity;
    }
    assert_eq!(sold, held);
}

/// A token whose pool drains to nothing is marked 0 and its book's equity
/// falls by what it was worth; a token DexScreener no longer lists is
/// marked 0 too and stays in the book, unsold, until its pool returns.
#[test]
fn a_drained_or_vanished_pool_marks_the_holding_at_zero() {
    let listed = [
        token("a", "1", 1_000_000, 1.0, true),
        token("b", "1", 1_000_000, 1.0, true),
    ];
    let mut book = Book::new(&EXPERIMENTS[1]);
    book.advance(&EXPERIMENTS[1], &listed, at(0));
    let before = book.equity().unwrap();
    let worth_a = book
        .positions
        .iter()
        .find(|p| p.mint == "a")
        .unwrap()
        .value()
        .unwrap();
    let drained = [
        TokenMarket {
            pool: None,
            ..listed[0].clone()
        },
        listed[1].clone(),
    ];
    let fills = book.advance(&EXPERIMENTS[1], &drained, at(15));
    assert!(fills.iter().all(|f| f.mint != "a"), "{fills:?}");
    let a = book.positions.iter().find(|p| p.mint == "a").unwrap();
    assert_eq!(a.mark, Decimal::ZERO);
    assert_eq!(a.mid_mark, Decimal::ONE, "DexScreener still quotes a mid");
    assert!(book.equity().unwrap() <= before - worth_a + d("0.01"));
    let vanished = [
        TokenMarket {
            mid: None,
            pool: None,
            change_h24: None,
            eligible: false,
            ..listed[0].clone()
        },
        listed[1].clone(),
    ];
    book.advance(&EXPERIMENTS[1], &vanished, at(30));
    let a = book.positions.iter().find(|p| p.mint == "a").unwrap();
    assert_eq!((a.mark, a.mid_mark), (Decimal::ZERO, Decimal::ZERO));
    let record = book
        .snapshot_record(&EXPERIMENTS[1], at(30), REPORT)
        .unwrap();
    assert!(
        record["positions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["symbol"] == "A" && p["mark"] == 0)
    );
    let parsed = Record::parse(record.to_string().as_bytes(), &Guard::default(), Utc::now());
    assert!(parsed.is_ok(), "{record}: {parsed:?}");
    // The pool returns: the holding is worth something again, and sold.
    let back = [token("a", "1", 1_000_000, 1.0, false), listed[1].clone()];
    let fills = book.advance(&EXPERIMENTS[1], &back, at(45));
    assert!(fills.iter().any(|f| f.mint == "a" && f.side == Side::Sell));
}

/// The benchmark buys wrapped SOL whatever the checks say, and never sells
/// it, not even when SOL's pool is missing for a run.
#[test]
fn the_benchmark_holds_sol_and_never_sells() {
    let sol = |eligible: bool| TokenMarket {
        mint: WRAPPED_SOL.into(),
        ..token("sol", "150", 50_000_000, -4.0, eligible)
    };
    let other = token("a", "1", 1_000_000, 9.0, true);
    let mut book = Book::new(&HOLD_SOL);
    let fills = book.advance(&HOLD_SOL, &[sol(false), other.clone()], at(0));
    assert_eq!(fills.len(), 1);
    assert_eq!(
        (fills[0].mint.as_str(), fills[0].side),
        (WRAPPED_SOL, Side::Buy)
    );
    assert_eq!(book.cash, Decimal::ZERO);
    let gone = TokenMarket {
        pool: None,
        ..sol(false)
    };
    assert!(
        book.advance(&HOLD_SOL, &[gone, other.clone()], at(15))
            .is_empty()
    );
    assert!(
        book.advance(&HOLD_SOL, &[sol(false), other], at(30))
            .is_empty()
    );
    assert_eq!(book.positions.len(), 1);
}
