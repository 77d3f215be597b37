#!/bin/bash
# tach.sh ROUNDS cells...: tachyon without and with TACHYON_PLACE, interleaved
ROUNDS=$1; shift
TCK=$(getconf CLK_TCK); BIN=${BIN:-/work/main/target/release/tachyon}
sysctl -qw net.ipv4.tcp_congestion_control=cubic
for cell in "$@"; do
  set -- $cell; T=${1#t}; C=${2#c}; F=${3:-1k}
  for r in $(seq $ROUNDS); do
    for mode in off on; do
      port=$((19100+RANDOM%500))
      if [ $mode = on ]; then export TACHYON_PLACE=${PLACE:-1}; else unset TACHYON_PLACE; fi
      $BIN /tmp/runs/h2/www --threads 2 --loopback-congestion system --quiet --cache-dir off --listing --listen 127.0.0.1:$port >/dev/null 2>&1 & pid=$!
      for i in $(seq 50); do curl -so /dev/null http://127.0.0.1:$port/$F && break; sleep 0.1; done
      wrk -t$T -c$C -d1s http://127.0.0.1:$port/$F >/dev/null
      s0=$(awk '{print $14+$15}' /proc/$pid/stat)
      out=$(wrk -t$T -c$C -d5s http://127.0.0.1:$port/$F)
      s1=$(awk '{print $14+$15}' /proc/$pid/stat)
      kill $pid; wait $pid 2>/dev/null
      req=$(echo "$out" | awk '/requests in/{print $1}')
      echo "$cell r$r $mode req=$req cpu_s=$(echo "($s1-$s0)/$TCK" | bc -l | cut -c1-5) per_cpu_k=$(echo "$req/(($s1-$s0)/$TCK)/1000" | bc -l | cut -c1-6)"
    done
  done
done
sysctl -qw net.ipv4.tcp_congestion_control=bbr
