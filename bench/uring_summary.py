#!/usr/bin/env python3
"""Summary of bench/run.sh --uring-only (the URING.* runs in OUT).

For each row (NCO, NCC: a new connection per request; KA: keep-alive; CR: a call
rate; OVL15/OVL20: 1.5x and 2x the knee) and each client (rshperf --io epoll and
--io uring, floor_epoll, floor_uring with rshperf's features, floor_uring with all
of them): the median over rounds of the completions, errors, rate and CPU (user +
system of the whole process, bench/rusage.py) and wake-ups (its voluntary context
switches) per connection (NC*, OVL*) or per request (KA, CR), the machine's busy
share during the runs, then the ratios the targets are about: uring / epoll, and
rshperf / its backend's floor. Then the pacing
rows (SYN schedule and gap deviation, medians over rounds) and system calls per
connection (strace -c -f).

usage: uring_summary.py OUT
"""
import json
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


def kv(text):
    m = {}
    for line in (text or "").splitlines():
        k, _, v = line.partition("=")
        m[k] = v
    return m


def run(name):
    """(completions, errors, connections, cpu s, rate/s, busy %, wake-ups) of run
    NAME (wake-ups None when rusage.py did not record them)."""
    out, tm = read(name + ".out"), read(name + ".time")
    if out is None or tm is None:
        return None
    try:
        u, s = (float(x) for x in tm.split()[:2])
        wall = float(tm.split()[3])
    except (ValueError, IndexError):
        return None
    f = tm.split()
    wakes = int(f[4]) if len(f) > 4 and f[4].isdigit() else None
    busy = kv(read(name + ".meta")).get("machine_busy_pct")
    busy = float(busy) if busy else None
    t = re.search(r"Total: connections (\d+) requests (\d+) replies (\d+) test-duration ([\d.]+)", out)
    if t:
        e = re.search(r"Errors: total (\d+)", out)
        done, dur = int(t.group(3)), float(t.group(4))
        return (done, int(e.group(1)) if e else 0, int(t.group(1)), u + s,
                done / dur if dur > 0 else None, busy, wakes)
    f = re.search(r"completed=(\d+) errors=(\d+) connections=(\d+) wall_s=([\d.]+)", out)
    if f:
        done, dur = int(f.group(1)), float(f.group(4))
        return (done, int(f.group(2)), int(f.group(3)), u + s,
                done / dur if dur > 0 else None, busy, wakes)
    return None


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def fmt(x, spec="%.2f"):
    return "-" if x is None else spec % x


def ratio(a, b):
    return None if a is None or not b else a / b


def main():
    m = kv(read("suite.meta"))
    rounds = int(m.get("uring_rounds", "3") or 3)
    print("io_uring rows: knee %s conn/s (open loop at %s/s), %s connections per new-"
          "connection run, %d rounds, medians; kernel %s; load average %s at the start, "
          "%s at the end" % (
              m.get("uring_knee", "?"), m.get("uring_rate", "?"), m.get("uring_nc_n", "?"),
              rounds, m.get("kernel", "?"), m.get("loadavg_start", "?"),
              m.get("loadavg_end", "?")))
    print("floor_uring: -F %s; floor_best: -F %s" % (
        m.get("floor_rsh_features", "?"), m.get("floor_best_features", "?")))
    print()
    print("%-6s %-12s %10s %7s %10s %12s %10s %6s  %s" % (
        "row", "client", "completed", "errors", "rate/s", "cpu us/unit", "wake/unit",
        "busy%", "cpu per round"))
    per = {}
    for row, unit in ROWS:
        for who in WHO:
            rs = [run("URING.%s.%s.%d" % (row, who, k)) for k in range(1, rounds + 1)]
            rs = [r for r in rs if r]
            if not rs:
                continue
            units = lambda r: r[2] if unit == "conn" else r[0]
            cpus = [r[3] * 1e6 / units(r) if units(r) else None for r in rs]
            wakes = [r[6] / units(r) if units(r) and r[6] is not None else None
                     for r in rs]
            per[(row, who)] = (median([r[0] for r in rs]), median([r[1] for r in rs]),
                               median(cpus), median([r[4] for r in rs]), median(wakes))
            done, errs, cpu, rate, wake = per[(row, who)]
            print("%-6s %-12s %10s %7s %10s %12s %10s %6s  (%s: %s)" % (
                row, who, fmt(done, "%.0f"), fmt(errs, "%.0f"), fmt(rate, "%.0f"),
                fmt(cpu), fmt(wake, "%.3f"), fmt(median([r[5] for r in rs]), "%.0f"),
                unit, " ".join(fmt(c) for c in cpus)))
    print()
    print("%-6s %8s %10s %14s %10s %12s %12s %10s %12s" % (
        "row", "cpu u/e", "wake u/e", "completed u/e", "rate u/e", "epoll/floor",
        "uring/floor", "floor u/e", "best/f_epoll"))
    for row, _ in ROWS:
        g = lambda who, i: per.get((row, who), (None,) * 5)[i]
        print("%-6s %8s %10s %14s %10s %12s %12s %10s %12s" % (
            row, fmt(ratio(g("uring", 2), g("epoll", 2))),
            fmt(ratio(g("uring", 4), g("epoll", 4))),
            fmt(ratio(g("uring", 0), g("epoll", 0)), "%.3f"),
            fmt(ratio(g("uring", 3), g("epoll", 3)), "%.3f"),
            fmt(ratio(g("epoll", 2), g("floor_epoll", 2))),
            fmt(ratio(g("uring", 2), g("floor_uring", 2))),
            fmt(ratio(g("floor_uring", 2), g("floor_epoll", 2))),
            fmt(ratio(g("floor_best", 2), g("floor_epoll", 2)))))
    print()
    print("pacing: SYN schedule and gap deviation, us (medians over rounds of p50/p99/p99.9)")
    pace = {}
    for r in (600, 5000):
        for who in ("epoll", "uring"):
            docs = []
            for k in range(1, rounds + 1):
                try:
                    docs.append(json.loads(read("URING.PACE%d.%s.%d.pacing.json" % (r, who, k))))
                except (TypeError, ValueError):
                    pass
            if not docs:
                continue
            q = lambda key, p: median([d[key][p] for d in docs])
            pace[(r, who)] = (q("sched_dev_us", "99"), q("gap_dev_us", "99"))
            print("  PACE%-5d %-6s n %5s rate err %+.3f%%  schedule %s/%s/%s  gap %s/%s/%s" % (
                r, who, fmt(median([d["n"] for d in docs]), "%.0f"),
                median([d["rate_err_pct"] for d in docs]),
                fmt(q("sched_dev_us", "50"), "%.1f"), fmt(q("sched_dev_us", "99"), "%.1f"),
                fmt(q("sched_dev_us", "99.9"), "%.1f"), fmt(q("gap_dev_us", "50"), "%.1f"),
                fmt(q("gap_dev_us", "99"), "%.1f"), fmt(q("gap_dev_us", "99.9"), "%.1f")))
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
    print()
    verdicts(per, pace)


def verdicts(per, pace):
    """Each target against the medians: pass, fail, or - (not measured)."""
    g = lambda row, who, i: per.get((row, who), (None,) * 5)[i]

    def say(what, ok):
        print("  %-4s %s" % ("-" if ok is None else ("pass" if ok else "fail"), what))

    def both(x, y, test):
        return None if x is None or y is None else test(x, y)

    print("targets (medians; a rate is equal within 1 %):")
    for row in ("NCO", "NCC"):
        c, d = ratio(g(row, "uring", 2), g(row, "epoll", 2)), ratio(g(row, "uring", 0), g(row, "epoll", 0))
        say("%s uring CPU/conn <= 0.75x epoll's (%s), completions >= epoll's (%s)"
            % (row, fmt(c), fmt(d, "%.3f")), both(c, d, lambda c, d: c <= 0.75 and d >= 1))
    for row in ("KA", "CR"):
        c, r = ratio(g(row, "uring", 2), g(row, "epoll", 2)), ratio(g(row, "uring", 3), g(row, "epoll", 3))
        say("%s uring CPU/request <= 0.75x epoll's (%s) at an equal or higher rate (%s)"
            % (row, fmt(c), fmt(r, "%.3f")), both(c, r, lambda c, r: c <= 0.75 and r >= 0.99))
    for row in ("OVL15", "OVL20"):
        d, e = ratio(g(row, "uring", 0), g(row, "epoll", 0)), g(row, "uring", 1)
        say("%s uring completions >= epoll's (%s), 0 errors (%s)" % (row, fmt(d, "%.3f"), fmt(e, "%.0f")),
            both(d, e, lambda d, e: d >= 1 and e == 0))
    for r in (600, 5000):
        u, e = pace.get((r, "uring")), pace.get((r, "epoll"))
        ok = None if not u or not e or None in u + e else u[0] <= e[0] and u[1] <= e[1]
        say("PACE%d uring schedule and gap p99 <= epoll's (%s/%s us against %s/%s)" % (
            r, fmt(u and u[0], "%.0f"), fmt(u and u[1], "%.0f"), fmt(e and e[0], "%.0f"),
            fmt(e and e[1], "%.0f")), ok)
    for row in ("NCO", "NCC", "KA"):
        for who, floor in (("epoll", "floor_epoll"), ("uring", "floor_uring")):
            x = ratio(g(row, who, 2), g(row, floor, 2))
            say("%s %s CPU within 1.15x of %s (%s)" % (row, who, floor, fmt(x)),
                None if x is None else x <= 1.15)


if __name__ == "__main__":
    main()
