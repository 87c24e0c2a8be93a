#!/usr/bin/env python3
"""The statistics compare's simulation (src/model/compare/sim.rs) is calibrated on,
measured on real runs: what `cargo test --release --lib compare::sim_tests::calibration
-- --ignored --nocapture` prints for the synthetic runs.

    python3 bench/compare_calibrate.py RUN.json...

For each run (an rshperf --json document with its 100-ms windows) and then on
average: the standard deviation of ln(response time) over the run; the design effect
of the windows' means of ln(response) (their variance over what independent calls
would give: how much the calls of a window move together); the correlation of
neighbouring windows' means (lag 1); p90/p50 and p99/p50 of the whole run. Over the
runs: the standard deviation of ln p50 from run to run. The response times are read
from the windows' histograms at their bucket highs (1/512 of the value), as the
simulation reads its own.
"""

import json
import math
import statistics
import sys

FINE_BITS = 9  # stats::windows::FINE_BITS


def bucket_high(i, b=FINE_BITS):
    """The highest value (µs) of bucket i (stats::timeline::bucket_high_bits)."""
    sub_n = 1 << b
    if i < sub_n:
        return i
    e = i // sub_n + b - 1
    sub = i % sub_n
    shift = e - b
    return ((sub_n + sub) << shift) + (1 << shift) - 1


def pairs(text):
    """A LogHist as serialized: "bucket:count,…"."""
    if isinstance(text, list):
        return [(int(b), int(c)) for b, c in text]
    return [tuple(map(int, p.split(":"))) for p in text.split(",") if p]


def summary(doc):
    wins = doc["raw"]["windows"]["windows"]
    logs = []
    for w in wins:
        one = []
        for b, c in pairs(w["response"]):
            one.extend([math.log(max(bucket_high(b), 1))] * c)
        logs.append(one)
    every = [x for w in logs for x in w]
    n = len(every)
    mean = sum(every) / n
    var = sum((x - mean) ** 2 for x in every) / n
    means = [sum(w) / len(w) for w in logs if w]
    k = len(means)
    mm = sum(means) / k
    vm = sum((x - mm) ** 2 for x in means) / k
    lag = sum((means[i] - mm) * (means[i + 1] - mm) for i in range(k - 1)) / (vm * k)
    pct = doc["percentiles"]["response"]
    return {
        "sd": math.sqrt(var),
        "deff": vm / (var / (n / k)),
        "lag": lag,
        "r90": pct["p90"] / pct["p50"],
        "r99": pct["p99"] / pct["p50"],
        "p50": pct["p50"],
    }


def main(files):
    rows = [summary(json.load(open(f))) for f in files]
    avg = {k: statistics.mean(r[k] for r in rows) for k in rows[0]}
    between = statistics.stdev(math.log(r["p50"]) for r in rows) if len(rows) > 1 else math.nan
    print(
        "%d runs: ln sd %.3f, window deff %.2f, window lag-1 %.2f, p90/p50 %.2f, "
        "p99/p50 %.2f, run-to-run sd of ln p50 %.4f"
        % (len(rows), avg["sd"], avg["deff"], avg["lag"], avg["r90"], avg["r99"], between)
    )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
