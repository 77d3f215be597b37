#!/usr/bin/env bash
# prof.sh BIN BENCH ROOT: server CPU per 10 MiB response over HTTP/3 (tachyon-bench h3load) and
# HTTPS/1.1 (h2load --h1), one 5-s run each per round, then (PERF=1) a perf profile of the HTTP/3 one.
# ROOT is a bench run folder: ROOT/www (the site, with 10m.bin) and ROOT/run/bench-{cert,key}.pem.
BIN=$1; H3=$2; R=$3; PORT=41999
$BIN $R/www --threads 2 --quiet --cache-dir off --listen 127.0.0.1:0 --https 127.0.0.1:$PORT \
  --tls-cert $R/run/bench-cert.pem --tls-key $R/run/bench-key.pem > /tmp/h3bulk.out 2>&1 & P=$!
sleep 2
cpu() { awk '{print $14+$15}' /proc/$P/stat; }   # server ticks (10 ms), user + system
per() { python3 -c "print(round(($2-$1)*10/max($3,1),2))"; }
for i in ${ROUNDS:-1 2 3}; do
  b=$(cpu); n=$($H3 h3load -c1 -t1 -m1 -D5 https://127.0.0.1:$PORT/10m.bin 2>&1 | awk '/^requests:/{print $8}'); a=$(cpu)
  echo "round $i h3     responses=$n  server ms/response=$(per $b $a $n)"
  b=$(cpu); n=$(h2load --h1 -c1 -t1 -m1 -D5 https://127.0.0.1:$PORT/10m.bin 2>&1 | awk '/^requests:/{print $8}'); a=$(cpu)
  echo "round $i https1 responses=$n  server ms/response=$(per $b $a $n)"
done
if [ -n "$PERF" ]; then
  perf record -e cpu-clock -F 1000 --call-graph dwarf,16384 -p $P -o perf.data -- sleep 5 > /dev/null 2>&1 &
  $H3 h3load -c1 -t1 -m1 -D5 https://127.0.0.1:$PORT/10m.bin > /dev/null 2>&1
  wait %perf 2>/dev/null
fi
kill $P; wait $P
