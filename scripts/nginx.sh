#!/usr/bin/env bash
# A loopback nginx to aim rshperf (and httperf, ab, wrk, h2load) at: the target of the
# examples in README.md and docs/, of scripts/compat-suite.sh, scripts/ab-compare.sh,
# scripts/prometheus-check.sh and of bench/run.sh.
#
#   scripts/nginx.sh start     start it (or reload it with a new configuration)
#   scripts/nginx.sh stop      stop it
#   scripts/nginx.sh status    say which of its ports this nginx holds (and which
#                              another server holds); exit 1 unless it holds all
#   scripts/nginx.sh config    only write the documents, certificates and nginx.conf
#                              (for a caller that starts nginx itself, e.g. in a
#                              network namespace: scripts/multihost.sh)
#
# Listens on (one worker process; the environment variable that moves each):
#   http://127.0.0.1:8080, http://[::1]:8080   HTTP/1.x                 HTTP_PORT
#   https://127.0.0.1:8443                      HTTP/1.x over TLS 1.2/1.3 TLS_PORT
#   http://127.0.0.1:8082                       HTTP/2 cleartext (h2c,    H2C_PORT
#                                               prior knowledge only)
#   https://127.0.0.1:8444                      HTTP/2 over TLS (ALPN h2) H2_PORT
#   unix:$NGINX_DIR/nginx.sock                  HTTP/1.x on a unix socket NGINX_SOCKET
# HTTP_PORT alone moves them all (scripts/ports.sh: the others keep their distance
# from it, so HTTP_PORT=18080 gives 18443, 18082 and 18444); the README's and docs'
# examples name the ports $HTTP_PORT, $TLS_PORT, $H2C_PORT and $H2_PORT
# (`. scripts/ports.sh` sets them). When another server holds one of the ports,
# `start` names the port and the variable that moves it, and exits 1.
# The TLS ports present a certificate for localhost and 127.0.0.1 signed by a CA made
# here with openssl ($NGINX_DIR/ca.crt: give it to --ssl-ca-file with --ssl-verify;
# rshperf does not verify certificates without --ssl-verify).
# Serves, on every port:
#   /               "hello" (index.html)        /1k.html, /16k.html, /100k.html (a, b, c)
#   /echo           host|user-agent|x-test|cookie|method|content-length, one line
#                   (any method, a request body is accepted)
#   /cookie         a Set-Cookie: sid=...       /status/404, /status/500, /status/302
#   /wset/A/B/C.html                            the --wset tree for N = 1000 (0/0/0 … 9/9/9)
#   /page/index.html  a page for --wsesspage: embeds a.png, /page/b.png, <iframe f.html>
#                     and <frame g.html> (4 same-server objects: 5 calls per view); an
#                     <img> on another host and an <a href> are not fetched; f.html and
#                     g.html embed nothing. /page/moved answers 302 Location:
#                     /page/index.html.
#   "Accept-Encoding: gzip" gets gzip, chunked.
# Needs nginx with its ssl and http_v2 modules (Debian's packages have both) and openssl:
# apt-get install -y nginx-light openssl.
# Environment: NGINX_DIR (default /tmp/rshperf-nginx-local: configuration, documents,
# certificates, logs, nginx.pid), the ports above, NGINX_SOCKET (default
# $NGINX_DIR/nginx.sock). Runs as the calling user; nothing is installed. Example:
#   HTTP_PORT=18080 bash scripts/nginx.sh start
# (status and stop need the same variables; bench/run.sh reads them too).
# LISTEN_ADDR (default 127.0.0.1) moves the IPv4 listeners to another address;
# LISTEN_IPV6=off drops the [::1] listener; ACCESS_LOG=FILE logs every request as
# "$msec $remote_addr $request_uri $status" (default: no access log).
set -euo pipefail
cmd=${1:-start}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/ports.sh
. "$here/ports.sh"
# shellcheck source=scripts/certs.sh
. "$here/certs.sh"
dir=$NGINX_DIR
http_port=$HTTP_PORT
tls_port=$TLS_PORT
h2c_port=$H2C_PORT
h2_port=$H2_PORT
socket=${NGINX_SOCKET:-$dir/nginx.sock}
addr=${LISTEN_ADDR:-127.0.0.1}
ipv6=${LISTEN_IPV6:-on}
access_log=${ACCESS_LOG:-}

# Each port with the variable that moves it.
ports=("HTTP_PORT:$http_port" "TLS_PORT:$tls_port" "H2C_PORT:$h2c_port" "H2_PORT:$h2_port")

# The pid of this script's nginx master (its pid file names a live nginx started with
# this directory's nginx.conf); fails when it is not running.
master() {
  local pid
  pid=$(cat "$dir/nginx.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/nginx.conf"
  echo "$pid"
}

running() { master >/dev/null; }

# ours PORT: this nginx holds the listening socket of TCP port PORT (the socket's
# inode, from /proc/net/tcp and tcp6, is among its master's descriptors).
ours() {
  local pid inode
  pid=$(master) || return 1
  for inode in $(awk -v p="$(printf '%04X' "$1")" \
      'FNR > 1 && $4 == "0A" { n = split($2, a, ":"); if (a[n] == p) print $10 }' \
      /proc/net/tcp /proc/net/tcp6 2>/dev/null); do
    ls -l "/proc/$pid/fd" 2>/dev/null | grep -qF "socket:[$inode]" && return 0
  done
  return 1
}

# socket_taken: a live socket other than this nginx's is bound to $socket (a socket
# file nobody listens on is a leftover, which start removes).
socket_taken() {
  local pid inode
  inode=$(awk -v s="$socket" 'NR > 1 && $NF == s { print $7; exit }' /proc/net/unix 2>/dev/null)
  [ -n "$inode" ] || return 1
  pid=$(master) && ls -l "/proc/$pid/fd" 2>/dev/null | grep -qF "socket:[$inode]" && return 1
  return 0
}

# taken PORT: another server (not this nginx) accepts connections on PORT (on
# $addr, or for HTTP_PORT also on [::1]).
taken() {
  listens "$1" || { [ "$ipv6" != off ] && [ "$1" = "$http_port" ] && listens6 "$1"; } || return 1
  ! ours "$1"
}

# free_base: an HTTP_PORT from which all four ports are free (18080, 28080, …).
free_base() {
  local base
  for base in 18080 28080 38080 48080; do
    if ! listens "$base" && ! listens $((base + 363)) && ! listens $((base + 2)) \
        && ! listens $((base + 364)); then
      echo "$base"; return
    fi
  done
  return 1
}

# clashes: one line per port (or socket) another server holds, naming the variable
# that moves it; fails when there is any.
clashes() {
  local entry var port n=0 base
  for entry in "${ports[@]}"; do
    var=${entry%%:*}; port=${entry#*:}
    if taken "$port"; then
      echo "nginx.sh: 127.0.0.1:$port is taken by another server (not this script's nginx): set $var to move it" >&2
      n=$((n + 1))
    fi
  done
  if socket_taken; then
    echo "nginx.sh: $socket is in use by another server: set NGINX_SOCKET to move it" >&2
    n=$((n + 1))
  fi
  [ "$n" = 0 ] && return 0
  if base=$(free_base); then
    echo "nginx.sh: or move all four ports at once: export HTTP_PORT=$base (the others follow: $((base + 363)), $((base + 2)), $((base + 364)), all free now), run this again, and . scripts/ports.sh for the examples" >&2
  else
    echo "nginx.sh: set the variable named above to a free port" >&2
  fi
  return 1
}

# bind_failures: nginx's "bind() to ADDR failed" lines (from $1) as one line per
# address, naming the variable that moves it.
bind_failures() {
  local a port var entry
  grep -o 'bind() to [^ ]* failed' <<<"$1" | sort -u | while read -r _ _ a _; do
    var=NGINX_SOCKET
    if [ "${a#unix:}" = "$a" ]; then
      port=${a##*:}
      for entry in "${ports[@]}"; do [ "${entry#*:}" = "$port" ] && var=${entry%%:*}; done
    fi
    echo "nginx.sh: $a is taken by another server: move it with $var" >&2
  done
}

answers() {
  # bash's /dev/tcp: no curl needed.
  { exec 3<>"/dev/tcp/$addr/$http_port"; } 2>/dev/null || return 1
  printf 'GET /1k.html HTTP/1.0\r\n\r\n' >&3
  head -c 12 <&3 | grep -q '^HTTP/1.1 200'
  local ok=$?
  exec 3<&-
  return $ok
}

# listens PORT: something accepts TCP connections on 127.0.0.1:PORT.
listens() {
  (exec 3<>"/dev/tcp/$addr/$1") 2>/dev/null
}

# listens6 PORT: the same on [::1].
listens6() {
  (exec 3<>"/dev/tcp/::1/$1") 2>/dev/null
}

documents() {
  local html=$dir/html
  mkdir -p "$html"
  echo hello > "$html/index.html"
  # Bodies of one repeated letter, like rshperf serve's.
  local size letter
  for pair in 1024:a 16384:b 102400:c; do
    size=${pair%:*}; letter=${pair#*:}
    printf "%${size}s" '' | tr ' ' "$letter" > "$html/$((size / 1024))k.html"
  done
  local a b c
  for a in {0..9}; do for b in {0..9}; do
    mkdir -p "$html/wset/$a/$b"
    for c in {0..9}; do echo "wset $a$b$c" > "$html/wset/$a/$b/$c.html"; done
  done; done
  mkdir -p "$html/page"
  cat > "$html/page/index.html" <<'PAGE'
<html><head><title>page</title></head><body>
<p>A page with embedded objects.</p>
<img src="a.png" alt="a">
<IMG SRC="/page/b.png">
<img src="http://elsewhere.invalid/x.png">
<iframe src="f.html"></iframe>
<frameset><frame src="g.html"></frameset>
<a href="not-fetched.html">a link is not an embedded object</a>
</body></html>
PAGE
  printf 'PNGa' > "$html/page/a.png"
  printf 'PNGbb' > "$html/page/b.png"
  printf '<html><body>frame f</body></html>\n' > "$html/page/f.html"
  printf '<html><body>frame g</body></html>\n' > "$html/page/g.html"
}

config() {
  # nginx 1.25.1 moved HTTP/2 from a listen parameter to the http2 directive.
  local version h2_listen=" http2" h2_on="" v6_listen="" log="access_log off;"
  [ "$ipv6" = off ] || v6_listen="listen [::1]:$http_port;"
  if [ -n "$access_log" ]; then
    log="log_format stamp '\$msec \$remote_addr \$request_uri \$status'; access_log $access_log stamp;"
  fi
  version=$(nginx -v 2>&1 | sed -n 's|.*nginx/\([0-9.]*\).*|\1|p')
  if [ "$(printf '%s\n' 1.25.1 "$version" | sort -V | head -1)" = 1.25.1 ]; then
    h2_listen=""; h2_on="http2 on;"
  fi
  cat > "$dir/locations.conf" <<EOF
# Written by rshperf's scripts/nginx.sh: the documents every port serves.
ssl_certificate $dir/tls.crt;
ssl_certificate_key $dir/tls.key;
root $dir/html;
location = /echo {
  default_type text/plain;
  client_max_body_size 0;
  return 200 "\$host|\$http_user_agent|\$http_x_test|\$http_cookie|\$request_method|\$http_content_length\n";
}
location = /cookie {
  default_type text/plain;
  add_header Set-Cookie "sid=s3ss10n; Path=/";
  return 200 "here is a cookie\n";
}
location = /status/404 { return 404; }
location = /status/500 { return 500; }
location = /status/302 { return 302 /; }
location = /page/moved { absolute_redirect off; return 302 /page/index.html; }
EOF
  cat > "$dir/nginx.conf" <<EOF
# Written by rshperf's scripts/nginx.sh.
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log error;
worker_rlimit_nofile 100000;
events { worker_connections 50000; }
http {
  $log
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  default_type text/html;
  sendfile on;
  tcp_nodelay on;
  keepalive_timeout 120;
  keepalive_requests 1000000;
  gzip on;
  gzip_types *;
  gzip_min_length 0;
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_session_cache shared:tls:4m;
  # HTTP/1.x: TCP, TLS and the unix socket.
  server {
    listen $addr:$http_port backlog=16384;
    $v6_listen
    listen $addr:$tls_port ssl backlog=16384;
    listen unix:$socket backlog=16384;
    include $dir/locations.conf;
  }
  # HTTP/2: h2c with prior knowledge, and h2 over TLS (ALPN offers h2 and http/1.1).
  server {
    listen $addr:$h2c_port$h2_listen backlog=16384;
    listen $addr:$h2_port ssl$h2_listen backlog=16384;
    $h2_on
    include $dir/locations.conf;
  }
}
EOF
}

case "$cmd" in
config)
  mkdir -p "$dir/tmp"
  documents
  certificate "$dir"
  config
  echo "$dir/nginx.conf"
  ;;
start)
  command -v nginx >/dev/null || { echo "nginx is not installed (apt-get install -y nginx-light)" >&2; exit 2; }
  command -v openssl >/dev/null || { echo "openssl is not installed (apt-get install -y openssl)" >&2; exit 2; }
  for entry in "${ports[@]}"; do
    port=${entry#*:}
    [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] \
      || { echo "nginx.sh: ${entry%%:*}=$port is not a port (1 to 65535)" >&2; exit 1; }
  done
  clashes || exit 1
  mkdir -p "$dir/tmp"
  documents
  certificate "$dir"
  config
  if running; then
    # (quiet unless it fails: it notes "signal process started" on stderr)
    out=$(nginx -p "$dir" -c "$dir/nginx.conf" -s reload 2>&1) || { echo "$out" >&2; exit 1; }
    sleep 0.5
  else
    # A socket file left by an nginx that did not stop cleanly blocks the bind.
    [ -S "$socket" ] && rm -f "$socket"
    # nginx retries a failed bind five times: its 25 lines become one per address.
    if ! out=$(nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" 2>&1); then
      if grep -q 'bind() to .* failed' <<<"$out"; then bind_failures "$out"; else echo "$out" >&2; fi
      exit 1
    fi
  fi
  for _ in $(seq 50); do answers && break; sleep 0.1; done
  answers || { echo "nginx does not answer on 127.0.0.1:$http_port (see $dir/error.log)" >&2; exit 1; }
  for p in "$tls_port" "$h2c_port" "$h2_port"; do
    listens "$p" || { echo "nginx does not listen on 127.0.0.1:$p (see $dir/error.log)" >&2; exit 1; }
  done
  echo "nginx: http://127.0.0.1:$http_port/ http://[::1]:$http_port/ https://127.0.0.1:$tls_port/"
  echo "       h2c http://127.0.0.1:$h2c_port/ h2 https://127.0.0.1:$h2_port/ unix:$socket"
  echo "       CA certificate $dir/ca.crt (logs, configuration: $dir)"
  echo "       ports: HTTP_PORT=$http_port TLS_PORT=$tls_port H2C_PORT=$h2c_port H2_PORT=$h2_port"
  ;;
stop)
  if pid=$(master); then
    kill "$pid"
    for _ in $(seq 50); do running || break; sleep 0.1; done
    echo "nginx stopped"
  else
    echo "nginx was not running (no live nginx in $dir/nginx.pid)"
  fi
  ;;
status)
  # Which of the ports this nginx holds; a port another server holds is named so.
  bad=0
  if pid=$(master); then
    echo "nginx running (pid $pid, $dir)"
  else
    echo "nginx not running (no live nginx in $dir/nginx.pid)"
    bad=1
  fi
  for entry in "${ports[@]}"; do
    var=${entry%%:*}; port=${entry#*:}
    if ours "$port"; then
      echo "listening on 127.0.0.1:$port ($var)"
    elif listens "$port"; then
      echo "127.0.0.1:$port ($var): another server listens here, not this nginx"
      bad=1
    else
      echo "not listening on 127.0.0.1:$port ($var)"
      bad=1
    fi
  done
  if [ "$bad" = 0 ] && ! answers; then
    echo "not answering on 127.0.0.1:$http_port (see $dir/error.log)"
    bad=1
  fi
  if socket_taken; then
    echo "socket $socket: another server, not this nginx"
  elif [ -S "$socket" ]; then
    echo "socket $socket"
  else
    echo "no socket at $socket"
  fi
  exit "$bad"
  ;;
*)
  echo "usage: $0 start|stop|status|config" >&2
  exit 2
  ;;
esac
