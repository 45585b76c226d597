#!/usr/bin/env python3
"""The track record checked from outside, against freedom-local:

- the since-inception dashboard (`period=all`), computed from every snapshot
  and again from the stored roll-ups, against quantstats on the
  same daily returns: monthly and yearly returns (`monthly_returns`), max
  drawdown, best and worst day, the longest drawdown (`drawdown_details`),
  and Calmar's drawdown half. Where quantstats' conventions differ, the
  comparison says how (and the Rust tests check those figures by hand):
  its drawdown `days` run from the first day under water to the last
  (+1), ours from the peak's date to the recovery's; its CAGR counts
  calendar years from the first return, our annualised return trading
  days from the baseline;
- the CSV export read back with Python's csv module, page by page through
  `Link: rel="next"`, and the JSON export: every snapshot once, in time
  order, equal to the ledger's records, with a growth index that Python
  recomputes from equity and flows;
- the Atom feed parsed by feedparser: no error, the latest 50 decisions
  newest first, ids from their leaf hashes.

    scripts/check-track-record.py <target-dir>

Exits non-zero with one line per problem.
"""
import csv
import datetime as dt
import importlib.util
import io
import json
import math
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import urllib.request
import warnings

warnings.filterwarnings("ignore")

import feedparser  # noqa: E402
import pandas as pd  # noqa: E402
import quantstats as qs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "track-record-write-token-0123456789"
PROBLEMS = []


def check(ok, message):
    if not ok:
        PROBLEMS.append(message)


def close(a, b, tolerance=1e-9):
    return a is not None and b is not None and abs(a - b) <= tolerance * max(1.0, abs(b))


def start_local(binaries, home):
    """freedom-local with its data dir (and the key file beside it) in `home`."""
    spec = importlib.util.spec_from_file_location("check_openapi", os.path.join(HERE, "check-openapi.py"))
    check_openapi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_openapi)
    env = {k: v for k, v in os.environ.items() if "KV_REST" not in k and "REDIS_REST" not in k}
    env.pop("FF_EVENT_BUS_NAME", None)
    env["FF_AGENT_WRITE_TOKEN"] = TOKEN
    env["RUST_LOG"] = "info"
    local, match, _ = check_openapi.start(
        [os.path.join(binaries, "freedom-local"), "--addr", "127.0.0.1:0",
         "--data-dir", os.path.join(home, "data"), "--no-schedule"],
        env, r"freedom-local listening addr=(\S+)", "stderr",
    )
    subprocess.Popen(["cat"], stdin=local.stderr, stdout=subprocess.DEVNULL)
    return local, f"http://{match.group(1)}"


def post(base, record):
    request = urllib.request.Request(
        f"{base}/api/freedom-fund", method="POST", data=json.dumps(record).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as answer:
        if answer.status != 201:
            raise SystemExit(f"append answered {answer.status}")


def get(url):
    with urllib.request.urlopen(url) as answer:
        return answer.status, answer.headers, answer.read()


def snapshot(strategy, when, equity, flow):
    return {
        "id": f"{strategy}-{when}", "type": "snapshot", "visibility": "public", "mode": "live",
        "strategyId": strategy, "strategyName": strategy.title(), "asOf": when,
        "source": {"name": "statement", "url": "https://example.com/s"},
        "currency": "USD", "equity": equity, "flowSincePrevious": flow,
    }


def weekday_closes(first, last):
    day = first
    while day <= last:
        if day.weekday() < 5:
            yield day
        day += dt.timedelta(days=1)


def seed(base):
    """A daily series over a year and a half with flows and a first-day
    fall (so the baseline matters), a 15-minute series long enough to page
    its export, and 60 decisions. Returns the daily series' valuations."""
    rng = random.Random(20261123)
    daily = []
    equity = 100_000.0
    for n, day in enumerate(weekday_closes(dt.date(2025, 3, 3), dt.date(2026, 8, 31))):
        flow = 0.0
        if n > 0:
            r = -0.03 if n == 1 else rng.gauss(0.0004, 0.011)
            flow = 5_000.0 if n % 97 == 0 else (-2_500.0 if n % 131 == 0 else 0.0)
            equity = round(equity * (1 + r) + flow, 2)
        when = f"{day.isoformat()}T20:00:00Z"
        post(base, snapshot("daily", when, equity, flow))
        daily.append((day, equity, flow))
    intraday = 100_000.0
    at = dt.datetime(2026, 9, 1, tzinfo=dt.timezone.utc)
    for n in range(7500):
        intraday = round(intraday * (1 + rng.gauss(0, 0.001)), 2)
        post(base, snapshot("intraday", (at + dt.timedelta(minutes=15 * n)).isoformat().replace("+00:00", "Z"), intraday, 0))
    for n in range(60):
        post(base, {
            "id": f"decision-{n}", "type": "decision", "visibility": "public", "mode": "live",
            "strategyId": "daily", "strategyName": "Daily", "asOf": f"2026-08-{1 + n % 28:02d}T12:{n % 60:02d}:00Z",
            "source": {"name": "agent", "url": "https://example.com/agent"},
            "action": ["hold", "research", "propose", "reject", "outcome"][n % 5],
            "summary": f"Decision {n} & <review> of \"bands\"",
            "thesis": "Within bands.\nNothing to do.",
        })
    return daily


def check_dashboard(base, daily):
    _, _, body = get(f"{base}/api/freedom-fund?period=all")
    dashboard = json.loads(body)
    check(dashboard["period"] == "all", f"period is {dashboard['period']}")
    strategy = next(s for s in dashboard["strategies"] if s["strategyId"] == "daily")
    metrics = strategy["metrics"]
    # Daily returns from the valuations, by the design's formula, in Python:
    # r = (E - F) / E_prev - 1; the baseline day gets 0 so quantstats' index
    # starts at the baseline (it otherwise starts after the first return).
    dates = [pd.Timestamp(daily[0][0])]
    returns = [0.0]
    for (_, previous, _), (day, equity, flow) in zip(daily, daily[1:]):
        dates.append(pd.Timestamp(day))
        returns.append((equity - flow) / previous - 1)
    series = pd.Series(returns, index=pd.DatetimeIndex(dates))
    ours_daily = series.iloc[1:]
    check(close(metrics["maxDrawdown"], float(qs.stats.max_drawdown(series))), f"maxDrawdown {metrics['maxDrawdown']} vs quantstats {qs.stats.max_drawdown(series)}")
    check(close(metrics["bestDay"], float(qs.stats.best(ours_daily))), f"bestDay {metrics['bestDay']} vs {qs.stats.best(ours_daily)}")
    check(close(metrics["worstDay"], float(qs.stats.worst(ours_daily))), f"worstDay {metrics['worstDay']} vs {qs.stats.worst(ours_daily)}")
    table = qs.stats.monthly_returns(ours_daily, eoy=True, compounded=True)
    for month in strategy["monthly"]:
        year, number = month["month"].split("-")
        theirs = float(table.loc[year].iloc[int(number) - 1])
        check(close(month["return"], theirs), f"{month['month']}: {month['return']} vs quantstats {theirs}")
    for year in strategy["yearly"]:
        theirs = float(table.loc[str(year["year"])]["EOY"])
        check(close(year["return"], theirs), f"{year['year']}: {year['return']} vs quantstats {theirs}")
    check(len(strategy["monthly"]) == 18, f"{len(strategy['monthly'])} months")
    # Calmar: annualizedReturn / |max drawdown|, the drawdown quantstats'.
    check(metrics["annualizedReturn"] is not None, "over a year of record: annualised")
    check(close(metrics["calmar"], metrics["annualizedReturn"] / abs(float(qs.stats.max_drawdown(series)))), "calmar")
    # The longest drawdown: quantstats finds the same drawdown periods;
    # ours runs from the day before its first day under water (the peak)
    # to the day after its last (the recovery), or to the latest snapshot.
    details = qs.stats.drawdown_details(qs.stats.to_drawdown_series(series))
    index = list(series.index)
    longest = 0
    for _, row in details.iterrows():
        first = index.index(pd.Timestamp(row["start"]))
        last = index.index(pd.Timestamp(row["end"]))
        recovered = last + 1 < len(index)
        end = index[last + 1] if recovered else index[last]
        longest = max(longest, (end - index[first - 1]).days)
    check(metrics["longestDrawdownDays"] == longest, f"longestDrawdownDays {metrics['longestDrawdownDays']} vs {longest} from quantstats' periods")
    check(len(strategy["underwater"]) == len(strategy["series"]), "underwater beside every charted point")
    flows = [(f["asOf"][:10], f["amount"]) for f in strategy["flows"]]
    check(flows == [(d.isoformat(), f) for d, _, f in daily[1:] if f != 0], f"flows {flows[:3]}...")
    check(dashboard["inception"]["asOf"] == f"{daily[0][0].isoformat()}T20:00:00Z", f"inception {dashboard['inception']}")
    intraday = next(s for s in dashboard["strategies"] if s["strategyId"] == "intraday")
    days = {p["asOf"][:10] for p in intraday["series"]}
    check(len(intraday["series"]) <= len(days) + 1, f"the 7 500-point series is thinned to a point a day ({len(intraday['series'])} points, {len(days)} days)")
    check(intraday["metrics"]["intervals"] == 7499, "metrics use every snapshot")
    return {s["strategyId"]: s for s in dashboard["strategies"]}


def check_rolled_up(base, data_dir, daily, first):
    """A new head makes the service compute `period=all` again, now from the
    roll-ups the first request stored: the same figures, checked against
    quantstats again, and the same entries as the first answer."""
    with sqlite3.connect(os.path.join(data_dir, "data", "ledger.sqlite3")) as db:
        kept = sorted(row[0] for row in db.execute("SELECT strategy_id FROM rollups"))
    check(kept == ["daily", "intraday"], f"the first request stored the roll-ups: {kept}")
    post(base, snapshot("other", "2026-09-01T00:00:00Z", 1000.0, 0))
    again = check_dashboard(base, daily)
    for strategy in ("daily", "intraday"):
        check(again[strategy] == first[strategy], f"{strategy}: from the roll-ups, the same entry as from every snapshot")


def ledger_snapshots(base, strategy):
    """Every snapshot of `strategy` from the ledger view, oldest first."""
    entries, before = [], None
    while True:
        url = f"{base}/api/freedom-fund?view=ledger&type=snapshot&strategyId={strategy}&limit=1000"
        if before:
            url += f"&before={before}"
        page = json.loads(get(url)[2])
        entries.extend(page["entries"])
        before = page["next"]
        if before is None:
            return list(reversed(entries))


def next_link(headers):
    link = headers.get("Link")
    if not link:
        return None
    target, relation = link.split(";", 1)
    check(relation.strip() == 'rel="next"', f"Link relation {relation}")
    return target.strip()[1:-1]


def check_exports(base, strategy):
    ledger = ledger_snapshots(base, strategy)
    rows, pages, url = [], 0, f"/api/freedom-fund?view=series&strategyId={strategy}&mode=live&format=csv"
    while url:
        status, headers, body = get(base + url)
        pages += 1
        check(len(body) <= 1024 * 1024, f"a CSV page of {len(body)} bytes")
        check(headers.get("Content-Type", "").startswith("text/csv"), f"CSV content type {headers.get('Content-Type')}")
        text = body.decode()
        check(text.startswith("asOf,equity,flowSincePrevious,cash,index,drawdown,seq,leafHash\r\n"), "the CSV header")
        rows.extend(csv.DictReader(io.StringIO(text, newline="")))
        url = next_link(headers)
    json_rows, json_pages, url = [], 0, f"/api/freedom-fund?view=series&strategyId={strategy}&mode=live&format=json"
    while url:
        _, headers, body = get(base + url)
        json_pages += 1
        page = json.loads(body)
        json_rows.extend(page["rows"])
        url = next_link(headers)
        check((page["next"] is None) == (url is None), "JSON next and the Link header agree")
    check(len(rows) == len(ledger), f"{strategy}: {len(rows)} CSV rows for {len(ledger)} snapshots")
    check(len({r["seq"] for r in rows}) == len(rows), "every snapshot once")
    if strategy == "intraday":
        check(pages > 1 and json_pages > 1, f"the long series pages ({pages} CSV, {json_pages} JSON pages)")
    level, peak, previous = 1.0, 1.0, None
    for row, entry, item in zip(rows, ledger, json_rows):
        record = entry["record"]
        check(int(row["seq"]) == entry["seq"] == item["seq"], f"seq {row['seq']} vs {entry['seq']}")
        check(row["leafHash"] == entry["leafHash"] == item["leafHash"], f"leaf hash at {row['seq']}")
        check(row["asOf"] == record["asOf"] == item["asOf"], f"asOf at {row['seq']}")
        check(float(row["equity"]) == record["equity"] == item["equity"], f"equity at {row['seq']}")
        check(float(row["flowSincePrevious"]) == record["flowSincePrevious"], f"flow at {row['seq']}")
        check(row["cash"] == "" and item["cash"] is None, "no cash given, none exported")
        if previous is not None:
            level *= (record["equity"] - record["flowSincePrevious"]) / previous
        peak = max(peak, level)
        previous = record["equity"]
        check(math.isclose(float(row["index"]), level, rel_tol=1e-9), f"index at {row['seq']}: {row['index']} vs {level}")
        check(math.isclose(float(row["drawdown"]), level / peak - 1, abs_tol=1e-9), f"drawdown at {row['seq']}")
        check(float(row["index"]) == item["index"], "CSV and JSON agree")


def check_feed(base):
    status, headers, body = get(f"{base}/feed.atom")
    check(headers.get("Content-Type", "").startswith("application/atom+xml"), f"feed content type {headers.get('Content-Type')}")
    feed = feedparser.parse(body)
    check(not feed.bozo, f"feedparser: {feed.get('bozo_exception')}")
    check(feed.version == "atom10", f"feed version {feed.version}")
    decisions = json.loads(get(f"{base}/api/freedom-fund?view=ledger&type=decision&limit=50")[2])["entries"]
    check(len(feed.entries) == 50, f"{len(feed.entries)} entries")
    for entry, decision in zip(feed.entries, decisions):
        check(entry.id == f"urn:freedom-fund:leaf:{decision['leafHash']}", f"entry id {entry.id}")
        check(decision["record"]["summary"] in entry.title, f"entry title {entry.title}")
    updated = [e.updated_parsed for e in feed.entries]
    check(all(u is not None for u in updated), "every entry has its updated time")


def main():
    binaries = os.path.join(sys.argv[1], "debug")
    with tempfile.TemporaryDirectory() as data_dir:
        local, base = start_local(binaries, data_dir)
        try:
            daily = seed(base)
            first = check_dashboard(base, daily)
            check_rolled_up(base, data_dir, daily, first)
            check_exports(base, "daily")
            check_exports(base, "intraday")
            check_feed(base)
        finally:
            local.terminate()
            local.wait(timeout=20)
    for problem in PROBLEMS[:50]:
        print(problem, file=sys.stderr)
    if PROBLEMS:
        return 1
    print(f"track record checks passed (quantstats {qs.__version__}, feedparser {feedparser.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
