#!/usr/bin/env python3
"""Summarise the raw outputs of bench/run.sh into the target table.

usage: summarize.py [DIR]      (default /tmp/rshperf-bench)

Per run NAME the directory holds NAME.out (client report), NAME.err,
NAME.time ("%U %S %M %e" of /usr/bin/time), NAME.cmd, NAME.meta (wall time,
nginx worker CPU, machine busy %, TIME_WAIT counts, exit status), for P4
NAME.pacing(.json) and for P6 NAME.rss ("seconds VmRSS_kB" lines).
"""
import json
import os
import re
import sys

D = sys.argv[1] if len(sys.argv) > 1 else "/tmp/rshperf-bench"


def rd(name, ext):
    p = os.path.join(D, name + "." + ext)
    try:
        with open(p) as f:
            return f.read()
    except OSError:
        return None


def kv(text):
    out = {}
    for line in (text or "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


SUITE = kv(rd("suite", "meta"))


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


class Run:
    def __init__(self, name):
        self.name = name
        self.present = rd(name, "cmd") is not None
        self.out = rd(name, "out") or ""
        self.err = rd(name, "err") or ""
        self.cmd = (rd(name, "cmd") or "").strip()
        self.meta = kv(rd(name, "meta"))
        self.rc = int(self.meta.get("rc", "-1")) if self.meta.get("rc", "").lstrip("-").isdigit() else None
        t = (rd(name, "time") or "").strip().splitlines()
        self.user = self.sys = self.maxrss = self.elapsed = None
        for line in reversed(t):
            parts = line.split()
            if len(parts) == 4 and all(fnum(p) is not None for p in parts):
                self.user, self.sys, self.maxrss, self.elapsed = map(float, parts)
                break
        self.r = parse_report(self.out)

    @property
    def cpu(self):
        if self.user is None:
            return None
        return self.user + self.sys

    @property
    def timed_out(self):
        return self.rc in (124, 137)


def parse_report(s):
    r = {}
    m = re.search(r"Total: connections (\d+) requests (\d+) replies (\d+) test-duration ([\d.]+) s", s)
    if m:
        r["conns"], r["reqs"], r["replies"] = map(int, m.group(1, 2, 3))
        r["duration"] = float(m.group(4))
    m = re.search(r"Connection rate: ([\d.]+) conn/s .*?<=(\d+) concurrent connections", s)
    if m:
        r["conn_rate"] = float(m.group(1))
        r["concurrent"] = int(m.group(2))
    m = re.search(r"Request rate: ([\d.]+) req/s", s)
    if m:
        r["req_rate"] = float(m.group(1))
    m = re.search(r"CPU time \[s\]: user ([\d.]+) system ([\d.]+)", s)
    if m:
        r["cpu_user"], r["cpu_sys"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"Errors: total (\d+) client-timo (\d+) socket-timo (\d+) connrefused (\d+) connreset (\d+)", s)
    if m:
        for k, v in zip(("errors", "client_timo", "socket_timo", "connrefused", "connreset"), m.groups()):
            r[k] = int(v)
    m = re.search(r"Errors: fd-unavail (\d+) addrunavail (\d+) ftab-full (\d+) other (\d+)", s)
    if m:
        for k, v in zip(("fd_unavail", "addrunavail", "ftab_full", "other"), m.groups()):
            r[k] = int(v)
    m = re.search(r"Session rate \[sess/s\]: .*\((\d+)/(\d+)\)", s)
    if m:
        r["sess_ok"], r["sess_total"] = int(m.group(1)), int(m.group(2))
    m = re.search(r"Reply status: 1xx=(\d+) 2xx=(\d+) 3xx=(\d+) 4xx=(\d+) 5xx=(\d+)", s)
    if m:
        r["2xx"] = int(m.group(2))
    # --call-rate
    m = re.search(r"Call rate \[calls/s\]: target ([\d.]+) achieved ([\d.]+) over (\d+) connections "
                  r"\(scheduled (\d+) issued (\d+) completed (\d+) lost (\d+) unsent (\d+) max-waiting (\d+) "
                  r"reconnects (\d+)", s)
    if m:
        r["cr_target"], r["cr_achieved"] = float(m.group(1)), float(m.group(2))
        (r["cr_conns"], r["cr_scheduled"], r["cr_issued"], r["cr_completed"], r["cr_lost"], r["cr_unsent"],
         r["cr_max_waiting"], r["cr_reconnects"]) = map(int, m.group(3, 4, 5, 6, 7, 8, 9, 10))
    for key, label in (("cr_late", "lateness"), ("cr_resp", "response")):
        m = re.search(r"Call %s \[ms\]: avg ([\d.]+) p50 ([\d.]+) p90 ([\d.]+) p99 ([\d.]+) max ([\d.]+)" % label, s)
        if m:
            r[key + "_p50"], r[key + "_p99"], r[key + "_max"] = float(m.group(2)), float(m.group(4)), float(m.group(5))
    # wrk2 --latency: " 99.000%    1.23ms"
    m = re.search(r"^\s*99\.000%\s+([\d.]+)(us|ms|s)\s*$", s, re.M)
    if m:
        r["wrk2_p99_ms"] = float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    # wrk
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+),", s)
    if m:
        r["wrk_requests"] = int(m.group(1))
    m = re.search(r"Requests/sec:\s+([\d.]+)", s)
    if m:
        r["wrk_rps"] = float(m.group(1))
    m = re.search(r"Socket errors: (.*)", s)
    if m:
        r["wrk_sockerr"] = m.group(1).strip()
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", s)
    if m:
        r["wrk_non2xx"] = int(m.group(1))
    # h2load
    m = re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", s)
    if m:
        r["h2load_rps"] = float(m.group(1))
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored",
                  s)
    if m:
        r["h2load_total"], r["h2load_ok"] = int(m.group(1)), int(m.group(4))
        r["h2load_bad"] = int(m.group(5)) + int(m.group(6))
    # ab
    m = re.search(r"Requests per second:\s+([\d.]+)", s)
    if m:
        r["ab_rps"] = float(m.group(1))
    m = re.search(r"Complete requests:\s+(\d+)", s)
    if m:
        r["ab_complete"] = int(m.group(1))
    m = re.search(r"Failed requests:\s+(\d+)", s)
    if m:
        r["ab_failed"] = int(m.group(1))
    return r


def err_str(r):
    if "errors" not in r:
        return "no report"
    parts = ["%d err" % r["errors"]]
    detail = [k for k in ("client_timo", "socket_timo", "connrefused", "connreset",
                          "fd_unavail", "addrunavail", "ftab_full", "other") if r.get(k)]
    if detail:
        parts.append("(" + ", ".join("%s %d" % (k.replace("_", "-"), r[k]) for k in detail) + ")")
    return " ".join(parts)


def mib(kib):
    return kib / 1024.0


def fmt_rate(x):
    return "%.0f" % x if x is not None else "?"


rows = []   # (target, rsh, anchor, ratio, verdict)
notes = []  # diagnosis lines


def verdict(ok):
    if ok is None:
        return "n/a"
    return "PASS" if ok else "FAIL"


NETKEYS = [("TcpExt", "ListenOverflows", "listen-overflows"), ("TcpExt", "ListenDrops", "listen-drops"),
           ("TcpExt", "TCPReqQFullDrop", "reqq-full-drops"), ("TcpExt", "TCPSynRetrans", "SYN-retrans"),
           ("Tcp", "RetransSegs", "retrans-segs"), ("Tcp", "AttemptFails", "attempt-fails"),
           ("TcpExt", "TCPTimeWaitOverflow", "tw-overflow"), ("Tcp", "ActiveOpens", "active-opens")]


def netstat(text):
    d = {}
    lines = (text or "").splitlines()
    for a, b in zip(lines, lines[1:]):
        ha, hb = a.split(), b.split()
        if ha and hb and ha[0] == hb[0] and hb[1].lstrip("-").isdigit() and not ha[1].lstrip("-").isdigit():
            for k, v in zip(ha[1:], hb[1:]):
                try:
                    d[(ha[0].rstrip(":"), k)] = int(v)
                except ValueError:
                    pass
    return d


def netdelta(run):
    a, b = netstat(rd(run.name, "net0")), netstat(rd(run.name, "net1"))
    if not a or not b:
        return {}
    return {label: b.get((sec, k), 0) - a.get((sec, k), 0) for sec, k, label in NETKEYS}


def diag(run):
    """One line of context for a run: CPU, nginx CPU, machine load, TIME_WAIT."""
    if not run.present:
        return None
    m = run.meta
    bits = []
    if run.elapsed is not None:
        bits.append("wall %.2f s" % run.elapsed)
    if run.cpu is not None:
        bits.append("client CPU %.2f s (u %.2f s %.2f)" % (run.cpu, run.user, run.sys))
        if run.elapsed:
            bits.append("= %.0f%% of a core" % (100 * run.cpu / run.elapsed))
    if run.maxrss is not None:
        bits.append("maxRSS %.1f MiB" % mib(run.maxrss))
    if "nginx_cpu_pct" in m:
        bits.append("nginx worker %s%% of a core" % m["nginx_cpu_pct"])
    if "machine_busy_pct" in m:
        bits.append("machine busy %s%% of 2 cores" % m["machine_busy_pct"])
    if "tw_before" in m:
        bits.append("TIME_WAIT before %s after %s" % (m["tw_before"], m.get("tw_after", "?")))
    if run.rc not in (None, 0):
        bits.append("exit status %d%s" % (run.rc, " (killed by the time bound)" if run.timed_out else ""))
    nd = netdelta(run)
    if nd:
        bits.append("kernel: " + " ".join("%s %d" % (k, v) for k, v in nd.items() if v or k == "active-opens"))
    conns = run.r.get("conns")
    if conns and run.sys is not None and run.sys / conns > 300e-6 and run.r.get("reqs", 0) <= conns:
        bits.append("%.0f us system CPU per connection: connect() port search under ephemeral-port exhaustion "
                    "(TIME_WAIT younger than tcp_tw_reuse_delay) is the usual cause, see --perf" % (1e6 * run.sys / conns))
    if run.r.get("addrunavail"):
        bits.append("PORT EXHAUSTION: addrunavail %d" % run.r["addrunavail"])
    if run.r.get("fd_unavail"):
        bits.append("fd-unavail %d (out of file descriptors)" % run.r["fd_unavail"])
    return "%-12s %s" % (run.name, "; ".join(bits))


R = {n: Run(n) for n in ("P1.rsh", "P1.httperf", "AB.ab", "P2.wrk", "P2.rsh", "P3.rsh", "P3.httperf",
                         "P4.rsh", "P4.httperf", "P5.rsh", "P5.httperf", "P6.rsh", "P6.httperf",
                         "P7.rsh2", "P7.rsh1", "HOG.rsh", "HOG.httperf", "T1.rsh", "AB12.ab", "AB12.rsh",
                         "AB12.rsh10", "H2C.rsh", "H2C.h2load", "H2S.rsh", "H2S.h2load", "CR.rsh", "CR.wrk2",
                         "PACE600.rsh", "PACE600.httperf", "PACE5000.rsh", "PACE5000.httperf",
                         "SYS.rsh", "SYS.httperf",
                         "UX.tcp1", "UX.unix1", "UX.tcp2", "UX.unix2", "UX.tcp3", "UX.unix3",
                         "BODY.base", "BODY.rsh", "MET")}
H2_ROUNDS = int(SUITE.get("h2_rounds", "1") or 1)
CR_ROUNDS = int(SUITE.get("cr_rounds", "0") or 0)
for _k in range(1, CR_ROUNDS + 1):
    for _who in ("rsh", "wrk2"):
        _n = "CR.%s.%d" % (_who, _k)
        R[_n] = Run(_n)
H3_ROUNDS = int(SUITE.get("h3_rounds", "0") or 0)
for _k in range(1, H3_ROUNDS + 1):
    for _who in ("rsh", "oha"):
        _n = "H3.%s.%d" % (_who, _k)
        R[_n] = Run(_n)
for _tag in ("H2C", "H2S"):
    for _k in range(1, H2_ROUNDS + 1):
        for _who in ("rsh", "h2load"):
            _n = "%s.%s.%d" % (_tag, _who, _k)
            R[_n] = Run(_n)

# ------------------------------------------------------------------ P1
a, h, ab = R["P1.rsh"], R["P1.httperf"], R["AB.ab"]
r = a.r
if "conns" in r:
    fig = "%d/105000 replies, %s, %s conn/s (%.1f%% of 35000)" % (
        r["replies"], err_str(r), fmt_rate(r["conn_rate"]), 100 * r["conn_rate"] / 35000)
    ok = r["replies"] == 105000 and r.get("errors") == 0 and r["conn_rate"] >= 0.97 * 35000
    ratio = "%.3f of offered" % (r["conn_rate"] / 35000)
else:
    fig, ok, ratio = "no report (rc %s)" % a.rc, False, "-"
anc = []
if h.present and "conns" in h.r:
    anc.append("httperf: %d replies, %s, %s conn/s" % (h.r["replies"], err_str(h.r), fmt_rate(h.r["conn_rate"])))
elif h.present:
    anc.append("httperf: no report (rc %s)" % h.rc)
if ab.present and "ab_rps" in ab.r:
    anc.append("ab -c50 closed loop %s req/s" % fmt_rate(ab.r["ab_rps"]))
    if "conn_rate" in r:
        ratio += "; %.2fx ab" % (r["conn_rate"] / ab.r["ab_rps"])
rows.append(("P1 35k/s x105k, 0 err, >=97%", fig, "; ".join(anc) or "-", ratio, verdict(ok)))

# ------------------------------------------------------------------ P2
a, w = R["P2.rsh"], R["P2.wrk"]
if "reqs" in a.r and w.r.get("wrk_requests") and a.cpu is not None and w.cpu is not None:
    a_cpr = a.cpu / max(1, a.r["reqs"]) * 1e6
    w_cpr = w.cpu / w.r["wrk_requests"] * 1e6
    fig = "%s req/s, %.2f us CPU/req (%d reqs, %s)" % (fmt_rate(a.r["req_rate"]), a_cpr, a.r["reqs"], err_str(a.r))
    anc = "wrk -t1 -c50: %s req/s, %.2f us CPU/req (%d reqs%s)" % (
        fmt_rate(w.r["wrk_rps"]), w_cpr, w.r["wrk_requests"],
        ", socket errors " + w.r["wrk_sockerr"] if "wrk_sockerr" in w.r else "")
    ratio = "rate %.2fx, CPU/req %.2fx" % (a.r["req_rate"] / w.r["wrk_rps"], a_cpr / w_cpr)
    ok = a.r["req_rate"] >= w.r["wrk_rps"] and a_cpr <= w_cpr and a.r.get("errors") == 0
else:
    fig, anc, ratio, ok = "missing data", "-", "-", False
rows.append(("P2 keep-alive 50 conns vs wrk", fig, anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ P3
a, h = R["P3.rsh"], R["P3.httperf"]
if a.cpu is not None and h.cpu is not None and "replies" in a.r:
    fig = "%.2f s CPU (u %.2f s %.2f), %d replies, %s" % (a.cpu, a.user, a.sys, a.r["replies"], err_str(a.r))
    hr = h.r
    anc = "httperf %.2f s CPU (u %.2f s %.2f), %s replies, %s" % (
        h.cpu, h.user, h.sys, hr.get("replies", "?"), err_str(hr))
    ratio = "%.3fx" % (a.cpu / h.cpu) if h.cpu else "-"
    ok = h.cpu > 0 and a.cpu <= 0.35 * h.cpu and a.r["replies"] == 30000 and a.r.get("errors") == 0
else:
    fig, anc, ratio, ok = "missing data", "-", "-", False
rows.append(("P3 CPU 30k conns @10k/s <=0.35x", fig, anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ P4


def pacing(run):
    txt = rd(run.name, "pacing.json")
    if not txt:
        return None
    try:
        return json.loads(txt)
    except ValueError:
        return None


def pstr(p, run):
    if not p or p.get("n", 0) < 3:
        return "no SYNs captured"
    return "wire %.1f/s (%+.2f%%), sched dev p99 %.0f us, gap dev p99 %.0f us, %d SYNs%s" % (
        p["rate"], p["rate_err_pct"], p["sched_dev_us"]["99"], p["gap_dev_us"]["99"], p["n"],
        "" if not run.r.get("errors") else ", " + err_str(run.r))


a, h = R["P4.rsh"], R["P4.httperf"]
pa, ph = pacing(a), pacing(h)
fig = pstr(pa, a)
anc = ("httperf " + pstr(ph, h)) if h.present else "-"
ok = None
ratio = "-"
if pa and pa.get("n", 0) >= 3:
    ok = (abs(pa["rate_err_pct"]) <= 0.5 and pa["sched_dev_us"]["99"] <= 100 and pa["gap_dev_us"]["99"] <= 50
          and pa["n"] == 30000 and a.r.get("errors") == 0)
    if ph and ph.get("n", 0) >= 3:
        ratio = "sched p99 %.2fx, gap p99 %.2fx" % (pa["sched_dev_us"]["99"] / max(ph["sched_dev_us"]["99"], 1e-9),
                                                    pa["gap_dev_us"]["99"] / max(ph["gap_dev_us"]["99"], 1e-9))
else:
    ok = False
rows.append(("P4 pacing 10k/s (+-0.5%, 100/50us)", fig, anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ PACE600, PACE5000 (SYNs on the wire against the schedule)
for rate in (600, 5000):
    a, h = R["PACE%d.rsh" % rate], R["PACE%d.httperf" % rate]
    if not a.present and not h.present:
        continue
    pa, ph = pacing(a), pacing(h)

    def pace_fig(p, run):
        cpu = "CPU %.2f s" % run.cpu if run.cpu is not None else "CPU ?"
        if not p or p.get("n", 0) < 3:
            return "no SYNs captured, " + cpu
        return "sched dev p99 %.0f us (p50 %.0f), gap dev p99 %.0f us, %d SYNs, %s%s" % (
            p["sched_dev_us"]["99"], p["sched_dev_us"]["50"], p["gap_dev_us"]["99"], p["n"], cpu,
            "" if not run.r.get("errors") else ", " + err_str(run.r))
    fig = pace_fig(pa, a)
    anc = "httperf " + pace_fig(ph, h) if h.present else "-"
    ok, ratio = False, "-"
    if pa and pa.get("n", 0) >= 3:
        ok = (pa["sched_dev_us"]["99"] <= 100 and pa["gap_dev_us"]["99"] <= 100
              and pa["n"] == 3 * rate and a.r.get("errors") == 0)
        if ph and ph.get("n", 0) >= 3 and a.cpu is not None and h.cpu:
            ratio = "sched p99 %.2fx, gap p99 %.2fx, CPU %.2fx" % (
                pa["sched_dev_us"]["99"] / max(ph["sched_dev_us"]["99"], 1e-9),
                pa["gap_dev_us"]["99"] / max(ph["gap_dev_us"]["99"], 1e-9), a.cpu / h.cpu)
            ok = ok and a.cpu <= 0.5 * h.cpu
    rows.append(("PACE%d SYN sched and gap dev p99 <=100us, CPU <=0.5x httperf" % rate, fig, anc, ratio,
                 verdict(ok)))
    # The machine's own floor at this rate (bench/timer_floor.c): a thread that does
    # nothing but wait for the deadlines, sleeping or spinning.
    fl = {m: rd("FLOOR.%s%d" % (m, rate), "out") for m in ("sleep", "spin")}
    if all(fl.values()):
        rows.append(("FLOOR%d the machine: deadline lateness of an idle thread" % rate,
                     "sleeping: " + fl["sleep"].split("lateness us: ")[-1].strip(),
                     "spinning: " + fl["spin"].split("lateness us: ")[-1].strip(), "-", "info"))

# ------------------------------------------------------------------ OVL (past the client's capacity)
OVL_KNEE = int(SUITE.get("ovl_knee", "0") or 0)
OVL_ROUNDS = int(SUITE.get("ovl_rounds", "0") or 0)
if OVL_KNEE:
    def ovl_fig(run):
        if "conn_rate" not in run.r:
            return "no report (rc %s)" % run.rc
        return "%s conn/s, %s completed, %s" % (fmt_rate(run.r["conn_rate"]), run.r.get("replies", "?"),
                                                err_str(run.r))
    passed = 0
    for k in range(1, OVL_ROUNDS + 1):
        figs, ancs, ratios, ok = [], [], [], True
        for m in (15, 20):
            a, h = Run("OVL.rsh%d.%d" % (m, k)), Run("OVL.httperf%d.%d" % (m, k))
            warned = "client-bound" in a.err
            figs.append("%.1fx: %s%s" % (m / 10, ovl_fig(a), "" if warned else ", NO client-bound warning"))
            ancs.append("httperf %s" % ovl_fig(h))
            # Completions: connections that got their reply, of the same offered
            # number (3 s of arrivals) for both. Not the connection rates: each client
            # divides by its own test-duration, so two clients that both complete every
            # offered connection differ by their clocks' ends (3.000 vs 2.998 s).
            if a.r.get("replies") is not None and h.r.get("replies"):
                rh = a.r["replies"] / h.r["replies"]
                ratios.append("%.2fx" % rh)
                ok = ok and rh >= 1 and a.r.get("errors") == 0 and warned
            else:
                ratios.append("-")
                ok = False
        passed += ok
        rows.append(("OVL round %d, knee %d: >=httperf at 1.5x, 2x" % (k, OVL_KNEE), "; ".join(figs),
                     "; ".join(ancs), " / ".join(ratios), verdict(ok)))
    rows.append(("OVL passes in every round", "%d of %d rounds" % (passed, OVL_ROUNDS), "-", "-",
                 verdict(OVL_ROUNDS > 0 and passed == OVL_ROUNDS)))

# ------------------------------------------------------------------ SYSCALLS


def syscalls(name, conns):
    """(calls made once or more per connection, all calls) per connection, from
    strace -c -f's table; None when missing."""
    text = rd(name, "strace")
    if not text or not conns:
        return None
    per_conn = total = 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 5 or not parts[3].isdigit() or parts[-1] == "total":
            continue
        calls = int(parts[3])
        total += calls
        if calls >= 0.9 * conns:
            per_conn += calls
    return per_conn / conns, total / conns


a, h = R["SYS.rsh"], R["SYS.httperf"]
if a.present or h.present:
    # Per connection the client made (its report's count: httperf under strace
    # runs out of descriptors and never makes some).
    sa, sh = syscalls("SYS.rsh", a.r.get("conns")), syscalls("SYS.httperf", h.r.get("conns"))
    if sa:
        fig = "%.2f per connection (all calls %.2f), %s" % (sa[0], sa[1], err_str(a.r))
        ok = sa[0] <= 9 and a.r.get("errors") == 0 and a.r.get("replies") == 4000
    else:
        fig, ok = "no strace table (rc %s)" % a.rc, False
    anc = "httperf %.2f per connection (all %.2f)" % sh if sh else "-"
    ratio = "%.2fx" % (sa[0] / sh[0]) if sa and sh else "-"
    rows.append(("SYSCALLS per conn, 2k/s x4k, <=9", fig, anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ P5
a, h = R["P5.rsh"], R["P5.httperf"]
lim = fnum((SUITE.get("ulimit_n", "20000/20000").split("/")[0])) or 20000
if "concurrent" in a.r and a.maxrss is not None:
    fig = "<=%d concurrent (%.1f%% of %d), %s, sessions %s/%s, maxRSS %.1f MiB" % (
        a.r["concurrent"], 100 * a.r["concurrent"] / lim, lim, err_str(a.r),
        a.r.get("sess_ok", "?"), a.r.get("sess_total", "?"), mib(a.maxrss))
    ok = a.r["concurrent"] >= 0.9 * lim and a.r.get("errors") == 0 and a.maxrss <= 45 * 1024
    ratio = "conc %.2f of limit; RSS %.2f of 45 MiB" % (a.r["concurrent"] / lim, mib(a.maxrss) / 45)
else:
    fig, ok, ratio = "no report (rc %s)" % a.rc, False, "-"
if h.present and "concurrent" in h.r:
    anc = "httperf <=%d concurrent, %s, maxRSS %.1f MiB" % (h.r["concurrent"], err_str(h.r), mib(h.maxrss or 0))
elif h.present:
    anc = "httperf: no report (rc %s)" % h.rc
else:
    anc = "-"
rows.append(("P5 18k conns open, 0 err, <=45MiB", fig, anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ P6


def rss(run):
    txt = rd(run.name, "rss") or ""
    d = {}
    for line in txt.splitlines():
        p = line.split()
        if len(p) == 2:
            d[int(p[0])] = int(p[1])
    return d


a, h = R["P6.rsh"], R["P6.httperf"]
ra, rh = rss(a), rss(h)
if 4 in ra and 16 in ra:
    delta = ra[16] - ra[4]
    fig = "VmRSS 4s %.2f MiB, 16s %.2f MiB, delta %+d KiB; %s replies, %s" % (
        mib(ra[4]), mib(ra[16]), delta, a.r.get("replies", "?"), err_str(a.r))
    ok = abs(delta) <= 2048 and a.r.get("replies") == 100000 and a.r.get("errors") == 0
    ratio = "delta %.2f of 2 MiB" % (abs(delta) / 2048)
else:
    fig, ok, ratio = "RSS samples missing (%s)" % ra, False, "-"
if 4 in rh and 16 in rh:
    anc = "httperf VmRSS 4s %.2f MiB, 16s %.2f MiB, delta %+d KiB; %s replies, %s" % (
        mib(rh[4]), mib(rh[16]), rh[16] - rh[4], h.r.get("replies", "?"), err_str(h.r))
else:
    anc = "-"
rows.append(("P6 RSS flat (16s vs 4s, 5k/s)", fig, anc, ratio, verdict(ok)))

# T1: --timeline state per second; growth 4 s -> 16 s extrapolated to 600 s.
t = R["T1.rsh"]
rt = rss(t)
if 4 in rt and 16 in rt:
    per_s = (rt[16] - rt[4]) / 12.0
    ten_min = max(per_s, 0.0) * 600
    fig = "VmRSS 4s %.2f MiB, 16s %.2f MiB; %+.1f KiB/s -> %.0f KiB in 10 min; %s replies, %s" % (
        mib(rt[4]), mib(rt[16]), per_s, ten_min, t.r.get("replies", "?"), err_str(t.r))
    ok = ten_min <= 2048 and t.r.get("replies") == 38000
    ratio = "%.2f of 2 MiB" % (ten_min / 2048)
else:
    fig, ok, ratio = "RSS samples missing (%s)" % rt, False, "-"
rows.append(("T1 --timeline RSS (2k/s, 10 min)", fig, "-", ratio, verdict(ok)))

# ------------------------------------------------------------------ P7
a, b = R["P7.rsh2"], R["P7.rsh1"]
if "conns" in a.r:
    fig = "2 threads: %d conns, %d replies, %s conn/s, %s" % (a.r["conns"], a.r["replies"], "%.1f" % a.r["conn_rate"], err_str(a.r))
    ok = (a.r["conns"] == 12000 and a.r["replies"] == 12000 and abs(a.r["conn_rate"] / 4000 - 1) <= 0.025
          and a.r.get("errors") == 0)
    ratio = "rate %.4f of 4000" % (a.r["conn_rate"] / 4000)
    if "conns" in b.r:
        ok = ok and (a.r["conns"], a.r["reqs"], a.r["replies"]) == (b.r["conns"], b.r["reqs"], b.r["replies"])
        ratio += "; totals %s" % ("equal" if (a.r["conns"], a.r["replies"]) == (b.r["conns"], b.r["replies"]) else "DIFFER")
else:
    fig, ok, ratio = "no report (rc %s)" % a.rc, False, "-"
anc = ("1 thread: %d conns, %d replies, %.1f conn/s, %s" % (b.r["conns"], b.r["replies"], b.r["conn_rate"], err_str(b.r))
       if "conns" in b.r else "-")
rows.append(("P7 --threads 2 @4k/s, 12k conns", fig, anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ hog
a, h = R["HOG.rsh"], R["HOG.httperf"]
if "conns" in a.r:
    fig = "finished in %.2f s wall: %d replies, %s conn/s, %s, CPU %.2f s" % (
        a.elapsed or -1, a.r["replies"], fmt_rate(a.r["conn_rate"]), err_str(a.r), a.cpu or -1)
    ok = a.rc == 0 and a.r["replies"] == 30000 and (a.elapsed or 99) < 10
    ratio = "-"
else:
    fig, ok, ratio = "no report (rc %s)" % a.rc, False, "-"
if h.present:
    if h.timed_out or "conns" not in h.r:
        anc = "httperf: did not finish, killed by the time bound after %.1f s (%d conns opened by then)" % (
            h.elapsed or -1, netdelta(h).get("active-opens", -1))
    else:
        anc = "httperf: %.2f s wall, %d replies, %s" % (h.elapsed or -1, h.r["replies"], err_str(h.r))
        if h.elapsed and a.elapsed:
            ratio = "wall %.2fx" % (a.elapsed / h.elapsed)
else:
    anc = "not run (--quick); httperf 0.9.0 --hog at 10k/s spins forever"
rows.append(("--hog 10k/s x30k finishes", fig, anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ H2C, H2S
# Rounds alternate h2load and rshperf (H2_ROUNDS of them, runs TAG.WHO.K; a run
# without the .K suffix is an older single-round layout). The verdict compares the
# medians of the rounds; each round's ratios are listed after them.
H2_N = int(SUITE.get("h2_n", "200000") or 200000)


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


for tag, port in (("H2C", "8082 h2c"), ("H2S", "8444 h2 over TLS")):
    pairs = [(R["%s.rsh.%d" % (tag, k)], R["%s.h2load.%d" % (tag, k)]) for k in range(1, H2_ROUNDS + 1)]
    pairs = [p for p in pairs if p[0].present or p[1].present] or [(R[tag + ".rsh"], R[tag + ".h2load"])]
    label = "%s h2load -n %d -c 50 -m 10, %s" % (tag, H2_N, port)
    good = [(a, h) for a, h in pairs
            if "reqs" in a.r and h.r.get("h2load_ok") and a.cpu is not None and h.cpu is not None]
    if good and len(good) == len(pairs):
        a_rate = [a.r["req_rate"] for a, _ in good]
        h_rate = [h.r["h2load_rps"] for _, h in good]
        a_cpr = [a.cpu / max(1, a.r["reqs"]) * 1e6 for a, _ in good]
        h_cpr = [h.cpu / h.r["h2load_total"] * 1e6 for _, h in good]
        fig = "%s req/s, %.2f us CPU/req (median of %d; %s)" % (
            fmt_rate(median(a_rate)), median(a_cpr), len(good),
            "; ".join(sorted(set("%d 2xx, %s" % (a.r.get("2xx", 0), err_str(a.r)) for a, _ in good))))
        anc = "h2load: %s req/s, %.2f us CPU/req (median of %d; %s)" % (
            fmt_rate(median(h_rate)), median(h_cpr), len(good),
            "; ".join(sorted(set("%d ok, %d failed" % (h.r["h2load_ok"], h.r["h2load_bad"]) for _, h in good))))
        # nginx's worker CPU per request: with nginx saturated (one worker), the
        # rate is the inverse of what each client costs it per request.
        ng = [(a.meta.get("nginx_cpu_s"), a.r["reqs"], h.meta.get("nginx_cpu_s"), h.r["h2load_total"])
              for a, h in good]
        if all(x[0] and x[2] for x in ng):
            fig += "; nginx %.2f us CPU/req" % median([float(x[0]) / max(1, x[1]) * 1e6 for x in ng])
            anc += "; nginx %.2f us CPU/req" % median([float(x[2]) / max(1, x[3]) * 1e6 for x in ng])
        rate, cpr = median(a_rate) / median(h_rate), median(a_cpr) / median(h_cpr)
        ratio = "rate %.2fx, CPU/req %.2fx (rounds: %s)" % (rate, cpr, ", ".join(
            "%.2fx/%.2fx" % (ar / hr, ac / hc) for ar, hr, ac, hc in zip(a_rate, h_rate, a_cpr, h_cpr)))
        ok = (rate >= 1 and cpr <= 1
              and all(a.r.get("errors") == 0 and a.r.get("2xx") == H2_N for a, _ in good))
    elif any(a.present or h.present for a, h in pairs):
        fig, anc, ratio, ok = "missing data (rc %s)" % ", ".join(
            "%s/%s" % (a.rc, h.rc) for a, h in pairs), "-", "-", False
    else:
        continue
    rows.append((label, fig, anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ H3 (HTTP/3 vs oha)
# Rounds alternate oha and rshperf (runs H3.oha.K, H3.rsh.K). oha writes JSON: its
# requestsPerSec includes the ~30 s it waits at the end for its QUIC connections to
# time out, so its rate is also given by Little's law (50 x 10 in flight / mean
# latency). The verdict takes the better of oha's two rates.
H3_N = int(SUITE.get("h3_n", "100000") or 100000)


def oha_doc(run):
    try:
        return json.loads(run.out)
    except (ValueError, AttributeError):
        return None


if H3_ROUNDS:
    pairs = [(R["H3.rsh.%d" % k], R["H3.oha.%d" % k]) for k in range(1, H3_ROUNDS + 1)]
    good = [(a, h, oha_doc(h)) for a, h in pairs]
    good = [(a, h, d) for a, h, d in good if "reqs" in a.r and d and a.cpu is not None and h.cpu is not None]
    label = "H3 oha -n %d -c 50 -p 10 --http-version 3, caddy" % H3_N
    if good and len(good) == len(pairs):
        a_rate = [a.r["req_rate"] for a, _, _ in good]
        o_rate = [d["summary"]["requestsPerSec"] for _, _, d in good]
        o_little = [500.0 / d["summary"]["average"] if d["summary"].get("average") else 0.0 for _, _, d in good]
        o_ok = [sum(v for k, v in d.get("statusCodeDistribution", {}).items() if k.startswith("2")) for _, _, d in good]
        a_cpr = [a.cpu / max(1, a.r["reqs"]) * 1e6 for a, _, _ in good]
        o_cpr = [h.cpu / H3_N * 1e6 for _, h, _ in good]
        fig = "%s req/s, %.2f us CPU/req (median of %d; %s)" % (
            fmt_rate(median(a_rate)), median(a_cpr), len(good),
            "; ".join(sorted(set("%d 2xx, %s" % (a.r.get("2xx", 0), err_str(a.r)) for a, _, _ in good))))
        anc = "oha: %s req/s as reported, %s by Little's law, %.2f us CPU/req (median of %d; 2xx %s)" % (
            fmt_rate(median(o_rate)), fmt_rate(median(o_little)), median(o_cpr), len(good),
            ", ".join(str(x) for x in o_ok))
        best = max(median(o_rate), median(o_little))
        rate, cpr = median(a_rate) / best, median(a_cpr) / median(o_cpr)
        ratio = "rate %.2fx (vs oha's better figure), CPU/req %.2fx" % (rate, cpr)
        ok = (rate >= 1 and cpr <= 0.5
              and all(a.r.get("errors") == 0 and a.r.get("2xx") == H3_N for a, _, _ in good))
        rows.append((label, fig, anc, ratio, verdict(ok)))
    elif any(a.present or h.present for a, h in pairs):
        rows.append((label, "missing data (rc %s)" % ", ".join("%s/%s" % (a.rc, h.rc) for a, h in pairs),
                     "-", "-", verdict(False)))

# ------------------------------------------------------------------ CR (--call-rate over 50 keep-alive connections)
# CR_ROUNDS rounds (runs CR.rsh.K and CR.wrk2.K; a suite from before rounds has CR.rsh
# and CR.wrk2): the figures are medians over the rounds, each round listed after them.
def cr_median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


if CR_ROUNDS:
    cr_pairs = [(R["CR.rsh.%d" % k], R["CR.wrk2.%d" % k]) for k in range(1, CR_ROUNDS + 1)]
else:
    cr_pairs = [(R["CR.rsh"], R["CR.wrk2"])]
if any(a.present for a, _ in cr_pairs):
    label = ("CR --call-rate %s x 50 keep-alive conns, %s s: achieved +-0.5 %%, lateness p99 <= 1 ms, "
             "response p99 <= 1.1x wrk2's, nginx <= 50 %% busy") % (SUITE.get("cr_rate", "?"), SUITE.get("cr_s", "?"))
    good = [a for a, _ in cr_pairs
            if a.present and "cr_achieved" in a.r and "cr_late_p99" in a.r and a.cpu is not None]
    if good:
        devs = [(a.r["cr_achieved"] / a.r["cr_target"] - 1) * 100 for a in good]
        p99s = [a.r["cr_late_p99"] for a in good]
        cpcs = [a.cpu / max(1, a.r["cr_issued"]) * 1e6 for a in good]
        errs = sum(a.r.get("errors", 0) for a in good)
        rounds = "; ".join("%+.2f %% p99 %.3f ms max %.3f resp p99 %.3f %.1f us/call%s" % (
            d, a.r["cr_late_p99"], a.r["cr_late_max"], a.r["cr_resp_p99"], c,
            "" if a.r.get("errors") == 0 else " " + err_str(a.r)) for a, d, c in zip(good, devs, cpcs))
        fig = ("achieved %+.2f %% of %.0f/s, lateness p99 %.3f ms, %.2f us CPU/call (medians of %d: %s), "
               "errors %d") % (cr_median(devs), good[0].r["cr_target"], cr_median(p99s), cr_median(cpcs),
                               len(good), rounds, errs)
        # The row measures the client only where the server is not the limit: nginx's
        # worker at most 50 % busy (median over rshperf's rounds).
        ngx = [float(a.meta["nginx_cpu_pct"]) for a in good if "nginx_cpu_pct" in a.meta]
        ngx_ok = bool(ngx) and cr_median(ngx) <= 50
        fig += ", nginx worker %s of a core" % ("%.0f %%" % cr_median(ngx) if ngx else "?")
        ok = (len(good) == len(cr_pairs) and all(abs(d) <= 0.5 for d in devs)
              and cr_median(p99s) <= 1.0 and errs == 0 and ngx_ok)
        ws = [w for _, w in cr_pairs if w.present and "wrk_rps" in w.r and "wrk2_p99_ms" in w.r
              and w.cpu is not None]
        if ws:
            w_cpr = [w.cpu / max(1, w.r["wrk_requests"]) * 1e6 for w in ws]
            anc = "wrk2 -t1 -c50: %s req/s, p99 %.3f ms, %.2f us CPU/req (medians of %d: %s)" % (
                fmt_rate(cr_median([w.r["wrk_rps"] for w in ws])), cr_median([w.r["wrk2_p99_ms"] for w in ws]),
                cr_median(w_cpr), len(ws),
                "; ".join("p99 %.3f ms" % w.r["wrk2_p99_ms"] for w in ws))
            # Response time from the scheduled moment, as wrk2 measures it: rshperf's
            # p99 at most 10 % above wrk2's (below it is no defect of the client).
            resp = cr_median([a.r["cr_resp_p99"] for a in good]) / max(
                1e-9, cr_median([w.r["wrk2_p99_ms"] for w in ws]))
            ok = ok and resp <= 1.10
            ratio = "response p99 %.2fx wrk2's, CPU %.2fx" % (
                resp, cr_median(cpcs) / max(1e-9, cr_median(w_cpr)))
        else:
            anc, ratio = "wrk2 not found (not a Debian package; WRK2=path)", "-"
            ok = False
    else:
        fig, anc, ratio, ok = "missing data (rc %s)" % ",".join(str(a.rc) for a, _ in cr_pairs), "-", "-", False
    rows.append((label, fig, anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ SWEEP (the rate walk from 2,000 to 30,000 vs --find-max)
def sweep_doc(name):
    t = rd(name, "json")
    try:
        return json.loads(t) if t else None
    except ValueError:
        return None


for _k in range(1, int(SUITE.get("sweep_rounds", "0") or 0) + 1):
    walk, grid, search = (sweep_doc("SWEEP.%s%d" % (w, _k)) for w in ("walk", "grid", "search"))
    label = "SWEEP round %d: walk 2000..30000 step 2000, 3 s steps, vs --find-max" % _k
    if not (walk and grid):
        rows.append((label, "missing data", "-", "-", verdict(False)))
        continue

    def knee_runs(d):
        return d["result"]["knee"], len(d["steps"]), [s["rate"] for s in d["steps"]]

    kw, nw, _ = knee_runs(walk)
    kg, ng, rg = knee_runs(grid)
    fig = "--find-max on the grid: knee %s in %d runs (%s)" % (kg, ng, ", ".join("%g" % r for r in rg))
    if search:
        ks, ns, rs = knee_runs(search)
        fig += "; --find-max --precision 2: %s in %d runs (%s)" % (ks, ns, ", ".join("%g" % r for r in rs))
    anc = "walk: knee %s in %d runs; %s" % (kw, nw, walk["result"]["conclusion"][:90])
    ok = kw is not None and kg is not None and abs(kg - kw) <= 2000 and 2 * ng <= nw
    rows.append((label, fig, anc, "runs %.2fx" % (ng / nw), verdict(ok)))

# ------------------------------------------------------------------ ab
ab = R["AB.ab"]
if "ab_rps" in ab.r:
    rows.append(("ab -n 30000 -c 50 (closed loop)", "-", "%s req/s, %d complete, %d failed, CPU %.2f s" % (
        fmt_rate(ab.r["ab_rps"]), ab.r.get("ab_complete", -1), ab.r.get("ab_failed", -1), ab.cpu or -1), "-", "info"))

# ------------------------------------------------------------------ AB12 (rshperf ab vs ab against rshperf serve)
a, b, small = R["AB12.rsh"], R["AB12.ab"], R["AB12.rsh10"]
n = int(SUITE.get("ab12_n", "0") or 0)
if a.present or b.present:
    def ab_fig(run):
        if "ab_rps" not in run.r or run.cpu is None:
            return None, "no report (rc %s)" % run.rc
        cpr = run.cpu / max(1, run.r.get("ab_complete", 1)) * 1e6
        return cpr, "%s req/s, %.2f us CPU/req, %d complete, %d failed, maxRSS %.1f MiB" % (
            fmt_rate(run.r["ab_rps"]), cpr, run.r.get("ab_complete", -1), run.r.get("ab_failed", -1),
            mib(run.maxrss or 0))
    cpr_a, fig = ab_fig(a)
    cpr_b, anc = ab_fig(b)
    ok, ratio = False, "-"
    if cpr_a is not None and cpr_b is not None:
        rate = a.r["ab_rps"] / b.r["ab_rps"]
        ratio = "rate %.2fx, CPU/req %.2fx" % (rate, cpr_a / cpr_b)
        ok = rate >= 1 and cpr_a <= cpr_b and a.r.get("ab_complete") == n and a.r.get("ab_failed") == 0
        if small.present and small.maxrss and a.maxrss:
            ratio += "; RSS at n %.1f MiB vs n/10 %.1f MiB" % (mib(a.maxrss), mib(small.maxrss))
            ok = ok and a.maxrss <= small.maxrss + 2048
    rows.append(("AB12 ab -k -c 50 -n %d (rshperf serve)" % n, fig, "ab " + anc, ratio, verdict(ok)))

# ------------------------------------------------------------------ UX, BODY, MET (unix socket, --body-file, Prometheus)
def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


ux = {k: [R["UX.%s%d" % (k, i)] for i in (1, 2, 3)] for k in ("tcp", "unix")}
if any(r.present for r in ux["tcp"] + ux["unix"]):
    def cpc(runs):
        v = [r.cpu / r.r["conns"] * 1e6 for r in runs if r.cpu is not None and r.r.get("conns")]
        return median(v), len(v)
    (c_u, n_u), (c_t, n_t) = cpc(ux["unix"]), cpc(ux["tcp"])
    counts = {k: sorted(set((r.r.get("conns"), r.r.get("replies"), r.r.get("errors")) for r in ux[k])) for k in ux}
    if c_u is not None and c_t is not None:
        fig = "unix socket: %.1f us CPU/conn (median of %d), counts %s" % (c_u, n_u, counts["unix"])
        anc = "TCP: %.1f us CPU/conn (median of %d), counts %s" % (c_t, n_t, counts["tcp"])
        ratio = "CPU/conn %.2fx" % (c_u / c_t)
        ok = c_u < c_t and counts["unix"] == counts["tcp"] == [(9000, 9000, 0)]
    else:
        fig, anc, ratio, ok = "missing data", "-", "-", False
    rows.append(("UX unix socket vs TCP, 3000/s x9000 (nginx)", fig, anc, ratio, verdict(ok)))

b, base = R["BODY.rsh"], R["BODY.base"]
if b.present or base.present:
    size_kib = int(SUITE.get("body_bytes", "5000000") or 5000000) / 1024.0
    if b.maxrss and base.maxrss and "reqs" in b.r:
        beyond = b.maxrss - base.maxrss - size_kib
        fig = "maxRSS %.1f MiB with the body, %.1f MiB without; growth beyond the file %.0f KiB; %d requests, %d replies, %s" % (
            mib(b.maxrss), mib(base.maxrss), beyond, b.r["reqs"], b.r["replies"], err_str(b.r))
        ratio = "%.2f of 1 MiB" % (beyond / 1024.0)
        ok = beyond < 1024 and b.r["reqs"] == 1000 and b.r["replies"] == 1000 and b.r.get("errors") == 0
    else:
        fig, ratio, ok = "no report (rc %s / %s)" % (b.rc, base.rc), "-", False
    rows.append(("BODY 5 MB --body-file x1000, RSS < file + 1 MiB", fig, "-", ratio, verdict(ok)))

m = R["MET"]
if m.present:
    lines = [l for l in m.out.splitlines() if l.startswith(("report:", "prometheus:"))]
    ok = m.rc == 0 and "PASS" in m.out
    fig = "; ".join(lines) or ("no output (rc %s): %s" % (m.rc, m.err.strip()[-200:]))
    rows.append(("MET Prometheus 1 s scrapes of a 30 s run = report", fig, "-", "-", verdict(ok)))

# ------------------------------------------------------------------ print
if SUITE.get("integ_only") == "1":
    rows = [r for r in rows if r[0].startswith(("UX", "BODY", "MET"))]
if SUITE.get("h2_only") == "1":
    rows = [row for row in rows if row[0].startswith("H2")]
if SUITE.get("h3_only") == "1":
    rows = [row for row in rows if row[0].startswith("H3")]
if SUITE.get("ab12_only") == "1":
    rows = [r for r in rows if r[0].startswith("AB12")]
if SUITE.get("cr_only") == "1":
    rows = [r for r in rows if r[0].startswith("CR")]
if SUITE.get("sweep_only") == "1":
    rows = [r for r in rows if r[0].startswith("SWEEP")]
if SUITE.get("pacing_only") == "1":
    rows = [r for r in rows if r[0].startswith(("PACE", "FLOOR", "OVL"))]
hdr = ("target", "rshperf figure", "anchor figure", "ratio", "pass/fail")
print("rshperf benchmark (%s run, binary %s built %s, git %s)" % (
    "h2-only" if SUITE.get("h2_only") == "1" else "integrations-only" if SUITE.get("integ_only") == "1" else "quick" if SUITE.get("quick") == "1" else "full",
    SUITE.get("rshperf", "?"), SUITE.get("rshperf_mtime", "?"),
    SUITE.get("git", "?")))
print()
print(" | ".join(hdr))
print("-|-|-|-|-")
for row in rows:
    print(" | ".join(row))
print()
npass = sum(1 for r in rows if r[4] == "PASS")
nfail = sum(1 for r in rows if r[4] == "FAIL")
print("%d PASS, %d FAIL" % (npass, nfail))
print()
print("kernel / limits: ip_local_port_range %s (%d ports), tcp_tw_reuse %s%s, tcp_max_tw_buckets %s, "
      "tcp_tw_reuse_delay %s ms, somaxconn %s, tcp_max_syn_backlog %s, ulimit -n %s, %s CPUs, kernel %s" % (
          SUITE.get("port_range"),
          (lambda p: int(p[1]) - int(p[0]) + 1)(SUITE.get("port_range", "0 0").split()),
          SUITE.get("tw_reuse"),
          "" if SUITE.get("tw_reuse") in ("1", "2") else " (WARNING: 0 -> TIME_WAIT ports not reused; P1/P3 may hit addrunavail)",
          SUITE.get("max_tw_buckets"), SUITE.get("tw_reuse_delay"), SUITE.get("somaxconn"), SUITE.get("syn_backlog"), SUITE.get("ulimit_n"),
          SUITE.get("nproc"), SUITE.get("kernel")))
print("P4 method: SYNs (SYN set, ACK clear) to port 8080 on lo captured by tcpdump with nanosecond timestamps; "
      "only SYNs with TCP window 16001 (the runs use --recv-buffer 16001) are kept, retransmissions (same port+ISN) "
      "dropped; ideal schedule t_k = t_0 + k*100us with t_0 = median(t_k - k*100us) (nominal period, not fitted); "
      "wire rate = (n-1)/(t_last - t_first). Least-squares fit in P4.*.pacing.")
print("P2: rshperf --num-calls = wrk's req/s * 5 s / 50 (rounded), so both run ~5 s; CPU = user+sys from /usr/bin/time "
      "divided by requests completed.  P3/P5 CPU and max RSS: /usr/bin/time of the client.  P6: VmRSS of the client pid.")
print()
print("per-run context (client CPU from /usr/bin/time; nginx worker CPU from /proc/<pid>/stat over the run's wall time):")
for n, run in R.items():
    d = diag(run)
    if d:
        print("  " + d)
t = rd("P1.rsh", "perf")
if t:
    print()
    print("P1.rsh perf top symbols (--perf):")
    for line in t.strip().splitlines():
        print("  " + " ".join(line.split()[:3]))
for n in ("P4.rsh", "P4.httperf", "PACE600.rsh", "PACE600.httperf", "PACE5000.rsh", "PACE5000.httperf"):
    t = rd(n, "pacing")
    if t:
        print()
        print("%s pacing detail:" % n)
        for line in t.strip().splitlines()[1:]:
            print("  " + line)
        td = rd(n, "tcpdump") or ""
        m = re.search(r"(\d+) packets dropped by kernel", td)
        if m and int(m.group(1)):
            print("  WARNING: tcpdump dropped %s packets" % m.group(1))
print()
print("commands:")
for n, run in R.items():
    if run.present:
        print("  %-12s %s" % (n, run.cmd))
if "suite_runtime_s" in SUITE:
    print()
    print("suite runtime %s s; raw outputs in %s" % (SUITE["suite_runtime_s"], D))
