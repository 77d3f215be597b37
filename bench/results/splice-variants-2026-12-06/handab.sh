#!/bin/bash
# usage: handab.sh NAME=BIN ... ; env PATHS (space-separated url paths), CONNS, HDR
SITE=${SITE:-/tmp/ab-site}
PORT=18282
for round in 1 2 3; do
 for spec in "$@"; do
  name=${spec%%=*}; bin=${spec#*=}
  setsid $bin $SITE --listen 127.0.0.1:$PORT --no-watch > /dev/null 2>&1 &
  sleep 1.5
  pid=$(pgrep -f "$bin $SITE --listen 127.0.0.1:$PORT" | head -1)
  for p in $PATHS; do
   for c in $CONNS; do
    t0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(wrk -t${T:-1} -c$c -d4s ${HDR:+-H "$HDR"} http://127.0.0.1:$PORT$p 2>&1)
    t1=$(awk '{print $14+$15}' /proc/$pid/stat)
    rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
    reqs=$(echo "$out" | awk '/requests in/{print $1}')
    us=$(python3 -c "print(round(($t1-$t0)*10000/$reqs,2))")
    echo "r$round $name $p c$c rps=$rps us/req=$us"
   done
  done
  kill $pid; sleep 0.5
 done
done
