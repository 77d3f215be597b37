#!/usr/bin/env bash
# cmp.sh: one 7.6 KB body (p24k.html's gzip), wrk -t2 -c32 4 s, server CPU a response:
# tachyon copy (HEAD), tachyon splice trial, floor copy, floor thp. cubic for all; 3 rounds interleaved.
cd /tmp/sf
sysctl -qw net.ipv4.tcp_congestion_control=cubic
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
one() { # name url pid
  wrk -t1 -c4 -d1s -H "Accept-Encoding: gzip" $2 > /dev/null 2>&1
  b=$(cpu $3); out=$(wrk -t2 -c32 -d4s -H "Accept-Encoding: gzip" $2 2>&1); a=$(cpu $3)
  n=$(echo "$out" | awk '/requests in/{print $1}')
  python3 -c "n=$n; print('r$R $1 rate=%.1fk us=%.2f' % (n/4e3, ($a-$b)*1e4/n))"
}
for R in 1 2 3; do
  for t in copy=/work/main/target/release/tachyon splice=/tmp/cand/splice/tachyon; do
    name=${t%%=*}; bin=${t#*=}
    setsid $bin /tmp/ab-site --listen 127.0.0.1:18295 --no-watch > /dev/null 2>&1 &
    sleep 2; pid=$(pgrep -f "$bin /tmp/ab-site --listen 127.0.0.1:18295" | head -1)
    one tachyon-$name http://127.0.0.1:18295/p24k.html $pid
    kill $pid; sleep 0.5
  done
  for mode in copy thp; do
    ./splicefloor 18296 $mode p24k.gz 2>/dev/null & P=$!; sleep 0.3
    one floor-$mode http://127.0.0.1:18296/ $P
    kill $P; wait $P 2>/dev/null
  done
done
sysctl -qw net.ipv4.tcp_congestion_control=bbr
