#!/bin/bash
# System calls per HTTPS connection of one tachyon build, counted by
# strace -c while `openssl s_time` opens connections one after another
# (one GET /1k over HTTP/1.0 each, so the server closes after it).
#
#   syscalls.sh -reuse|-new TACHYON_BINARY
#
# -reuse resumes the first session (TLS 1.3 PSK with a fresh key share),
# -new makes a full handshake each time. One worker; suites in the
# browsers' order, as tachyon-bench gives its OpenSSL clients.
set -eu
mode=$1 bin=$(realpath "$2")
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout key.pem \
    -out cert.pem -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
mkdir site && head -c 1024 /dev/urandom >site/1k
printf '%s\n' 'openssl_conf = openssl_init' '[openssl_init]' 'ssl_conf = ssl_sect' '[ssl_sect]' \
    'system_default = system_default_sect' '[system_default_sect]' \
    'Ciphersuites = TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256' \
    >browser.cnf
export OPENSSL_CONF=$work/browser.cnf
port=${PORT:-9443}
"$bin" site --threads 1 --listen 127.0.0.1:0 --https 127.0.0.1:$port --tls-cert cert.pem \
    --tls-key key.pem --listing --cache-dir off --quiet >/dev/null 2>&1 &
pid=$!
sleep 1.5
timeout 5 strace -c -f -p $pid -o counts.txt 2>/dev/null &
sleep 0.5
n=$(openssl s_time -connect 127.0.0.1:$port -www /1k "$mode" -time 3 2>&1 |
    awk '/connections in .* real/{print $1}')
wait %2 || true
echo "$(basename "$bin") $mode: $n connections, calls per connection:"
awk -v n="$n" '$NF != "total" && $NF != "futex" && $4 ~ /^[0-9]+$/ && $4 > n / 10 {
    printf "  %-12s %.2f\n", $NF, $4 / n }' counts.txt
