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
  newest first, ids from their leaf hashes;
- what the figures can support, on paper series of seeded random daily
  returns (normal and Student-t, several lengths) and a benchmark named by
  FF_BENCHMARK_PAPER: from each series' JSON export, the PSR against
  `quantstats.stats.probabilistic_sharpe_ratio`, the information ratio
  against `quantstats.stats.information_ratio` (times sqrt(252)), beta and
  alpha against `quantstats.stats.greeks`, and the interval, minimum track
  record and deflated Sharpe against this script's own formulas with
  scipy's normal distribution, all to 1e-9; the trials N against the
  strategies the ledger view lists; the best of nine noise series
  deflated well below its PSR; a series of 12 returns and a flat one
  withheld with their reasons; a benchmark naming no series refused at
  start-up, naming the variable.

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


def start_local(binaries, home, extra_env=None):
    """freedom-local with its data dir (and the key file beside it) in `home`."""
    spec = importlib.util.spec_from_file_location("check_openapi", os.path.join(HERE, "check-openapi.py"))
    check_openapi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_openapi)
    env = {k: v for k, v in os.environ.items() if "KV_REST" not in k and "REDIS_REST" not in k}
    env.pop("FF_EVENT_BUS_NAME", None)
    env["FF_AGENT_WRITE_TOKEN"] = TOKEN
    env["RUST_LOG"] = "info"
    env.update(extra_env or {})
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


def snapshot(strategy, when, equity, flow, mode="live"):
    return {
        "id": f"{strategy}-{when}", "type": "snapshot", "visibility": "public", "mode": mode,
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
    # A paper series: the live ones' trials (N) and their Sharpes'
    # variance, which every live entry's deflated Sharpe depends on, stay.
    post(base, snapshot("other", "2026-09-01T00:00:00Z", 1000.0, 0, "paper"))
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


EULER_GAMMA = 0.5772156649


def export_daily_returns(base, strategy, mode):
    """The series' daily returns from its JSON export, by UTC date: each
    interval r = (E - F) / E_prev - 1 chained within the date of its
    ending snapshot."""
    rows, url = [], f"/api/freedom-fund?view=series&strategyId={strategy}&mode={mode}&format=json"
    while url:
        _, headers, body = get(base + url)
        rows.extend(json.loads(body)["rows"])
        url = next_link(headers)
    days = {}
    for previous, row in zip(rows, rows[1:]):
        day = row["asOf"][:10]
        r = (row["equity"] - row["flowSincePrevious"]) / previous["equity"] - 1
        days[day] = days.get(day, 1.0) * (1 + r)
    return pd.Series([g - 1 for g in days.values()], index=pd.DatetimeIndex(list(days)))


def variance_term(returns, sr):
    g3 = float(returns.skew())
    g4 = float(returns.kurt()) + 3
    return 1 - g3 * sr + (g4 - 1) / 4 * sr * sr


def check_sharpe_stats(name, stats, returns, trials, variance):
    from scipy.stats import norm
    n = len(returns)
    sr = float(returns.mean() / returns.std())
    term = variance_term(returns, sr)
    se = math.sqrt(term / (n - 1))
    check(stats["n"] == n, f"{name}: n {stats['n']} vs {n} daily returns in the export")
    check(close(stats["perDay"], sr), f"{name}: perDay {stats['perDay']} vs {sr}")
    psr = float(qs.stats.probabilistic_sharpe_ratio(returns))
    check(close(stats["psr"], psr), f"{name}: psr {stats['psr']} vs quantstats {psr}")
    check(close(stats["standardError"], se), f"{name}: standardError {stats['standardError']} vs {se}")
    low, high = (sr - 1.96 * se) * math.sqrt(252), (sr + 1.96 * se) * math.sqrt(252)
    check(close(stats["interval95"][0], low) and close(stats["interval95"][1], high), f"{name}: interval95 {stats['interval95']} vs {[low, high]}")
    if sr > 0:
        needed = 1 + term * (1.6449 / sr) ** 2
        check(close(stats["minTrackRecord"], needed), f"{name}: minTrackRecord {stats['minTrackRecord']} vs {needed}")
        check(stats["enough"] == (n >= needed), f"{name}: enough {stats['enough']}")
    else:
        check(stats["minTrackRecord"] is None and not stats["enough"], f"{name}: no track record is enough at SR <= 0")
    check(stats["trials"] == trials, f"{name}: trials {stats['trials']} vs {trials} from the ledger view")
    sr0 = math.sqrt(variance) * ((1 - EULER_GAMMA) * norm.ppf(1 - 1 / trials) + EULER_GAMMA * norm.ppf(1 - 1 / (trials * math.e)))
    deflated = float(norm.cdf((sr - sr0) * math.sqrt(n - 1) / math.sqrt(term)))
    check(close(stats["deflated"], deflated), f"{name}: deflated {stats['deflated']} vs {deflated}")


def check_benchmark(name, comparison, returns, benchmark):
    shared = returns.index.intersection(benchmark.index)
    r, b = returns.loc[shared], benchmark.loc[shared]
    check(comparison["shared"] == len(shared), f"{name}: shared {comparison['shared']} vs {len(shared)}")
    ir = float(qs.stats.information_ratio(r, b)) * math.sqrt(252)
    check(close(comparison["informationRatio"], ir), f"{name}: informationRatio {comparison['informationRatio']} vs quantstats {ir}")
    greeks = qs.stats.greeks(r, b)
    check(close(comparison["beta"], float(greeks["beta"])), f"{name}: beta {comparison['beta']} vs quantstats {greeks['beta']}")
    check(close(comparison["alpha"], float(greeks["alpha"])), f"{name}: alpha {comparison['alpha']} vs quantstats {greeks['alpha']}")
    check(close(comparison["correlation"], float(r.corr(b))), f"{name}: correlation {comparison['correlation']} vs pandas {r.corr(b)}")
    te = float((r - b).std()) * math.sqrt(252)
    check(close(comparison["trackingError"], te), f"{name}: trackingError {comparison['trackingError']} vs {te}")
    excess = float((1 + r).prod() - (1 + b).prod())
    check(close(comparison["excessReturn"], excess), f"{name}: excessReturn {comparison['excessReturn']} vs {excess}")
    up = float(r[b > 0].mean() / b[b > 0].mean())
    check(close(comparison["upCapture"], up), f"{name}: upCapture {comparison['upCapture']} vs {up}")


def seed_figures(base):
    """Paper series ending on the same day: nine of pure noise (normal or
    Student-t with 3 degrees of freedom, 25 to 250 returns), a benchmark,
    one of 12 returns and a flat one."""
    rng = random.Random(20261128)
    last = dt.date(2026, 8, 31)
    def post_series(strategy, returns):
        days = [d for d in weekday_closes(last - dt.timedelta(days=2 * len(returns) + 10), last)][-(len(returns) + 1):]
        equity = 10_000.0
        for n, day in enumerate(days):
            if n > 0:
                equity = round(equity * (1 + returns[n - 1]), 6)
            post(base, snapshot(strategy, f"{day.isoformat()}T20:00:00Z", equity, 0, "paper"))
    def t3():
        return rng.gauss(0, 1) / math.sqrt(rng.gammavariate(1.5, 2) / 3)
    benchmark = [rng.gauss(0.0005, 0.02) for _ in range(250)]
    post_series("bench", benchmark)
    for k, length in enumerate([25, 40, 60, 90, 120, 160, 200, 250, 250]):
        draw = (lambda: rng.gauss(0, 0.01)) if k % 2 == 0 else (lambda: 0.006 * t3())
        # Each noise series follows the benchmark a little, so beta is not 0.
        post_series(f"noise-{k}", [draw() + 0.3 * b for b in benchmark[-length:]])
    post_series("short", [rng.gauss(0, 0.01) for _ in range(12)])
    post_series("flat", [0.0] * 30)


def check_figures(binaries):
    with tempfile.TemporaryDirectory() as home:
        local, base = start_local(binaries, home)
        try:
            seed_figures(base)
        finally:
            local.terminate()
            local.wait(timeout=20)
        # A benchmark that names no series of its mode stops start-up.
        env = {k: v for k, v in os.environ.items() if "KV_REST" not in k and "REDIS_REST" not in k}
        env.update({"FF_AGENT_WRITE_TOKEN": TOKEN, "FF_BENCHMARK_LIVE": "bench"})
        refused = subprocess.run(
            [os.path.join(binaries, "freedom-local"), "--addr", "127.0.0.1:0", "--data-dir", os.path.join(home, "data"), "--no-schedule"],
            env=env, capture_output=True, text=True, timeout=60,
        )
        check(refused.returncode != 0 and "FF_BENCHMARK_LIVE" in refused.stderr, f"a live benchmark without a live series: exit {refused.returncode}, {refused.stderr[-300:]}")
        local, base = start_local(binaries, home, {"FF_BENCHMARK_PAPER": "bench"})
        try:
            contract = json.loads(get(f"{base}/api/freedom-fund?view=contract")[2])
            check(contract["benchmarks"]["paper"] == "bench", f"the contract names the benchmark: {contract.get('benchmarks')}")
            dashboard = json.loads(get(f"{base}/api/freedom-fund?period=all")[2])
            series = {s["strategyId"]: s for s in dashboard["strategies"]}
            listed, before = set(), None
            while True:
                url = f"{base}/api/freedom-fund?view=ledger&type=snapshot&mode=paper&limit=1000" + (f"&before={before}" if before else "")
                page = json.loads(get(url)[2])
                listed.update(e["record"]["strategyId"] for e in page["entries"])
                before = page["next"]
                if before is None:
                    break
            trials = len(listed)
            check(trials == 12, f"{trials} paper strategies in the ledger view")
            returns = {name: export_daily_returns(base, name, "paper") for name in series}
            shown = [name for name, s in series.items() if s["metrics"]["sharpeStats"]]
            per_day = [float(returns[name].mean() / returns[name].std()) for name in shown]
            variance = float(pd.Series(per_day).var())
            for name in shown:
                check_sharpe_stats(name, series[name]["metrics"]["sharpeStats"], returns[name], trials, variance)
                if name != "bench":
                    check_benchmark(name, series[name]["metrics"]["benchmark"], returns[name], returns["bench"])
            check(series["bench"]["metrics"]["benchmark"] is None, "the benchmark is not compared with itself")
            for name, reason in [("short", "fewer than 20 daily returns"), ("flat", "no variation")]:
                m = series[name]["metrics"]
                check(m["withheld"] == reason and m["sharpe"] is None and m["sortino"] is None and m["calmar"] is None and m["sharpeStats"] is None,
                      f"{name}: withheld {m['withheld']}, sharpe {m['sharpe']}")
            short = series["short"]["metrics"]["benchmark"]
            check(short["withheld"] == "fewer than 20 shared daily returns" and short["beta"] is None, f"short: benchmark {short}")
            noise = [name for name in shown if name.startswith("noise-")]
            best = max(noise, key=lambda name: series[name]["metrics"]["sharpeStats"]["perDay"])
            stats = series[best]["metrics"]["sharpeStats"]
            check(stats["deflated"] < stats["psr"] - 0.1, f"the best of nine noise series ({best}): deflated {stats['deflated']} vs psr {stats['psr']}")
        finally:
            local.terminate()
            local.wait(timeout=20)


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
    check_figures(binaries)
    for problem in PROBLEMS[:50]:
        print(problem, file=sys.stderr)
    if PROBLEMS:
        return 1
    print(f"track record checks passed (quantstats {qs.__version__}, feedparser {feedparser.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
