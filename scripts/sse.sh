#!/usr/bin/env bash
# A real streaming server to aim `rshperf --stream` at, over every HTTP version:
# scripts/sse_server.py (Starlette and sse-starlette under uvicorn) behind an nginx
# that does not buffer (HTTP/1.1, h2c, h2) and a caddy (HTTP/3). The target of
# tests/integration/sse_real.rs, bench/stream_accuracy.sh and docs/streaming.md.
#
#   scripts/sse.sh start     start all three (a running one is restarted)
#   scripts/sse.sh stop      stop them (SIGTERM: the app writes its event log)
#   scripts/sse.sh status    say which run and which ports they hold; exit 1 unless all
#
# Listens on (the variable that moves each; SSE_PORT alone moves them all, the others
# keep their distance from it):
#   http://127.0.0.1:8090     the app itself, uvicorn, HTTP/1.1      SSE_APP_PORT  (+0)
#   http://127.0.0.1:8091     nginx, HTTP/1.1                        SSE_HTTP_PORT (+1)
#   http://127.0.0.1:8092     nginx, HTTP/2 cleartext (h2c, prior    SSE_H2C_PORT  (+2)
#                             knowledge)
#   https://127.0.0.1:8093    nginx, HTTP/2 over TLS (ALPN h2)       SSE_H2_PORT   (+3)
#   https://127.0.0.1:8094    caddy, HTTP/3 on UDP (and h1, h2 on    SSE_H3_PORT   (+4)
#                             TCP), certificate from `tls internal`
# (scripts/nginx.sh's defaults are 8080, 8082, 8443, 8444, caddy.sh's 8445: no clash.)
# nginx proxies with `proxy_buffering off`, `proxy_http_version 1.1`, no gzip (the
# app sends `X-Accel-Buffering: no` too); caddy with `reverse_proxy` and
# `flush_interval -1`. Both pass every event on as the app writes it. nginx's TLS
# certificate is made with openssl (scripts/certs.sh: $SSE_DIR/ca.crt for
# --ssl-ca-file); rshperf does not verify certificates without --ssl-verify.
# The endpoints (GET /stream, POST /v1/chat/completions) are described in
# scripts/sse_server.py's header.
#
# Needs nginx, openssl and caddy (apt-get install -y nginx-light openssl caddy) and a
# python3 with the packages of scripts/sse-requirements.txt
# (pip install -r scripts/sse-requirements.txt); SSE_PYTHON names another python
# (a virtual environment's, as .ci/run makes). Environment: SSE_DIR (default
# /tmp/rshperf-sse-local: configurations, certificates, logs, pid files), the ports
# above, SSE_EVENT_LOG=FILE (the app's event log, written when it stops). Runs as the
# calling user; nothing is installed. Example:
#   SSE_PORT=22100 bash scripts/sse.sh start
set -euo pipefail
cmd=${1:-start}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/certs.sh
. "$here/certs.sh"
dir=${SSE_DIR:-/tmp/rshperf-sse-local}
base=${SSE_PORT:-8090}
app_port=${SSE_APP_PORT:-$base}
http_port=${SSE_HTTP_PORT:-$((base + 1))}
h2c_port=${SSE_H2C_PORT:-$((base + 2))}
h2_port=${SSE_H2_PORT:-$((base + 3))}
h3_port=${SSE_H3_PORT:-$((base + 4))}
py=${SSE_PYTHON:-python3}
event_log=${SSE_EVENT_LOG:-}

# Each TCP port with the variable that moves it.
ports=("SSE_APP_PORT:$app_port" "SSE_HTTP_PORT:$http_port" "SSE_H2C_PORT:$h2c_port"
       "SSE_H2_PORT:$h2_port" "SSE_H3_PORT:$h3_port")

# pid NAME PATTERN: the pid in $dir/NAME.pid when it is a live process whose command
# line holds PATTERN (so a stale pid file names nobody); fails otherwise.
pid() {
  local p
  p=$(cat "$dir/$1.pid" 2>/dev/null) || return 1
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$2" || return 1
  echo "$p"
}
app_pid() { pid app "$here/sse_server.py"; }
nginx_pid() { pid nginx "$dir/nginx.conf"; }
caddy_pid() { pid caddy "$dir/Caddyfile"; }

# listens PORT: something accepts TCP connections on 127.0.0.1:PORT.
listens() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# udp_bound PORT: a UDP socket is bound to PORT (on any address).
udp_bound() {
  awk -v p="$(printf '%04X' "$1")" 'FNR > 1 { n = split($2, a, ":"); if (a[n] == p) f = 1 } END { exit !f }' \
    /proc/net/udp /proc/net/udp6 2>/dev/null
}

# stop_one NAME PID: SIGTERM, then wait up to 5 s for it to go.
stop_one() {
  kill "$2" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
  rm -f "$dir/$1.pid"
  echo "$1 stopped (pid $2)"
}

stop_all() {
  local p
  if p=$(caddy_pid); then stop_one caddy "$p"; fi
  if p=$(nginx_pid); then stop_one nginx "$p"; fi
  if p=$(app_pid); then stop_one app "$p"; fi
}

# clashes: one line per port another server holds, naming the variable that moves
# it; fails when there is any.
clashes() {
  local entry var port n=0
  for entry in "${ports[@]}"; do
    var=${entry%%:*}; port=${entry#*:}
    if listens "$port"; then
      echo "sse.sh: 127.0.0.1:$port is taken by another server: set $var to move it (or SSE_PORT to move all five)" >&2
      n=$((n + 1))
    fi
  done
  if udp_bound "$h3_port"; then
    echo "sse.sh: UDP port $h3_port (HTTP/3) is taken by another server: set SSE_H3_PORT to move it (or SSE_PORT to move all five)" >&2
    n=$((n + 1))
  fi
  [ "$n" = 0 ]
}

nginx_config() {
  # nginx 1.25.1 moved HTTP/2 from a listen parameter to the http2 directive.
  local version h2_listen=" http2" h2_on=""
  version=$(nginx -v 2>&1 | sed -n 's|.*nginx/\([0-9.]*\).*|\1|p')
  if [ "$(printf '%s\n' 1.25.1 "$version" | sort -V | head -1)" = 1.25.1 ]; then
    h2_listen=""; h2_on="http2 on;"
  fi
  cat > "$dir/proxy.conf" <<EOF
# Written by rshperf's scripts/sse.sh: every event passed on as the app writes it.
location / {
  proxy_pass http://sse_app;
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host \$host;
  proxy_buffering off;
  proxy_cache off;
  proxy_request_buffering off;
  proxy_read_timeout 3600s;
  proxy_send_timeout 3600s;
  gzip off;
  chunked_transfer_encoding on;
  client_max_body_size 16m;
}
EOF
  cat > "$dir/nginx.conf" <<EOF
# Written by rshperf's scripts/sse.sh.
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log error;
worker_rlimit_nofile 100000;
events { worker_connections 50000; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  tcp_nodelay on;
  keepalive_timeout 120;
  keepalive_requests 1000000;
  http2_max_concurrent_streams 1024;
  gzip off;
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_certificate $dir/tls.crt;
  ssl_certificate_key $dir/tls.key;
  upstream sse_app {
    server 127.0.0.1:$app_port;
    keepalive 256;
  }
  server {
    listen 127.0.0.1:$http_port backlog=4096;
    include $dir/proxy.conf;
  }
  server {
    listen 127.0.0.1:$h2c_port$h2_listen backlog=4096;
    listen 127.0.0.1:$h2_port ssl$h2_listen backlog=4096;
    $h2_on
    include $dir/proxy.conf;
  }
}
EOF
}

caddy_config() {
  cat > "$dir/Caddyfile" <<EOF
{
	admin off
	auto_https disable_redirects
	skip_install_trust
	default_sni localhost
	storage file_system {
		root $dir/caddy-data
	}
	log {
		output file $dir/caddy.log
		level ERROR
	}
	servers {
		protocols h1 h2 h3
	}
}

https://localhost:$h3_port, https://127.0.0.1:$h3_port {
	tls internal
	reverse_proxy 127.0.0.1:$app_port {
		flush_interval -1
	}
}
EOF
}

# answers PORT: the app, through whatever listens on PORT (HTTP/1.1), says it is there.
answers() {
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'GET / HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
  local ok=1
  timeout 2 cat <&3 | grep -q '^sse_server ok' && ok=0
  exec 3<&-
  return $ok
}

# warm: one short stream from the app, so that no measured stream pays for its first
# response's imports and set-up (hundreds of ms on a busy machine); its event-log rows
# carry the tag warm-up.
warm() {
  { exec 3<>"/dev/tcp/127.0.0.1/$app_port"; } 2>/dev/null || return 1
  printf 'GET /stream?events=2&done=1&tag=warm-up HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
  timeout 10 cat <&3 >/dev/null
  exec 3<&-
}

case "$cmd" in
start)
  for tool in nginx openssl caddy; do
    command -v "$tool" >/dev/null || { echo "sse.sh: $tool is not installed (apt-get install -y nginx-light openssl caddy)" >&2; exit 2; }
  done
  "$py" -c 'import uvicorn, sse_starlette' 2>/dev/null || {
    echo "sse.sh: $py lacks uvicorn or sse-starlette: pip install -r $here/sse-requirements.txt (or set SSE_PYTHON to a python that has them)" >&2
    exit 2
  }
  for entry in "${ports[@]}"; do
    port=${entry#*:}
    [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] \
      || { echo "sse.sh: ${entry%%:*}=$port is not a port (1 to 65535)" >&2; exit 1; }
  done
  stop_all >/dev/null
  clashes || exit 1
  mkdir -p "$dir/tmp"
  certificate "$dir"
  nginx_config
  caddy_config
  log_args=()
  [ -n "$event_log" ] && log_args=(--event-log "$event_log")
  nohup "$py" "$here/sse_server.py" --port "$app_port" "${log_args[@]}" \
    > "$dir/app.out" 2>&1 < /dev/null &
  echo $! > "$dir/app.pid"
  for _ in $(seq 100); do answers "$app_port" && break; sleep 0.1; done
  answers "$app_port" || { echo "sse.sh: the app does not answer on 127.0.0.1:$app_port (see $dir/app.out)" >&2; stop_all >/dev/null; exit 1; }
  warm
  if ! out=$(nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" 2>&1); then
    echo "$out" >&2; stop_all >/dev/null; exit 1
  fi
  XDG_DATA_HOME=$dir/caddy-data XDG_CONFIG_HOME=$dir/caddy-config HOME=$dir \
    nohup caddy run --config "$dir/Caddyfile" --adapter caddyfile \
    > "$dir/caddy.out" 2>&1 < /dev/null &
  echo $! > "$dir/caddy.pid"
  for _ in $(seq 100); do
    answers "$http_port" && listens "$h2c_port" && listens "$h2_port" && listens "$h3_port" \
      && udp_bound "$h3_port" && break
    sleep 0.1
  done
  answers "$http_port" || { echo "sse.sh: nginx does not answer on 127.0.0.1:$http_port (see $dir/nginx-error.log)" >&2; stop_all >/dev/null; exit 1; }
  { listens "$h3_port" && udp_bound "$h3_port"; } || { echo "sse.sh: caddy does not listen on $h3_port (see $dir/caddy.out)" >&2; stop_all >/dev/null; exit 1; }
  echo "sse: app http://127.0.0.1:$app_port/ (uvicorn, pid $(cat "$dir/app.pid"))"
  echo "     nginx http://127.0.0.1:$http_port/ h2c http://127.0.0.1:$h2c_port/ h2 https://127.0.0.1:$h2_port/"
  echo "     caddy h3 https://127.0.0.1:$h3_port/ (UDP; h1 and h2 on TCP)"
  echo "     CA certificate of nginx $dir/ca.crt (logs, configuration: $dir)"
  [ -z "$event_log" ] || echo "     event log $event_log (written when the app stops)"
  ;;
stop)
  stop_all
  ;;
status)
  bad=0
  for name in app nginx caddy; do
    if p=$("${name}_pid"); then echo "$name running (pid $p)"; else echo "$name not running"; bad=1; fi
  done
  for entry in "${ports[@]}"; do
    var=${entry%%:*}; port=${entry#*:}
    if listens "$port"; then echo "listening on 127.0.0.1:$port ($var)"; else echo "not listening on 127.0.0.1:$port ($var)"; bad=1; fi
  done
  if udp_bound "$h3_port"; then echo "UDP $h3_port bound (HTTP/3)"; else echo "UDP $h3_port not bound (HTTP/3)"; bad=1; fi
  exit "$bad"
  ;;
*)
  echo "usage: $0 start|stop|status" >&2
  exit 2
  ;;
esac
