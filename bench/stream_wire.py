#!/usr/bin/env python3
"""The STREAM accuracy row's second reference: the wire. From a tcpdump capture on
lo of plaintext HTTP/1.1 streams (bench/stream_accuracy.sh captures h1-direct and
h1), each stream's time to first event and its gaps as the packets show them,
against rshperf's figures for the same run.

    python3 bench/stream_wire.py RUNS.tsv CAPTURE.pcap VERSION=PORT...

RUNS.tsv as for bench/stream_accuracy.py (round, version, tag, json); VERSION=PORT:
the port rshperf reached each version on (a packet to it is the client's, from it
the server's; a proxy's own connections to the app, on other ports or carrying the
same request, are not rshperf's and are left out). A TCP connection to a version's
port belongs to the run whose `tag=TAG` its request carries; runs of versions not
named are left out.
Its request's time is its first packet with a payload from the client; an event's
time, the server's packet that carries its `data:` line (a packet with several is
one time for each; `data: [DONE]` is not an event, as for rshperf). Time to first
event: the first event's packet less the request's; gaps: between consecutive
events' packets. The capture's clock is the kernel's, stamped as the packet passes
lo: it has neither the server's receive path nor its scheduling in it, so what is
left between the two is rshperf's own (its send's stamp before the write, its
receive after the wake-up).

Prints one markdown row per run and figure (p50, p90, p99, nearest rank on the
exact values, against rshperf's HdrHistogram percentiles), then the medians over the
rounds, and `STREAM_WIRE PASS` or `STREAM_WIRE FAIL (n of m figures outside)`: a
figure passes within 2 % or 100 us, as the server-clock table. Only the standard
library (the pcap format: libpcap's, Ethernet or Linux cooked link layer).
"""

import json
import math
import re
import statistics
import struct
import sys
from collections import defaultdict

QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))
REL, ABS_MS = 0.02, 0.100
TAG = re.compile(rb"[?&]tag=([A-Za-z0-9_.-]+)")


def packets(path):
    """(time s, src port, dst port, payload) of each IPv4/IPv6 TCP packet."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        end = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        end = ">"
    else:
        raise ValueError(f"{path}: not a pcap file")
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    link = struct.unpack(end + "I", data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack(end + "IIII", data[off:off + 16])
        off += 16
        frame = data[off:off + incl]
        off += incl
        t = sec + frac / (1e9 if nano else 1e6)
        if link == 1:  # Ethernet
            ip, ethertype = frame[14:], struct.unpack(">H", frame[12:14])[0]
        elif link == 113:  # Linux cooked
            ip, ethertype = frame[16:], struct.unpack(">H", frame[14:16])[0]
        else:
            raise ValueError(f"{path}: link type {link} not read")
        if ethertype == 0x0800:
            ihl = (ip[0] & 0x0F) * 4
            if ip[9] != 6:
                continue
            total = struct.unpack(">H", ip[2:4])[0]
            tcp = ip[ihl:total]
        elif ethertype == 0x86DD:
            if ip[6] != 6:
                continue
            tcp = ip[40:]
        else:
            continue
        sport, dport = struct.unpack(">HH", tcp[:4])
        doff = (tcp[12] >> 4) * 4
        yield t, sport, dport, tcp[doff:]


def nearest_rank(values, q):
    """The nearest-rank quantile q of sorted `values`."""
    return values[max(0, math.ceil(q * len(values)) - 1)]


def wire_figures(path, ports):
    """tag -> (first events ms, gaps ms) of its streams; `ports`: version -> port."""
    conns = {}
    port_of = dict(ports)
    for t, sport, dport, payload in packets(path):
        if dport in port_of.values() and payload:
            key = (sport, dport)
            if key not in conns:
                m = TAG.search(payload)
                tag = m.group(1).decode() if m else None
                # The tag's version (r1-h1 -> h1) must be the port's.
                if tag is not None and port_of.get(tag.split("-", 1)[-1]) != dport:
                    tag = None
                conns[key] = {"tag": tag, "req": t, "events": []}
        elif sport in port_of.values() and payload:
            c = conns.get((dport, sport))
            if c is None:
                continue
            n = len(re.findall(rb"(?:^|\n)data: (?!\[DONE\])", payload))
            c["events"].extend([t] * n)
    out = defaultdict(lambda: ([], []))
    for c in conns.values():
        if c["tag"] is None or not c["events"]:
            continue
        first, gaps = out[c["tag"]]
        first.append((c["events"][0] - c["req"]) * 1e3)
        gaps.extend((b - a) * 1e3 for a, b in zip(c["events"], c["events"][1:]))
    return out


def main(argv):
    if len(argv) < 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 1
    if any("=" not in a for a in argv[3:]):
        print("stream_wire.py: ports are VERSION=PORT (h1-direct=22100)", file=sys.stderr)
        return 1
    runs = [line.rstrip("\n").split("\t") for line in open(argv[1]) if line.strip()]
    ports = [(v, int(p)) for v, _, p in (a.partition("=") for a in argv[3:])]
    wire = wire_figures(argv[2], ports)
    rows, per = [], defaultdict(list)
    print("| round | version | figure | quantile | wire ms | rshperf ms | diff | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    for rnd, version, tag, path in runs:
        if tag not in wire or version not in dict(ports):
            continue
        doc = json.load(open(path))
        first, gaps = wire[tag]
        for fig, name, values in (("first_event_ms", "first event", first), ("gap_ms", "gap", gaps)):
            values = sorted(values)
            for qn, q in QUANTILES:
                w = nearest_rank(values, q)
                r = doc["stream"][fig][qn]
                ok = abs(r - w) <= max(REL * w, ABS_MS)
                rows.append(ok)
                per[(version, name, qn)].append((w, r, ok))
                print(f"| {rnd} | {version} | {name} | {qn} | {w:.3f} | {r:.3f} | "
                      f"{(r - w) * 1e3:+.0f} us ({(r - w) / w * 100:+.2f} %) | "
                      f"{'pass' if ok else 'FAIL'} |")
    print()
    print("Medians over the rounds, and the rounds that passed:")
    print()
    print("| version | figure | quantile | wire ms | rshperf ms | diff | rounds within 2 % or 100 us |")
    print("|---|---|---|---|---|---|---|")
    for (version, name, qn), xs in per.items():
        w = statistics.median(x[0] for x in xs)
        r = statistics.median(x[1] for x in xs)
        print(f"| {version} | {name} | {qn} | {w:.3f} | {r:.3f} | {(r - w) * 1e3:+.0f} us "
              f"({(r - w) / w * 100:+.2f} %) | {sum(x[2] for x in xs)} of {len(xs)} |")
    bad = rows.count(False)
    if not rows:
        print("STREAM_WIRE FAIL (no run found in the capture)")
    elif bad:
        print(f"STREAM_WIRE FAIL ({bad} of {len(rows)} figures outside 2 % or 100 us)")
    else:
        print("STREAM_WIRE PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
