#!/usr/bin/env python3
"""Run httperf and rshperf with the same arguments and compare what they print.

    scripts/compare.py [--rshperf PATH] [--keep DIR] -- HTTPERF-ARGS...

Prints `exit status: httperf X, rshperf Y`, one `MISMATCH: ...` line per difference
and, last, `compat: ok` or `compat: N mismatches`; exits 0 when they agree.

They agree when the exit statuses are equal, the echo lines are equal after the
program name, the reports have the same skeleton (the sequence of report lines and
blank lines with every number masked), and every figure that does not depend on
timing is equal: connection, request and reply counts, sizes, replies per
connection, status classes, error counters and session counts. Rates and times are
not compared. Both outputs are kept in DIR (default /tmp/rshperf-compare).
Needs httperf (apt-get install -y httperf) and a server to aim at (scripts/nginx.sh).
"""
import os
import re
import subprocess
import sys

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")

# Report lines by label, and which of their numbers do not depend on timing
# (None: all of them; a range: those positions).
REPORT = [
    ("Maximum connect burst length:", ()),
    ("Total:", range(0, 3)),
    ("Connection rate:", ()),
    ("Connection time [ms]:", ()),
    ("Connection length [replies/conn]:", None),
    ("Request rate:", ()),
    ("Request size [B]:", None),
    ("Reply rate [replies/s]:", ()),
    ("Reply time [ms]:", ()),
    ("Reply size [B]:", None),
    ("Reply status:", "status"),
    ("Periodic stats:", ()),
    ("CPU time [s]:", ()),
    ("Net I/O:", ()),
    ("Errors:", None),
    ("Session rate [sess/s]:", "sessions"),
    ("Session:", None),
    ("Session lifetime [s]:", ()),
    ("Session failtime [s]:", ()),
    ("Session length histogram:", None),
]


def exact_figures(label, rest, which):
    """The timing-independent numbers of one report line."""
    if which == "status":
        return re.findall(r"=(\d+)", rest)
    if which == "sessions":
        return re.findall(r"\((\d+/\d+)\)", rest)
    numbers = NUMBER.findall(rest)
    if which is None:
        return numbers
    return [numbers[i] for i in which if i < len(numbers)]


def digest(text):
    """(echo line after the program name, skeleton, exact figures) of one output."""
    echo, skeleton, figures = None, [], []
    for line in text.splitlines():
        if echo is None and re.match(r"^\S*(?:httperf|rshperf) ", line):
            echo = line.split(" ", 1)[1]
            continue
        if line == "":
            skeleton.append("")
            continue
        for label, which in REPORT:
            if line.startswith(label):
                rest = line[len(label):]
                skeleton.append(label + NUMBER.sub("#", rest))
                figures += [(label, f) for f in exact_figures(label, rest, which)]
                break
    return echo, skeleton, figures


def run(cmd, out_path):
    with open(out_path, "w") as out, open(out_path + ".err", "w") as err:
        return subprocess.run(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL).returncode


def main(argv):
    binary = os.environ.get("RSHPERF", "target/release/rshperf")
    keep = os.environ.get("OUT_DIR", "/tmp/rshperf-compare")
    while argv and argv[0] != "--":
        if argv[0] == "--rshperf" and len(argv) > 1:
            binary, argv = argv[1], argv[2:]
        elif argv[0] == "--keep" and len(argv) > 1:
            keep, argv = argv[1], argv[2:]
        else:
            print(__doc__, file=sys.stderr)
            return 2
    args = argv[1:]
    os.makedirs(keep, exist_ok=True)
    ref, cand = os.path.join(keep, "httperf.out"), os.path.join(keep, "rshperf.out")
    try:
        hs = run(["httperf"] + args, ref)
    except FileNotFoundError:
        print("httperf is not installed (apt-get install -y httperf)", file=sys.stderr)
        return 2
    rs = run([binary] + args, cand)
    print("exit status: httperf %d, rshperf %d (outputs in %s)" % (hs, rs, keep))
    problems = []
    if hs != rs:
        problems.append("exit status differs")
    (e1, s1, f1), (e2, s2, f2) = (digest(open(p).read()) for p in (ref, cand))
    if e1 != e2:
        problems.append("echo line differs:\n  httperf: %s\n  rshperf: %s" % (e1, e2))
    if s1 != s2:
        for i, (a, b) in enumerate(zip(s1 + [None] * len(s2), s2 + [None] * len(s1))):
            if a != b:
                problems.append("report line %d differs:\n  httperf: %r\n  rshperf: %r" % (i, a, b))
                break
    if s1 == s2 and f1 != f2:
        for (label, a), (_, b) in zip(f1, f2):
            if a != b:
                problems.append("%s httperf %s, rshperf %s" % (label, a, b))
    for p in problems:
        print("MISMATCH:", p)
    print("compat: %s" % ("ok" if not problems else "%d mismatches" % len(problems)))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
