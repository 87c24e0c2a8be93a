#!/usr/bin/env bash
# A loopback caddy serving HTTP/3 (and HTTP/1.1 and HTTP/2 over TLS on the same port)
# to aim `rshperf --http-version 3` (and oha built with http3) at: the target of
# docs/http3.md and of bench/run.sh's H3 row.
#
#   scripts/caddy.sh start     start it (or restart it with a new configuration)
#   scripts/caddy.sh stop      stop it
#   scripts/caddy.sh status    say whether it answers
#
# Listens on https://127.0.0.1:$CADDY_PORT (default 8445), TCP for h1/h2 and UDP for
# h3, with a certificate for localhost from caddy's internal CA (`tls internal`; the
# CA stays in $CADDY_DIR, nothing is installed in the system's trust store; rshperf
# does not verify certificates without --ssl-verify). `default_sni localhost` lets
# clients that send no SNI (an IP address as server name) get that certificate.
# Serves the same documents as scripts/nginx.sh:
#   /               "hello" (index.html)        /1k.html, /16k.html, /100k.html (a, b, c)
#   /wset/A/B/C.html                            the --wset tree for N = 1000
#   /page/...       the --wsesspage page (see nginx.sh)
#   /cookie         a Set-Cookie: sid=...       /status/404, /status/500
# Needs Debian's caddy (2.6 serves HTTP/3 with `servers { protocols h1 h2 h3 }`).
# Environment: CADDY_DIR (default /tmp/rshperf-caddy-local: Caddyfile, documents,
# certificates, log, caddy.pid), CADDY_PORT. Runs as the calling user.
set -euo pipefail
cmd=${1:-start}
dir=${CADDY_DIR:-/tmp/rshperf-caddy-local}
port=${CADDY_PORT:-8445}

running() { [ -f "$dir/caddy.pid" ] && kill -0 "$(cat "$dir/caddy.pid" 2>/dev/null)" 2>/dev/null; }

# listens: something accepts TCP connections on the port (the UDP listener is opened
# by the same server block, before the TCP one is reported ready).
listens() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

documents() {
  local html=$dir/html
  mkdir -p "$html/page"
  echo hello > "$html/index.html"
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
  cat > "$html/page/index.html" <<'PAGE'
<html><head><title>page</title></head><body>
<p>A page with embedded objects.</p>
<img src="a.png">
<IMG SRC="/page/b.png">
<img src="http://other.example/x.png">
<iframe src="f.html"></iframe>
<frame src="g.html">
<a href="/not-fetched.html">link</a>
</body></html>
PAGE
  printf 'PNGa' > "$html/page/a.png"
  printf 'PNGbb' > "$html/page/b.png"
  printf '<html><body>frame f</body></html>\n' > "$html/page/f.html"
  printf '<html><body>frame g</body></html>\n' > "$html/page/g.html"
}

config() {
  cat > "$dir/Caddyfile" <<CONF
{
	admin off
	auto_https disable_redirects
	skip_install_trust
	default_sni localhost
	storage file_system {
		root $dir/data
	}
	log {
		output file $dir/caddy.log
		level ERROR
	}
	servers {
		protocols h1 h2 h3
	}
}

https://localhost:$port, https://127.0.0.1:$port {
	tls internal
	root * $dir/html
	header /cookie Set-Cookie "sid=caddy{http.request.uuid}; Path=/"
	respond /cookie "cookie" 200
	respond /status/404 "not found" 404
	respond /status/500 "error" 500
	file_server
}
CONF
}

case "$cmd" in
  start)
    mkdir -p "$dir"
    documents
    config
    if running; then kill "$(cat "$dir/caddy.pid")"; sleep 0.5; fi
    XDG_DATA_HOME=$dir/data XDG_CONFIG_HOME=$dir/config HOME=$dir \
      nohup caddy run --config "$dir/Caddyfile" --adapter caddyfile \
      --pidfile "$dir/caddy.pid" > "$dir/caddy.out" 2>&1 &
    for _ in $(seq 1 100); do
      if listens; then echo "caddy: https://127.0.0.1:$port (h1, h2, h3 on UDP $port)"; exit 0; fi
      sleep 0.1
    done
    echo "caddy did not start; see $dir/caddy.out" >&2
    exit 1
    ;;
  stop)
    if running; then kill "$(cat "$dir/caddy.pid")"; rm -f "$dir/caddy.pid"; echo "caddy stopped"; else echo "caddy not running"; fi
    ;;
  status)
    if listens; then echo "caddy: 127.0.0.1:$port answers"; else echo "caddy: 127.0.0.1:$port does not answer"; exit 1; fi
    ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
