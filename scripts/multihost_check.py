#!/usr/bin/env python3
"""Checks of scripts/multihost.sh (test support).

  multihost_check.py run NAME LOG FIRST_LINE START RATE CONNS K SINGLE.json MERGED.json
                         SINGLE_FIRST_LINE
      the merged run's counters equal the single-machine run's; nginx's access log
      (lines after FIRST_LINE, "$msec $remote_addr $request_uri $status") shows client
      198.18.0.(I+2) with exactly its share of the arrivals, at its share of the rate;
      arrival k came from partition k mod K: every partition's arrivals sit in their
      slots START + k / RATE (their median offsets agree within half a gap plus 1 ms),
      and the deviation from the schedule (median, and p99 unless MULTIHOST_TAILS=show)
      is within that tolerance of the one measured for the single-machine run (from
      SINGLE_FIRST_LINE).
  multihost_check.py sweep NAME MERGED.json SINGLE.json K
      the merged sweep has the single-machine sweep's steps, rates, counters, verdicts.
Prints one line per check; exit status 1 on the first that fails.
"""
import json
import os
import statistics
import sys

# Counters that the same workload makes identical wherever it runs.
COUNTERS = ["connections", "connects", "requests", "request_bytes", "replies_by_class",
            "status_200_302", "responses", "reply_header_bytes", "reply_content_bytes",
            "errors"]


def fail(msg):
    print(f"multihost: FAIL: {msg}")
    sys.exit(1)


def same_counters(what, a, b):
    for key in COUNTERS:
        if a["raw"][key] != b["raw"][key]:
            fail(f"{what}: raw.{key} {a['raw'][key]} (merged) vs {b['raw'][key]} (single)")
    print(f"{what}: merged counters equal the single-machine run's "
          f"({a['raw']['connections']} connections, {a['raw']['responses']} replies)")


def share(total, i, n):
    return (total - i + n - 1) // n if total > i else 0


def log_lines(log, first, count):
    """(time, partition) of `count` access-log lines after line `first`."""
    lines = []
    with open(log) as f:
        for n, line in enumerate(f):
            if first <= n < first + count:
                msec, addr, _uri, _status = line.split()
                lines.append((float(msec), int(addr.rsplit(".", 1)[1]) - 2))
    return lines


def offsets_of(lines, start, rate, k):
    """Per partition: log time - scheduled time of its arrivals (its j-th request is
    global arrival i + j k, due at start + (i + j k) / rate)."""
    per = []
    for i in range(k):
        times = sorted(t for t, p in lines if p == i)
        per.append([t - (start + (i + j * k) / rate) for j, t in enumerate(times)])
    return per


def spread(offsets):
    mid = statistics.median(offsets)
    dev = sorted(abs(o - mid) for o in offsets)
    return mid, dev[int(0.99 * (len(dev) - 1))], dev[-1]


def run(name, log, first, start, rate, conns, k, single, merged, single_first):
    first, start, rate, conns, k = int(first), float(start), float(rate), int(conns), int(k)
    with open(merged) as f:
        m = json.load(f)
    with open(single) as f:
        s = json.load(f)
    same_counters(f"{name} run", m, s)
    lines = log_lines(log, first, 10 * conns)
    if len(lines) != conns:
        fail(f"{name}: {len(lines)} requests in the access log, expected {conns}")
    span = conns / rate
    for i in range(k):
        got = sum(1 for _, p in lines if p == i)
        want = share(conns, i, k)
        if got != want:
            fail(f"{name}: 198.18.0.{i + 2} made {got} requests, its share is {want}")
        print(f"{name}: 198.18.0.{i + 2} made {got} requests = its share "
              f"({got / span:.1f}/s of {rate:.0f}/s)")
    # The noise of the stamps, measured: the single-machine run of the same workload
    # (one client, so no interleaving to get wrong), against its own start.
    ref = log_lines(log, int(single_first), conns)
    ref_mid, ref_p99, ref_max = spread(offsets_of(ref, s["start"]["unix"], rate, 1)[0])
    starts = []
    for i in range(k):
        with open(merged.replace("merged.json", f"part-{i}.json")) as f:
            starts.append(json.load(f)["start"]["unix"] - start)
    print(f"{name}: the partitions started {[round(x * 1000, 1) for x in starts]} ms "
          f"after --start-at")
    per = offsets_of(lines, start, rate, k)
    mid, p99, worst = spread([o for p in per for o in p])
    medians = [statistics.median(p) for p in per]
    # Arrival k is from partition k mod K when every partition sits in its own slots:
    # the partitions' median offsets agree within half the gap between arrivals plus
    # $msec's 1 ms resolution (a partition off by one slot would differ by a whole gap).
    tol = 0.5 / rate + 0.001
    apart = max(medians) - min(medians)
    order = sorted(lines)
    inorder = sum(1 for n, (_, p) in enumerate(order) if p == n % k)
    print(f"{name}: schedule: log time - scheduled time: median {mid * 1000:.1f} ms, "
          f"partitions' medians {[round(x * 1000, 1) for x in medians]} ms "
          f"(apart {apart * 1000:.1f} ms, tolerance {tol * 1000:.1f} ms); |deviation| p99 "
          f"{p99 * 1000:.1f} ms, max {worst * 1000:.1f} ms (one machine: median "
          f"{ref_mid * 1000:.1f} ms, p99 "
          f"{ref_p99 * 1000:.1f} ms, max {ref_max * 1000:.1f} ms); in the log's order, "
          f"arrival k from partition k mod {k}: {inorder}/{len(order)}")
    if apart > tol:
        fail(f"{name}: the partitions' arrivals are {apart * 1000:.1f} ms off their slots")
    # And the slots are the global schedule's: the partitions' arrivals lie no later
    # after their moments than the single machine's after its own.
    if mid - ref_mid > tol:
        fail(f"{name}: arrivals {mid * 1000:.1f} ms after their moments, one machine's "
             f"{ref_mid * 1000:.1f} ms")
    # The tail too: spreading the schedule over machines adds no more than the same
    # tolerance to the single machine's p99 (quiet machine: p99 1-2 ms against one
    # machine's 1 ms). MULTIHOST_TAILS=show prints it without judging, for a run
    # that shares its machine with other load (the cargo test beside other tests).
    if os.environ.get("MULTIHOST_TAILS", "judge") != "show" and p99 - ref_p99 > tol:
        fail(f"{name}: |deviation| p99 {p99 * 1000:.1f} ms, one machine's "
             f"{ref_p99 * 1000:.1f} ms + tolerance {tol * 1000:.1f} ms")


def sweep(name, merged, single, k):
    with open(merged) as f:
        m = json.load(f)
    with open(single) as f:
        s = json.load(f)
    if m.get("format") != "rshperf-sweep" or len(m["steps"]) != len(s["steps"]):
        fail(f"{name} sweep: {len(m.get('steps', []))} merged steps vs {len(s['steps'])}")
    for a, b in zip(m["steps"], s["steps"]):
        if a["rate"] != b["rate"] or a["verdict"] != b["verdict"]:
            fail(f"{name} sweep: step {a['step']}: {a['rate']} {a['verdict']} vs "
                 f"{b['rate']} {b['verdict']}")
        if len(a["run"]["run"]["merged_from"]) != int(k):
            fail(f"{name} sweep: step {a['step']} merged {a['run']['run']['merged_from']}")
        same_counters(f"{name} sweep step {a['step']} at {a['rate']:g}/s", a["run"], b["run"])
    print(f"{name} sweep: {len(m['steps'])} steps, verdicts "
          f"{[x['verdict'] for x in m['steps']]} as the single-machine sweep; "
          f"{m['result']['conclusion']}")


if __name__ == "__main__":
    {"run": run, "sweep": sweep}[sys.argv[1]](*sys.argv[2:])
