#!/usr/bin/env bash
# The replay accuracy rows of docs/replay.md: ROUNDS rounds (default 3) of the
# synthetic 10,000-request log replayed at --speed 1 and 4 against a loopback nginx
# (1 worker, `return 204`, a log of $msec $request_time "$request"), each checked by
# bench/replay_accuracy.py (every request once, p99 arrival error <= 1 ms).
# MODE is --replay-connections: pool (the default: the rows, 16 connections) or
# per-client / per-request (the log's 50 clients; at most 1,000 connections).
#
#   PORT=21090 ROUNDS=3 bench/replay_accuracy.sh [path/to/rshperf]
#   MODE=per-client PORT=21090 ROUNDS=1 bench/replay_accuracy.sh
#
# Starts and stops its own nginx (pid by its pid file) in a temporary directory;
# exit 1 when a row fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../target/release/rshperf}
port=${PORT:-21090}
rounds=${ROUNDS:-3}
mode=${MODE:-pool}
case $mode in
  pool) conns=(--num-conns 16) ;;
  per-client|per-request) conns=() ;;
  *) echo "MODE is pool, per-client or per-request (not $mode)" >&2; exit 2 ;;
esac
dir=$(mktemp -d /tmp/replay-accuracy.XXXXXX)
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
  log_format replay '\$msec \$request_time "\$request"';
  access_log $dir/access.log replay;
  server {
    listen 127.0.0.1:$port;
    location / { return 204; }
  }
}
CONF
nginx -c "$dir/nginx.conf" -p "$dir" 2>/dev/null
trap 'kill "$(cat "$dir/nginx.pid")" 2>/dev/null; rm -rf "$dir"' EXIT
python3 "$here/replay_accuracy.py" gen "$dir/synthetic.log"
status=0
for round in $(seq 1 "$rounds"); do
  for speed in 1 4; do
    : > "$dir/access.log"
    kill -USR1 "$(cat "$dir/nginx.pid")"   # reopen the emptied log
    sleep 0.2
    "$bin" replay "$dir/synthetic.log" --speed "$speed" --server 127.0.0.1 \
      --port "$port" --replay-connections "$mode" ${conns[@]+"${conns[@]}"} \
      > "$dir/run.out" 2> "$dir/run.err" || status=1
    sleep 0.5   # nginx writes its log lines as the requests end
    late=$(grep -o 'Call lateness \[ms\]:.*p99 [0-9.]*' "$dir/run.out" | grep -o 'p99 [0-9.]*' || true)
    printf 'round %d ' "$round"
    python3 "$here/replay_accuracy.py" check "$dir/synthetic.log" "$dir/access.log" "$speed" \
      | tr -d '\n' || status=1
    echo "; lateness $late"
  done
done
exit $status
