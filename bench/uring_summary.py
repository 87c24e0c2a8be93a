#!/usr/bin/env python3
"""Summary of bench/run.sh --uring-only (the URING.* runs in OUT).

For each row (NCO, NCC: a new connection per request; KA: keep-alive; CR: a call
rate; OVL15/OVL20: 1.5x and 2x the knee) and each client (rshperf --io epoll and
--io uring, floor_epoll, floor_uring with rshperf's features, floor_uring with all
of them): the median over rounds of the completions, errors and CPU (user + system
of /usr/bin/time) per connection (NC*, OVL*) or per request (KA, CR), then the
ratios the issue asks for: uring / epoll, and rshperf / its backend's floor. Then
system calls per connection (strace -c -f) and the pacing rows.

usage: uring_summary.py OUT
"""
import os
import re
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/rshperf-bench"
WHO = ["epoll", "uring", "floor_epoll", "floor_uring", "floor_best"]
ROWS = [("NCO", "conn"), ("NCC", "conn"), ("KA", "req"), ("CR", "req"),
        ("OVL15", "conn"), ("OVL20", "conn")]


def read(name):
    try:
        with open(os.path.join(OUT, name)) as f:
            return f.read()
    except OSError:
        return None


def meta():
    m = {}
    for line in (read("suite.meta") or "").splitlines():
        k, _, v = line.partition("=")
        m[k] = v
    return m


def run(name):
    """(completions, errors, connections, cpu seconds) of run NAME, or None."""
    out, tm = read(name + ".out"), read(name + ".time")
    if out is None or tm is None:
        return None
    try:
        u, s = (float(x) for x in tm.split()[:2])
    except ValueError:
        return None
    t = re.search(r"Total: connections (\d+) requests (\d+) replies (\d+)", out)
    if t:
        e = re.search(r"Errors: total (\d+)", out)
        return int(t.group(3)), int(e.group(1)) if e else 0, int(t.group(1)), u + s
    f = re.search(r"completed=(\d+) errors=(\d+) connections=(\d+)", out)
    if f:
        return int(f.group(1)), int(f.group(2)), int(f.group(3)), u + s
    return None


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def fmt(x, spec="%.2f"):
    return "-" if x is None else spec % x


def main():
    m = meta()
    rounds = int(m.get("uring_rounds", "3") or 3)
    print("io_uring rows: knee %s conn/s, open loop at %s/s, %d rounds, medians; "
          "kernel %s, load average at the end %s" % (
              m.get("uring_knee", "?"), m.get("uring_rate", "?"), rounds,
              m.get("kernel", "?"), open("/proc/loadavg").read().split()[0]))
    print("floor_uring: -F %s; floor_best: -F %s" % (
        m.get("floor_rsh_features", "?"), m.get("floor_best_features", "?")))
    print()
    print("%-6s %-12s %10s %7s %12s" % ("row", "client", "completed", "errors", "cpu us/unit"))
    per = {}
    for row, unit in ROWS:
        for who in WHO:
            rs = [run("URING.%s.%s.%d" % (row, who, k)) for k in range(1, rounds + 1)]
            rs = [r for r in rs if r]
            if not rs:
                continue
            done = median([r[0] for r in rs])
            errs = median([r[1] for r in rs])
            cpu = median([r[3] * 1e6 / (r[2] if unit == "conn" else max(r[0], 1))
                          for r in rs if (r[2] if unit == "conn" else r[0]) > 0])
            per[(row, who)] = (done, errs, cpu)
            print("%-6s %-12s %10s %7s %12s  (%s: %s)" % (
                row, who, fmt(done, "%.0f"), fmt(errs, "%.0f"), fmt(cpu),
                unit, " ".join(fmt(r[3] * 1e6 / max(r[2] if unit == "conn" else r[0], 1))
                               for r in rs)))
    print()
    print("%-6s %14s %16s %14s %16s %16s" % (
        "row", "uring/epoll", "completed u/e", "epoll/floor", "uring/floor", "floor u/e"))
    for row, _ in ROWS:
        g = lambda who, i: per.get((row, who), (None,) * 3)[i]
        ratio = lambda a, b: None if a is None or not b else a / b
        print("%-6s %14s %16s %14s %16s %16s" % (
            row, fmt(ratio(g("uring", 2), g("epoll", 2))),
            fmt(ratio(g("uring", 0), g("epoll", 0))),
            fmt(ratio(g("epoll", 2), g("floor_epoll", 2))),
            fmt(ratio(g("uring", 2), g("floor_uring", 2))),
            fmt(ratio(g("floor_uring", 2), g("floor_epoll", 2)))))
    print()
    print("system calls per connection (strace -c -f, 2,000/s x 4,000 connections):")
    for who in WHO:
        text = read("URING.SYS.%s.strace" % who)
        if not text:
            continue
        total = re.search(r"^100\.00\s+\S+\s+\S+\s+(\d+)", text, re.M)
        top = []
        for line in text.splitlines()[2:]:
            f = line.split()
            if len(f) >= 5 and f[-1] != "total" and f[3].isdigit() and int(f[3]) >= 400:
                top.append("%s %.2f" % (f[-1], int(f[3]) / 4000))
        print("  %-12s %6s  (%s)" % (who, fmt(int(total.group(1)) / 4000 if total else None),
                                    ", ".join(top)))
    for r in (600, 5000):
        for who in ("epoll", "uring"):
            p = read("URING.PACE%d.%s.pacing" % (r, who))
            if p:
                print("PACE%d %s: %s" % (r, who, " ".join(p.split())[:300]))


if __name__ == "__main__":
    main()
