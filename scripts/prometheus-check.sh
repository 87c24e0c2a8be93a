#!/usr/bin/env bash
# Checks rshperf's --metrics-listen with the real thing: Debian's prometheus
# (apt-get install prometheus) scrapes rshperf every second during a 30 s run,
# then its HTTP API is asked for the last rshperf_replies_total; it must equal
# the replies of rshperf's report (and the same for requests and connections).
#
#   scripts/prometheus-check.sh [URL]     (default http://127.0.0.1:8080/1k.html,
#                                          the loopback nginx: scripts/nginx.sh start)
# Env: RSHPERF=binary (default target/release/rshperf), SECONDS_RUN=30, RATE=200
#
# Loopback only; prometheus and rshperf get free ports; everything started here is
# stopped here, by PID. Prints "PASS ..." and exits 0, or "FAIL ..." and exits 1.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
URL=${1:-http://127.0.0.1:8080/1k.html}
RSH=${RSHPERF:-$root/target/release/rshperf}
RUN_S=${SECONDS_RUN:-30}
RATE=${RATE:-200}
die() { echo "FAIL prometheus-check: $*" >&2; exit 1; }
command -v prometheus >/dev/null 2>&1 || die "prometheus not installed (apt-get install prometheus)"
command -v python3 >/dev/null 2>&1 || die "python3 needed"
command -v curl >/dev/null 2>&1 || die "curl needed"
[ -x "$RSH" ] || (cd "$root" && cargo build --release) || die "no rshperf binary"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
MPORT=$(free_port); PPORT=$(free_port)
dir=$(mktemp -d /tmp/rshperf-prom.XXXXXX)
PROM_PID=
cleanup() { [ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
cat > "$dir/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rshperf
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
YML
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
  --web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$dir/prometheus.log" 2>&1 &
PROM_PID=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PPORT/-/ready" >/dev/null 2>&1 && break
  kill -0 "$PROM_PID" 2>/dev/null || { cat "$dir/prometheus.log" >&2; die "prometheus did not start"; }
  sleep 0.2
done
curl -sf "http://127.0.0.1:$PPORT/-/ready" >/dev/null || die "prometheus not ready"
# Linger 4 s: at 1 s scrapes, the last ones see the final totals.
timeout $((RUN_S + 60)) "$RSH" "$URL" --rate "$RATE" --runtime "$RUN_S" --timeout 5 \
  --metrics-listen "127.0.0.1:$MPORT" --metrics-linger 4 --no-progress >"$dir/report.txt" 2>"$dir/stderr.txt" \
  || { cat "$dir/report.txt" "$dir/stderr.txt" >&2; die "rshperf failed"; }
query() {
  curl -sf --get "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(int(float(r[0]["value"][1])) if r else "none")'
}
read -r conns requests replies < <(python3 - "$dir/report.txt" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    if line.startswith("Total:"):
        n = re.findall(r"connections (\d+) requests (\d+) replies (\d+)", line)[0]
        print(*n)
PY
)
# last_over_time: the last scraped value (once rshperf has exited, its series are
# marked stale and a plain instant query returns nothing).
p_replies=$(query 'sum(last_over_time(rshperf_replies_total{class=~"[1-5]xx"}[10m]))')
p_requests=$(query 'sum(last_over_time(rshperf_requests_total[10m]))')
p_conns=$(query 'sum(last_over_time(rshperf_connections_total[10m]))')
samples=$(query 'count_over_time(rshperf_requests_total[10m])')
echo "report:     connections $conns requests $requests replies $replies"
echo "prometheus: connections $p_conns requests $p_requests replies $p_replies ($samples scrapes)"
if [ "$p_replies" = "$replies" ] && [ "$p_requests" = "$requests" ] && [ "$p_conns" = "$conns" ] && [ "$replies" -gt 0 ]; then
  echo "PASS prometheus-check: the last scrape holds the report's totals"
else
  die "prometheus and the report differ"
fi
