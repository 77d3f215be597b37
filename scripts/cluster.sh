#!/usr/bin/env bash
# Three tachyon replicas behind HAProxy (Debian's package), on loopback, under
# a wrk load through HAProxy, in five phases of DURATION seconds each:
#   steady    nothing happens (the latency baseline)
#   etags     the same file asked of every replica directly: one ETag
#   deploy    a rolling content deploy: each replica's root symlink
#             (current -> releases/vN) is swapped and the replica sent
#             SIGHUP (under the sandbox a successor process takes over),
#             one after another, each checked to serve the new release
#   upgrade   a rolling binary upgrade: the binary at the replicas' path is
#             replaced by rename and each replica sent SIGUSR2 in turn
#   direct    one replica upgraded under wrk -c256 aimed at it, no HAProxy
#             (after direct-steady, the same load with nothing happening)
#   kill-raw  one replica killed with SIGKILL, through a frontend with
#             HAProxy's default retries (refused connections only): the
#             requests in flight on it are lost, and counted;
#             HAProxy's health checks (GET /readyz on the admin listener)
#             take it out. The replica is then started again.
#   kill      the same through the frontend with retry-on (the default
#             here): HAProxy retries those GETs on another replica
#   acme      (when pebble is installed) three more replicas share one ACME
#             folder behind an HAProxy TCP frontend that pebble (Let's
#             Encrypt's test CA) validates through; the first replica
#             started takes the lock and orders, and the frontend sends the
#             validation only to the other two, which answer from the
#             shared folder; all three then serve the one certificate
# and prints (and writes to OUT/README.md) a table per phase: requests,
# failures (wrk's socket errors and non-2xx), p50/p99/max latency.
#
#   bash scripts/cluster.sh [OUT] [DURATION]
#
# Needs haproxy and wrk (apt-get install -y haproxy wrk) and a release build
# (cargo build --release -p tachyon); the acme phase pebble, openssl and bc.
# Ports 18099-18103, 18201-18203, 18140-18145 and 18151-18173.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-target/cluster}
duration=${2:-8}
bin=target/release/tachyon
command -v haproxy >/dev/null || { echo "haproxy is required (apt-get install -y haproxy)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is required (apt-get install -y wrk)" >&2; exit 1; }
test -x "$bin" || { echo "build first: cargo build --release -p tachyon" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}" $(cat "$work"/r*/pid 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
start_replica() {
    local r="$work/r$1"
    "$work/bin/tachyon" "$r/current" --listen "127.0.0.1:1810$1" --admin "127.0.0.1:1820$1" \
        --threads 1 --no-watch >>"$r/log" 2>&1 &
    echo $! >"$r/pid"
    disown
}

# One site, two releases of two files each.
mkdir -p "$work/site/v1" "$work/site/v2"
for v in v1 v2; do
    printf '<!doctype html><title>%s</title><p>release %s</p>\n' "$v" "$v" >"$work/site/$v/index.html"
    head -c 4096 /dev/urandom | base64 >"$work/site/$v/page.html"
done
mkdir -p "$work/bin"
cp "$bin" "$work/bin/tachyon"

for i in 1 2 3; do
    r="$work/r$i"
    mkdir -p "$r/releases"
    cp -a "$work/site/v1" "$r/releases/v1"
    cp -a "$work/site/v2" "$r/releases/v2"
    ln -s releases/v1 "$r/current"
done

# Both backends balance over the same replicas with the same health checks.
replicas=$(cat <<EOF
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 300ms fall 2 rise 2
    server r1 127.0.0.1:18101 check port 18201
    server r2 127.0.0.1:18102 check port 18202
    server r3 127.0.0.1:18103 check port 18203
EOF
)
cat >"$work/haproxy.cfg" <<EOF
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    option http-keep-alive
    retries 2
    option redispatch
    # A GET whose connection failed or came back empty is tried on another
    # server: what a replica that dies mid-request costs the client.
    retry-on conn-failure empty-response
frontend web
    bind 127.0.0.1:18100
    default_backend replicas
frontend raw
    bind 127.0.0.1:18099
    default_backend replicas_raw
backend replicas_raw
    # HAProxy's defaults: a refused connection is retried elsewhere, a
    # request whose server died mid-way is not.
    retry-on conn-failure
$replicas
backend replicas
$replicas
EOF
for i in 1 2 3; do start_replica "$i"; done
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
pids+=($!)
disown

ready() { curl -fsS -o /dev/null "http://127.0.0.1:$1/readyz"; }
for i in 1 2 3; do
    for _ in $(seq 50); do ready "1820$i" && break; sleep 0.1; done
    ready "1820$i" || { cat "$work/r$i/log"; exit 1; }
done
sleep 1
curl -fsS -o /dev/null http://127.0.0.1:18100/page.html || { cat "$work/haproxy.log"; exit 1; }

# wrk in the background for one phase; its report in $out/wrk-PHASE.txt.
load_start() {
    wrk -t1 -c"${3:-32}" -d"${duration}s" --timeout 4s --latency "${2:-http://127.0.0.1:18100}/page.html" \
        >"$out/wrk-$1.txt" 2>&1 &
    load=$!
}
row() {
    local f="$out/wrk-$1.txt"
    local requests errors non2xx p50 p99 max
    requests=$(awk '/requests in/ {print $1}' "$f")
    errors=$(awk -F'[ ,]+' '/Socket errors/ {print $4+$6+$8+$10}' "$f")
    non2xx=$(awk '/Non-2xx/ {print $NF}' "$f")
    p50=$(awk '$1 == "50%" {print $2}' "$f")
    p99=$(awk '$1 == "99%" {print $2}' "$f")
    max=$(awk '/Latency/ && !/Distribution/ {print $4}' "$f")
    echo "| $1 | $requests | ${errors:-0} | ${non2xx:-0} | $p50 | $p99 | $max | $2 |"
}
rows=()

echo "phase: steady" >&2
load_start steady
wait "$load"
rows+=("$(row steady "nothing happens")")

echo "phase: etags" >&2
etags=$(for i in 1 2 3; do curl -fsSI "http://127.0.0.1:1810$i/page.html" | tr -d '\r' | awk 'tolower($1) == "etag:" {print $2}'; done | sort -u)
test "$(echo "$etags" | wc -l)" = 1 || { echo "replicas disagree on ETags: $etags" >&2; exit 1; }
etag_line="one ETag for /page.html on all three replicas: $etags"

echo "phase: deploy" >&2
load_start deploy
sleep 1
for i in 1 2 3; do
    r="$work/r$i"
    ln -s releases/v2 "$r/next" && mv -T "$r/next" "$r/current"
    kill -HUP "$(cat "$r/pid")"
    for _ in $(seq 50); do
        curl -fsS "http://127.0.0.1:1810$i/" | grep -q 'release v2' && break
        sleep 0.1
    done
    curl -fsS "http://127.0.0.1:1810$i/" | grep -q 'release v2' || { cat "$r/log"; echo "r$i never served v2" >&2; exit 1; }
    # Under the sandbox a repointed root is served by a successor process
    # (the new release is outside the old one's rules): follow its pid.
    for _ in $(seq 50); do grep -q "stops accepting" "$r/log" && break; sleep 0.1; done
    if grep -q "stops accepting" "$r/log"; then
        grep -o 'upgrade: process [0-9]*' "$r/log" | tail -1 | awk '{print $3}' >"$r/pid"
    fi
    sleep 1
done
wait "$load"
rows+=("$(row deploy "root symlink swapped and SIGHUP, replica after replica")")
etags_after=$(for i in 1 2 3; do curl -fsSI "http://127.0.0.1:1810$i/page.html" | tr -d '\r' | awk 'tolower($1) == "etag:" {print $2}'; done | sort -u)
test "$(echo "$etags_after" | wc -l)" = 1 || { echo "replicas disagree after the deploy: $etags_after" >&2; exit 1; }

echo "phase: upgrade" >&2
cp "$bin" "$work/bin/tachyon.new" && mv "$work/bin/tachyon.new" "$work/bin/tachyon"
load_start upgrade
sleep 1
for i in 1 2 3; do
    r="$work/r$i"
    old=$(cat "$r/pid")
    drains=$(grep -c "stops accepting" "$r/log" || true)
    echo "$drains" >"$r/drains"
    kill -USR2 "$old"
    for _ in $(seq 100); do test "$(grep -c "stops accepting" "$r/log")" -gt "$drains" && break; sleep 0.1; done
    new=$(grep -o 'upgrade: process [0-9]*' "$r/log" | tail -1 | awk '{print $3}')
    test -n "$new" || { cat "$r/log"; exit 1; }
    echo "$new" >"$r/pid"
    sleep 1
done
wait "$load"
rows+=("$(row upgrade "new binary by rename, SIGUSR2, replica after replica")")
for i in 1 2 3; do
    test "$(grep -c "stops accepting" "$work/r$i/log")" = "$(($(cat "$work/r$i/drains") + 1))" ||
        { echo "r$i was not upgraded" >&2; exit 1; }
done

echo "phase: direct-steady" >&2
load_start direct-steady http://127.0.0.1:18101 256
wait "$load"
rows+=("$(row direct-steady "wrk -c256 straight at replica 1, nothing happens (no HAProxy)")")

echo "phase: direct" >&2
load_start direct http://127.0.0.1:18101 256
sleep 2
old=$(cat "$work/r1/pid")
drains=$(grep -c "stops accepting" "$work/r1/log")
kill -USR2 "$old"
for _ in $(seq 100); do test "$(grep -c "stops accepting" "$work/r1/log")" -gt "$drains" && break; sleep 0.1; done
new=$(grep -o 'upgrade: process [0-9]*' "$work/r1/log" | tail -1 | awk '{print $3}')
test "$new" != "$old" || { echo "r1 was not upgraded again" >&2; exit 1; }
echo "$new" >"$work/r1/pid"
wait "$load"
rows+=("$(row direct "wrk -c256 straight at replica 1 while it is upgraded (no HAProxy)")")

echo "phase: kill-raw" >&2
load_start kill-raw http://127.0.0.1:18099
sleep 2
kill -9 "$(cat "$work/r3/pid")"
wait "$load"
rows+=("$(row kill-raw "replica 3 killed (SIGKILL) 2 s in; HAProxy's default retries")")
grep -q "r3 is DOWN" "$work/haproxy.log" && down="HAProxy marked r3 DOWN" || down="HAProxy did not mark r3 DOWN"
start_replica 3
for _ in $(seq 50); do ready 18203 && break; sleep 0.1; done
sleep 1.5

echo "phase: kill" >&2
load_start kill
sleep 2
kill -9 "$(cat "$work/r2/pid")"
wait "$load"
rows+=("$(row kill "replica 2 killed (SIGKILL) 2 s in; frontend with retry-on")")
grep -q "r2 is DOWN" "$work/haproxy.log" && down="$down; then r2 DOWN" || down="$down; r2 not marked DOWN"

# Three replicas with one ACME folder behind a TCP frontend; pebble
# validates TLS-ALPN-01 through the frontend, which reaches only the two
# replicas that did not order.
acme_line="acme: skipped (pebble is not installed)"
if command -v pebble >/dev/null && command -v pebble-challtestsrv >/dev/null; then
    echo "phase: acme" >&2
    name=cluster.tachyon.test
    api=18140 mgmt=18141 dns=18142 dnsmgmt=18143 tlsport=18145
    a="$work/acme-ca"
    mkdir -p "$a" "$work/acme-site"
    echo "replicated automatic https" >"$work/acme-site/index.html"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=cluster root" -keyout "$a/ca.key" -out "$a/ca.pem" 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
        -keyout "$a/api.key" -out "$a/api.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$a/san.ext"
    openssl x509 -req -in "$a/api.csr" -CA "$a/ca.pem" -CAkey "$a/ca.key" -CAcreateserial \
        -days 2 -extfile "$a/san.ext" -out "$a/api.pem" 2>/dev/null
    printf '{"pebble": {"listenAddress": "127.0.0.1:%s", "managementListenAddress": "127.0.0.1:%s",
  "certificate": "%s", "privateKey": "%s", "httpPort": 18144, "tlsPort": %s,
  "ocspResponderURL": "", "externalAccountBindingRequired": false}}\n' \
        "$api" "$mgmt" "$a/api.pem" "$a/api.key" "$tlsport" >"$a/pebble.json"
    pebble-challtestsrv -dns01 "127.0.0.1:$dns" -management "127.0.0.1:$dnsmgmt" \
        -http01 "" -https01 "" -tlsalpn01 "" -defaultIPv4 127.0.0.1 -defaultIPv6 "" >/dev/null 2>&1 &
    pids+=($!)
    disown
    PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 pebble -config "$a/pebble.json" \
        -dnsserver "127.0.0.1:$dns" >"$a/pebble.log" 2>&1 &
    pids+=($!)
    disown
    for _ in $(seq 50); do
        curl -sf --cacert "$a/ca.pem" "https://127.0.0.1:$api/dir" >/dev/null && break
        sleep 0.1
    done
    curl -sf --cacert "$a/ca.pem" "https://127.0.0.1:$mgmt/roots/0" >"$a/issuing-root.pem"
    printf 'defaults\n    mode tcp\n    timeout connect 2s\n    timeout client 30s\n    timeout server 30s
frontend tls\n    bind 127.0.0.1:%s\n    default_backend not_the_orderer
backend not_the_orderer\n    balance roundrobin\n    server a2 127.0.0.1:18152\n    server a3 127.0.0.1:18153\n' \
        "$tlsport" >"$a/haproxy.cfg"
    haproxy -f "$a/haproxy.cfg" -db >"$a/haproxy.log" 2>&1 &
    pids+=($!)
    disown
    start_acme() {
        "$work/bin/tachyon" "$work/acme-site" --listen "127.0.0.1:1816$1" --https "127.0.0.1:1815$1" \
            --admin "127.0.0.1:1817$1" --threads 1 --no-h3 --acme --domain "$name" \
            --acme-directory "https://127.0.0.1:$api/dir" --acme-ca-root "$a/ca.pem" \
            --acme-dir "$work/acme-shared" >"$a/a$1.log" 2>&1 &
        pids+=($!)
        disown
    disown
    }
    started=$(date +%s.%N)
    start_acme 1
    sleep 0.5
    start_acme 2
    start_acme 3
    verified=timeout
    for _ in $(seq 600); do
        if curl -sf --max-time 2 --cacert "$a/issuing-root.pem" --resolve "$name:$tlsport:127.0.0.1" \
            "https://$name:$tlsport/" >/dev/null 2>&1; then
            verified=$(echo "$(date +%s.%N) - $started" | bc)
            break
        fi
        sleep 0.05
    done
    test "$verified" != timeout || {
        cat "$a"/a*.log "$a/pebble.log"
        echo "acme: no verified HTTPS through the frontend" >&2
        exit 1
    }
    # Each replica, asked directly, serves the certificate (the two that
    # did not order pick it up from the folder).
    fingerprint() {
        echo | openssl s_client -connect "127.0.0.1:1815$1" -servername "$name" 2>/dev/null |
            openssl x509 -noout -fingerprint -sha256 2>/dev/null | cut -d= -f2
    }
    prints=""
    for _ in $(seq 100); do
        prints=$(for i in 1 2 3; do fingerprint "$i"; done | sort -u)
        test "$(echo "$prints" | grep -c .)" = 1 &&
            curl -sf --cacert "$a/issuing-root.pem" --resolve "$name:18151:127.0.0.1" \
                "https://$name:18151/" >/dev/null && break
        sleep 0.1
    done
    distinct=$(echo "$prints" | grep -c . || true)
    test "$distinct" = 1 || { echo "acme: the replicas serve $distinct certificates" >&2; exit 1; }
    answered=$(cat "$a"/a*.log | grep -c "acme: answering the" || true)
    test "$answered" = 1 || { echo "acme: $answered challenges answered, want 1" >&2; exit 1; }
    orderer=$(grep -l "acme: answering the" "$a"/a*.log | xargs -n1 basename)
    acme_line="acme: verified HTTPS through the TCP frontend ${verified}s after the first replica started; one challenge answered (${orderer%.log} ordered: the first started); pebble validated through replicas a2 and a3 only (the frontend has no route to a1); all three serve one certificate, SHA-256 $prints"
fi

{
    echo "# Three tachyon replicas behind HAProxy"
    echo
    echo "\`bash scripts/cluster.sh $out $duration\`, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores,"
    echo "tachyon at $(git rev-parse --short HEAD), $(haproxy -v | head -1 | cut -d' ' -f1-3)."
    echo "Load: \`wrk -t1 -c32 -d${duration}s --latency\` through HAProxy (round robin,"
    echo "keep-alive, health checks on each replica's /readyz every 300 ms,"
    echo "\`retry-on conn-failure empty-response\`; kill-raw: the default, conn-failure only),"
    echo "one phase per row, except \`direct\` (wrk -c256 at one replica); everything on loopback."
    echo
    echo "| phase | requests | socket errors | non-2xx | p50 | p99 | max | what happened |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "- ETags: $etag_line, and one again after the deploy."
    echo "- Kill: $down."
    echo "- $acme_line."
    echo "- Raw wrk reports: wrk-*.txt beside this file."
} >"$out/README.md"
cat "$out/README.md"
