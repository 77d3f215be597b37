#!/usr/bin/env bash
# Time from start to the first verified HTTPS response with a certificate
# ordered from an ACME CA, tachyon and Caddy side by side against the same
# pebble (Let's Encrypt's test CA, Debian package `pebble`), ROUNDS times
# each, interleaved. Every name resolves to 127.0.0.1 through
# pebble-challtestsrv; each server starts with an empty ACME folder.
#
#   bash scripts/acme-vs-caddy.sh [ROUNDS] [OUT]
#
# Needs pebble, caddy, curl, openssl and a release build
# (cargo build --release -p tachyon). Ports 18440-18449.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
out=${2:-target/acme-vs-caddy}
bin=$(pwd)/target/release/tachyon
for tool in pebble pebble-challtestsrv caddy curl openssl; do
    command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 1; }
done
test -x "$bin" || { echo "build first: cargo build --release -p tachyon" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
name=site.tachyon.test
api=18440 mgmt=18441 dns=18442 dnsmgmt=18443 http=18444 tls=18445

# pebble's own HTTPS: a CA of ours and a certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=acme-vs-caddy root" -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$work/api.key" -out "$work/api.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$work/san.ext"
openssl x509 -req -in "$work/api.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
    -days 2 -extfile "$work/san.ext" -out "$work/api.pem" 2>/dev/null
cat >"$work/pebble.json" <<EOF
{"pebble": {"listenAddress": "127.0.0.1:$api", "managementListenAddress": "127.0.0.1:$mgmt",
  "certificate": "$work/api.pem", "privateKey": "$work/api.key",
  "httpPort": $http, "tlsPort": $tls, "ocspResponderURL": "",
  "externalAccountBindingRequired": false}}
EOF
pebble-challtestsrv -dns01 "127.0.0.1:$dns" -management "127.0.0.1:$dnsmgmt" \
    -http01 "" -https01 "" -tlsalpn01 "" -defaultIPv4 127.0.0.1 -defaultIPv6 "" >/dev/null 2>&1 &
pids+=($!)
PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 pebble -config "$work/pebble.json" \
    -dnsserver "127.0.0.1:$dns" >"$work/pebble.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
    curl -sf --cacert "$work/ca.pem" "https://127.0.0.1:$api/dir" >/dev/null && break
    sleep 0.1
done
curl -sf --cacert "$work/ca.pem" "https://127.0.0.1:$mgmt/roots/0" >"$work/issuing-root.pem"
mkdir -p "$work/site"
echo "hello over automatic https" >"$work/site/index.html"

# Seconds from the start until curl verifies an HTTPS response.
time_to_https() {
    local start=$1 pid=$2 now
    while kill -0 "$pid" 2>/dev/null; do
        if curl -sf --max-time 2 --cacert "$work/issuing-root.pem" \
            --resolve "$name:$tls:127.0.0.1" "https://$name:$tls/" >/dev/null 2>&1; then
            now=$(date +%s.%N)
            echo "$now - $start" | bc
            return
        fi
        now=$(date +%s.%N)
        if [ "$(echo "$now - $start > 30" | bc)" = 1 ]; then echo timeout; return; fi
        sleep 0.02
    done
    echo exited
}

run_tachyon() {
    local dir="$work/tachyon-$1" start pid
    start=$(date +%s.%N)
    "$bin" "$work/site" --listen "127.0.0.1:$http" --https "127.0.0.1:$tls" --no-h3 --acme \
        --domain "$name" --acme-directory "https://127.0.0.1:$api/dir" \
        --acme-ca-root "$work/ca.pem" --acme-dir "$dir" >"$work/tachyon-$1.log" 2>&1 &
    pid=$!
    time_to_https "$start" "$pid"
    kill "$pid"; wait "$pid" 2>/dev/null || true
}

run_caddy() {
    local dir="$work/caddy-$1" start pid
    mkdir -p "$dir"
    cat >"$dir/Caddyfile" <<EOF
{
    http_port $http
    https_port $tls
    admin off
    storage file_system $dir/storage
    acme_ca https://127.0.0.1:$api/dir
    acme_ca_root $work/ca.pem
    ocsp_stapling off
}
$name {
    root * $work/site
    file_server
}
EOF
    start=$(date +%s.%N)
    XDG_DATA_HOME="$dir" XDG_CONFIG_HOME="$dir" caddy run --config "$dir/Caddyfile" \
        --adapter caddyfile >"$work/caddy-$1.log" 2>&1 &
    pid=$!
    time_to_https "$start" "$pid"
    kill "$pid"; wait "$pid" 2>/dev/null || true
}

{
    echo "| round | tachyon s | caddy s |"
    echo "|---|---|---|"
    for r in $(seq "$rounds"); do
        t=$(run_tachyon "$r")
        c=$(run_caddy "$r")
        echo "| $r | $t | $c |"
    done
    echo
    echo "$(caddy version | head -1); tachyon $("$bin" --version | awk '{print $2}'); pebble $(dpkg-query -W -f='${Version}' pebble 2>/dev/null || echo '?')"
} | tee "$out/times.md"
cp "$work"/*.log "$out/" 2>/dev/null || true
