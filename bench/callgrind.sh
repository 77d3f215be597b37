#!/bin/bash
# Instructions per request of one server process, counted by callgrind:
# exact and repeatable where this VM has no hardware counters, so a
# change of a few percent in user time shows without a benchmark's noise.
#
#   bench/callgrind.sh NAME PORT PATH -- SERVER COMMAND...
#
# Starts the command under callgrind, waits for PORT to answer PATH with
# 200, warms up 3 s, then counts only a 10 s `wrk -t1 -c32` run (with
# CLIENT=h2load: 200,000 requests of `h2load -c32 -m10`, HTTP/2 with prior
# knowledge, after 50,000 to warm up). Leaves
# $OUT/NAME.out.1 for callgrind_annotate and prints the count per request.
# SCHEME=https counts a TLS server (its certificate is not checked).
# The server must listen on 127.0.0.1:PORT and run one worker. For
# tachyon, build with symbols and rustix reading auxv through libc
# (valgrind hides the vDSO; rustix's own reader faults on it):
#   sed -i 's/"time"\]/"time", "use-libc-auxv"]/' Cargo.toml
#   CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
#     cargo build --release --locked -p tachyon --target-dir /tmp/tprof; git checkout Cargo.toml
set -eu
name=$1 port=$2 path=$3
shift 4
out=${OUT:-/tmp/callgrind}
mkdir -p "$out"
rm -f "$out/$name".out*
url=${SCHEME:-http}://127.0.0.1:$port$path
setsid valgrind --tool=callgrind ${VGARGS:-} --callgrind-out-file="$out/$name.out" "$@" \
    >"$out/$name.log" 2>&1 &
vg=$!
trap 'kill -INT -- -$vg 2>/dev/null || true' EXIT
for _ in $(seq 90); do
    sleep 1
    [ "$(curl -sk -o /dev/null -w '%{http_code}' "$url")" = 200 ] && break
done
# WRK_ARGS: more client arguments, e.g. a browser's header fields as -H '…'.
if [ "${CLIENT:-wrk}" = h2load ]; then
    eval "h2load -c32 -m10 -n 50000 ${WRK_ARGS:-} '$url'" >/dev/null 2>&1
    callgrind_control -z "$vg" >/dev/null 2>&1
    requests=$(eval "h2load -c32 -m10 -n 200000 ${WRK_ARGS:-} '$url'" 2>&1 |
        awk '/^requests:/{print $8}')
else
    eval "wrk -t1 -c32 -d3s ${WRK_ARGS:-} '$url'" >/dev/null 2>&1
    callgrind_control -z "$vg" >/dev/null 2>&1
    requests=$(eval "wrk -t1 -c32 -d10s ${WRK_ARGS:-} '$url'" 2>&1 | awk '/requests in/{print $1}')
fi
callgrind_control -d "$vg" >/dev/null 2>&1
total=$(callgrind_annotate "$out/$name.out.1" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1}')
echo "$name requests=$requests instructions=$total per_request=$((total / requests))"
