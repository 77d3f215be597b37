#!/bin/bash
# ab's side of the cell: `strace -c` (50,000 responses) and `perf record -g`
# (100,000) of ab against each server; run after probe.sh (its h2o.conf).
T=/work/main/target/release/tachyon
H=/root/.cache/tachyon-bench/peers/h2o-edd7a12/bin/h2o
"$T" /tmp/boa/www --threads 2 --loopback-congestion system --cache-dir off --quiet --listen 127.0.0.1:20160 > /dev/null 2>&1 &
A=$!
$H -c h2o.conf > /dev/null 2>&1 &
B=$!
trap 'kill $A $B' EXIT
sleep 3
for p in tachyon:20160 h2o:20161; do
  IFS=: read -r name port <<< "$p"
  ab -q -r -n 30000 -c 215 -s 30 -k "http://127.0.0.1:$port/boa.bin" > /dev/null
  strace -c -o strace-$name.txt ab -q -r -n 50000 -c 215 -s 30 -k "http://127.0.0.1:$port/boa.bin" > /dev/null
  perf record -q -g -o perf-$name.data -- ab -q -r -n 100000 -c 215 -s 30 -k "http://127.0.0.1:$port/boa.bin" > ab-$name.txt 2>&1
done
