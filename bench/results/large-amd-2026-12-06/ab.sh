#!/bin/bash
# 10 MiB, wrk -t1 -c8, by hand: tachyon as built, the same build with one
# VARIANT switched on, and nginx mainline, ROUNDS rounds of 5 s
# interleaved. Per response: server CPU µs (the process tree's), TCP
# segments and pure ACKs received (the host's, both directions).
#
#   ab.sh VARIANT [ROUNDS]   (needs a `tachyon-bench run --suite large`
#                             folder at /tmp/large10, and root for nstat)
#   no-boost         TACHYON_NO_BOOST=1        (build with no-boost.diff)
#   no-lowat         TACHYON_NO_LOWAT=1        (build with no-lowat.diff)
#   boost-unbounded  TACHYON_BOOST_UNBOUNDED=1 (build with boost-unbounded.diff)
#   sendfile         --sendfile --max-file-in-memory 4MiB (any build)
# TACHYON names the build (default ./target/release/tachyon).
VARIANT=$1
ROUNDS=${2:-3}
T=${TACHYON:-./target/release/tachyon}
NG=/root/.cache/tachyon-bench/peers/nginx-1.31.4/sbin/nginx
SITE=/tmp/large10/www
ENV=()
FLAGS=()
case $VARIANT in
  no-boost) ENV=(TACHYON_NO_BOOST=1) ;;
  no-lowat) ENV=(TACHYON_NO_LOWAT=1) ;;
  boost-unbounded) ENV=(TACHYON_BOOST_UNBOUNDED=1) ;;
  sendfile) FLAGS=(--sendfile --max-file-in-memory 4MiB) ;;
  *) echo "ab.sh: unknown variant '$VARIANT'" >&2; exit 2 ;;
esac
COMMON=(--threads 2 --loopback-congestion system --cache-dir off --listing --quiet)
"$T" "$SITE" "${COMMON[@]}" --listen 127.0.0.1:38140 > /dev/null 2>&1 &
A=$!
env "${ENV[@]}" "$T" "$SITE" "${COMMON[@]}" "${FLAGS[@]}" --listen 127.0.0.1:38141 > /dev/null 2>&1 &
B=$!
sed 's/^\( *listen 127.0.0.1:\)[0-9]*/\138142/' /tmp/large10/run/nginx-mainline-nginx-tuned.conf > /tmp/ab-nginx.conf
$NG -c /tmp/ab-nginx.conf -p /tmp > /dev/null 2>&1 &
N=$!
trap 'kill $A $B $N' EXIT
sleep 3
cpu() { for p in "$@"; do awk '{print $14+$15}' "/proc/$p/stat"; done | paste -sd+ | bc; }
echo "round server responses us_per_response segs_per_response pure_acks_per_response"
for round in $(seq 1 "$ROUNDS"); do
  for s in "tachyon:38140:$A" "$VARIANT:38141:$B" "nginx-mainline:38142:$N $(pgrep -P $N | tr '\n' ' ')"; do
    IFS=: read -r name port pids <<< "$s"
    # shellcheck disable=SC2086
    c0=$(cpu $pids); nstat -n
    n=$(wrk -t1 -c8 -d5s "http://127.0.0.1:$port/10m.bin" | awk '/requests in/{print $1}')
    # shellcheck disable=SC2086
    c1=$(cpu $pids)
    read -r segs acks < <(nstat TcpOutSegs TcpExtTCPPureAcks | awk '/TcpOutSegs/{s=$2} /PureAcks/{a=$2} END{print s, a}')
    python3 -c "print($round, '$name', $n, round(($c1-$c0)*1e4/$n,1), round($segs/$n,1), round($acks/$n,1))"
  done
done
