#!/usr/bin/env python3
"""The STREAM accuracy row's arithmetic (bench/stream_accuracy.sh runs the streams):
rshperf's stream figures against the streaming server's own clock.

    python3 bench/stream_accuracy.py RUNS.tsv EVENTS.csv

RUNS.tsv: one line per rshperf run, `round<TAB>version<TAB>tag<TAB>json`, the JSON
document rshperf wrote (--json) for the streams whose requests carried `tag=TAG`.
EVENTS.csv: scripts/sse_server.py's --event-log (stream,event,monotonic_ns,time_ns,
tag), written when the server stopped.

For each run, from the server's log: every gap between two consecutive events of a
stream (the times it handed event i and i+1 to uvicorn; `[DONE]` is not an event, as
for rshperf) and each stream's first event from the request's receipt (event 0's
time less the `request` row's). Their p50, p90 and p99 (nearest rank on the exact
values) against rshperf's `stream.gap_ms` and `stream.first_event_ms` percentiles
(its HdrHistogram, microsecond units). A figure passes when the two are within 2 %
of the server's or 100 us of each other, whichever is wider. The first event is
measured at different places on the two sides: rshperf from the request's send,
the server from its receipt, so rshperf's includes the request's and the first
event's passage through the proxy (nginx or caddy) and the loopback both ways; the
gaps are measured between two writes on the server and two reads on the client, so
a constant delay cancels out and only its variation shows.

Prints one markdown row per run and figure, then per version and figure the medians
over the rounds and how many rounds passed, and a last line `STREAM_ACCURACY PASS`
or `STREAM_ACCURACY FAIL (n of m figures outside)`; exit status 0 either way (1
for unreadable input).
"""

import csv
import json
import math
import sys
from collections import defaultdict

QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))
REL, ABS_MS = 0.02, 0.100


def rank(sorted_values, q):
    """The nearest-rank q-quantile of a sorted list."""
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def server_figures(rows):
    """(gaps in ms, first events in ms) of one run's rows {stream: {event: ns}}."""
    gaps, firsts = [], []
    for events in rows.values():
        idx = sorted((int(e), t) for e, t in events.items() if e.isdigit())
        gaps.extend((b[1] - a[1]) / 1e6 for a, b in zip(idx, idx[1:]))
        if idx and "request" in events:
            firsts.append((idx[0][1] - events["request"]) / 1e6)
    return sorted(gaps), sorted(firsts)


def median(xs):
    """The median of a non-empty list."""
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    runs_path, log_path = argv[1], argv[2]
    by_tag = defaultdict(lambda: defaultdict(dict))
    with open(log_path, newline="") as f:
        for r in csv.DictReader(f):
            by_tag[r["tag"]][int(r["stream"])][r["event"]] = int(r["monotonic_ns"])
    print("| round | version | figure | quantile | server ms | rshperf ms | diff | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    total = bad = 0
    # (version, figure, quantile) -> [(server, rshperf, ok)] over the rounds.
    per = defaultdict(list)
    with open(runs_path) as f:
        for line in f:
            rnd, version, tag, json_path = line.rstrip("\n").split("\t")
            with open(json_path) as j:
                stream = json.load(j)["stream"]
            gaps, firsts = server_figures(by_tag[tag])
            for name, mine, theirs in (
                ("gap", gaps, stream["gap_ms"]),
                ("first event", firsts, stream["first_event_ms"]),
            ):
                if not mine:
                    print(f"| {rnd} | {version} | {name} | - | no server rows for tag {tag} | | | FAIL |")
                    total += 1
                    bad += 1
                    continue
                for qname, q in QUANTILES:
                    s = rank(mine, q)
                    c = float(theirs[qname])
                    diff = c - s
                    ok = abs(diff) <= max(REL * s, ABS_MS)
                    total += 1
                    bad += not ok
                    per[(version, name, qname)].append((s, c, ok))
                    print(
                        f"| {rnd} | {version} | {name} | {qname} | {s:.3f} | {c:.3f} | "
                        f"{diff * 1000:+.0f} us ({diff / s * 100:+.2f} %) | {'pass' if ok else 'FAIL'} |"
                    )
    print()
    print("Medians over the rounds (server's and rshperf's each), and the rounds that passed:")
    print()
    print("| version | figure | quantile | server ms | rshperf ms | diff | rounds within 2 % or 100 us |")
    print("|---|---|---|---|---|---|---|")
    for (version, name, qname), xs in per.items():
        s = median([x[0] for x in xs])
        c = median([x[1] for x in xs])
        print(
            f"| {version} | {name} | {qname} | {s:.3f} | {c:.3f} | {(c - s) * 1000:+.0f} us "
            f"({(c - s) / s * 100:+.2f} %) | {sum(x[2] for x in xs)} of {len(xs)} |"
        )
    if bad:
        print(f"STREAM_ACCURACY FAIL ({bad} of {total} figures outside 2 % or 100 us)")
    else:
        print(f"STREAM_ACCURACY PASS ({total} figures within 2 % or 100 us)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, KeyError, ValueError) as e:
        print(f"stream_accuracy.py: {e}", file=sys.stderr)
        sys.exit(1)
