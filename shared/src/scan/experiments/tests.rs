use super::*;
use crate::record::Record;
use crate::record::guard::Guard;
use std::str::FromStr;

fn token(mint: &str, price: &str, liquidity: i64, change: f64, eligible: bool) -> TokenMarket {
    TokenMarket {
        mint: mint.into(),
        symbol: mint.to_uppercase(),
        price: Decimal::from_str(price).unwrap(),
        liquidity: Decimal::from(liquidity),
        change_h24: Some(change),
        eligible,
    }
}

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
                if let Some(record) = book.snapshot_record(experiment, at(30)) {
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
    let record = book.snapshot_record(&EXPERIMENTS[1], at(0)).unwrap();
    let parsed = Record::parse(record.to_string().as_bytes(), &Guard::default(), Utc::now());
    assert!(parsed.is_ok(), "{record}: {parsed:?}");
    assert_eq!(record["asOf"], "2026-05-04T12:00:00Z");
    assert_eq!(record["id"], "scanner-equal-weight-v1-20260504T1200Z");
}
