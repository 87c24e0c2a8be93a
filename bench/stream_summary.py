#!/usr/bin/env python3
"""Prints the streaming rows of `bench/run.sh --stream-only` from its output directory:
SCALE (10,000 open streams), CURL (CPU per event beside curl) and OPEN (time to first
event from the schedule against the call rate), each round and the medians.

usage: stream_summary.py [DIR]   (default /tmp/rshperf-bench)
"""
import json
import os
import re
import statistics
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/rshperf-bench"


def read(name):
    path = os.path.join(OUT, name)
    return open(path).read() if os.path.exists(path) else ""


def meta():
    m = {}
    for line in read("suite.meta").splitlines():
        k, _, v = line.partition("=")
        m[k] = v
    return m


def usage(name):
    """(user s, system s, max RSS KiB, wall s) of a run, or None."""
    f = read(name + ".time").split()
    return (float(f[0]), float(f[1]), int(f[2]), float(f[3])) if len(f) >= 4 else None


def stream_line(text):
    """The nine numbers of the report's Stream: line, or None."""
    m = re.search(r"^Stream: (\d+) streams (\d+) events \(([\d.]+) per stream\) done (\d+) "
                  r"cut (\d+) stalled (\d+) empty (\d+) after-done (\d+) open-at-end (\d+)",
                  text, re.M)
    return [float(x) for x in m.groups()] if m else None


def errors(text):
    m = re.search(r"^Errors: total (\d+)", text, re.M)
    return int(m.group(1)) if m else -1


def concurrent(text):
    m = re.search(r"<=(\d+) concurrent connections", text)
    return int(m.group(1)) if m else 0


def med(xs):
    return statistics.median(xs) if xs else float("nan")


m = meta()
rounds = int(m.get("stream_rounds", "3"))
print("streaming rows, %s, rounds %d, load average %s -> %s" % (
    m.get("date", "?"), rounds, m.get("loadavg_start", "?"), m.get("loadavg_end", "?")))

# ------------------------------------------------------------------ SCALE
per, steady, rss, ok_all = [], [], [], True
for k in range(1, rounds + 1):
    name = "STREAM.SCALE.%d" % k
    text, u = read(name + ".out"), usage(name)
    s = stream_line(text)
    if not (u and s):
        print("  SCALE %d: no result (see %s/%s.err)" % (k, OUT, name))
        ok_all = False
        continue
    events, cut = s[1], s[4]
    cpu_us = 1e6 * (u[0] + u[1]) / events if events else float("inf")
    samples = [line.split() for line in read(name + ".samples").splitlines()]
    st = float("nan")
    if len(samples) == 2 and all(len(x) == 3 for x in samples):
        dt = float(samples[1][0]) - float(samples[0][0])
        ticks = float(samples[1][1]) - float(samples[0][1])
        st = 1e6 * ticks / 100 / (s[0] * dt)  # s[0] streams, one event a second each
    ok = errors(text) == 0 and cut == 0 and u[2] <= 64 * 1024 and cpu_us <= 3.0
    ok_all &= ok
    per.append(cpu_us)
    steady.append(st)
    rss.append(u[2])
    print("  SCALE %d: %d streams, %d at once, %d events, errors %d, cut %d, CPU %.2f s "
          "(user %.2f sys %.2f) = %.2f us/event, steady %.2f us/event, max RSS %.1f MiB  %s" % (
              k, s[0], concurrent(text), events, errors(text), cut, u[0] + u[1], u[0], u[1],
              cpu_us, st, u[2] / 1024, "pass" if ok else "FAIL"))
print("  SCALE median: %.2f us/event (steady %.2f), max RSS %.1f MiB  %s" % (
    med(per), med(steady), med(rss) / 1024, "PASS" if ok_all and per else "FAIL"))
# The C floor: floor_epoll -m stream, the same streams, nothing but reading them.
floor = []
for k in range(1, rounds + 1):
    text, u = read("STREAM.SCALE.floor.%d.out" % k), usage("STREAM.SCALE.floor.%d" % k)
    ev = re.search(r"^events=(\d+)", text, re.M)
    done = re.search(r"^completed=(\d+) errors=(\d+)", text, re.M)
    if not (u and ev and done and int(ev.group(1))):
        continue
    floor.append(1e6 * (u[0] + u[1]) / int(ev.group(1)))
    print("  SCALE %d floor_epoll: %s streams, errors %s, %s events, CPU %.2f s (user %.2f sys %.2f) "
          "= %.2f us/event, max RSS %.1f MiB" % (k, done.group(1), done.group(2), ev.group(1),
                                                 u[0] + u[1], u[0], u[1], floor[-1], u[2] / 1024))
if floor and per:
    print("  SCALE floor median: %.2f us/event; rshperf / floor %.2f" % (med(floor), med(per) / med(floor)))

# ------------------------------------------------------------------ CURL
n_events = int(m.get("curl_events", "10000"))
rsh, crl = [], []
for k in range(1, rounds + 1):
    text, u = read("STREAM.CURL.rsh.%d.out" % k), usage("STREAM.CURL.rsh.%d" % k)
    s = stream_line(text)
    if u and s and s[1]:
        rsh.append(1e6 * (u[0] + u[1]) / s[1])
        print("  CURL %d rshperf: %d events, errors %d, cut %d, CPU %.3f s = %.3f us/event" % (
            k, s[1], errors(text), s[4], u[0] + u[1], rsh[-1]))
    lines = read("STREAM.CURL.curl.%d.out" % k).splitlines()
    u = usage("STREAM.CURL.curl.%d" % k)
    codes = [x for x in lines if not x.startswith("rc ")]
    rcs = [x for x in lines if x.startswith("rc ")]
    sizes = {x.split()[1] for x in codes}
    good = (len(codes) == 50 and all(x.startswith("200 ") for x in codes)
            and rcs == ["rc 0"] * 50 and len(sizes) == 1)
    if u and good:
        events = 50 * n_events
        crl.append(1e6 * (u[0] + u[1]) / events)
        print("  CURL %d curl x50: %d events (%s bytes each), CPU %.3f s = %.3f us/event" % (
            k, events, sizes.pop(), u[0] + u[1], crl[-1]))
    else:
        print("  CURL %d curl: incomplete (%d replies, %s)" % (k, len(codes), sorted(set(rcs))))
if rsh and crl:
    ratio = med(rsh) / med(crl)
    print("  CURL median: rshperf %.3f us/event, curl %.3f us/event, ratio %.3f (rounds %s)  %s" % (
        med(rsh), med(crl), ratio,
        " ".join("%.3f" % (a / b) for a, b in zip(rsh, crl)), "PASS" if ratio <= 0.25 else "FAIL"))

# ------------------------------------------------------------------ OPEN
# Little's law estimate: a stream lasts L = L0 + per * n (L0 = first + 9 gaps), n = R * L
# streams are open, so n = R * L0 / (1 - R * per) and the first event comes first + per * n
# after the call's scheduled time (the server's own delays only; no network, no client).
FIRST, L0, PER = 20.0, 110.0, 2.0
print("  OPEN: --call-rate R, /stream?events=10&first=20ms&gap=10ms&first_per_open=2ms")
print("  %6s | %9s | %22s | %22s | %8s | %s" % (
    "rate", "estimate", "TTFT p50 ms (rounds)", "TTFT p99 ms (rounds)", "errors", "med p50 / p99"))
for r in m.get("open_rates", "").split():
    p50, p99, errs, sched = [], [], [], True
    for k in range(1, rounds + 1):
        try:
            doc = json.loads(read("STREAM.OPEN.%s.%d.json" % (r, k)))
        except ValueError:
            continue
        fe = doc["stream"]["first_event_ms"]
        sched &= bool(doc["stream"].get("from_schedule"))
        p50.append(fe["p50"])
        p99.append(fe["p99"])
        errs.append(errors(read("STREAM.OPEN.%s.%d.out" % (r, k))))
    rate = float(r) / 1000.0
    est = FIRST + PER * rate * L0 / (1 - rate * PER) if rate * PER < 1 else float("inf")
    print("  %6s | %9.1f | %22s | %22s | %8s | %.1f / %.1f%s" % (
        r, est, " ".join("%.1f" % x for x in p50), " ".join("%.1f" % x for x in p99),
        " ".join(str(e) for e in errs), med(p50), med(p99), "" if sched else " (NOT from schedule)"))
