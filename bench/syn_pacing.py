#!/usr/bin/env python3
"""Pacing analysis of connection-initiating SYNs in a pcap (P4).

usage: syn_pacing.py FILE.pcap PERIOD_US [--win W] [--json]

Reads a classic pcap (micro- or nanosecond timestamps, Ethernet link type as
tcpdump writes it for `lo`), keeps IPv4/TCP packets with SYN set and ACK clear,
drops retransmitted SYNs (same source port *and* same initial sequence number
as an earlier SYN: a new connection on a reused port has a new ISN), sorts the
first transmissions by time (with --win W only SYNs whose TCP window field is
W: run the client with an unusual --recv-buffer so that SYNs of other programs
on the shared machine, which also talk to port 8080, are left out) and compares them with the ideal absolute schedule

    t_k = t_0 + k * PERIOD        (k = 0 .. n-1, in capture order)

t_0 is fitted as the MEDIAN of (t_k - k*PERIOD) -- the nominal period is kept,
so a rate error shows up as a growing schedule deviation.  For reference the
least-squares fit (free slope *and* intercept) is also printed.

Reported:
  n, duration, achieved rate = (n-1)/(t_last - t_first)
  abs schedule deviation |t_k - t_0 - k*PERIOD|: p50 p90 p99 p99.9 max
  gap deviation |(t_{k+1} - t_k) - PERIOD|: p50 p90 p99 p99.9 max
  least-squares: fitted period, residual p99
"""
import json
import struct
import sys


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise SystemExit("pcap too short")
    magic = struct.unpack("<I", data[:4])[0]
    if magic == 0xA1B2C3D4:
        endian, scale = "<", 1e-6
    elif magic == 0xA1B23C4D:
        endian, scale = "<", 1e-9
    elif magic == 0xD4C3B2A1:
        endian, scale = ">", 1e-6
    elif magic == 0x4D3CB2A1:
        endian, scale = ">", 1e-9
    else:
        raise SystemExit("not a classic pcap file (pcapng?)")
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    off = 24
    hdr = struct.Struct(endian + "IIII")
    while off + 16 <= len(data):
        sec, frac, incl, _orig = hdr.unpack_from(data, off)
        off += 16
        pkt = data[off:off + incl]
        off += incl
        yield sec, frac, scale, linktype, pkt


def syns(path, win=None):
    seen = set()
    out = []
    retrans = 0
    foreign = 0
    for sec, frac, scale, linktype, pkt in read_pcap(path):
        if linktype == 1:          # Ethernet
            if len(pkt) < 14 or pkt[12:14] != b"\x08\x00":
                continue
            ip = pkt[14:]
        elif linktype == 113:      # Linux cooked
            if len(pkt) < 16 or pkt[14:16] != b"\x08\x00":
                continue
            ip = pkt[16:]
        elif linktype in (0, 12, 101):  # null / raw
            ip = pkt[4:] if linktype == 0 else pkt
        else:
            raise SystemExit("unsupported link type %d" % linktype)
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        tcp = ip[ihl:]
        if len(tcp) < 16:
            continue
        flags = tcp[13]
        if not (flags & 0x02) or (flags & 0x10):
            continue
        if win is not None and struct.unpack("!H", tcp[14:16])[0] != win:
            foreign += 1
            continue
        sport = struct.unpack("!H", tcp[0:2])[0]
        seq = struct.unpack("!I", tcp[4:8])[0]
        key = (sport, seq)
        if key in seen:
            retrans += 1
            continue
        seen.add(key)
        # integer nanoseconds to keep precision
        ns = sec * 1_000_000_000 + (frac if scale == 1e-9 else frac * 1000)
        out.append(ns)
    out.sort()
    return out, retrans, foreign


def pct(sorted_vals, p):
    if not sorted_vals:
        return float("nan")
    i = min(len(sorted_vals) - 1, max(0, int(round(p / 100.0 * (len(sorted_vals) - 1)))))
    return sorted_vals[i]


def analyse(path, period_us, win=None):
    ts, retrans, foreign = syns(path, win)
    n = len(ts)
    res = {"file": path, "n": n, "retransmitted_syns": retrans, "foreign_syns": foreign,
           "period_us": period_us}
    if n < 3:
        return res
    P = period_us * 1000.0  # ns
    t0 = ts[0]
    rel = [t - t0 for t in ts]               # ns, relative (float-safe)
    offs = sorted(r - k * P for k, r in enumerate(rel))
    t0_med = offs[n // 2] if n % 2 else 0.5 * (offs[n // 2 - 1] + offs[n // 2])
    dev = sorted(abs(r - k * P - t0_med) / 1000.0 for k, r in enumerate(rel))
    gaps = sorted(abs((rel[k + 1] - rel[k]) - P) / 1000.0 for k in range(n - 1))
    # least squares t = a + b k
    mk = (n - 1) / 2.0
    mt = sum(rel) / n
    sxx = sum((k - mk) ** 2 for k in range(n))
    sxy = sum((k - mk) * (r - mt) for k, r in enumerate(rel))
    b = sxy / sxx
    a = mt - b * mk
    lsres = sorted(abs(r - a - b * k) / 1000.0 for k, r in enumerate(rel))
    dur = rel[-1] / 1e9
    res.update({
        "duration_s": dur,
        "rate": (n - 1) / dur if dur > 0 else float("nan"),
        "rate_err_pct": ((n - 1) / dur / (1e6 / period_us) - 1) * 100 if dur > 0 else float("nan"),
        "sched_dev_us": {q: pct(dev, q) for q in (50, 90, 99, 99.9)} | {"max": dev[-1]},
        "gap_dev_us": {q: pct(gaps, q) for q in (50, 90, 99, 99.9)} | {"max": gaps[-1]},
        "ls_period_us": b / 1000.0,
        "ls_resid_us": {q: pct(lsres, q) for q in (50, 99)} | {"max": lsres[-1]},
    })
    return res


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    win = None
    if "--win" in sys.argv:
        win = int(sys.argv[sys.argv.index("--win") + 1])
    r = analyse(sys.argv[1], float(sys.argv[2]), win)
    if "--json" in sys.argv:
        print(json.dumps(r, default=str))
        return
    print("file %s" % r["file"])
    print("SYNs %d (retransmitted SYNs dropped: %d, other programs' SYNs dropped: %d)"
          % (r["n"], r["retransmitted_syns"], r["foreign_syns"]))
    if r["n"] < 3:
        return
    f = lambda d: " ".join("p%s %.1f" % (k, v) if k != "max" else "max %.1f" % v for k, v in d.items())
    print("duration %.6f s  achieved SYN rate %.2f/s (%+.3f%% vs nominal)" % (r["duration_s"], r["rate"], r["rate_err_pct"]))
    print("schedule deviation [us] (t0 = median of t_k - k*P, P nominal): " + f(r["sched_dev_us"]))
    print("gap deviation [us] |gap - P|: " + f(r["gap_dev_us"]))
    print("least squares: period %.4f us, residual [us] %s" % (r["ls_period_us"], f(r["ls_resid_us"])))


if __name__ == "__main__":
    main()
