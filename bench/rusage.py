#!/usr/bin/env python3
"""Runs a command and writes its resource use as /usr/bin/time -f '%U %S %M %e %w %c'
would, but with user and system CPU to the microsecond (the rusage of the child and
its waited-for descendants: every thread, io_uring's workers included). %w, the
voluntary context switches, counts the times the command slept and was woken.

usage: rusage.py OUTFILE COMMAND [ARG...]   (exits with the command's status)
"""
import resource
import subprocess
import sys
import time

t0 = time.monotonic()
rc = subprocess.call(sys.argv[2:])
wall = time.monotonic() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write("%.6f %.6f %d %.3f %d %d\n" % (r.ru_utime, r.ru_stime, r.ru_maxrss, wall,
                                           r.ru_nvcsw, r.ru_nivcsw))
sys.exit(rc if rc >= 0 else 128 - rc)
