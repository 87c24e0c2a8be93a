#!/usr/bin/env python3
"""Accuracy of a linear --rate-profile ramp on the wire, from SYN timestamps.

usage: ramp_accuracy.py FROM TO SECONDS WIN FILE.pcap [FILE.pcap ...]

Reads the connection-initiating SYNs of the pcaps (bench/syn_pacing.py's reader;
only SYNs whose TCP window field is WIN: run the client with an unusual
--recv-buffer so that other programs' SYNs to the same port are left out; several
files: the partitions of one run, merged), fits the schedule's t0 as the median of
t_k − Λ⁻¹(k) over the SYNs in time order (the first SYN alone carries its own
lateness: the first connect of a run is slower) and compares the SYNs in each 100-ms interval with the ramp's integral over it,
Λ(b) − Λ(a) with Λ(t) = FROM·t + (TO − FROM)·t²/(2·SECONDS).

Prints the total (the ramp's integral is its exact arrival count with deterministic
spacing), the intervals within 2 % of their target, the worst relative error and
where it is.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from syn_pacing import syns  # noqa: E402


def main():
    if len(sys.argv) < 6:
        raise SystemExit(__doc__)
    lo, hi, secs, win = (float(a) for a in sys.argv[1:5])
    times = []
    for path in sys.argv[5:]:
        got, _, _ = syns(path, int(win))
        times.extend(got)
    times.sort()
    a = (hi - lo) / (2 * secs)

    def inverse(k):
        # Λ⁻¹(k): the scheduled second of arrival k (deterministic spacing).
        return k / lo if a == 0 else (-lo + (lo * lo + 4 * a * k) ** 0.5) / (2 * a)

    offsets = sorted(ns - inverse(k) * 1e9 for k, ns in enumerate(times))
    t0 = offsets[len(offsets) // 2]

    def lam(t):
        t = min(max(t, 0.0), secs)
        return lo * t + (hi - lo) * t * t / (2 * secs)

    bins = int(round(secs * 10))
    counts = [0] * bins
    for ns in times:
        i = int((ns - t0) / 1e8)
        if 0 <= i < bins:
            counts[i] += 1
    within, worst, at = 0, 0.0, 0
    for i, n in enumerate(counts):
        want = lam((i + 1) / 10) - lam(i / 10)
        err = abs(n - want) / want
        within += err <= 0.02
        if err > worst:
            worst, at = err, i
    print(
        "total %d (integral %.0f), %d of %d intervals within 2 %%, worst %.1f %% at %d ms"
        % (len(times), lam(secs), within, bins, worst * 100, at * 100)
    )


if __name__ == "__main__":
    main()
