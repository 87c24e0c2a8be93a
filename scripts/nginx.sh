#!/usr/bin/env bash
# A loopback nginx to aim rshperf (and httperf, ab, wrk) at: the target of the README's
# examples, of scripts/compat-suite.sh and of bench/run.sh.
#
#   scripts/nginx.sh start     start (or reload) it
#   scripts/nginx.sh stop      stop it
#   scripts/nginx.sh status    say whether it answers
#
# Listens on http://127.0.0.1:8080, http://[::1]:8080 and https://127.0.0.1:8443
# (TLS 1.2 and 1.3, a self-signed certificate for localhost/127.0.0.1 made with
# openssl; rshperf does not verify certificates unless --ssl-verify). Serves:
#   /               "hello" (index.html)        /1k.html, /16k.html, /100k.html (a, b, c)
#   /echo           host|user-agent|x-test|cookie|method|content-length, one line
#   /cookie         a Set-Cookie: sid=...       /status/404, /status/500, /status/302
#   /wset/A/B/C.html                            the --wset tree for N = 1000 (0/0/0 … 9/9/9)
#   /page/index.html  a page for --wsesspage: embeds a.png, /page/b.png, <iframe f.html>
#                     and <frame g.html> (4 same-server objects: 5 calls per view); an
#                     <img> on another host and an <a href> are not fetched; f.html and
#                     g.html embed nothing. /page/moved answers 302 Location:
#                     /page/index.html.
#   "Accept-Encoding: gzip" gets gzip, chunked.
# Needs nginx and openssl (Debian/Ubuntu: apt-get install -y nginx-light openssl).
# Environment: NGINX_DIR (default /tmp/rshperf-nginx-local: config, documents, logs),
# HTTP_PORT (8080), TLS_PORT (8443). Runs as the calling user; nothing is installed.
set -euo pipefail
cmd=${1:-start}
dir=${NGINX_DIR:-/tmp/rshperf-nginx-local}
http_port=${HTTP_PORT:-8080}
tls_port=${TLS_PORT:-8443}

running() { [ -f "$dir/nginx.pid" ] && kill -0 "$(cat "$dir/nginx.pid")" 2>/dev/null; }

answers() {
  # bash's /dev/tcp: no curl needed.
  exec 3<>"/dev/tcp/127.0.0.1/$http_port" 2>/dev/null || return 1
  printf 'GET /1k.html HTTP/1.0\r\n\r\n' >&3
  head -c 12 <&3 | grep -q '^HTTP/1.1 200'
  local ok=$?
  exec 3<&-
  return $ok
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

certificate() {
  [ -f "$dir/tls.crt" ] && return
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
}

config() {
  cat > "$dir/nginx.conf" <<EOF
# Written by rshperf's scripts/nginx.sh.
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log error;
worker_rlimit_nofile 100000;
events { worker_connections 50000; }
http {
  access_log off;
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
  server {
    listen 127.0.0.1:$http_port backlog=16384;
    listen [::1]:$http_port;
    listen 127.0.0.1:$tls_port ssl backlog=16384;
    ssl_certificate $dir/tls.crt;
    ssl_certificate_key $dir/tls.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:tls:4m;
    root $dir/html;
    location = /echo {
      default_type text/plain;
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
  }
}
EOF
}

case "$cmd" in
start)
  command -v nginx >/dev/null || { echo "nginx is not installed (apt-get install -y nginx-light)" >&2; exit 2; }
  command -v openssl >/dev/null || { echo "openssl is not installed" >&2; exit 2; }
  mkdir -p "$dir/tmp"
  documents
  certificate
  config
  if running; then
    nginx -p "$dir" -c "$dir/nginx.conf" -s reload
  else
    nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log"
  fi
  for _ in $(seq 50); do answers && break; sleep 0.1; done
  answers || { echo "nginx does not answer on 127.0.0.1:$http_port (see $dir/error.log)" >&2; exit 1; }
  echo "nginx: http://127.0.0.1:$http_port/ http://[::1]:$http_port/ https://127.0.0.1:$tls_port/ ($dir)"
  ;;
stop)
  if running; then kill "$(cat "$dir/nginx.pid")"; echo "nginx stopped"; else echo "nginx was not running"; fi
  ;;
status)
  if answers; then echo "answering on 127.0.0.1:$http_port"; else echo "not answering on 127.0.0.1:$http_port"; exit 1; fi
  ;;
*)
  echo "usage: $0 start|stop|status" >&2
  exit 2
  ;;
esac
