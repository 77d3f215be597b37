#!/usr/bin/env bash
# prof2.sh BIN BENCH ROOT: server CPU per 10 MiB response over HTTP/3 and HTTPS/1.1, three rounds,
# then a perf profile of each (perf-h3.data, perf-https1.data).
BIN=$1; H3=$2; R=$3; PORT=41999
$BIN $R/www --threads 2 --quiet --cache-dir off --listen 127.0.0.1:0 --https 127.0.0.1:$PORT \
  --tls-cert $R/run/bench-cert.pem --tls-key $R/run/bench-key.pem > /tmp/h3bulk.out 2>&1 & P=$!
sleep 2
cpu() { awk '{print $14+$15}' /proc/$P/stat; }
per() { python3 -c "print(round(($2-$1)*10/max($3,1),2))"; }
h3() { $H3 h3load -c1 -t1 -m1 -D5 https://127.0.0.1:$PORT/10m.bin 2>&1 | awk '/^requests:/{print $8}'; }
h1() { h2load --h1 -c1 -t1 -m1 -D5 https://127.0.0.1:$PORT/10m.bin 2>&1 | awk '/^requests:/{print $8}'; }
for i in 1 2 3; do
  b=$(cpu); n=$(h3); a=$(cpu); echo "round $i h3     responses=$n  server ms/response=$(per $b $a $n)"
  b=$(cpu); n=$(h1); a=$(cpu); echo "round $i https1 responses=$n  server ms/response=$(per $b $a $n)"
done
for p in h3 h1; do
  perf record -e cpu-clock -F 1000 -g -p $P -o perf-$p.data -- sleep 5 > /dev/null 2>&1 &
  $p > /dev/null
  wait %perf 2>/dev/null
done
kill $P; wait $P
