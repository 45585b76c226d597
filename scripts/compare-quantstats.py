#!/usr/bin/env python3
"""Compute quantstats' figures for a daily return series, with timings.

Usage: scripts/compare-quantstats.py RETURNS.json REPEATS

RETURNS.json is {"dates": ["2026-01-05", ...], "returns": [0.001, ...]}.
Prints one JSON object: for each metric, quantstats' value and the mean
seconds per call over REPEATS calls. Used by `cargo bench --bench quantstats`
(shared/benches/quantstats.rs), which computes the same metrics in Rust.
"""

import json
import sys
import timeit
import warnings

warnings.filterwarnings("ignore")

import pandas as pd  # noqa: E402
import quantstats as qs  # noqa: E402


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    repeats = int(sys.argv[2])
    returns = pd.Series(data["returns"], index=pd.to_datetime(data["dates"]))
    metrics = {
        "twr": lambda: qs.stats.comp(returns),
        "volatility": lambda: qs.stats.volatility(returns, periods=252, annualize=True),
        "sharpe": lambda: qs.stats.sharpe(returns, rf=0.0, periods=252, annualize=True),
        "sortino": lambda: qs.stats.sortino(returns, rf=0, periods=252, annualize=True),
        "maxDrawdown": lambda: qs.stats.max_drawdown(returns),
    }
    out = {"quantstats": qs.__version__}
    for name, call in metrics.items():
        value = float(call())
        seconds = timeit.timeit(call, number=repeats) / repeats
        out[name] = {"value": value, "seconds": seconds}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
