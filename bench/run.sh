#!/usr/bin/env bash
# rshperf benchmark suite: targets P1..P7 plus --hog and ab anchors,
# side by side with httperf 0.9.0 / wrk / ab on the same machine, loopback only.
#
#   bench/run.sh [--quick] [--h2-only] [--h3-only] [--cr-only] [--out DIR]
#
#   --quick   skip the anchor runs that no pass/fail decision needs (httperf at
#             P1, P5, P6 and --hog); the targets themselves run unchanged.
#   --h2-only run only the HTTP/2 rows (H2C, H2S: h2load -n $H2_N -c 50 -m 10
#             against rshperf --http-version 2 on nginx's 8082 h2c and 8444 h2,
#             $H2_ROUNDS alternating rounds each, medians compared)
#   --h3-only run only the HTTP/3 row (H3: `oha -n $H3_N -c 50 -p 10 --http-version 3`
#             against rshperf --http-version 3 with 50 connections x 10 streams in
#             flight, /1k.html from the loopback caddy of scripts/caddy.sh on
#             $CADDY_PORT; $H3_ROUNDS alternating rounds, medians compared)
#   --cr-only run only the call-rate row (CR: --call-rate $CR_RATE
#             over 50 keep-alive connections for $CR_S s against nginx on 8080:
#             achieved rate within 0.5 %, lateness p99 <= 1 ms; $CR_ROUNDS rounds,
#             medians; wrk2 -R alternating with it when a wrk2 binary is found)
#   --integrations-only run only the integration rows: UX (unix socket vs TCP to
#             nginx, CPU per connection, medians of 3 alternating runs), BODY
#             (5 MB --body-file POSTed 1,000 times to rshperf serve: RSS growth)
#             and MET (scripts/prometheus-check.sh: Prometheus vs the report)
#   --reqlog-only run only the request-log row (RL: 50 keep-alive connections of
#             $RL_CALLS calls each, back to back, against nginx on 8080, without
#             --request-log, with it in binary and in JSON lines; $RL_ROUNDS
#             alternating rounds; client CPU (user + system) per request, medians;
#             PASS when the binary log's ratio to no log is <= 1.10)
#   --uring-only run only the io_uring rows (URING.*): rshperf --io epoll against
#             --io uring and the C floors of bench/floor/ (built here with make;
#             floor_uring needs liburing-dev), $URING_ROUNDS rounds, the clients'
#             order rotating, CPU of the whole process to the microsecond
#             (bench/rusage.py): NCO a new connection per request, open loop at
#             80 % of the knee (rshperf sweep --find-max on epoll, or
#             $URING_KNEE); NCC the same, closed loop with 50 in flight (both
#             $URING_NC_N connections, from no TIME_WAIT: as root `ss -K` ends
#             them); KA 50 keep-alive connections, closed loop ($URING_KA_N
#             requests); CR --call-rate 20000 over 50 connections for 5 s; OVL15,
#             OVL20 1.5x and 2x the knee for 3 s (URING_OVL=0 skips); PACE600,
#             PACE5000 SYN schedule deviation (as root, with tcpdump); SYS system
#             calls per connection (strace -c -f, 2,000/s x 4,000).
#             bench/uring_summary.py prints the medians and the ratios.
#   --stream-accuracy-only run only the STREAM row: bench/stream_accuracy.sh
#             (50 streams x 200 events 10 ms apart over HTTP/1.1, h2c, h2 and
#             HTTP/3 from the real server of scripts/sse.sh, 3 rounds; rshperf's
#             gap and first-event p50/p90/p99 against the server's own event log,
#             PASS within 2 % or 100 us), its outputs in DIR/stream-accuracy
#   --stream-only run only the streaming rows (STREAM.*), against `rshperf serve`
#             (a separate process, one thread, on a free port; needs neither nginx
#             nor root), $STREAM_ROUNDS rounds each, medians, CPU to the microsecond
#             (bench/rusage.py): SCALE 10,000 streams of an event a second
#             (/stream?events=$SCALE_EVENTS&first=1s&gap=1s, --rate 2000
#             --num-conns 10000 --overload=queue --spin off): all open at once for
#             a minute; PASS when 0 errors, 0 cut, max RSS <= 64 MiB and client
#             CPU per event <= 3 us (its steady state, from /proc between 10 s and
#             60 s, is shown beside it); beside it in each round the C floor
#             (bench/floor/floor_epoll -m stream: the same streams, one read per
#             readiness, nothing else). CURL 50 streams of $CURL_EVENTS events 1 ms
#             apart, rshperf then 50 `curl --no-buffer -s -o /dev/null` processes
#             (their summed CPU) in each round; PASS when rshperf's median CPU per
#             event <= 0.25x curl's. OPEN --call-rate R (each of $OPEN_RATES) over
#             500 connections for $OPEN_S s against a server whose first event
#             comes 20 ms + 2 ms per stream open later (first_per_open=2ms): time
#             to first event from the schedule, p50 and p99, against the rate
#             (information). bench/stream_summary.py OUT prints the table.
#             STREAM_PORT: the server's port (default 0, a free one).
#   --out DIR raw outputs (default /tmp/rshperf-bench)
#   --perf    run P1 (rshperf) under `perf record` and print its top symbols
#             (shows where a P1 shortfall goes, e.g. the kernel's ephemeral
#             port search in connect(): __inet_hash_connect)
#   --pacing  run only PACE600, PACE5000 and OVL:
#             SYN schedule deviation at 600/s and 5,000/s of rshperf and
#             httperf (tcpdump, syn_pacing.py) with their CPU seconds, and
#             OVL: rshperf's knee (sweep --find-max), then rshperf and httperf
#             at 1.5x and 2x it in $OVL_ROUNDS alternating rounds
#   --ovl-only run only OVL (the knee, then the alternating rounds)
#   --pace-only run only PACE600 and PACE5000
#   --syscalls run only SYSCALLS: system calls per connection (strace -c -f)
#             of rshperf and httperf at --rate 2000 --num-conns 4000
#   --sweep-only run only SWEEP: the rate walk
#             `sweep --low-rate 2000 --high-rate 30000 --rate-step 2000
#             --const-test-time 3` against nginx, then the same line with
#             --find-max (on the walk's grid) and with --find-max --precision 2
#             without the grid; $SWEEP_ROUNDS alternating rounds (default 1).
#             PASS when every grid search lands within one step of the walk
#             of its round in at most half its runs
#   --ab12    run only AB12: `ab -k -c 50 -n $AB_N` and
#             `rshperf ab -k -c 50 -n $AB_N` against `rshperf serve`, side by
#             side (AB_N=200000 by default; AB_N=20000 for a quick check); needs
#             neither nginx nor root
#
# Needs: the loopback nginx of scripts/nginx.sh (bash scripts/nginx.sh start):
#        /1k.html on 127.0.0.1:8080, h2c on 8082, h2 over TLS on 8444 and its unix
#        socket; httperf, wrk, ab, h2load, tcpdump (run as root), python3,
#        /usr/bin/time, ss.
# Env:   HTTP_PORT, H2C_PORT, H2_PORT, NGINX_DIR, NGINX_SOCKET as for
#        scripts/nginx.sh (scripts/ports.sh: defaults 8080, 8082, 8444 or moved with
#        HTTP_PORT, /tmp/rshperf-nginx-local and its nginx.sock); NGINX_PIDFILE, UX_SOCK override the last two's files.
#        H2_N=requests of the HTTP/2 rows (default 200000; a small n checks them)
#        H2_ROUNDS=alternating h2load/rshperf rounds of each HTTP/2 row (default 3;
#        the summary compares medians)
#        CR_RATE, CR_S=rate and seconds of the CR row (default 5000 and 10: a rate at which
#        nginx with one worker is at most half busy here; the row checks that)
#        CR_ROUNDS=rounds of the CR row (default 3; rshperf then wrk2 in each round,
#        the summary takes medians)
#        OVL_ROUNDS=alternating rounds of the OVL rows (default 3)
#        WRK2=path to a wrk2 binary (default: `wrk2` on PATH; it is not packaged:
#        build github.com/giltene/wrk2 with `make`)
#        RSHPERF=path to the binary (default target/release/rshperf, built
#        with cargo build --release when missing or older than src/; with --perf
#        target/profiling/rshperf, cargo build --profile profiling: the release
#        build with the debug information perf needs, which release strips).
#
# Every run is bounded by timeout(1); runs are separated by a pause (and a wait
# for the TIME_WAIT count to fall, bounded) so that they stay independent.
# Figures are single runs on a shared, noisy machine: ratios come from runs
# made one after the other in this invocation.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
QUICK=0
PERF=0
H2_ONLY=0
H3_ONLY=0
H3_N=${H3_N:-100000}
H3_ROUNDS=${H3_ROUNDS:-3}
CADDY_PORT=${CADDY_PORT:-8445}
H2_N=${H2_N:-200000}
H2_ROUNDS=${H2_ROUNDS:-3}
AB12_ONLY=0
PACING_ONLY=0
OVL_ONLY=0
PACE_ONLY=0
SYSCALLS_ONLY=0
INTEG_ONLY=0
AB_N=${AB_N:-200000}
CR_ONLY=0
RL_ONLY=0
RL_CALLS=${RL_CALLS:-2000}
RL_ROUNDS=${RL_ROUNDS:-5}
URING_ONLY=0
URING_ROUNDS=${URING_ROUNDS:-3}
URING_NC_N=${URING_NC_N:-12000}
URING_KA_N=${URING_KA_N:-200000}
URING_OVL=${URING_OVL:-1}
SWEEP_ONLY=0
STREAM_ACC_ONLY=0
SWEEP_ROUNDS=${SWEEP_ROUNDS:-1}
STREAM_ONLY=0
STREAM_ROUNDS=${STREAM_ROUNDS:-3}
SCALE_EVENTS=${SCALE_EVENTS:-66}
CURL_EVENTS=${CURL_EVENTS:-10000}
OPEN_RATES=${OPEN_RATES:-50 100 200 300 400}
OPEN_S=${OPEN_S:-8}
CR_RATE=${CR_RATE:-5000}
CR_S=${CR_S:-10}
CR_ROUNDS=${CR_ROUNDS:-3}
OVL_ROUNDS=${OVL_ROUNDS:-3}
WRK2=${WRK2:-$(command -v wrk2 2>/dev/null)}
OUT=/tmp/rshperf-bench
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --out) OUT=$2; shift ;;
    --perf) PERF=1 ;;
    --h2-only) H2_ONLY=1 ;;
    --h3-only) H3_ONLY=1 ;;
    --ab12) AB12_ONLY=1 ;;
    --integrations-only) INTEG_ONLY=1 ;;
    --pacing) PACING_ONLY=1 ;;
    --ovl-only) PACING_ONLY=1; OVL_ONLY=1 ;;
    --pace-only) PACING_ONLY=1; PACE_ONLY=1 ;;
    --syscalls) SYSCALLS_ONLY=1 ;;
    --cr-only) CR_ONLY=1 ;;
    --reqlog-only) RL_ONLY=1; CR_ONLY=1 ;;
    --uring-only) URING_ONLY=1 ;;
    --sweep-only) SWEEP_ONLY=1 ;;
    --stream-accuracy-only) STREAM_ACC_ONLY=1 ;;
    --stream-only) STREAM_ONLY=1 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
# The STREAM row starts its own servers (scripts/sse.sh): nothing below is needed.
if [ $STREAM_ACC_ONLY = 1 ]; then
  exec bash "$here/stream_accuracy.sh" --out "$OUT/stream-accuracy"
fi
HOST=127.0.0.1
# shellcheck source=scripts/ports.sh
. "$root/scripts/ports.sh"
PORT=$HTTP_PORT
URI=/1k.html
URL=http://$HOST:$PORT$URI
T_START=$(date +%s)

die() { echo "run.sh: $*" >&2; exit 1; }

# ---------------------------------------------------------------- prerequisites
# perf needs the debug information the release profile strips (Cargo.toml).
profile=release
[ $PERF = 1 ] && profile=profiling
RSH=${RSHPERF:-$root/target/$profile/rshperf}
if [ -z "${RSHPERF:-}" ]; then
  if [ ! -x "$RSH" ] || [ -n "$(find "$root/src" -newer "$RSH" -print -quit 2>/dev/null)" ]; then
    echo "building rshperf (binary missing or older than src/)..."
    (cd "$root" && cargo build --locked --profile $profile) || die "cargo build --profile $profile failed"
  fi
fi
[ -x "$RSH" ] || die "no rshperf binary at $RSH"
if [ $H2_ONLY = 1 ]; then
  for t in h2load python3 ss timeout; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
  done
fi
if [ $H3_ONLY = 1 ]; then
  for t in oha python3 ss timeout; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
  done
  (exec 3<>"/dev/tcp/127.0.0.1/$CADDY_PORT") 2>/dev/null \
    || die "no caddy on $CADDY_PORT: bash scripts/caddy.sh start"
fi
if [ $STREAM_ONLY = 1 ]; then
  for t in make cc curl python3 ss timeout; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
  done
fi
if [ $AB12_ONLY = 1 ]; then
  for t in ab python3 ss timeout; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
  done
fi
if [ $CR_ONLY = 1 ]; then
  for t in curl python3 ss timeout; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
  done
fi
if [ $SYSCALLS_ONLY = 1 ]; then
  for t in strace httperf curl python3 ss timeout; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
  done
fi
if [ $URING_ONLY = 1 ]; then
  for t in make cc strace python3 ss timeout; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
  done
  [ -r /usr/include/liburing.h ] || die "floor_uring needs liburing: apt-get install liburing-dev"
fi
if [ $INTEG_ONLY = 1 ]; then
  for t in prometheus curl python3 ss timeout; do
    command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
  done
fi
for t in $([ $STREAM_ONLY = 1 ] || [ $AB12_ONLY = 1 ] || [ $H2_ONLY = 1 ] || [ $CR_ONLY = 1 ] || [ $INTEG_ONLY = 1 ] || [ $SWEEP_ONLY = 1 ] || [ $SYSCALLS_ONLY = 1 ] || [ $URING_ONLY = 1 ] || echo httperf wrk ab h2load tcpdump strace python3 ss timeout); do
  command -v "$t" >/dev/null 2>&1 || die "missing tool: $t"
done
[ -x /usr/bin/time ] || die "missing /usr/bin/time (apt-get install time)"
if [ $AB12_ONLY = 0 ] && [ $H2_ONLY = 0 ] && [ $STREAM_ONLY = 0 ]; then
[ $CR_ONLY = 1 ] || [ $INTEG_ONLY = 1 ] || [ $SWEEP_ONLY = 1 ] || [ $SYSCALLS_ONLY = 1 ] || [ $URING_ONLY = 1 ] || [ "$(id -u)" = 0 ] || die "tcpdump on lo needs root"
code=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' "$URL" 2>/dev/null || true)
[ "$code" = "200 1024" ] || die "nginx not serving $URL (got '$code'); start it: bash scripts/nginx.sh start"
fi
NGINX_DIR=${NGINX_DIR:-/tmp/rshperf-nginx-local}
NGINX_PIDFILE=${NGINX_PIDFILE:-$NGINX_DIR/nginx.pid}
NGINX_WORKER=
if [ -r "$NGINX_PIDFILE" ]; then
  NGINX_WORKER=$(ps --ppid "$(cat "$NGINX_PIDFILE")" -o pid= 2>/dev/null | head -1 | tr -d ' ')
fi
[ -n "$NGINX_WORKER" ] || [ $STREAM_ONLY = 1 ] || echo "warning: nginx worker pid unknown (no $NGINX_PIDFILE); nginx CPU not measured" >&2

mkdir -p "$OUT"
rm -f "$OUT"/*.out "$OUT"/*.err "$OUT"/*.time "$OUT"/*.cmd "$OUT"/*.meta "$OUT"/*.pcap "$OUT"/*.pacing "$OUT"/*.json \
  "$OUT"/*.rss "$OUT"/*.strace "$OUT"/*.tcpdump "$OUT"/*.rc "$OUT"/*.net0 "$OUT"/*.net1 "$OUT"/*.perf "$OUT"/*.perf.data "$OUT"/summary.txt
META=$OUT/suite.meta
: > "$META"
meta() { echo "$1=$2" >> "$META"; }
meta quick $QUICK
meta h2_only $H2_ONLY
meta h3_only $H3_ONLY
meta h3_n "$H3_N"
meta h3_rounds "$H3_ROUNDS"
meta h2_n "$H2_N"
meta h2_rounds "$H2_ROUNDS"
meta cr_only $CR_ONLY
meta sweep_only $SWEEP_ONLY
meta sweep_rounds "$SWEEP_ROUNDS"
meta cr_rate "$CR_RATE"
meta cr_s "$CR_S"
meta cr_rounds "$CR_ROUNDS"
meta rshperf "$RSH"
meta rshperf_mtime "$(date -r "$RSH" '+%F %T')"
meta git "$(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" diff --quiet -- src 2>/dev/null || echo '+dirty-src')"
meta nginx_worker "${NGINX_WORKER:-}"
meta port_range "$(sysctl -n net.ipv4.ip_local_port_range | tr '\t' ' ')"
meta tw_reuse "$(sysctl -n net.ipv4.tcp_tw_reuse)"
meta tw_reuse_delay "$(sysctl -n net.ipv4.tcp_tw_reuse_delay 2>/dev/null || echo n/a)"
meta max_tw_buckets "$(sysctl -n net.ipv4.tcp_max_tw_buckets)"
meta somaxconn "$(sysctl -n net.core.somaxconn)"
meta syn_backlog "$(sysctl -n net.ipv4.tcp_max_syn_backlog)"
meta ulimit_n "$(ulimit -Sn)/$(ulimit -Hn)"
meta nproc "$(nproc)"
meta kernel "$(uname -r)"

# ---------------------------------------------------------------- helpers
timewait() { ss -s | sed -n 's/.*timewait \([0-9]*\).*/\1/p' | head -1; }
ticks() {  # utime+stime of a pid in clock ticks
  [ -n "${1:-}" ] && [ -r "/proc/$1/stat" ] || { echo 0; return; }
  awk '{sub(/.*\) /,""); print $12+$13}' "/proc/$1/stat"
}
busy() {  # machine-wide busy and total jiffies
  awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print t-$5-$6, t}' /proc/stat
}
now_ns() { date +%s%N; }
# settle MIN_S: pause MIN_S seconds (tcp_tw_reuse_delay is 1 s: older TIME_WAIT
# ports are reusable), then wait at most 8 s more while TIME_WAIT > 24000 (close
# to the whole ephemeral range).  TIME_WAIT lasts 60 s, so waiting it out is not
# an option within the time budget; every run records the count it started with.
settle() {
  sleep "${1:-2}"
  local i=0
  while [ "$(timewait)" -gt 24000 ] && [ $i -lt 8 ]; do sleep 1; i=$((i+1)); done
}
# drained: wait (at most 70 s) until TIME_WAIT is under 2,000, so that a run past
# the client's capacity does not start under the previous run's port pressure
# (connect()'s port search grows with the young TIME_WAIT sockets; 3 s at 18k/s
# leaves 55k of them). OVL needs it: both tools' completions depend on it.
drained() {
  local i=0
  while [ "$(timewait)" -gt 2000 ] && [ $i -lt 70 ]; do sleep 1; i=$((i+1)); done
  sleep 1
}
worker() {
  [ -r "$NGINX_PIDFILE" ] && ps --ppid "$(cat "$NGINX_PIDFILE")" -o pid= 2>/dev/null | head -1 | tr -d ' '
}
# pre/post bookkeeping around a run named $1
pre() {
  _name=$1
  echo "$(timewait)" > "$OUT/$_name.tw_before"
  NGINX_WORKER=$(worker)
  cat /proc/net/netstat /proc/net/snmp > "$OUT/$_name.net0"
  _ng0=$(ticks "$NGINX_WORKER"); _b0=$(busy); _t0=$(now_ns)
}
post() {
  local t1 ng1 b1 wall
  t1=$(now_ns); ng1=$(ticks "$NGINX_WORKER"); b1=$(busy)
  cat /proc/net/netstat /proc/net/snmp > "$OUT/$_name.net1"
  wall=$(( (t1 - _t0) / 1000000 ))
  {
    echo "wall_ms=$wall"
    echo "nginx_cpu_s=$(awk -v a="$_ng0" -v b="$ng1" 'BEGIN{printf "%.2f", (b-a)/100}')"
    echo "nginx_cpu_pct=$(awk -v a="$_ng0" -v b="$ng1" -v w="$wall" 'BEGIN{printf "%.0f", (w>0 ? (b-a)*1000/w : 0)}')"
    echo "machine_busy_pct=$(echo "$_b0 $b1" | awk '{d=$4-$2; printf "%.0f", (d>0 ? 100*($3-$1)/d : 0)}')"
    echo "tw_before=$(cat "$OUT/$_name.tw_before")"
    echo "tw_after=$(timewait)"
  } > "$OUT/$_name.meta"
  rm -f "$OUT/$_name.tw_before"
}
# run NAME BOUND_S cmd...   -> NAME.out NAME.err NAME.time (U S maxrssKiB wall) NAME.cmd NAME.meta
run() {
  local name=$1 bound=$2; shift 2
  echo "$*" > "$OUT/$name.cmd"
  printf '  %-14s %s\n' "$name" "$*"
  pre "$name"
  if [ "$URING_ONLY" = 1 ] || [ "$STREAM_ONLY" = 1 ]; then
    # The same four fields, CPU to the microsecond.
    python3 "$here/rusage.py" "$OUT/$name.time" \
      timeout -s INT -k 2 "$bound" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  else
    /usr/bin/time -f '%U %S %M %e' -o "$OUT/$name.time" \
      timeout -s INT -k 2 "$bound" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  fi
  _rc=$?
  post
  echo "rc=$_rc" >> "$OUT/$name.meta"
}
# tcpdump of connection-initiating SYNs to $PORT while running a command
SYNFILTER="tcp dst port $PORT and tcp[tcpflags] & tcp-syn != 0 and tcp[tcpflags] & tcp-ack == 0"
run_captured() {
  local name=$1; shift
  local pc=$OUT/$name.pcap
  tcpdump -Z root -i lo -n -s 96 -B 131072 --time-stamp-precision=nano -w "$pc" "$SYNFILTER" \
    2> "$OUT/$name.tcpdump" &
  local tpid=$!
  local i=0
  while ! grep -q listening "$OUT/$name.tcpdump" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  sleep 0.3
  run "$name" "$@"
  sleep 1.5   # tcpdump hands buffered blocks over at most 1 s late
  kill -INT $tpid 2>/dev/null
  wait $tpid 2>/dev/null
  python3 "$here/syn_pacing.py" "$pc" "${PERIOD_US:-100}" --win "$WIN" > "$OUT/$name.pacing" 2>&1
  python3 "$here/syn_pacing.py" "$pc" "${PERIOD_US:-100}" --win "$WIN" --json > "$OUT/$name.pacing.json" 2>&1
  rm -f "$pc"  # a few MB; the analysis is kept
}

# ---------------------------------------------------------------- AB12
# AB12: `rshperf ab -k -c 50 -n N` against ab with the same arguments,
# one after the other, against `rshperf serve` (one thread: the same server for
# both, and not nginx, so that the clients are compared). The summary reports req/s
# and CPU per request of both (and max RSS: rshperf's must not grow with -n; a run
# at N/10 shows it).
ab12() {
  local log=$OUT/AB12.serve.err port i=0
  "$RSH" serve --port 0 --threads 1 > /dev/null 2> "$log" &
  local spid=$!
  while ! grep -q 'listening on' "$log" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -1)
  if [ -z "$port" ]; then
    kill -INT $spid 2>/dev/null; wait $spid 2>/dev/null
    echo "AB12: rshperf serve did not start (see $log)" >&2
    return
  fi
  meta ab12_n "$AB_N"
  settle 1
  run AB12.ab 300 ab -q -k -n "$AB_N" -c 50 "http://127.0.0.1:$port/"
  settle 2
  run AB12.rsh 300 "$RSH" ab -q -k -n "$AB_N" -c 50 "http://127.0.0.1:$port/"
  settle 1
  run AB12.rsh10 300 "$RSH" ab -q -k -n "$((AB_N / 10))" -c 50 "http://127.0.0.1:$port/"
  kill -INT $spid 2>/dev/null
  wait $spid 2>/dev/null
}
if [ $AB12_ONLY = 1 ]; then
  echo "rshperf ab vs ab (AB12, -n $AB_N) -> $OUT"
  meta ab12_only 1
  ab12
  echo
  python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi

# ---------------------------------------------------------------- STREAM
# The streaming rows (see --stream-only above), against `rshperf serve` started here
# as a process of its own (one thread, a free port), so that the client's rusage is
# the client's alone. Each run's CPU comes from bench/rusage.py (the whole process,
# to the microsecond); SCALE also samples the client's /proc/PID/stat and VmRSS while
# every stream is open (stream_sample), for the steady state without the connects.
stream_serve() {  # starts the server; sets STREAM_SPID and STREAM_PORT
  local log=$OUT/STREAM.serve.err i=0
  "$RSH" serve --port "${STREAM_PORT:-0}" --threads 1 > /dev/null 2> "$log" &
  STREAM_SPID=$!
  while ! grep -q 'listening on' "$log" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
  STREAM_PORT=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -1)
  [ -n "$STREAM_PORT" ] || { kill -INT $STREAM_SPID 2>/dev/null; die "rshperf serve did not start (see $log)"; }
}
# stream_sample NAME T1 T2: once NAME's client has written its pid to NAME.pid,
# records "seconds utime+stime(ticks) VmRSS(KiB)" at T1 and T2 seconds after it
# started, into NAME.samples.
stream_sample() {
  local name=$1 t1=$2 t2=$3 pid i=0 t0 at
  while [ ! -s "$OUT/$name.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  pid=$(cat "$OUT/$name.pid" 2>/dev/null) || return
  t0=$(now_ns)
  : > "$OUT/$name.samples"
  for at in $t1 $t2; do
    sleep "$(awk -v d=$(( t0 + at * 1000000000 - $(now_ns) )) 'BEGIN{printf "%.3f", (d>0 ? d/1e9 : 0)}')"
    [ -r "/proc/$pid/stat" ] || return
    echo "$at $(ticks "$pid") $(awk '/^VmRSS:/{print $2}' "/proc/$pid/status")" >> "$OUT/$name.samples"
  done
}
# curl_streams N URL: N curl processes reading URL at once; waits for all of them
# and writes each one's exit status and bytes to stdout.
curl_streams() {
  local n=$1 url=$2 k pids=()
  for k in $(seq 1 "$n"); do
    curl --no-buffer -s -o /dev/null -w '%{http_code} %{size_download}\n' "$url" &
    pids+=($!)
  done
  for k in "${pids[@]}"; do wait "$k"; echo "rc $?"; done
}
stream_rows() {
  local k r name scale_uri curl_uri open_uri sampler
  make -s -C "$here/floor" OUT="$OUT" "$OUT/floor_epoll" || die "bench/floor: make failed"
  stream_serve
  meta stream_rounds "$STREAM_ROUNDS"; meta scale_events "$SCALE_EVENTS"
  meta curl_events "$CURL_EVENTS"; meta open_rates "$OPEN_RATES"; meta open_s "$OPEN_S"
  meta stream_port "$STREAM_PORT"; meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
  meta date "$(date -u '+%F %H:%M UTC')"
  scale_uri="/stream?events=$SCALE_EVENTS&first=1000ms&gap=1000ms"
  curl_uri="/stream?events=$CURL_EVENTS&gap=1ms"
  open_uri="/stream?events=10&first=20ms&gap=10ms&first_per_open=2ms"
  for k in $(seq 1 "$STREAM_ROUNDS"); do
    settle 2
    name=STREAM.SCALE.$k
    rm -f "$OUT/$name.pid"
    stream_sample "$name" 10 60 &
    sampler=$!
    run "$name" $(( SCALE_EVENTS + 60 )) bash -c 'echo $$ > "$0"; exec "$@"' "$OUT/$name.pid" \
      "$RSH" --server $HOST --port "$STREAM_PORT" --uri "$scale_uri" --stream sse \
      --rate 2000 --num-conns 10000 --overload=queue --spin off --timeout 10 --json "$OUT/$name.json"
    wait $sampler
    settle 2
    run STREAM.SCALE.floor.$k $(( SCALE_EVENTS + 60 )) "$OUT/floor_epoll" -m stream -r 2000 -n 10000 \
      -p "$STREAM_PORT" -u "$scale_uri"
    settle 2
    run STREAM.CURL.rsh.$k 60 "$RSH" --server $HOST --port "$STREAM_PORT" --uri "$curl_uri" \
      --stream sse --rate 1000 --num-conns 50 --timeout 10 --json "$OUT/STREAM.CURL.rsh.$k.json"
    settle 2
    run STREAM.CURL.curl.$k 60 bash -c "$(declare -f curl_streams); curl_streams 50 'http://$HOST:$STREAM_PORT$curl_uri'"
    for r in $OPEN_RATES; do
      settle 1
      run STREAM.OPEN.$r.$k $(( OPEN_S + 30 )) "$RSH" --server $HOST --port "$STREAM_PORT" \
        --uri "$open_uri" --stream sse --call-rate "$r" --num-conns 500 --runtime "$OPEN_S" \
        --timeout 10 --json "$OUT/STREAM.OPEN.$r.$k.json"
    done
  done
  meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
  kill -INT $STREAM_SPID 2>/dev/null
  wait $STREAM_SPID 2>/dev/null
}
if [ $STREAM_ONLY = 1 ]; then
  meta stream_only 1
  echo "streaming rows (STREAM.*) -> $OUT"
  stream_rows
  meta suite_runtime_s $(( $(date +%s) - T_START ))
  echo
  python3 "$here/stream_summary.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi

RSH_BASE=("$RSH" --server $HOST --port $PORT --uri $URI)
HP_BASE=(httperf --server $HOST --port $PORT --uri $URI)
# An unusual receive buffer makes the SYNs of this suite's P4 runs recognisable
# (TCP window field = 16001) among SYNs of other programs using port 8080.
WIN=16001

echo "rshperf benchmark suite -> $OUT   ($( [ $QUICK = 1 ] && echo quick || echo full ))"
echo "binary: $RSH ($(date -r "$RSH" '+%F %T'))"
echo "runs:"
# ---------------------------------------------------------------- SWEEP
# SWEEP: the rate walk from 2,000 to 30,000, and --find-max on the same
# line (on the walk's grid, and at --precision 2 without it), alternating rounds;
# each writes its sweep document (--json), which summarize.py reads.
SWEEP_LINE=(sweep --server $HOST --port $PORT --uri $URI --low-rate 2000 --high-rate 30000
  --const-test-time 3 --no-progress)
if [ $SWEEP_ONLY = 1 ]; then
  for k in $(seq 1 "$SWEEP_ROUNDS"); do
    settle 5
    run SWEEP.walk$k 300 "$RSH" "${SWEEP_LINE[@]}" --rate-step 2000 --json "$OUT/SWEEP.walk$k.json"
    settle 5
    run SWEEP.grid$k 300 "$RSH" "${SWEEP_LINE[@]}" --rate-step 2000 --find-max --json "$OUT/SWEEP.grid$k.json"
    settle 5
    run SWEEP.search$k 300 "$RSH" "${SWEEP_LINE[@]}" --find-max --precision 2 --json "$OUT/SWEEP.search$k.json"
  done
  meta suite_runtime_s $(( $(date +%s) - T_START ))
  echo
  python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi
# ---------------------------------------------------------------- CR
# CR: an open-loop call rate over keep-alive connections (wrk2's
# model): --call-rate $CR_RATE over 50 connections for $CR_S s against nginx. The
# report's `Call rate` line gives the achieved rate (calls taken by a connection
# per second of the test) and `Call lateness` the p99 from each call's scheduled
# time; CPU is /usr/bin/time's user+sys. wrk2 (not a Debian package) runs after
# it in each round when $WRK2 (or `wrk2` on PATH) is a binary:
# `wrk2 -t1 -c50 -d${CR_S}s -R$CR_RATE`. $CR_ROUNDS rounds; the summary takes medians.
cr_rows() {
  local k
  for k in $(seq 1 "$CR_ROUNDS"); do
    settle 2
    run CR.rsh.$k $(( CR_S + 20 )) "${RSH_BASE[@]}" --call-rate "$CR_RATE" --num-conns 50 \
      --runtime "$CR_S" --timeout 5 --json "$OUT/CR.rsh.$k.json"
    if [ -n "$WRK2" ] && [ -x "$WRK2" ]; then
      settle 2
      run CR.wrk2.$k $(( CR_S + 20 )) "$WRK2" -t1 -c50 -d"${CR_S}s" -R"$CR_RATE" --latency "$URL"
    fi
  done
}
# ---------------------------------------------------------------- RL
# RL: the cost of --request-log. 50 keep-alive connections make $RL_CALLS calls each,
# back to back (a closed loop per connection: the client runs as fast as nginx
# answers), without the log, with a binary log and with a JSON-lines log, in
# $RL_ROUNDS alternating rounds. The figure is the client's CPU (user + system,
# /usr/bin/time) per request; the medians over the rounds are compared.
rl_rows() {
  local k mode dir=$OUT/RL.logs
  mkdir -p "$dir"
  meta rl_calls "$RL_CALLS"
  meta rl_rounds "$RL_ROUNDS"
  for k in $(seq 1 "$RL_ROUNDS"); do
    for mode in off bin jsonl; do
      settle 2
      local log=()
      [ $mode = off ] || log=(--request-log "$dir/r.$mode")
      run RL.$mode.$k 120 "${RSH_BASE[@]}" --rate 10000 --num-conns 50 \
        --num-calls "$RL_CALLS" --timeout 5 "${log[@]}"
      rm -f "$dir/r.$mode"
    done
  done
  python3 - "$OUT" "$RL_ROUNDS" <<'PY' | tee "$OUT/RL.summary"
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
med = {}
for mode in ("off", "bin", "jsonl"):
    per = []
    for k in range(1, rounds + 1):
        u, s = map(float, open(f"{out}/RL.{mode}.{k}.time").read().split()[:2])
        text = open(f"{out}/RL.{mode}.{k}.out").read()
        m = re.search(r"^Total: connections \d+ requests (\d+) replies (\d+)", text, re.M)
        rate = re.search(r"^Request rate: ([\d.]+) req/s", text, re.M)
        replies = int(m.group(2)) if m else 0
        per.append((1e6 * (u + s) / replies if replies else float("inf"),
                    float(rate.group(1)) if rate else 0.0))
    med[mode] = (statistics.median(p[0] for p in per), statistics.median(p[1] for p in per))
    print("  RL %-5s CPU/request %s us (median %.2f), req/s median %.0f" % (
        mode, " ".join("%.2f" % p[0] for p in per), med[mode][0], med[mode][1]))
for mode in ("bin", "jsonl"):
    ratio = med[mode][0] / med["off"][0]
    verdict = "PASS" if ratio <= 1.10 else ("FAIL" if mode == "bin" else "info")
    print("  RL %-5s / off: CPU per request x%.3f  %s" % (mode, ratio, verdict))
PY
}
if [ $RL_ONLY = 1 ]; then
  rl_rows
  meta suite_runtime_s $(( $(date +%s) - T_START ))
  exit 0
fi
if [ $CR_ONLY = 1 ]; then
  cr_rows
  meta suite_runtime_s $(( $(date +%s) - T_START ))
  echo
  python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi
# ---------------------------------------------------------------- PACE600, PACE5000, OVL
# PACE: SYNs on the wire against the schedule (syn_pacing.py, period
# 1e6/rate us) at 600/s and 5,000/s, rshperf (default --spin=auto) then httperf
# (busy-polls), 3 s each; CPU seconds from /usr/bin/time.
# OVL: past the client's capacity. `rshperf sweep --find-max` finds rshperf's own
# clean maximum (the knee) in this run; then $OVL_ROUNDS rounds alternate rshperf
# and httperf at 1.5x and 2x the knee (3 s of arrivals, --timeout 5), each run
# started with TIME_WAIT drained (`drained`). Pass per
# round: rshperf completes >= httperf's connections/s at both, with 0 errors and
# the client-bound warning.
# FLOOR: bench/timer_floor.c (built with cc) at 600/s and 5,000/s for 3 s, sleeping
# and spinning, before the PACE rows: the lateness any pacer on this machine gets.
floor_rows() {
  command -v cc >/dev/null 2>&1 || { echo "  FLOOR: no cc, row skipped"; return; }
  cc -O2 -o "$OUT/timer_floor" "$here/timer_floor.c" || return
  local rate mode
  for rate in 600 5000; do
    for mode in sleep spin; do
      "$OUT/timer_floor" $rate 3 $mode > "$OUT/FLOOR.$mode$rate.out"
    done
  done
}
pacing_rows() {
  local rate
  [ $OVL_ONLY = 1 ] || floor_rows
  for rate in 600 5000; do
    [ $OVL_ONLY = 1 ] && break
    settle 2
    PERIOD_US=$(awk -v r=$rate 'BEGIN{printf "%.6f", 1e6/r}') \
      run_captured PACE$rate.rsh 30 "${RSH_BASE[@]}" --rate $rate --num-conns $((rate * 3)) --recv-buffer $WIN
    settle 2
    PERIOD_US=$(awk -v r=$rate 'BEGIN{printf "%.6f", 1e6/r}') \
      run_captured PACE$rate.httperf 30 "${HP_BASE[@]}" --rate $rate --num-conns $((rate * 3)) --recv-buffer $WIN
  done
  [ $PACE_ONLY = 1 ] && return
  settle 5
  run OVL.knee 300 "$RSH" sweep --server $HOST --port $PORT --uri $URI --low-rate 5000 \
    --high-rate 60000 --find-max --precision 5 --const-test-time 3 --no-progress \
    --json "$OUT/OVL.knee.json"
  local knee k m rate
  knee=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["result"]["knee"] or 0))' \
    "$OUT/OVL.knee.json" 2>/dev/null || echo 0)
  meta ovl_knee "$knee"
  meta ovl_rounds "$OVL_ROUNDS"
  [ "$knee" -gt 0 ] || { echo "  OVL: no knee found, rows skipped"; return; }
  for k in $(seq 1 "$OVL_ROUNDS"); do
    for m in 15 20; do
      rate=$(( knee * m / 10 ))
      drained
      run OVL.rsh$m.$k 90 "${RSH_BASE[@]}" --rate $rate --num-conns $((rate * 3)) --timeout 5
      drained
      run OVL.httperf$m.$k 90 "${HP_BASE[@]}" --rate $rate --num-conns $((rate * 3)) --timeout 5
    done
  done
}
# ---------------------------------------------------------------- SYSCALLS
# System calls per connection of the request-oriented workload (one request per
# connection, 2,000/s x 4,000, strace -c -f), rshperf and httperf.
syscall_rows() {
  settle 3
  run SYS.rsh 90 strace -c -f -o "$OUT/SYS.rsh.strace" "${RSH_BASE[@]}" --rate 2000 --num-conns 4000
  settle 3
  run SYS.httperf 90 strace -c -f -o "$OUT/SYS.httperf.strace" "${HP_BASE[@]}" --rate 2000 --num-conns 4000
}
if [ $SYSCALLS_ONLY = 1 ]; then
  meta syscalls_only 1
  syscall_rows
  echo
  python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi
if [ $PACING_ONLY = 1 ]; then
  meta pacing_only 1
  pacing_rows
  meta suite_runtime_s $(( $(date +%s) - T_START ))
  echo
  python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi
# ---------------------------------------------------------------- URING
# The io_uring rows (see --uring-only above). Each round runs, for each row, rshperf
# --io epoll, rshperf --io uring, floor_epoll, floor_uring (the features rshperf's
# backend uses: buffer ring and deferred task work, socket(2) and close(2)) and
# floor_uring with every feature (direct descriptors, linked connect -> send -> recv,
# skipped completions, registered ring), in an order that rotates between rounds.
# CPU is the whole process's (rusage of the child: every thread, io_uring's workers
# included) to the microsecond (bench/rusage.py). A new-connection run starts with
# no TIME_WAIT toward the server (`fresh`) and opens at most $URING_NC_N
# connections, under rshperf's port-pressure budget (half the ephemeral range): the
# cost of connect()'s port search, which grows with the TIME_WAIT sockets, is then
# the same for every client and no source address is bound.
FLOOR_RSH_F=bufring,defer
FLOOR_BEST_F=direct,link,bufring,skip,regring,defer
# fresh: no TIME_WAIT toward the server (as root `ss -K` ends them; else wait).
fresh() {
  if [ "$(id -u)" = 0 ]; then
    ss -K -tan state time-wait "( dst $HOST and dport = :$PORT )" >/dev/null 2>&1
    sleep 1
  else
    drained
  fi
}
# uring_run ROW WHO ROUND: one run of client WHO (epoll, uring, floor_epoll,
# floor_uring, floor_best) in row ROW.
uring_run() {
  local row=$1 who=$2 k=$3 name=URING.$1.$2.$3 cmd
  case $who in
    epoll|uring) cmd=("${RSH_BASE[@]}" --io "$who" --timeout 5) ;;
    floor_epoll) cmd=("$OUT/floor_epoll") ;;
    floor_uring) cmd=("$OUT/floor_uring" -F "$FLOOR_RSH_F") ;;
    floor_best) cmd=("$OUT/floor_uring" -F "$FLOOR_BEST_F") ;;
  esac
  case $row.$who in
    NCO.floor*) cmd+=(-m conn -r "$URING_RATE" -n "$URING_NC_N") ;;
    NCO.*) cmd+=(--rate "$URING_RATE" --num-conns "$URING_NC_N") ;;
    NCC.floor*) cmd+=(-m conn -c 50 -n "$URING_NC_N") ;;
    NCC.*) cmd+=(--concurrency 50 --num-conns "$URING_NC_N") ;;
    KA.floor*) cmd+=(-m ka -c 50 -n "$URING_KA_N") ;;
    KA.*) cmd+=(--rate 10000 --num-conns 50 --num-calls $(( URING_KA_N / 50 ))) ;;
    CR.*) cmd+=(--call-rate 20000 --num-conns 50 --runtime 5) ;;
    OVL15.*) cmd+=(--rate $(( URING_KNEE * 15 / 10 )) --num-conns $(( URING_KNEE * 45 / 10 ))) ;;
    OVL20.*) cmd+=(--rate $(( URING_KNEE * 2 )) --num-conns $(( URING_KNEE * 6 ))) ;;
  esac
  case $row in
    NC*|OVL*) fresh ;;
    *) settle 1 ;;
  esac
  run "$name" 120 "${cmd[@]}"
}
# rotate K WORD...: the words, rotated left by K - 1
rotate() {
  local k=$1; shift
  local a=("$@") n=$# i
  for ((i = 0; i < n; i++)); do printf '%s ' "${a[$(( (i + k - 1) % n ))]}"; done
}
uring_rows() {
  make -s -C "$here/floor" OUT="$OUT" || die "bench/floor: make failed"
  local k row who r io
  URING_KNEE=${URING_KNEE:-}
  if [ -z "$URING_KNEE" ]; then
    fresh
    run URING.knee 300 "$RSH" sweep --server $HOST --port $PORT --uri $URI --low-rate 5000 \
      --high-rate 60000 --find-max --precision 5 --const-test-time 3 --no-progress \
      --io epoll --json "$OUT/URING.knee.json"
    URING_KNEE=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["result"]["knee"] or 0))' \
      "$OUT/URING.knee.json" 2>/dev/null || echo 0)
  fi
  [ "$URING_KNEE" -gt 0 ] || { echo "  URING: no knee found (set URING_KNEE)"; return; }
  URING_RATE=$(( URING_KNEE * 8 / 10 ))
  meta uring_knee "$URING_KNEE"; meta uring_rate "$URING_RATE"; meta uring_rounds "$URING_ROUNDS"
  meta uring_nc_n "$URING_NC_N"; meta uring_ka_n "$URING_KA_N"
  meta floor_rsh_features "$FLOOR_RSH_F"; meta floor_best_features "$FLOOR_BEST_F"
  meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
  for k in $(seq 1 "$URING_ROUNDS"); do
    for row in NCO NCC KA; do
      for who in $(rotate "$k" epoll uring floor_epoll floor_uring floor_best); do
        uring_run $row "$who" "$k"
      done
    done
    for row in CR $([ "$URING_OVL" = 1 ] && echo OVL15 OVL20); do
      for who in $(rotate "$k" epoll uring); do
        uring_run $row "$who" "$k"
      done
    done
    if [ "$(id -u)" = 0 ] && command -v tcpdump >/dev/null 2>&1; then
      for r in 600 5000; do
        for io in $(rotate "$k" epoll uring); do
          fresh
          PERIOD_US=$(awk -v x=$r 'BEGIN{printf "%.6f", 1e6/x}') \
            run_captured URING.PACE$r.$io.$k 30 "${RSH_BASE[@]}" --io $io --rate $r \
            --num-conns $((r * 3)) --recv-buffer $WIN
        done
      done
    fi
  done
  for who in epoll uring floor_epoll floor_uring floor_best; do
    fresh
    case $who in
      epoll|uring) run URING.SYS.$who 90 strace -c -f -o "$OUT/URING.SYS.$who.strace" \
        "${RSH_BASE[@]}" --io $who --rate 2000 --num-conns 4000 ;;
      floor_epoll) run URING.SYS.$who 90 strace -c -f -o "$OUT/URING.SYS.$who.strace" \
        "$OUT/floor_epoll" -m conn -r 2000 -n 4000 ;;
      floor_uring) run URING.SYS.$who 90 strace -c -f -o "$OUT/URING.SYS.$who.strace" \
        "$OUT/floor_uring" -m conn -r 2000 -n 4000 -F $FLOOR_RSH_F ;;
      floor_best) run URING.SYS.$who 90 strace -c -f -o "$OUT/URING.SYS.$who.strace" \
        "$OUT/floor_uring" -m conn -r 2000 -n 4000 -F $FLOOR_BEST_F ;;
    esac
  done
  meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
}
if [ $URING_ONLY = 1 ]; then
  meta uring_only 1
  echo "io_uring rows (URING.*) -> $OUT"
  uring_rows
  meta suite_runtime_s $(( $(date +%s) - T_START ))
  echo
  python3 "$here/uring_summary.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi
# ---------------------------------------------------------------- H2C, H2S
# HTTP/2: h2load -n N -c 50 -m 10 against rshperf's equivalent, 50
# connections of N/50 calls with 10 streams in flight each, on nginx's h2c (8082)
# and h2-over-TLS (8444) ports. CPU per request = (user + sys) / requests; nginx's
# worker CPU per request beside it (nginx is saturated: the rate is its inverse).
# H2_ROUNDS rounds (default 3), alternating h2load and rshperf within each port,
# so that both see the same machine; the summary compares medians and lists each
# round's ratios.
h2_rows() {
  local calls=$(( H2_N / 50 )) k
  for k in $(seq 1 "$H2_ROUNDS"); do
    settle 2
    run H2C.h2load.$k 120 h2load -n "$H2_N" -c 50 -m 10 "http://$HOST:$H2C_PORT$URI"
    settle 2
    run H2C.rsh.$k 120 "$RSH" --server $HOST --port $H2C_PORT --uri $URI --http-version 2 \
      --num-conns 50 --num-calls "$calls" --burst-length 10 --rate 10000 --timeout 5
  done
  for k in $(seq 1 "$H2_ROUNDS"); do
    settle 2
    run H2S.h2load.$k 120 h2load -n "$H2_N" -c 50 -m 10 "https://$HOST:$H2_PORT$URI"
    settle 2
    run H2S.rsh.$k 120 "$RSH" --server $HOST --port $H2_PORT --ssl --uri $URI --http-version 2 \
      --num-conns 50 --num-calls "$calls" --burst-length 10 --rate 10000 --timeout 5
  done
}
# ---------------------------------------------------------------- H3
# HTTP/3: oha (built with --features http3) `-n N -c 50 -p 10 --http-version 3`
# against rshperf's equivalent, 50 connections of N/50 calls with 10 streams in
# flight each, on caddy's HTTP/3 port. CPU per request = (user + sys) / requests.
# oha's own requests/sec counts the ~30 s it waits at the end for its QUIC
# connections to time out; the summary also gives its rate from Little's law
# (c x p / mean latency), which leaves that wait out.
h3_rows() {
  local calls=$(( H3_N / 50 )) k
  for k in $(seq 1 "$H3_ROUNDS"); do
    settle 2
    run H3.oha.$k 180 oha -n "$H3_N" -c 50 -p 10 --http-version 3 --insecure --no-tui \
      --output-format json "https://$HOST:$CADDY_PORT$URI"
    settle 2
    run H3.rsh.$k 180 "$RSH" --server $HOST --port $CADDY_PORT --uri $URI --http-version 3 \
      --num-conns 50 --num-calls "$calls" --burst-length 10 --rate 10000 --timeout 10
  done
}
if [ $H3_ONLY = 1 ]; then
  h3_rows
  meta suite_runtime_s $(( $(date +%s) - T_START ))
  echo
  python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi
# ---------------------------------------------------------------- UX, BODY, MET
# UX: the same run over nginx's unix socket and over TCP, alternating,
# 3 each (median CPU per connection from /usr/bin/time; counts must be equal).
# BODY: a 5 MB --body-file POSTed 1,000 times to `rshperf serve` (which reads every
# body before answering) against the same run without a body: max RSS growth minus
# the file must stay under 1 MiB. MET: scripts/prometheus-check.sh (a 30 s run
# scraped every second by Debian's prometheus; last values = the report's).
UX_SOCK=${UX_SOCK:-${NGINX_SOCKET:-$NGINX_DIR/nginx.sock}}
integration_rows() {
  local i
  meta ux_sock "$UX_SOCK"
  for i in 1 2 3; do
    settle 2
    run UX.tcp$i 60 "$RSH" --server $HOST --port $PORT --uri $URI --rate 3000 --num-conns 9000 --timeout 5
    settle 2
    run UX.unix$i 60 "$RSH" --server $HOST --unix-socket "$UX_SOCK" --uri $URI --rate 3000 --num-conns 9000 --timeout 5
  done
  local log=$OUT/BODY.serve.err port j=0
  head -c 5000000 /dev/urandom > "$OUT/BODY.5mb"
  meta body_bytes 5000000
  "$RSH" serve --port 0 --threads 1 --body-size 100 > /dev/null 2> "$log" &
  local spid=$!
  while ! grep -q 'listening on' "$log" 2>/dev/null && [ $j -lt 50 ]; do sleep 0.1; j=$((j+1)); done
  port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -1)
  if [ -n "$port" ]; then
    settle 1
    run BODY.base 120 "$RSH" --server $HOST --port "$port" --rate 50 --num-conns 1000 --send-buffer 262144 --timeout 10
    settle 1
    run BODY.rsh 120 "$RSH" --server $HOST --port "$port" --rate 50 --num-conns 1000 --send-buffer 262144 --timeout 10 \
      --body-file "$OUT/BODY.5mb"
  else
    echo "BODY: rshperf serve did not start (see $log)" >&2
  fi
  kill -INT $spid 2>/dev/null
  wait $spid 2>/dev/null
  rm -f "$OUT/BODY.5mb"
  settle 2
  RSHPERF=$RSH run MET 180 bash "$root/scripts/prometheus-check.sh" "$URL"
}
if [ $INTEG_ONLY = 1 ]; then
  meta integ_only 1
  integration_rows
  echo
  python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi
h2_rows
if [ $H2_ONLY = 1 ]; then
  meta suite_runtime_s $(( $(date +%s) - T_START ))
  echo
  python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
  exit 0
fi
cr_rows
# ---------------------------------------------------------------- ab anchor
settle 1
run AB.ab 60 ab -q -n 30000 -c 50 "$URL"
settle 2
ab12
integration_rows


# ---------------------------------------------------------------- P2
settle 3
run P2.wrk 20 wrk -t1 -c50 -d5s "$URL"
wrk_rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$OUT/P2.wrk.out")
calls=$(awk -v r="${wrk_rps:-0}" 'BEGIN{n=int(r*5/50/100)*100; if(n<2000)n=2000; print n}')
meta p2_calls "$calls"
settle 2
run P2.rsh 30 "${RSH_BASE[@]}" --rate 10000 --num-conns 50 --num-calls "$calls" --timeout 5

# ---------------------------------------------------------------- P3
settle 2
run P3.rsh 30 "${RSH_BASE[@]}" --rate 10000 --num-conns 30000
settle 3
run P3.httperf 30 "${HP_BASE[@]}" --rate 10000 --num-conns 30000

# ---------------------------------------------------------------- P4
settle 3
run_captured P4.rsh 30 "${RSH_BASE[@]}" --rate 10000 --num-conns 30000 --recv-buffer $WIN
settle 3
run_captured P4.httperf 30 "${HP_BASE[@]}" --rate 10000 --num-conns 30000 --recv-buffer $WIN

# ---------------------------------------------------------------- P7
settle 3
run P7.rsh2 20 "${RSH_BASE[@]}" --threads 2 --rate 4000 --num-conns 12000
settle 2
run P7.rsh1 20 "${RSH_BASE[@]}" --threads 1 --rate 4000 --num-conns 12000

# ---------------------------------------------------------------- P5
settle 5
run P5.rsh 60 "${RSH_BASE[@]}" --wsess=18000,2,8 --rate 10000 --timeout 20
if [ $QUICK = 0 ]; then
  settle 4
  run P5.httperf 60 "${HP_BASE[@]}" --wsess=18000,2,8 --rate 10000 --timeout 20
fi

# ---------------------------------------------------------------- P6
# Sample VmRSS of the client process itself at 4 s and 16 s after its start.
rss_run() {
  local name=$1; shift
  echo "$*" > "$OUT/$name.cmd"
  printf '  %-14s %s\n' "$name" "$*"
  pre "$name"
  local s0 pid
  s0=$(now_ns)
  "$@" > "$OUT/$name.out" 2> "$OUT/$name.err" &
  pid=$!
  : > "$OUT/$name.rss"
  for at in 1 2 4 8 12 16 19; do
    local target=$(( s0 + at * 1000000000 )) n
    n=$(now_ns)
    [ $n -lt $target ] && sleep "$(awk -v d=$(( target - n )) 'BEGIN{printf "%.3f", d/1e9}')"
    if [ -r /proc/$pid/status ]; then
      echo "$at $(awk '/^VmRSS:/{print $2}' /proc/$pid/status)" >> "$OUT/$name.rss"
    fi
  done
  local i=0   # bound: 40 s after start at most
  while kill -0 $pid 2>/dev/null && [ $i -lt 210 ]; do sleep 0.1; i=$((i+1)); done
  kill -0 $pid 2>/dev/null && kill -INT $pid
  wait $pid
  _rc=$?
  post
  echo "rc=$_rc" >> "$OUT/$name.meta"
}
settle 5
rss_run P6.rsh "${RSH_BASE[@]}" --rate 5000 --num-conns 100000
if [ $QUICK = 0 ]; then
  settle 4
  rss_run P6.httperf "${HP_BASE[@]}" --rate 5000 --num-conns 100000
fi
# T1: the per-second timeline keeps bounded state per second: VmRSS growth
# between 4 s and 16 s at 2,000 conn/s with --timeline, extrapolated to 10 minutes
# (target: at most 2 MiB).
settle 4
rss_run T1.rsh "${RSH_BASE[@]}" --rate 2000 --num-conns 38000 --timeline "$OUT/T1.timeline.csv"

# ---------------------------------------------------------------- P1
# Run late: a 105k-connection burst leaves ~20k TIME_WAIT sockets and, when it
# overloads the accept queue, a minute of SYN retransmissions behind it.
settle 5
if [ $PERF = 1 ] && command -v perf >/dev/null; then
  run P1.rsh 60 perf record -q -o "$OUT/P1.rsh.perf.data" -- "${RSH_BASE[@]}" --rate 35000 --num-conns 105000 --timeout 5
  perf report -i "$OUT/P1.rsh.perf.data" --no-children --sort symbol 2>/dev/null | grep -v '^#' | grep . | head -8 > "$OUT/P1.rsh.perf"
else
  run P1.rsh 60 "${RSH_BASE[@]}" --rate 35000 --num-conns 105000 --timeout 5
fi
if [ $QUICK = 0 ]; then
  settle 5
  run P1.httperf 60 "${HP_BASE[@]}" --rate 35000 --num-conns 105000 --timeout 5
fi

# ---------------------------------------------------------------- PACE, OVL
pacing_rows
syscall_rows

# ---------------------------------------------------------------- hog
settle 3
run HOG.rsh 60 "${RSH_BASE[@]}" --hog --rate 10000 --num-conns 30000
if [ $QUICK = 0 ]; then
  settle 3
  run HOG.httperf 20 "${HP_BASE[@]}" --hog --rate 10000 --num-conns 30000
fi

meta suite_runtime_s $(( $(date +%s) - T_START ))
echo
python3 "$here/summarize.py" "$OUT" | tee "$OUT/summary.txt"
