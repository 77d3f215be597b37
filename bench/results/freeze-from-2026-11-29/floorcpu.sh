#!/bin/bash
# Server CPU per response of splicefloor (../splice-2026-11-26/splicefloor.c with this
# folder's splicefloor-copy.diff: cp ../splice-2026-11-26/splicefloor.c . && patch -p0 <
# splicefloor-copy.diff && gcc -O2 -o splicefloor splicefloor.c -lpthread)
# by MODE, wrk -t1 for 5 s a round, rounds interleaved; MODE=ENV sets the
# server's environment (e.g. thp= or copy=HUGE=1).
# usage: run.sh FILE C ROUNDS MODES...
file=$1 c=$2 rounds=$3; shift 3
port=39111
for r in $(seq $rounds); do
 for m in "$@"; do
  env ${m#*=} ./splicefloor $port ${m%%=*} $file 2>/dev/null & pid=$!
  sleep 0.3
  t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  out=$(wrk -t1 -c$c -d5s http://127.0.0.1:$port/ 2>&1)
  t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null
  reqs=$(echo "$out" | grep -oE '[0-9]+ requests in' | grep -oE '^[0-9]+')
  echo "$m c$c r$r reqs=$reqs us/req=$(echo "scale=2;($t1-$t0)*10000/$reqs" | bc) rps=$((reqs/5))"
 done
done
