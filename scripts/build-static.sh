#!/usr/bin/env bash
# Builds a statically linked rshperf and proves it is one: `file` calls it statically
# linked, `ldd` calls it not a dynamic executable, it prints its version, and it
# resolves `localhost` by name both as a server (`rshperf serve --address localhost`)
# and as a client (`--server localhost`), answering every request. docs/packaging.md.
#
#   bash scripts/build-static.sh             the gnu target with glibc's static libraries
#                                            (-C target-feature=+crt-static)
#   TARGET=x86_64-unknown-linux-musl bash scripts/build-static.sh
#                                            musl (the release workflow; needs
#                                            `rustup target add` and musl-tools)
#   bash scripts/build-static.sh --no-build  check the binary already built
#
# The build goes to its own target directory (target/static, or STATIC_TARGET_DIR) so
# that it does not rebuild the normal one's artifacts; `--target` keeps the flag away
# from build scripts and proc macros. Prints the binary's path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${TARGET:-x86_64-unknown-linux-gnu}
dir=${STATIC_TARGET_DIR:-target/static}
case "${1:-}" in
    "" | --no-build) ;;
    *) echo "build-static: unknown argument '$1' (only --no-build)" >&2; exit 2 ;;
esac
if [ "${1:-}" != "--no-build" ]; then
    RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-feature=+crt-static" \
        cargo build --release --locked --target "$target" --target-dir "$dir" >&2
fi
bin=$dir/$target/release/rshperf
[ -x "$bin" ] || { echo "build-static: $bin missing (build it first)" >&2; exit 1; }
fail() { echo "build-static: $bin: $*" >&2; exit 1; }

# Linked statically: `file` says "statically linked" (or "static-pie linked", its word
# for a static position-independent executable) and names no interpreter.
kind=$(file -L "$bin")
echo "$kind" >&2
case "$kind" in
    *"statically linked"* | *"static-pie linked"*) ;;
    *) fail "not statically linked" ;;
esac
case "$kind" in *interpreter*) fail "has a dynamic loader" ;; esac
ldd_out=$(ldd "$bin" 2>&1 || true)
echo "ldd: $ldd_out" >&2
case "$ldd_out" in
    *"not a dynamic executable"* | *"statically linked"*) ;;
    *) fail "ldd lists shared libraries" ;;
esac

"$bin" --version >&2

# Name resolution without a shared libc: the server listens on `localhost` and the
# client connects to `localhost`; both names come from /etc/hosts.
log=$(mktemp)
"$bin" serve --address localhost --port 0 2>"$log" &
serve=$!
trap 'kill "$serve" 2>/dev/null || true; rm -f "$log"' EXIT
port=
for _ in $(seq 100); do
    port=$(sed -n 's|^rshperf serve: listening on http://[^ ]*:\([0-9]*\)/$|\1|p' "$log")
    [ -n "$port" ] && break
    kill -0 "$serve" 2>/dev/null || break
    sleep 0.1
done
[ -n "$port" ] || fail "serve --address localhost did not start: $(cat "$log")"
report=$("$bin" --server localhost --port "$port" --num-conns 3 --timeout 5)
grep -q '^Total: connections 3 requests 3 replies 3 ' <<<"$report" ||
    fail "--server localhost: $report"
grep -q '^Errors: total 0 ' <<<"$report" || fail "--server localhost: $report"
echo "localhost:$port: 3 replies, 0 errors" >&2

# The lookup uses only the services built into the static libc, whatever
# /etc/nsswitch.conf says: with a `hosts` line naming only a service that does not
# exist (in a private mount namespace), `localhost` still resolves; a dynamically
# linked program fails there. Needs root and unshare (util-linux).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
    conf=$(mktemp)
    trap 'kill "$serve" 2>/dev/null || true; rm -f "$log" "$conf"' EXIT
    echo 'hosts: nosuchservice' >"$conf"
    report=$(unshare -m sh -c 'mount --bind "$1" /etc/nsswitch.conf && shift && exec "$@"' \
        sh "$conf" "$bin" --server localhost --port "$port" --num-conns 1 --timeout 5 2>&1) ||
        fail "with 'hosts: nosuchservice' in /etc/nsswitch.conf: $report"
    grep -q '^Total: connections 1 requests 1 replies 1 ' <<<"$report" ||
        fail "with 'hosts: nosuchservice' in /etc/nsswitch.conf: $report"
    echo "localhost resolved without NSS modules (nsswitch.conf: 'hosts: nosuchservice')" >&2
elif [ "${RSHPERF_CI:-}" = 1 ]; then
    fail "cannot check lookups without NSS modules: needs root and unshare"
else
    echo "build-static: lookups without NSS modules not checked (needs root and unshare)" >&2
fi
echo "$bin"
