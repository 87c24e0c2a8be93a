#!/usr/bin/env python3
"""Where a traced command's kernel time went, per call: kernel_time.py TRACE CALLS

TRACE comes from bench/kernel_time.sh; CALLS is the number of requests the command
completed. Prints, per call, the system calls by time spent inside them (softirq
work a write does on loopback, such as delivering to the server's socket and waking
it, is inside), the softirqs and interrupts, page faults, context switches, the
wake-ups of other tasks the command caused, the inter-processor interrupts it sent,
and TCP retransmissions. Only events in the command's own threads count (the
trace holds the other side of a wake-up too).
"""

import collections
import re
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)$")
NAMES = {0: "read", 1: "write", 3: "close", 7: "poll", 20: "writev", 35: "nanosleep",
         41: "socket", 42: "connect", 44: "sendto", 45: "recvfrom", 46: "sendmsg",
         47: "recvmsg", 202: "futex", 230: "clock_nanosleep", 232: "epoll_wait",
         233: "epoll_ctl", 281: "epoll_pwait", 286: "timerfd_settime", 299: "recvmmsg",
         307: "sendmmsg", 441: "epoll_pwait2"}
# Blocking waits: their time is sleep, not work.
WAITS = {7, 35, 202, 230, 232, 281, 441}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    calls = float(sys.argv[2])
    own = set()
    inside = {}
    sys_t, sys_n = collections.Counter(), collections.Counter()
    soft_t, soft_n = collections.Counter(), collections.Counter()
    irq_t, irq_n = collections.Counter(), collections.Counter()
    open_soft, open_irq = {}, {}
    counts = collections.Counter()
    woken = collections.Counter()
    for line in open(sys.argv[1], errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, cpu, ts, ev, rest = m.groups()
        ts = float(ts)
        if ev == "sys_enter":
            own.add(pid)
            inside[pid] = (int(re.search(r"NR (\d+)", rest).group(1)), ts)
            continue
        if pid not in own:
            continue
        if ev == "sys_exit":
            nr = int(re.search(r"NR (-?\d+)", rest).group(1))
            if pid in inside and inside[pid][0] == nr:
                sys_t[nr] += ts - inside.pop(pid)[1]
                sys_n[nr] += 1
        elif ev == "softirq_entry":
            open_soft[cpu] = (re.search(r"action=(\w+)", rest).group(1), ts)
        elif ev == "softirq_exit" and cpu in open_soft:
            v, t0 = open_soft.pop(cpu)
            soft_t[v] += ts - t0
            soft_n[v] += 1
        elif ev.endswith("_entry"):
            open_irq[cpu] = (ev[: -len("_entry")], ts)
        elif ev.endswith("_exit") and cpu in open_irq:
            k, t0 = open_irq.pop(cpu)
            irq_t[k] += ts - t0
            irq_n[k] += 1
        elif ev == "sched_waking":
            woken[re.search(r"comm=(\S+)", rest).group(1)] += 1
        elif ev == "sched_switch" and f"prev_pid={pid} " in rest:
            counts["switches"] += 1
        else:
            counts[ev] += 1
    per = lambda x: x / calls
    print(f"per call ({calls:.0f} calls), kernel time in µs:")
    work = {nr: t for nr, t in sys_t.items() if nr not in WAITS}
    for nr, t in sorted(work.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {NAMES.get(nr, nr):16} {per(sys_n[nr]):6.2f} calls  {per(t) * 1e6:8.2f} µs"
              f"  ({t / sys_n[nr] * 1e6:.2f} µs each)")
    print(f"  {'all but waits':16} {'':13} {per(sum(work.values())) * 1e6:8.2f} µs")
    for v, t in soft_t.most_common(3):
        print(f"  softirq {v:8} {per(soft_n[v]):6.2f}        {per(t) * 1e6:8.2f} µs (within the above)")
    for k, t in irq_t.most_common(3):
        print(f"  irq {k:22} {per(irq_n[k]):6.2f}  {per(t) * 1e6:8.2f} µs")
    print(f"  page faults {per(counts['page_fault_user']):.3f}, context switches "
          f"{per(counts['switches']):.2f}, IPIs sent {per(counts['ipi_send_cpu']):.3f}, "
          f"TCP retransmissions {counts['tcp_retransmit_skb']:.0f}")
    others = ", ".join(f"{c} {per(n):.2f}" for c, n in woken.most_common(3))
    print(f"  wake-ups it caused: {others}")


if __name__ == "__main__":
    main()
