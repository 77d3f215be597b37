#!/bin/bash
SITE=/tmp/runs/iseeds/sparecores-1k/www
B=/tmp/cand/h27
PORT=18383
sysctl -q -w net.ipv4.tcp_congestion_control=cubic
for round in 1 2 3; do
 for name in tachyon tachyon-noaff floor; do
  case $name in
   tachyon) setsid $B/tachyon $SITE --listen 127.0.0.1:$PORT --no-watch --loopback-congestion system > /dev/null 2>&1 & ;;
   tachyon-noaff) setsid $B/tachyon $SITE --listen 127.0.0.1:$PORT --no-watch --loopback-congestion system --no-cpu-affinity > /dev/null 2>&1 & ;;
   floor) setsid $B/tachyon-bench floor --port $PORT --threads 2 --root $SITE > /dev/null 2>&1 & ;;
  esac
  sleep 1.5
  pid=$(ss -ltnp "sport = :$PORT" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  for c in 2 4; do
    t0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(wrk -t2 -c$c -d4s http://127.0.0.1:$PORT/1k 2>&1)
    t1=$(awk '{print $14+$15}' /proc/$pid/stat)
    rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
    reqs=$(echo "$out" | awk '/requests in/{print $1}')
    us=$(python3 -c "print(round(($t1-$t0)*10000/$reqs,2))")
    echo "r$round $name t2 c$c rps=$rps us/req=$us"
  done
  kill $pid; sleep 0.7
 done
done
sysctl -q -w net.ipv4.tcp_congestion_control=bbr
