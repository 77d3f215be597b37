#!/bin/bash
# 10 MiB, wrk -t1 -c8: tachyon with and without its unsent-bytes bound
# (one build, TACHYON_NO_LOWAT: no unsent bound at all, as nginx), and nginx mainline; per response: server
# CPU µs, TCP segments and pure ACKs (the host's, both directions)
T=${TACHYON:-/tmp/noboost-target/release/tachyon}  # a build with the diff this script measures
NG=/root/.cache/tachyon-bench/peers/nginx-1.31.4/sbin/nginx
$T /tmp/large10/www --threads 2 --loopback-congestion system --cache-dir off --listing --quiet --listen 127.0.0.1:38140 > /dev/null 2>&1 &
A=$!
TACHYON_NO_LOWAT=1 $T /tmp/large10/www --threads 2 --loopback-congestion system --cache-dir off --listing --quiet --listen 127.0.0.1:38141 > /dev/null 2>&1 &
B=$!
sed 's/45983/38142/' /tmp/large10/run/nginx-mainline-nginx-tuned.conf > /tmp/hm/ng2.conf
$NG -c /tmp/hm/ng2.conf -p /tmp/hm > /dev/null 2>&1 &
N=$!
sleep 3
cpu() { for p in "$@"; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc; }
echo "round server responses us_per_response segs_per_response pure_acks_per_response"
for round in 1 2 3; do
  for s in "tachyon:38140:$A" "no-lowat:38141:$B" "nginx-mainline:38142:$N $(pgrep -P $N | tr '\n' ' ')"; do
    IFS=: read -r name port pids <<< "$s"
    # shellcheck disable=SC2086
    c0=$(cpu $pids); nstat -n
    n=$(wrk -t1 -c8 -d5s http://127.0.0.1:$port/10m.bin | awk '/requests in/{print $1}')
    # shellcheck disable=SC2086
    c1=$(cpu $pids)
    read -r segs acks < <(nstat TcpOutSegs TcpExtTCPPureAcks | awk '/TcpOutSegs/{s=$2} /PureAcks/{a=$2} END{print s, a}')
    python3 -c "print($round, '$name', $n, round(($c1-$c0)*1e4/$n,1), round($segs/$n,1), round($acks/$n,1))"
  done
done
kill $A $B $N
