#!/usr/bin/env bash
# Does `rshperf compare` tell a 20 % slower server from noise? Alternating runs against
# the loopback nginx (scripts/nginx.sh, port 8080) behind bench/delay_proxy.py, a
# stand-in application server whose handler takes 50 ms (base) or 60 ms (the slowed
# build: +20 % handler time, about +20 % response time: nginx answers /1k.html in a
# fraction of a millisecond).
#
#   bash bench/compare.sh [PAIRS]        (default 10)
#
# For each pair i: a base run, a slowed run, a second base run (in this order, so
# drift hits both comparisons alike), each `--rate 100 --num-conns 500` (5 s). Then
#   compare base_i slow_i   must trip the gate       (true positive)
#   compare base_i base2_i  must not trip it          (false positive)
# with the gates 'p50>+10%' and 'p90>+10%'. Prints one line per pair and the counts.
# Needs python3, nginx on HTTP_PORT (8080); rshperf is target/release/rshperf or
# $RSHPERF. Loopback only; about 3 minutes for 10 pairs.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-10}
rshperf=${RSHPERF:-target/release/rshperf}
http_port=${HTTP_PORT:-8080}
proxy_port=${PROXY_PORT:-18480}
out=${OUT:-/tmp/rshperf-compare-bench}
mkdir -p "$out"
delay_file="$out/delay_ms"
echo 50 >"$delay_file"
python3 bench/delay_proxy.py "$proxy_port" "$http_port" "$delay_file" >"$out/proxy.log" 2>&1 &
proxy=$!
trap 'kill "$proxy" 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$out/proxy.log" && break; sleep 0.05; done
grep -q listening "$out/proxy.log" || { echo "proxy did not start" >&2; exit 1; }

run() { # run NAME DELAY_MS
    echo "$2" >"$delay_file"
    timeout 60 "$rshperf" --server 127.0.0.1 --port "$proxy_port" --uri /1k.html \
        --rate 100 --num-conns 500 --timeout 5 --json="$out/$1.json" >/dev/null 2>&1
}
gates=(--fail-on-regression 'p50>+10%' --fail-on-regression 'p90>+10%')
verdict() { # verdict BASE NEW: "trip" or "pass", and the p50/p90 changes
    local status=0
    "$rshperf" compare "${gates[@]}" --format json "$out/$1.json" "$out/$2.json" \
        >"$out/$1-vs-$2.cmp.json" || status=$?
    python3 - "$out/$1-vs-$2.cmp.json" "$status" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["figure"]: x for x in d["figures"]}
show = lambda k: "%+.1f%% (%s)" % (f[k]["change_pct"], f[k]["verdict"])
state = {"3": "trip", "0": "pass"}.get(sys.argv[2], "error " + sys.argv[2])
print(state, "p50", show("percentiles_response_p50"), "p90", show("percentiles_response_p90"))
PY
}
tp=0 fp=0
for i in $(seq "$pairs"); do
    run "base$i" 50
    run "slow$i" 60
    run "again$i" 50
    slow=$(verdict "base$i" "slow$i")
    same=$(verdict "base$i" "again$i")
    [[ $slow == trip* ]] && tp=$((tp + 1))
    [[ $same == trip* ]] && fp=$((fp + 1))
    echo "pair $i: slowed: $slow | identical: $same"
done
echo "slowed by 20 %: gate tripped in $tp of $pairs pairs"
echo "identical: gate tripped in $fp of $pairs pairs"
