#!/usr/bin/env bash
# The STREAM accuracy row: rshperf's time to first event and gaps between events
# against the streaming server's own clock, over HTTP/1.1, h2c, h2 and HTTP/3.
#
#   bench/stream_accuracy.sh [--out DIR]      (or bench/run.sh --stream-accuracy-only)
#
# Starts scripts/sse.sh (scripts/sse_server.py under uvicorn, behind nginx for
# HTTP/1.1, h2c and h2, behind caddy for HTTP/3) with its event log, then runs, in
# $ROUNDS rounds whose order of versions rotates, for each version (and for
# h1-direct, HTTP/1.1 straight to uvicorn, the control without a proxy):
#   rshperf --server 127.0.0.1 --port P [--http-version 2 [--ssl] | 3] \
#     --uri '/stream?events=200&gap_ms=10&first_ms=20&done=1&tag=rR-V' \
#     --stream sse --num-conns 50 --rate 25 --timeout 10 --json DIR/rR-V.json
# (50 streams of 200 events 10 ms apart, the first 20 ms after the request's
# receipt), stops the server (it writes its log) and compares, per run, rshperf's
# gap and first-event p50, p90, p99 with the server's (bench/stream_accuracy.py says
# how): PASS when every figure is within 2 % or 100 us. The machine's load average
# before each run is in DIR/load.tsv.
# Needs what scripts/sse.sh needs, python3, and the rshperf binary (RSHPERF, default
# target/release/rshperf). Env: ROUNDS (3), STREAMS (50), EVENTS (200), GAP_MS (10),
# FIRST_MS (20), RATE (25 new streams per second), SSE_PORT (22100: the five ports
# from it, see scripts/sse.sh), SSE_DIR (DIR/sse).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
OUT=/tmp/rshperf-stream-accuracy
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "stream_accuracy.sh: unknown argument: $1 (--out DIR exists)" >&2; exit 2 ;;
  esac
  shift
done
ROUNDS=${ROUNDS:-3}
STREAMS=${STREAMS:-50}
EVENTS=${EVENTS:-200}
GAP_MS=${GAP_MS:-10}
FIRST_MS=${FIRST_MS:-20}
RATE=${RATE:-25}
RSH=${RSHPERF:-$root/target/release/rshperf}
[ -x "$RSH" ] || { echo "stream_accuracy.sh: no rshperf at $RSH (cargo build --release --locked)" >&2; exit 1; }
export SSE_PORT=${SSE_PORT:-22100}
export SSE_DIR=${SSE_DIR:-$OUT/sse}
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT/runs.tsv" "$OUT/load.tsv" "$OUT/commands.txt"
export SSE_EVENT_LOG=$OUT/events.csv
bash "$root/scripts/sse.sh" start
trap 'bash "$root/scripts/sse.sh" stop >/dev/null 2>&1 || true' EXIT

# Each version: its name and the options that reach it.
# h1-direct, straight to uvicorn, is the control: the same client with no proxy;
# h2-caddy, HTTP/2 over TLS to caddy's TCP side, is HTTP/3's: the same proxy over TCP.
versions=(
  "h1-direct|--port $SSE_PORT"
  "h1|--port $((SSE_PORT + 1))"
  "h2c|--port $((SSE_PORT + 2)) --http-version 2"
  "h2|--port $((SSE_PORT + 3)) --http-version 2 --ssl"
  "h3|--port $((SSE_PORT + 4)) --http-version 3"
  "h2-caddy|--port $((SSE_PORT + 4)) --http-version 2 --ssl"
)
n=${#versions[@]}
# The wire, the second reference (bench/stream_wire.py): tcpdump on lo of the two
# plaintext HTTP/1.1 ports, as root with tcpdump (WIRE=0 skips it).
wire_ports=("$SSE_PORT" "$((SSE_PORT + 1))")
WIRE=${WIRE:-1}
if [ "$WIRE" = 1 ] && { [ "$(id -u)" != 0 ] || ! command -v tcpdump >/dev/null; }; then
  echo "stream_accuracy.sh: the wire reference needs root and tcpdump (WIRE=0 runs without it)" >&2
  exit 1
fi
if [ "$WIRE" = 1 ]; then
  tcpdump -i lo -s 512 -U -n -w "$OUT/wire.pcap" \
    "tcp port ${wire_ports[0]} or tcp port ${wire_ports[1]}" 2>"$OUT/tcpdump.err" &
  tcpdump_pid=$!
  trap 'kill $tcpdump_pid 2>/dev/null; bash "$root/scripts/sse.sh" stop >/dev/null 2>&1 || true' EXIT
  sleep 1
fi
for r in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((n - 1))); do
    entry=${versions[$(((k + r - 1) % n))]}
    v=${entry%%|*}; opts=${entry#*|}
    tag=r$r-$v
    uri="/stream?events=$EVENTS&gap_ms=$GAP_MS&first_ms=$FIRST_MS&done=1&tag=$tag"
    # shellcheck disable=SC2086
    cmd=("$RSH" --server 127.0.0.1 $opts --uri "$uri" --stream sse \
         --num-conns "$STREAMS" --rate "$RATE" --timeout 10 --json "$OUT/$tag.json")
    printf '%s\t%s\t%s\n' "$r" "$v" "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/load.tsv"
    echo "${cmd[*]}" >> "$OUT/commands.txt"
    timeout 120 "${cmd[@]}" > "$OUT/$tag.txt" 2>&1 || { echo "stream_accuracy.sh: run $tag failed (see $OUT/$tag.txt)" >&2; exit 1; }
    grep '^Stream:' "$OUT/$tag.txt" | sed "s/^/$tag /"
    printf '%s\t%s\t%s\t%s\n' "$r" "$v" "$tag" "$OUT/$tag.json" >> "$OUT/runs.tsv"
    sleep 1
  done
done
bash "$root/scripts/sse.sh" stop >/dev/null
if [ "$WIRE" = 1 ]; then
  kill "$tcpdump_pid"
  wait "$tcpdump_pid" || true
fi
trap - EXIT
python3 "$here/stream_accuracy.py" "$OUT/runs.tsv" "$OUT/events.csv" | tee "$OUT/table.md"
if [ "$WIRE" = 1 ]; then
  echo
  echo "Against the wire (tcpdump on lo; HTTP/1.1 in plaintext only):"
  echo
  python3 "$here/stream_wire.py" "$OUT/runs.tsv" "$OUT/wire.pcap" \
    "h1-direct=${wire_ports[0]}" "h1=${wire_ports[1]}" | tee "$OUT/wire.md"
fi
echo "machine: $(nproc) CPUs, load average before each run in $OUT/load.tsv; $(date -u '+%Y-%m-%d %H:%M UTC')"
