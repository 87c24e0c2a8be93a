#!/usr/bin/env bash
# Compare `rshperf ab` and `rshperf lb` with the real ApacheBench (ab 2.3) on the same
# cases and print one line per case; details of every mismatch follow it.
#
#   scripts/ab-compare.sh [-b RSHPERF_BINARY] [--out DIR]            the suite below
#   scripts/ab-compare.sh [-b RSHPERF_BINARY] -- AB-ARGS... URL       one ab case
#
# Needs a loopback nginx (127.0.0.1:8080, [::1]:8080, TLS on 8443) with /, /1k.html,
# /echo and /status/404, e.g. the one of scripts/nginx.sh, and ab
# (apt-get install apache2-utils). Reports are kept in DIR (default
# /tmp/rshperf-ab-compat): NAME.ab, NAME.rsh (and NAME.ab.N per server for lb cases).
#
# What is compared, per server block:
#   layout  the sequence of line labels and blank lines, numbers masked (and in the
#           two tables, whose columns widen with the numbers, the padding), from
#           "Server Software:" to the end; ab's reliability warnings (ERROR:/WARNING:
#           lines, which depend on timing) are left out, and for lb the one line lb adds
#           ("Time per request: min/avg/max [msec]");
#   exact   every field that does not depend on timing: server software, host, port,
#           TLS lines, document path and length, concurrency, complete and failed
#           requests and their breakdown, write errors, non-2xx and keep-alive
#           requests, bytes transferred, sent and HTML;
#   notes   requests per second of both (informational: the machine is shared).
# Exit status 0 when every case agrees, 1 otherwise, 2 when a tool is missing.
set -u
cd "$(dirname "$0")/.."
bin=${RSHPERF:-target/release/rshperf}
out=${OUT_DIR:-/tmp/rshperf-ab-compat}
one=()
while [ $# -gt 0 ]; do
  case "$1" in
    -b) bin=$2; shift ;;
    --out) out=$2; shift ;;
    --) shift; one=("$@"); break ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "ab-compare.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
command -v ab >/dev/null || { echo "ab not installed (apt-get install -y apache2-utils)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 not installed" >&2; exit 2; }
[ -x "$bin" ] || { echo "no rshperf binary at $bin (cargo build --release)" >&2; exit 2; }
mkdir -p "$out"

read -r -d '' COMPARE <<'PY'
import re, sys

EXACT = ["Server Software:", "Server Hostname:", "Server Port:", "SSL/TLS Protocol:",
         "Server Temp Key:", "TLS Server Name:", "Document Path:", "Document Length:",
         "Concurrency Level:", "Complete requests:", "Failed requests:", "   (Connect:",
         "Write errors:", "Non-2xx responses:", "Keep-Alive requests:",
         "Total transferred:", "Total body sent:", "HTML transferred:"]
TIMING = re.compile(r"^(ERROR|WARNING): |^        These results|^       deviation apart")
LB_LINE = re.compile(r"^Time per request: .* min/avg/max \[msec\]$")

def blocks(text):
    """The server blocks: each from 'Server Software:' to the next one."""
    parts = re.split(r"(?m)^(?=Server Software:)", text)
    return [p for p in parts[1:]]

TABLE = re.compile(r"^(Connect|Processing|Waiting|Total):|^ *\d+%")

def mask(line):
    """A line's label: numbers masked; in the two tables, whose columns ab widens for
    wider numbers, the padding too."""
    masked = re.sub(r"-?\d+(\.\d+)?", "#", line)
    return re.sub(r" +", " ", masked) if TABLE.match(line) else masked

def layout(block):
    rows = []
    for line in block.splitlines():
        if TIMING.search(line) or LB_LINE.match(line):
            continue
        rows.append(mask(line).rstrip())
    while rows and rows[-1] == "":
        rows.pop()
    return rows

def fields(block):
    found = {}
    for line in block.splitlines():
        for label in EXACT:
            if line.startswith(label) and label not in found:
                found[label] = line[len(label):].strip()
    return found

def rate(block):
    m = re.search(r"^Requests per second:\s+([0-9.]+)", block, re.M)
    return float(m.group(1)) if m else None

def compare(ref, cand):
    problems = []
    la, lb = layout(ref), layout(cand)
    if la != lb:
        import difflib
        diff = "\n".join(difflib.unified_diff(la, lb, "ab", "rshperf", lineterm="", n=1))
        problems.append("layout differs:\n" + diff)
    fa, fb = fields(ref), fields(cand)
    for label in EXACT:
        if fa.get(label) != fb.get(label):
            problems.append("%-22s ab %-24r rshperf %r" % (label, fa.get(label), fb.get(label)))
    return problems

def main():
    cand_file, refs = sys.argv[1], sys.argv[2:]
    cand = blocks(open(cand_file, errors="replace").read())
    refs_blocks = []
    for r in refs:
        b = blocks(open(r, errors="replace").read())
        refs_blocks.append(b[0] if b else "")
    if not cand and not any(refs_blocks):
        print("   note: no report from either (a diagnostic case)")
        return 0
    problems, notes = [], []
    if len(cand) != len(refs_blocks):
        problems.append("rshperf printed %d server blocks, expected %d" % (len(cand), len(refs_blocks)))
    for i, (ref, c) in enumerate(zip(refs_blocks, cand)):
        tag = "" if len(refs_blocks) == 1 else "server %d: " % (i + 1)
        if not ref:
            problems.append(tag + "ab printed no report")
            continue
        problems += [tag + p for p in compare(ref, c)]
        ra, rb = rate(ref), rate(c)
        if ra and rb:
            notes.append("%sreq/s ab %.0f rshperf %.0f (%.2fx)" % (tag, ra, rb, rb / ra))
    for n in notes:
        print("   note: " + n)
    for p in problems:
        print("   MISMATCH: " + p.replace("\n", "\n      "))
    return 1 if problems else 0

sys.exit(main())
PY

failures=0
# case NAME AB-ARGS...: the same arguments to ab and to rshperf ab.
case_ab() {
  local name=$1; shift
  ab "$@" > "$out/$name.ab" 2> "$out/$name.ab.err"; local ar=$?
  "$bin" ab "$@" > "$out/$name.rsh" 2> "$out/$name.rsh.err"; local rr=$?
  report "$name" "$ar" "$rr" "$out/$name.rsh" "$out/$name.ab" "ab $*"
}
# case_lb NAME "LB-OPTIONS" URL...: rshperf lb with every URL at once, ab per URL.
case_lb() {
  local name=$1 opts=$2; shift 2
  local refs=() i=0 ar=0
  for url in "$@"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    ab $opts "$url" > "$out/$name.ab.$i" 2>> "$out/$name.ab.err" || ar=$?
    refs+=("$out/$name.ab.$i")
  done
  # shellcheck disable=SC2086
  "$bin" lb $opts "$@" > "$out/$name.rsh" 2> "$out/$name.rsh.err"; local rr=$?
  report "$name" "$ar" "$rr" "$out/$name.rsh" "${refs[@]}" "lb $opts $*"
}
# report NAME AB_STATUS RSHPERF_STATUS CANDIDATE REFERENCE... DESCRIPTION
report() {
  local name=$1 ar=$2 rr=$3 cand=$4; shift 4
  local desc=${*: -1}
  local refs=("${@:1:$#-1}")
  local detail
  detail=$(python3 -c "$COMPARE" "$cand" "${refs[@]}"); local bad=$?
  if ! grep -q '^Server Software:' "$cand"; then
    # No report: the diagnostics must agree (without the program names).
    local ae re
    ae=$(grep -v '^$' "$out/$name.ab.err" | head -1 | sed -E 's/^(rshperf )?ab: //')
    re=$(grep -v '^$' "$out/$name.rsh.err" | head -1 | sed -E 's/^(rshperf )?ab: //')
    if [ "$ae" != "$re" ]; then
      detail="$detail"$'\n'"   MISMATCH: diagnostic ab '$ae' rshperf '$re'"
      bad=1
    fi
  fi
  if [ "$ar" != "$rr" ]; then
    detail="$detail"$'\n'"   MISMATCH: exit status ab $ar rshperf $rr"
    bad=1
  fi
  if [ $bad = 0 ]; then
    printf 'ok    %-14s %s\n' "$name" "$desc"
  else
    printf 'FAIL  %-14s %s\n' "$name" "$desc"
    failures=$((failures + 1))
  fi
  [ -n "$detail" ] && echo "$detail"
}

if [ ${#one[@]} -gt 0 ]; then
  case_ab one "${one[@]}"
  exit $([ $failures = 0 ] && echo 0 || echo 1)
fi

U=http://127.0.0.1:8080
body=$out/post.body
printf 'name=value&x=%s' "$(head -c 300 /dev/zero | tr '\0' y)" > "$body"
# The core cases (plain, keep-alive, HEAD, a 404, lb over two servers), then the other options.
case_ab plain        -n 2000 -c 10 $U/
case_ab keepalive    -k -n 20000 -c 50 $U/
case_ab head         -i -n 500 -c 5 $U/
case_ab status404    -n 500 -c 5 $U/status/404
case_lb lb-two       "-n 1000 -c 10" $U/ "http://[::1]:8080/"
case_ab ka-1k        -k -n 2000 -c 20 $U/1k.html
case_ab ka-head      -k -i -n 1000 -c 10 $U/1k.html
case_ab ipv6         -n 300 -c 3 "http://[::1]:8080/16k.html"
case_ab post         -n 200 -c 4 -p "$body" -T application/x-www-form-urlencoded $U/echo
case_ab headers      -n 100 -c 2 -H "X-Test: abc" -C "sid=42" -A "joe:secret" $U/echo
case_ab no-sd        -S -d -q -n 300 -c 3 $U/
case_ab variable     -l -n 300 -c 3 $U/1k.html
case_ab tls          -n 200 -c 4 https://127.0.0.1:8443/
case_ab tls-name     -k -n 200 -c 4 -f TLS1.2 https://localhost:8443/1k.html
case_ab timed        -t 2 -c 4 -n 400 $U/
case_ab bad-url      -n 10 http://127.0.0.1:8080
case_ab bad-n        -n 0 $U/
echo
if [ $failures = 0 ]; then echo "ab-compare: every case agrees"; exit 0; fi
echo "ab-compare: $failures case(s) differ (reports in $out)"
exit 1
