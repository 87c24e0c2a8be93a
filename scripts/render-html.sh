#!/usr/bin/env bash
# Renders an rshperf --html report to a PNG with headless Chromium (Debian package
# `chromium`), to look at it as a person would: scripts/render-html.sh REPORT.html OUT.png [WIDTHxHEIGHT]
# Nothing is fetched: the report is self-contained, and background networking is off.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 REPORT.html OUT.png [WIDTHxHEIGHT]" >&2
  exit 1
fi
in=$(realpath "$1")
out=$(realpath -m "$2")
size=${3:-1000x2600}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "$0: chromium not found (apt-get install chromium)" >&2
  exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --no-first-run --user-data-dir="$profile" --hide-scrollbars \
  --screenshot="$out" --window-size="${size/x/,}" "file://$in" 2>/dev/null
echo "$out"
