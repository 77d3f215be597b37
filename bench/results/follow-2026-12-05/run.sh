#!/bin/bash
# run.sh ROUNDS "t2 c4" ... : wrk -d5s per mode, interleaved; req/s and req per server CPU-second
ROUNDS=$1; shift
TCK=$(getconf CLK_TCK)
for cell in "$@"; do
  set -- $cell; T=${1#t}; C=${2#c}
  for r in $(seq $ROUNDS); do
    for mode in $MODES; do
      port=$((19000+mode)); /tmp/steer/steer $mode $port 2>/tmp/steer/moves.$mode & pid=$!; sleep 0.3
      wrk -t$T -c$C -d1s http://127.0.0.1:$port/1k >/dev/null
      s0=$(awk '{print $14+$15}' /proc/$pid/stat)
      out=$(wrk -t$T -c$C -d5s http://127.0.0.1:$port/1k)
      s1=$(awk '{print $14+$15}' /proc/$pid/stat)
      kill $pid; wait $pid 2>/dev/null
      req=$(echo "$out" | awk '/requests in/{print $1}')
      echo "$cell r$r mode$mode req=$req cpu_s=$(echo "($s1-$s0)/$TCK" | bc -l | cut -c1-5) per_cpu_k=$(echo "$req/(($s1-$s0)/$TCK)/1000" | bc -l | cut -c1-6) moves=$(tail -1 /tmp/steer/moves.$mode)"
    done
  done
done
