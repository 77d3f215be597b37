#!/bin/bash
# PG=<process group of the server> PORT=<port> ./measure.sh
# wrk -t$T -c$C on /1k for $D s after a 2 s warm-up; prints the rate and the
# server's CPU (user + system clock ticks of every process in its group,
# from /proc, 100 ticks a second) over the measured run.
PORT=${PORT:-8091}; T=${T:-2}; C=${C:-16}; D=${D:-10}
cpu() {
  local s=0
  for p in $(pgrep -g "$PG" 2>/dev/null || echo "$PG"); do
    read -r -a f < "/proc/$p/stat"; s=$((s + f[13] + f[14]))
  done
  echo $s
}
wrk -t"$T" -c"$C" -d2s "http://127.0.0.1:$PORT/1k" >/dev/null
a=$(cpu); out=$(wrk -t"$T" -c"$C" -d"${D}s" "http://127.0.0.1:$PORT/1k"); b=$(cpu)
rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
echo "rps=$rps cpu_ticks=$((b - a)) reqs_per_cpu_s=$(python3 -c "print(round($rps*$D/(($b-$a)/100)))")"
