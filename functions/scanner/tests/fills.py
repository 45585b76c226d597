#!/usr/bin/env python3
"""The scanner's paper fills recomputed outside the project.

Reads, on stdin, the runs `fills.rs` made: each run's report, the paper
snapshots it appended, the DexScreener answers it used (the exact bytes,
from the evidence the report names) and the reserves the stand-in was
configured with. With Python's exact fractions, from those answers alone,
it recomputes the constant-product model the rule text declares:

- reserves: the token's deepest pair (wrapped SOL: its deepest pair with
  USDC), oriented to the token; the other side's USD price is
  priceUsd / priceNative (or priceUsd when the token is the quote side);
- a buy of T dollars (swap fee included): fee = T x 0.25 % to the cent,
  q = (T - fee) / quoteUsd in, tokens out = B q / (Q + q); cash pays T and
  a $0.02 network fee; q at most 2 % of Q;
- a sell of x tokens (at most 2 % of B): gross = Q x / (B + x) x quoteUsd;
  cash receives gross and pays the swap fee (each to the cent) and $0.02;
- a holding's mark: what selling all of it in one swap would return after
  every fee, per unit (0 without a pool); equity = cash + the holdings'
  exit values, to the cent, in the report and in the ledger's snapshot.

Exits non-zero with one line per problem; prints what it checked as JSON.
"""
import json
import sys
from decimal import Decimal
from fractions import Fraction as F

FEE = F(25, 10_000)
NETWORK = F(2, 100)
SHARE = F(2, 100)
START = F(10_000)
SOL = "So11111111111111111111111111111111111111112"
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
# Quantities and prices keep 12 significant digits.
ROUNDING = F(1, 10**11)

PROBLEMS = []


def check(ok, message):
    if not ok:
        PROBLEMS.append(message)


def num(value):
    """A JSON number or decimal string, exactly."""
    return F(value) if isinstance(value, (Decimal, int)) else F(str(value))


def cents(value):
    """To the cent, halves to even (Python's round of a Fraction)."""
    return F(round(value * 100), 100)


def pools(answers):
    """Each mint's pool as the answers give it: {B, Q, P, mid} or no B."""
    best = {}
    for text in answers:
        pairs = json.loads(text, parse_float=Decimal)
        if isinstance(pairs, dict):
            pairs = pairs.get("pairs") or []
        for pair in pairs:
            for side, other, is_base in (
                (pair["baseToken"], pair["quoteToken"], True),
                (pair["quoteToken"], pair["baseToken"], False),
            ):
                mint = side["address"]
                if mint == SOL and other["address"] != USDC:
                    continue
                usd = num((pair.get("liquidity") or {}).get("usd", 0))
                if mint in best and not usd > best[mint][0]:
                    continue
                best[mint] = (usd, pair, is_base)
    found = {}
    for mint, (_, pair, is_base) in best.items():
        liquidity = pair["liquidity"]
        base, quote = num(liquidity["base"]), num(liquidity["quote"])
        price_usd, native = num(pair["priceUsd"]), num(pair["priceNative"])
        if is_base:
            pool = {"B": base, "Q": quote, "P": price_usd / native, "mid": price_usd}
        else:
            pool = {"B": quote, "Q": base, "P": price_usd, "mid": price_usd / native}
        if pool["B"] <= 0 or pool["Q"] <= 0:
            pool["B"] = None
        found[mint] = pool
    return found


def gross(pool, tokens):
    return pool["Q"] * tokens / (pool["B"] + tokens) * pool["P"]


def exit_value(pool, quantity):
    if pool is None or pool["B"] is None or quantity <= 0:
        return F(0)
    return max(F(0), gross(pool, quantity) * (1 - FEE) - NETWORK)


def close(ours, exact, what):
    check(abs(ours - exact) <= abs(exact) * ROUNDING + F(1, 10**20), f"{what}: {float(ours)} vs {float(exact)}")


def check_fill(trade, pool, cash, shares):
    """One fill against the pool; returns the cash after it."""
    what = f"{trade['experimentId'] if 'experimentId' in trade else ''} {trade['side']} {trade['symbol']} at {trade['at']}"
    B, Q, P = pool["B"], pool["Q"], pool["P"]
    reported = trade["reserves"]
    check(
        (num(reported["token"]), num(reported["quote"])) == (B, Q),
        f"{what}: reserves {reported} are not the answer's",
    )
    close(num(reported["quoteUsd"]), P, f"{what}: quoteUsd")
    check(num(trade["networkFee"]) == NETWORK, f"{what}: network fee")
    check(num(trade["transferFee"]) == 0, f"{what}: no transfer fee here")
    quantity, fee, notional = num(trade["quantity"]), num(trade["fee"]), num(trade["notional"])
    if trade["side"] == "buy":
        check(fee == cents(notional * FEE), f"{what}: swap fee {fee}")
        swapped = notional - fee
        q = swapped / P
        check(q <= SHARE * Q, f"{what}: {float(q / Q):.5f} of the quote reserve")
        shares["buy"].append(float(q / Q))
        sent = B * q / (Q + q)
        check(quantity <= sent, f"{what}: more tokens than the pool sends")
        close(quantity, sent, f"{what}: tokens")
        close(num(trade["price"]), swapped / quantity, f"{what}: price")
        after = cash - notional - NETWORK
    else:
        check(quantity <= SHARE * B, f"{what}: {float(quantity / B):.5f} of the token reserve")
        shares["sell"].append(float(quantity / B))
        out = gross(pool, quantity)
        check(notional == cents(out), f"{what}: notional {float(notional)} vs {float(out)}")
        check(fee == cents(out * FEE), f"{what}: swap fee {fee}")
        close(num(trade["price"]), out / quantity, f"{what}: price")
        after = cash + cents(out) - fee - NETWORK
    impact = num(trade["price"]) / pool["mid"] - 1
    check(abs(num(trade["impact"]) - impact) <= F(1, 10**6), f"{what}: impact {trade['impact']} vs {float(impact)}")
    check(num(trade["cashAfter"]) == after, f"{what}: cash {trade['cashAfter']} vs {float(after)}")
    return after


def main():
    runs = json.load(sys.stdin, parse_float=Decimal)
    by_time = {}
    for run in runs:
        found = pools(run["answers"])
        by_time[run["report"]["observedAt"]] = found
        for mint, configured in run["configured"].items():
            if configured is not None and mint in found and found[mint]["B"] is not None:
                check(
                    (found[mint]["B"], found[mint]["Q"]) == (num(configured[0]), num(configured[1])),
                    f"{mint}: the answer's reserves are not the stand-in's",
                )
    shares = {"buy": [], "sell": []}
    fills = marks = 0
    final = runs[-1]["report"]
    # Cash and holdings after each fill, book by book, in order.
    history = {}
    for book in final["books"]:
        cash, held, steps = START, {}, []
        for trade in book["trades"]:
            pool = by_time[trade["at"]].get(trade["mint"])
            if pool is None or pool["B"] is None:
                PROBLEMS.append(f"{book['experimentId']}: a fill without a pool: {trade}")
                continue
            cash = check_fill(trade, pool, cash, shares)
            sign = 1 if trade["side"] == "buy" else -1
            held[trade["mint"]] = held.get(trade["mint"], F(0)) + sign * num(trade["quantity"])
            steps.append((trade["at"], cash, dict(held)))
            fills += 1
        history[book["experimentId"]] = steps
    for run in runs:
        report = run["report"]
        at = report["observedAt"]
        found = by_time[at]
        for book in report["books"]:
            before = [s for s in history.get(book["experimentId"], []) if s[0] <= at]
            cash, held = (before[-1][1], before[-1][2]) if before else (START, {})
            check(num(book["cash"]) == cash, f"{book['experimentId']} at {at}: cash {book['cash']} vs {float(cash)}")
            worth = F(0)
            for position in book["positions"]:
                what = f"{book['experimentId']} {position['symbol']} at {at}"
                quantity = num(position["quantity"])
                check(quantity == held.get(position["mint"]), f"{what}: quantity is not the fills' sum")
                pool = found.get(position["mint"])
                value = exit_value(pool, quantity)
                mark = num(position["mark"])
                check(mark * quantity <= value, f"{what}: marked above what a sale would fetch")
                check(value - mark * quantity <= value * ROUNDING, f"{what}: mark {float(mark)} vs {float(value / quantity)}")
                if pool is not None:
                    close(num(position["midMark"]), pool["mid"], f"{what}: midMark")
                worth += value
                marks += 1
            equity = cents(cash + worth)
            check(abs(num(book["equity"]) - equity) <= F(1, 100), f"{book['experimentId']} at {at}: equity {book['equity']} vs {float(equity)}")
            for snapshot in run["snapshots"]:
                if snapshot["strategyId"] != book["experimentId"]:
                    continue
                check(num(snapshot["equity"]) == num(book["equity"]), f"{book['experimentId']} at {at}: the snapshot's equity")
                check(num(snapshot["cash"]) == num(book["cash"]), f"{book['experimentId']} at {at}: the snapshot's cash")
                recorded = {p["symbol"]: num(p["mark"]) for p in snapshot.get("positions", [])}
                check(
                    recorded == {p["symbol"]: num(p["mark"]) for p in book["positions"]},
                    f"{book['experimentId']} at {at}: the snapshot's marks",
                )
    if PROBLEMS:
        sys.exit("\n".join(PROBLEMS))
    print(json.dumps({"fills": fills, "marks": marks, "shares": shares}))


main()
