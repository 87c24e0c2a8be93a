#!/usr/bin/env bash
# Instructions per request and per connection of two rshperf binaries (a refactor's
# before and after), from valgrind's callgrind: noise-free where wall-clock rates are
# not. Each workload runs at two sizes; a handler's inclusive count at the larger size
# minus the smaller, divided by the difference in requests (or connections), is its
# cost per unit with the fixed costs (start-up, report) cancelled.
#
#   bash bench/callgrind_pair.sh BEFORE AFTER [OUT]
#
# BEFORE, AFTER: the binaries (build both with debug information, e.g.
# `cargo build --profile profiling`, or CARGO_PROFILE_RELEASE_DEBUG=1 for an older
# checkout without that profile, so that callgrind names the functions). Aims at the
# loopback nginx of scripts/nginx.sh ($HTTP_PORT, $H2C_PORT). Prints one table per
# workload: handler, before, after, after ÷ before. A handler inlined into its caller
# in one build shows as missing ("-") there; its caller then carries its cost.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../scripts/ports.sh"
[ $# -ge 2 ] || { echo "usage: bash bench/callgrind_pair.sh BEFORE AFTER [OUT]" >&2; exit 2; }
before=$1 after=$2 out=${3:-$(mktemp -d)}
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "callgrind_pair: valgrind is not installed" >&2; exit 1; }
common="--server 127.0.0.1 --uri /index.html --timeout 5"
# name | units at the small size | units at the large size | unit | args (%N% = size)
workloads=(
  "keep-alive|2000|4000|request|--port $HTTP_PORT --rate 100 --num-conns 10 --num-calls %N%"
  "connections|400|800|connection|--port $HTTP_PORT --rate 200 --num-conns %N%"
  "h2c|2000|4000|request|--port $H2C_PORT --http-version 2 --rate 100 --num-conns 10 --burst-length 10 --num-calls %N%"
)
handlers='Conn<S>::on_readable|Conn<S>::on_writable|Conn<S>::on_reply_done|ReplyParser::feed|Engine>::issue_at|Engine>::flush|Engine>::finish|start_request_conn|process_completions|Engine>::run'
# Inclusive instructions of each handler in a callgrind file, as "name count" lines.
costs() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
    grep -E "($handlers) \[" |
    sed -E 's/^ *([0-9,]+) .*:([^:]*::)?rshperf::(.*) \[.*/\3 \1/; s/<impl rshperf::engine::event_loop::Engine>/Engine/g' |
    awk '{c=$NF; gsub(",", "", c); $NF=""; sub(/ $/, ""); if (!($0 in seen)) {seen[$0]=1; print $0 "\t" c}}'
}
for w in "${workloads[@]}"; do
  IFS='|' read -r name small large unit args <<<"$w"
  for b in before after; do
    bin=${!b}
    for size in "$small" "$large"; do
      n=$size
      [ "$name" = connections ] || n=$((size / 10))
      # shellcheck disable=SC2086
      valgrind --tool=callgrind --callgrind-out-file="$out/$b.$name.$size.cg" \
        "$bin" $common ${args//%N%/$n} >"$out/$b.$name.$size.report" 2>"$out/$b.$name.$size.err"
      costs "$out/$b.$name.$size.cg" >"$out/$b.$name.$size.costs"
    done
  done
  echo "== $name: instructions per $unit ($((large - small)) ${unit}s between the two sizes)"
  printf '%-60s %10s %10s %7s\n' handler before after ratio
  python3 - "$out" "$name" "$small" "$large" <<'EOF'
import sys
out, name, small, large = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def load(b, size):
    d = {}
    for line in open(f"{out}/{b}.{name}.{size}.costs"):
        k, v = line.rstrip("\n").rsplit("\t", 1)
        d[k] = int(v)
    return d
def total(b, size):
    for line in open(f"{out}/{b}.{name}.{size}.cg"):
        if line.startswith("summary:"):
            return int(line.split()[1])
per = {}
for b in ("before", "after"):
    lo, hi = load(b, small), load(b, large)
    per[b] = {k: (hi[k] - lo.get(k, 0)) / (large - small) for k in hi}
    per[b]["(whole run)"] = (total(b, large) - total(b, small)) / (large - small)
for k in sorted(set(per["before"]) | set(per["after"]), key=lambda k: -max(per["before"].get(k, 0), per["after"].get(k, 0))):
    b, a = per["before"].get(k), per["after"].get(k)
    f = lambda x: "-" if x is None else f"{x:,.0f}"
    r = f"{a / b:.3f}" if a and b else "-"
    print(f"{k[:60]:<60} {f(b):>10} {f(a):>10} {r:>7}")
EOF
done
echo "(callgrind files in $out)"
