# A CA and a server certificate it signed, made with openssl for the loopback servers
# of scripts/nginx.sh and scripts/sse.sh. Sourced, not run; defines one function:
#   certificate DIR    writes DIR/ca.crt (and ca.key) and DIR/tls.crt, DIR/tls.key
#                      for localhost, 127.0.0.1 and ::1, unless all three are there
# so that `rshperf --ssl-verify --ssl-ca-file DIR/ca.crt` has something to verify.
certificate() {
  local dir=$1
  [ -f "$dir/ca.crt" ] && [ -f "$dir/tls.crt" ] && [ -f "$dir/tls.key" ] && return
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=rshperf test CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj /CN=localhost \
    -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
  printf '%s\n' 'basicConstraints=CA:FALSE' 'extendedKeyUsage=serverAuth' \
    'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1' > "$dir/tls.ext"
  openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 3650 -extfile "$dir/tls.ext" -out "$dir/tls.crt" 2>/dev/null
  rm -f "$dir/tls.csr" "$dir/tls.ext"
}
