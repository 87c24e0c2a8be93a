#!/usr/bin/env bash
# Compares httperf 0.9.0 with rshperf (same arguments: exit status, echo line, report
# layout and every timing-independent figure) for every workload of the compatibility
# suite and prints one line per case, then "N passed, M failed". What "the same" means
# is docs/compatibility.md (principle 1); the cases are the golden runs of its
# appendix A and more.
#   scripts/compat-suite.sh            (no arguments; run from anywhere)
# Needs, and checks first (whatever is missing is named, with how to get it, and
# nothing runs; exit status 2):
#   - bash (it uses /dev/tcp to probe the server: no curl needed);
#   - rshperf built: target/release/rshperf (cargo build --release), or RSHPERF=PATH;
#   - httperf 0.9.0 on the PATH (Debian/Ubuntu: apt-get install -y httperf);
#   - python3, standard library only (os, re, socket, subprocess, sys): it runs
#     scripts/compare.py and finds a closed port;
#   - the repository's loopback nginx, `bash scripts/nginx.sh start` (needs nginx and
#     openssl: apt-get install -y nginx-light openssl), listening on 127.0.0.1:8080
#     (HTTP) and 127.0.0.1:8443 (TLS) and serving its documents: /1k.html, /16k.html,
#     /100k.html, /index.html, /echo, /cookie, /status/404, the /wset tree and the
#     /page tree for --wsesspage, with gzip. Another server on those ports that lacks
#     /page/index.html is refused.
# Everything it uses is in this repository; it writes its session and --wlog files to
# DATA (default /tmp/rshperf-compat-data) and compare.py's outputs to
# /tmp/rshperf-compare.
set -u
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then
  echo "usage: scripts/compat-suite.sh (no arguments; see the header for what it needs)" >&2
  exit 2
fi
export RSHPERF=${RSHPERF:-target/release/rshperf}

# Answers on 127.0.0.1:$1 (bash's /dev/tcp, so no client is needed).
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# The server on 127.0.0.1:8080 answers 200 for $1.
serves() {
  (
    exec 3<>/dev/tcp/127.0.0.1/8080 || exit 1
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$1" >&3
    IFS= read -r -t 5 status <&3 || exit 1
    case $status in "HTTP/1."[01]" 200"*) exit 0 ;; *) exit 1 ;; esac
  ) 2>/dev/null
}
nginx_hint="start it with: bash scripts/nginx.sh start (needs nginx and openssl: apt-get install -y nginx-light openssl)"
missing=()
[ -x "$RSHPERF" ] || missing+=("no rshperf binary at $RSHPERF: cargo build --release (or set RSHPERF)")
command -v httperf >/dev/null || missing+=("httperf not on the PATH: apt-get install -y httperf")
command -v python3 >/dev/null || missing+=("python3 not on the PATH: apt-get install -y python3")
[ -f scripts/compare.py ] || missing+=("scripts/compare.py is missing: use a complete checkout of the repository")
for port in 8080 8443; do
  listening $port || missing+=("nothing listens on 127.0.0.1:$port: $nginx_hint")
done
if listening 8080 && ! serves /page/index.html; then
  missing+=("the server on 127.0.0.1:8080 does not serve /page/index.html (not scripts/nginx.sh's documents): $nginx_hint")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "compat-suite: cannot run:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 2
fi
compare=(python3 scripts/compare.py --)
S="--server 127.0.0.1 --port 8080"
T="--server 127.0.0.1 --port 8443 --ssl"
data=${DATA:-/tmp/rshperf-compat-data}
mkdir -p "$data"
printf '# comment\n/echo think=0.3\n\t/1k.html\n\t/index.html\n/echo method=POST contents="a b\\nc"\n\n\n# session 2\n/echo method=HEAD\n  /1k.html\n' > "$data/sess.log"
printf '/1k.html\0/index.html\0/16k.html\0' > "$data/wlog.txt"
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cases=(
  "$S --uri /1k.html --num-conns 200 --rate 100"
  "$S --uri /1k.html --num-conns 20 --rate 10 --num-calls 5 --http-version 1.1"
  "--server 127.0.0.1 --port $closed --num-conns 5 --rate 10"
  "-v -v $S --uri /1k.html --num-conns 60 --rate 10 --num-calls 2"
  "-v $S --uri /1k.html --num-conns 110 --rate 10 --client=0/2"
  "$S --uri /echo --add-header 'X-Test: a\\\\b\\101\\n' --num-conns 1 --num-calls 2"
  "$S --uri /1k.html --num-conns 300 --rate 300"
  "$S --uri /1k.html --num-conns 20 --num-calls 10 --rate 50"
  "$S --uri /1k.html --num-conns 10 --num-calls 12 --burst-length 4 --rate 20"
  "$S --uri /status/404 --num-conns 20 --rate 50"
  "$S --uri /1k.html --num-conns 20 --rate 50 --add-header 'Accept-Encoding: gzip\\n'"
  "$S --uri /16k.html --num-conns 20 --num-calls 3 --rate 50 --add-header 'Accept-Encoding: gzip\\n'"
  "$S --uri /1k.html --num-conns 20 --num-calls 3 --rate 50 --http-version 1.0"
  "$S --uri /1k.html --method HEAD --num-conns 20 --num-calls 2 --rate 50"
  "$S --uri /1k.html --num-conns 50 --rate 0"
  "--server 127.0.0.1 --po 8080 --ur /1k.html --num-con 30 --ra 60 --num-ca 2"
  "$S --uri /1k.html --num-conns 100 --period e0.01 --client 1/3"
  "$S --uri /1k.html --num-conns 100 --period u0.005,0.015 --client 0/2"
  "$S --uri /1k.html --num-conns 50 --rate 100 --timeout 2 --think-timeout 1"
  "$S --uri /1k.html --num-conns 50 --rate 100 --close-with-reset"
  "$S --uri /100k.html --num-conns 20 --num-calls 2 --rate 20 --send-buffer 1024 --recv-buffer 4096"
  "$S --uri /100k.html --num-conns 10 --rate 20 --recv-buffer 262144"
  "$S --uri / --num-conns 100 --rate 200 --hog"
  "$S --uri /1k.html --num-conns 40 --rate 20 --max-connections 1"
  # Sessions, logs, URI generators.
  "$S --wsesslog=6,0.1,$data/sess.log --rate 4"
  "$S --wsesslog=4,0,$data/sess.log --rate 0 --print-request --print-reply"
  "$S --wlog=y,$data/wlog.txt --num-conns 20 --num-calls 2 --rate 50"
  "$S --wlog=n,$data/wlog.txt --num-conns 10 --rate 50"
  "$S --uri /1k.html --wsess=10,4,0.2 --burst-length 2 --rate 5"
  "$S --uri /cookie --wsess=5,3,0 --session-cookies --burst-length 2 --rate 10"
  "$S --uri /wset --wset=1000,0.5 --num-conns 30 --num-calls 3 --rate 30"
  "$S --uri /wset --wset=100,0.25 --num-conns 30 --rate 30 --client 1/3"
  "$S --uri /1k.html --wsess=10,3,0.05 --burst-length 3 --rate 5 --max-connections 2 --max-piped-calls 1 --http-version 1.0"
  "$S --uri /1k.html --wsess=10,6,0.05 --burst-length 3 --rate 5 --max-connections 2 --max-piped-calls 1"
  "$S --uri /1k.html --wsess=10,4,0 --burst-length 4 --rate 5 --max-connections 3 --max-piped-calls 2"
  "$S --uri /1k.html --wsess=20,2,0 --period u0.01,0.05"
  # --wsesspage (httperf 0.9.0 aborts on a second page view: one view per session).
  "$S --uri /page/index.html --wsesspage=5,1,0 --rate 10"
  "$S --uri /page/moved --wsesspage=4,1,0 --rate 0"
  "-v -v $S --uri /page/index.html --wsesspage=3,1,0.1 --rate 5"
  "$S --uri /page/index.html --wsesspage=3,1,0 --rate 5 --http-version 1.0"
  # TLS against nginx's 8443.
  "$T --uri /1k.html --num-conns 20 --num-calls 5 --rate 20"
  "$T --uri /1k.html --wsess=10,4,0.1 --burst-length 2 --rate 10"
  "$T --uri /1k.html --wsess=10,4,0.1 --rate 10 --http-version 1.0"
  "$T --uri /1k.html --num-conns 20 --num-calls 2 --rate 20 --ssl-ciphers ECDHE-RSA-AES128-GCM-SHA256"
  "$T --uri /1k.html --wsess=10,5,0 --rate 10 --http-version 1.0 --ssl-no-reuse"
  "$S --uri /status/404 --wsess=5,3,0 --failure-status 404 --rate 10"
)
ok=0; bad=0
for c in "${cases[@]}"; do
  eval "args=($c)"
  res=$("${compare[@]}" "${args[@]}" 2>&1)
  verdict=$(printf '%s\n' "$res" | tail -1)
  if [ "$verdict" = "compat: ok" ]; then ok=$((ok+1)); else bad=$((bad+1)); fi
  printf '%-12s %s\n' "$verdict" "$c"
  [ "$verdict" = "compat: ok" ] || printf '%s\n' "$res" | grep -E 'MISMATCH|exit status' | sed 's/^/    /'
done
echo "$ok passed, $bad failed"
