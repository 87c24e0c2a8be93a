#!/usr/bin/env bash
# Does `rshperf compare` find a 10 % slower server in short runs, and leave identical
# runs alone? Real pairs through bench/delay_proxy.py in front of the loopback nginx
# (scripts/nginx.sh, port 8080), for two workloads:
#   A  3-s runs at 400 calls/s:            --call-rate 400 --num-conns 4 --runtime 3
#   B  2-s runs of 20 connections × 100:   --call-rate 1000 --num-conns 20 --num-calls 100
#
#   bash bench/compare_power.sh [PAIRS]        (default 20)
#
# The base server answers DELAY_MS (2.0) later than nginx; the slowed one SLOW_PCT (10)
# % of the base's measured response p50 later still (a response time 10 % longer). For
# each pair i, alternating: base_i, slow_i, again_i (delay as base_i). Then
#   compare base_i slow_i     flagged when the verdict is "worse"         (power)
#   compare base_i again_i    flagged when the verdict is not "no change" (false alarm)
# with compare's defaults (alpha 0.01 over the figures about the server, --run-noise 1),
# and the same with the gate --fail-on-regression 'p50>+5%' alone (flagged: exit 3).
# Every text output is checked: each printed change is new/base − 1 of the printed
# values, each interval is n/a or a pair of numbers of at most one decimal, and no
# quantile with fewer than 10 values above it has an interval. Prints per workload the
# counts, the load average (min–max over the runs) and the run-to-run noise the
# identical pairs show: the sd of ln(again/base) of p50, p90, p99 over √2 (one run's
# total noise) beside the within-run noise compare estimates from the windows
# (compare --run-noise 0: its standard error over √2).
#
# REUSE=1 with OUT=DIR compares the runs already in DIR again (a changed compare on
# the same runs): no run is made and the proxy is not started.
#
# RT=1 runs the proxy and rshperf at real-time priority (chrt -f 20 / 10, root): on
# a machine busy with other jobs this takes their scheduling delays out of the
# measurement. Needs python3 and nginx on HTTP_PORT (8080); rshperf is
# target/release/rshperf or $RSHPERF. About 40 s a pair on two workloads.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-20}
rshperf=${RSHPERF:-target/release/rshperf}
http_port=${HTTP_PORT:-8080}
proxy_port=${PROXY_PORT:-18481}
out=${OUT:-/tmp/rshperf-compare-power}
delay=${DELAY_MS:-2.0}
slow_pct=${SLOW_PCT:-10}
workloads=${WORKLOADS:-A B}
rt=()
proxy_rt=()
if [[ ${RT:-0} == 1 ]]; then
    rt=(chrt -f 10)
    proxy_rt=(chrt -f 20)
fi
mkdir -p "$out"
delay_file="$out/delay_ms"
reuse=${REUSE:-0}
if [[ $reuse != 1 ]]; then
    echo "$delay" >"$delay_file"
    "${proxy_rt[@]}" python3 bench/delay_proxy.py "$proxy_port" "$http_port" "$delay_file" \
        >"$out/proxy.log" 2>&1 &
    proxy=$!
    trap 'kill "$proxy" 2>/dev/null || true' EXIT
    for _ in $(seq 100); do grep -q listening "$out/proxy.log" && break; sleep 0.05; done
    grep -q listening "$out/proxy.log" || { echo "proxy did not start" >&2; exit 1; }
fi

args() { # args WORKLOAD
    case $1 in
        A) echo --call-rate 400 --num-conns 4 --runtime 3 ;;
        B) echo --call-rate 1000 --num-conns 20 --num-calls 100 ;;
    esac
}
run() { # run WORKLOAD NAME DELAY_MS
    [[ $reuse == 1 ]] && return
    echo "$3" >"$delay_file"
    # shellcheck disable=SC2046
    timeout 60 "${rt[@]}" "$rshperf" --server 127.0.0.1 --port "$proxy_port" --uri /1k.html \
        $(args "$1") --timeout 5 --json="$out/$1-$2.json" >/dev/null 2>&1
    cut -d' ' -f1 /proc/loadavg >>"$out/$1-load"
}
check() { # check WORKLOAD BASE NEW NOISE: compare's outputs, checked; prints a record
    local w=$1 b=$2 n=$3 status=0
    "$rshperf" compare "$out/$w-$b.json" "$out/$w-$n.json" >"$out/$w-$b-$n.txt" || status=$?
    [[ $status == 0 ]] || { echo "compare exited $status" >&2; exit 1; }
    "$rshperf" compare --format json "$out/$w-$b.json" "$out/$w-$n.json" >"$out/$w-$b-$n.cmp.json"
    "$rshperf" compare --format json --run-noise 0 "$out/$w-$b.json" "$out/$w-$n.json" \
        >"$out/$w-$b-$n.within.json"
    status=0
    "$rshperf" compare --fail-on-regression 'p50>+5%' "$out/$w-$b.json" "$out/$w-$n.json" \
        >/dev/null || status=$?
    python3 - "$out/$w-$b-$n" "$status" <<'PY'
import json, math, re, sys
stem, gate = sys.argv[1], sys.argv[2]
text = open(stem + ".txt").read().splitlines()
doc = json.load(open(stem + ".cmp.json"))
within = {f["figure"]: f for f in json.load(open(stem + ".within.json"))["figures"]}
def pct(v):
    if round(v * 10) == 0:
        return "+0.0%"
    return "%+.0f%%" % v if abs(v) >= 999.95 else "%+.1f%%" % v
bad = []
for f, line in zip(doc["figures"], text[2:]):
    cells = [c.strip() for c in re.split(r"  +", line.strip())]
    base, new, change, ci = cells[1], cells[2], cells[3], cells[4]
    if change != "-" and pct(100 * (float(new) / float(base) - 1)) != change:
        bad.append("change %s is not %s/%s - 1" % (change, new, base))
    if not (ci in ("-",) or ci.startswith("n/a: ")
            or re.fullmatch(r"[+-]\d+(\.\d)?% … [+-]\d+(\.\d)?%", ci)):
        bad.append("interval %r" % ci)
    m = re.search(r"_p(\d+)(?:_(\d+))?$", f["figure"])
    if m and f["ci_pct"] is not None:
        q = float(m.group(1) + ("." + m.group(2) if m.group(2) else "")) / 100
        hist = f["figure"].split("_")[1]
        # The values behind a quantile: the smaller side's.
        counts = [json.load(open(p))["percentiles"][hist]["count"]
                  for p in doc["base"] + doc["new"]]
        if min(counts) * (1 - q) < 10:
            bad.append("%s has an interval with %d values" % (f["figure"], min(counts)))
if bad:
    print("CHECK FAILED", stem, "; ".join(bad))
fig = {f["figure"]: f for f in doc["figures"]}
rec = {"verdict": doc["verdict"], "gate": gate == "3"}
for q in ("p50", "p90", "p99"):
    k = "percentiles_response_" + q
    rec[q] = [fig[k]["base"], fig[k]["new"], within[k]["se_log_pct"], fig[k]["verdict"]]
print(json.dumps(rec))
PY
}

for w in $workloads; do
    [[ $reuse == 1 ]] || : >"$out/$w-load"
    : >"$out/$w-records"
    # The base's response p50, for the slowed delay: three runs, the median.
    for k in 1 2 3; do run "$w" "cal$k" "$delay"; done
    p50=$(python3 -c '
import json, statistics, sys
print(statistics.median(json.load(open(f))["percentiles"]["response"]["p50"] for f in sys.argv[1:]))
' "$out/$w"-cal*.json)
    slow=$(python3 -c "print(round($delay + $slow_pct / 100 * $p50, 3))")
    echo "workload $w: $(args "$w"); base delay $delay ms (response p50 $p50 ms), slowed $slow ms"
    for i in $(seq "$pairs"); do
        run "$w" "base$i" "$delay"
        run "$w" "slow$i" "$slow"
        run "$w" "again$i" "$delay"
        s=$(check "$w" "base$i" "slow$i")
        a=$(check "$w" "base$i" "again$i")
        echo "slow $s" >>"$out/$w-records"
        echo "same $a" >>"$out/$w-records"
        echo "  pair $i: slowed: $(echo "${s##*$'\n'}" | cut -c1-90) | identical: $(echo "${a##*$'\n'}" | cut -c1-60)"
        [[ $s == *"CHECK FAILED"* || $a == *"CHECK FAILED"* ]] && echo "$s$a" | grep "CHECK FAILED"
    done
    python3 - "$out/$w-records" "$out/$w-load" "$pairs" <<'PY'
import json, math, statistics, sys
recs = [l.split(" ", 1) for l in open(sys.argv[1]) if l.startswith(("slow {", "same {"))]
slow = [json.loads(r) for k, r in recs if k == "slow"]
same = [json.loads(r) for k, r in recs if k == "same"]
load = [float(x) for x in open(sys.argv[2])]
n = int(sys.argv[3])
print("  slowed by %s: verdict worse in %d of %d pairs; gate p50>+5%% tripped in %d of %d"
      % ("10 %", sum(r["verdict"] in ("worse", "mixed") for r in slow), len(slow),
         sum(r["gate"] for r in slow), len(slow)))
print("  identical: verdict not 'no significant change' in %d of %d pairs; gate tripped in %d of %d"
      % (sum(r["verdict"] != "no significant change" for r in same), len(same),
         sum(r["gate"] for r in same), len(same)))
for q in ("p50", "p90", "p99"):
    d = [math.log(r[q][1] / r[q][0]) for r in same if r[q][0] and r[q][1]]
    se = [r[q][2] / 100 / math.sqrt(2) for r in same if r[q][2] is not None]
    total = statistics.stdev(d) / math.sqrt(2) if len(d) > 1 else float("nan")
    inside = math.sqrt(statistics.mean(x * x for x in se)) if se else float("nan")
    run = math.sqrt(max(0.0, total ** 2 - inside ** 2))
    flags = sum(r[q][3] in ("slower", "faster") for r in same)
    print("  %s: one run's noise %.1f%%, of which within the run (windows) %.1f%%: run-to-run %.1f%%;"
          " identical pairs with %s significant: %d"
          % (q, 100 * total, 100 * inside, 100 * run, q, flags))
print("  load average over the runs: %.1f-%.1f (median %.1f)"
      % (min(load), max(load), statistics.median(load)))
PY
done
