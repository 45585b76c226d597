use super::book::MAX_BOOK_USD;
use super::*;
use crate::record::Record;
use crate::record::guard::Guard;
use crate::scan::mint::FeeInForce;
use std::str::FromStr;

fn token(mint: &str, price: &str, liquidity: i64, change: f64, eligible: bool) -> TokenMarket {
    TokenMarket {
        mint: mint.into(),
        symbol: mint.to_uppercase(),
        price: Decimal::from_str(price).unwrap(),
        liquidity: Decimal::from(liquidity),
        change_h24: Some(change),
        eligible,
        transfer_fee: Some(FeeInForce::NONE),
        blocked: false,
        evidence: vec!["ab".repeat(32)],
    }
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

#[test]
fn a_buy_pays_the_fee_and_slippage_from_liquidity() {
    let mut book = Book::new(&EXPERIMENTS[1]);
    // One eligible token: spend all 10 000 into a 1 000 000 pool.
    let fills = book.advance(
        &EXPERIMENTS[1],
        &[token("a", "2", 1_000_000, 1.0, true)],
        at(0),
    );
    assert_eq!(fills.len(), 1);
    let fill = &fills[0];
    assert_eq!(fill.side, Side::Buy);
    // fee = 0.25 % of 10 000 = 25; slippage = 10 000 / 1 000 000 = 1 %.
    assert_eq!(fill.fee, Decimal::from(25));
    assert_eq!(fill.slippage, Decimal::from_str("0.01").unwrap());
    assert_eq!(fill.price, Decimal::from_str("2.02").unwrap());
    // (10 000 - 25) / 2.02 = 4938.118811881188..., 12 significant digits, toward zero.
    assert_eq!(fill.quantity, Decimal::from_str("4938.11881188").unwrap());
    // Marked at 2: equity = cash + 9876.23762376 → the costs are visible.
    let equity = book.equity().unwrap();
    assert!(equity < START_CAPITAL_USD - Decimal::from(120));
    assert!(book.cash >= Decimal::ZERO && book.cash < Decimal::ONE);
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
    // Round trip: both legs paid about 1 % slippage and 0.25 % fee.
    let lost = START_CAPITAL_USD - book.cash;
    assert!(
        lost > Decimal::from(240) && lost < Decimal::from(260),
        "{lost}"
    );
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
        .map(|p| p.quantity * p.mark)
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
    for price in extremes {
        for liquidity in extremes {
            let liquidity = Decimal::from_str(liquidity).unwrap();
            let market = [TokenMarket {
                liquidity,
                ..token("a", price, 0, 5.0, true)
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
                    assert!(parsed.is_ok(), "{price} {liquidity}: {record}: {parsed:?}");
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
    assert_eq!(record["id"], "scanner-equal-weight-v2-20260504T1200Z");
    assert_eq!(
        record["source"]["url"],
        format!("https://dexscreener.com/solana#report={REPORT}")
    );
}

/// A paper round trip of a token with a 2 % transfer fee, by hand (pool
/// liquidity 10 000 000 USD, price 1, fee cap far above):
///
/// Buy 10 000: swap fee 25.00; slippage 10 000 / 10 000 000 = 0.1 %, so
/// the fill price is 1.001; the pool sends (10 000 − 25) / 1.001 =
/// 9 965.03496503 tokens (12 significant digits, toward zero); the transfer
/// fee is 2 % of them rounded up to the token's 6 decimals, 199.300700;
/// the book receives 9 765.73426503 and pays 9 965.03496503 × 1.001 + 25 =
/// 10 000.00.
///
/// Sell them all at price 1: slippage 9 765.73426503 / 10 000 000 =
/// 0.000976573426503, fill price 0.999023426573; the transfer fee is 2 %
/// of the tokens sent, 195.314686; the pool receives 9 570.41957903,
/// worth 9 561.07336158 at the fill price; swap fee 23.90; cash
/// 9 537.17. The round trip loses 462.83: the two transfer fees (about
/// 394.62 at the fill prices), the two swap fees (48.90) and the
/// slippage (about 19.31).
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
    assert_eq!(bought[0].price, Decimal::from_str("1.001").unwrap());
    assert_eq!(
        bought[0].transfer_fee,
        Decimal::from_str("199.3007").unwrap()
    );
    assert_eq!(
        bought[0].quantity,
        Decimal::from_str("9765.73426503").unwrap()
    );
    assert_eq!(book.cash, Decimal::ZERO);
    let sold = book.advance(&EXPERIMENTS[1], &[market(false)], at(15));
    assert_eq!(sold.len(), 1);
    assert_eq!(sold[0].side, Side::Sell);
    assert_eq!(sold[0].price, Decimal::from_str("0.999023426573").unwrap());
    assert_eq!(
        sold[0].transfer_fee,
        Decimal::from_str("195.314686").unwrap()
    );
    assert_eq!(sold[0].fee, Decimal::from_str("23.90").unwrap());
    assert_eq!(book.cash, Decimal::from_str("9537.17").unwrap());
    let loss = START_CAPITAL_USD - book.cash;
    assert_eq!(loss, Decimal::from_str("462.83").unwrap());
    // At least the two transfer fees and the two swap fees.
    let transfer_fees =
        bought[0].transfer_fee * bought[0].price + sold[0].transfer_fee * sold[0].price;
    assert!(loss >= transfer_fees + bought[0].fee + sold[0].fee);
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
    assert!(START_CAPITAL_USD - plain.cash < Decimal::from(70));
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
    // Its mark is kept for the reader; its value is not.
    assert_eq!(position.mark, Decimal::from(3));
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
        // The full rule names every check and the costs.
        let text = rule_text(experiment);
        for name in crate::scan::checks::CHECK_NAMES {
            assert!(text.contains(name), "{name}");
        }
        assert!(text.contains("transfer fee"));
    }
    // Three rules, three hashes; the retired ids are not reused.
    let hashes: std::collections::BTreeSet<_> = EXPERIMENTS.iter().map(rule_hash).collect();
    assert_eq!(hashes.len(), 3);
    assert!(EXPERIMENTS.iter().all(|e| !RETIRED.contains(&e.id)));
    assert_eq!(registered_hash("no hash here"), None);
    assert_eq!(registered_hash("ruleHash: sha256:nothex"), None);
}
