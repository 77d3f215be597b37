#!/usr/bin/env bash
# run.sh: server CPU a response by how a small body leaves (copy, memfd sendfile, vmsplice+splice), wrk keep-alive.
cd /tmp/sf
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
for size in 8k 12k 16k; do
 for cfg in "-t2 -c32" "-t1 -c256"; do
  for round in 1 2 3; do
   for mode in copy memfd thp; do
    ./splicefloor 18500 $mode b$size 2>/dev/null & P=$!; sleep 0.3
    wrk -t1 -c4 -d1s http://127.0.0.1:18500/ > /dev/null 2>&1
    b=$(cpu $P); out=$(wrk $cfg -d4s http://127.0.0.1:18500/ 2>&1); a=$(cpu $P)
    n=$(echo "$out" | awk '/requests in/{print $1}')
    python3 -c "n=$n; print('$size wrk $cfg r$round $mode rate=%.1fk us=%.2f' % (n/4e3, ($a-$b)*1e4/n))"
    kill $P; wait $P 2>/dev/null
   done
  done
 done
done
