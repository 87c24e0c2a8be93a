# The loopback nginx's ports (scripts/nginx.sh), under the names the examples of
# README.md and docs/ use. Sourced, not run: by a shell that runs the examples
#   . scripts/ports.sh
# and by scripts/nginx.sh, bench/run.sh and the other scripts that aim at that nginx.
#
# Exports HTTP_PORT (default 8080), TLS_PORT (8443), H2C_PORT (8082), H2_PORT (8444)
# and NGINX_DIR (/tmp/rshperf-nginx-local: its CA certificate is $NGINX_DIR/ca.crt).
# One variable moves them all: the other ports keep their distance from HTTP_PORT, so
# HTTP_PORT=18080 gives TLS_PORT 18443, H2C_PORT 18082, H2_PORT 18444. A port set by
# hand keeps its value; one this file derived follows a new HTTP_PORT when it is
# sourced again. Sets no shell option, so sourcing it changes nothing else.
: "${HTTP_PORT:=8080}"
# The HTTP_PORT the others were derived from last time (unset: none was).
if [ -n "${RSHPERF_PORTS_FROM:-}" ]; then
  [ "${TLS_PORT:-}" = $((RSHPERF_PORTS_FROM + 363)) ] && unset TLS_PORT
  [ "${H2C_PORT:-}" = $((RSHPERF_PORTS_FROM + 2)) ] && unset H2C_PORT
  [ "${H2_PORT:-}" = $((RSHPERF_PORTS_FROM + 364)) ] && unset H2_PORT
fi
: "${TLS_PORT:=$((HTTP_PORT + 363))}"
: "${H2C_PORT:=$((HTTP_PORT + 2))}"
: "${H2_PORT:=$((HTTP_PORT + 364))}"
: "${NGINX_DIR:=/tmp/rshperf-nginx-local}"
RSHPERF_PORTS_FROM=$HTTP_PORT
export HTTP_PORT TLS_PORT H2C_PORT H2_PORT NGINX_DIR RSHPERF_PORTS_FROM
