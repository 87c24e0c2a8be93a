#!/usr/bin/env bash
# Builds the Debian package target/debian/rshperf_VERSION-1_ARCH.deb with cargo-deb
# (`cargo install cargo-deb --locked`): the release binary, the man page, and the
# bash, zsh and fish completions, which are generated here from the binary
# (`rshperf completions SHELL`) into target/completions/ first. docs/packaging.md.
#
#   bash scripts/package-deb.sh              build the binary (cargo build --release) and the .deb
#   bash scripts/package-deb.sh --no-build   package the binary already in target/release
#   TARGET=x86_64-unknown-linux-musl bash scripts/package-deb.sh   a static musl build
#                                            (the release workflow; needs the target)
#   CARGO_TARGET_DIR=target/static TARGET=x86_64-unknown-linux-gnu \
#     bash scripts/package-deb.sh --no-build   the static binary of scripts/build-static.sh
#                                            (.ci/run)
# Prints the path of the .deb on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-deb >/dev/null 2>&1 || {
    echo "package-deb: cannot run: cargo-deb missing (cargo install cargo-deb --locked)" >&2
    exit 2
}
target=${TARGET:-}
if [ "${1:-}" != "--no-build" ]; then
    cargo build --release --locked ${target:+--target "$target"}
fi
# cargo and cargo-deb both read CARGO_TARGET_DIR.
bin=${CARGO_TARGET_DIR:-target}/${target:+$target/}release/rshperf
[ -x "$bin" ] || { echo "package-deb: $bin missing (build it first)" >&2; exit 1; }
mkdir -p target/completions
"$bin" completions bash >target/completions/rshperf.bash
"$bin" completions zsh >target/completions/_rshperf
"$bin" completions fish >target/completions/rshperf.fish
if [ -n "$target" ]; then
    # cargo-deb reads target/TARGET/release/rshperf for --target builds.
    cargo deb --no-build --strip --target "$target" --output target/debian/ | tail -n 1
else
    cargo deb --no-build --strip --output target/debian/ | tail -n 1
fi
