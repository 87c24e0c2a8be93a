#!/usr/bin/env python3
"""The replay accuracy row (docs/replay.md "Measured accuracy").

  bench/replay_accuracy.py gen LOG            write the synthetic log: 10,000 requests,
                                              20 bursts of 400 within 200 ms, idle gaps
                                              of 0.5-1 s with 100 background requests
                                              each, $msec times (millisecond precision)
  bench/replay_accuracy.py check LOG NGINX_LOG SPEED
                                              compare the arrivals nginx logged
                                              ($msec - $request_time, by URI) with the
                                              log's offsets / SPEED after removing the
                                              median difference (the run's start);
                                              prints one row, exit 1 unless every
                                              request arrived once and p99 <= 1 ms

Called by bench/replay_accuracy.sh; needs only the Python standard library.
"""
import random
import re
import statistics
import sys

T0 = 1796515200.0


def gen(path):
    rng = random.Random(7)
    times = []
    t = 0.0
    for _ in range(20):
        times += [t + rng.uniform(0, 0.2) for _ in range(400)]
        t += 0.2
        gap = rng.uniform(0.5, 1.0)
        times += [t + rng.uniform(0, gap) for _ in range(100)]
        t += gap
    times.sort()
    with open(path, "w") as f:
        for k, s in enumerate(times):
            f.write(f'10.2.{k % 50}.1 - - [{T0 + round(s, 3):.3f}] "GET /a/{k} HTTP/1.1" '
                    f'200 5 "-" "-" 0.000\n')


def offsets(path):
    out = {}
    for line in open(path):
        m = re.search(r'\[([0-9.]+)\] "GET (/a/\d+) ', line)
        out[m.group(2)] = float(m.group(1))
    t0 = min(out.values())
    return {u: s - t0 for u, s in out.items()}


def check(log, nginx_log, speed):
    want = offsets(log)
    seen = {}
    for line in open(nginx_log):
        # $msec $request_time "$request"
        m = re.match(r'([0-9.]+) ([0-9.]+) "GET (/a/\d+) ', line)
        if m:
            seen.setdefault(m.group(3), []).append(float(m.group(1)) - float(m.group(2)))
    once = sum(1 for u in want if len(seen.get(u, [])) == 1)
    extra = sum(1 for u in seen if u not in want)
    diffs = [seen[u][0] - want[u] / speed for u in want if u in seen]
    mid = statistics.median(diffs)
    # In whole microseconds: the times are milliseconds ($msec) divided by the speed,
    # and a float difference of 1 ms must not read as 1.0000000002.
    err = sorted(round(abs(d - mid) * 1000, 3) for d in diffs)
    p = lambda q: err[min(len(err) - 1, int(q * len(err)))]
    ok = once == len(want) and extra == 0 and p(0.99) <= 1.0
    print(f"speed {speed:g}: sent once {once} of {len(want)} (unknown {extra}); arrival error "
          f"p50 {p(0.5):.3f} ms p99 {p(0.99):.3f} ms max {err[-1]:.3f} ms; "
          f"{'PASS' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    if sys.argv[1:2] == ["gen"]:
        gen(sys.argv[2])
    elif sys.argv[1:2] == ["check"]:
        sys.exit(0 if check(sys.argv[2], sys.argv[3], float(sys.argv[4])) else 1)
    else:
        sys.exit(__doc__)
