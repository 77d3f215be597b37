#!/bin/bash
# One connection, pinned as the efficiency suite pins it: the server on
# cpu1, wrk -t1 -c1 on cpu0, 1 KiB; tachyon and the floor alternated.
# Prints server CPU µs per request. Run from the checkout's root after
# `cargo build --release -p tachyon -p tachyon-bench`.
set -e
W=${WORK:-/tmp/eff}; B=$PWD/target/release
mkdir -p $W/www; [ -f $W/www/1k ] || head -c 1024 /dev/urandom > $W/www/1k
cd $W
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
for r in $(seq ${1:-3}); do for s in tachyon floor; do
  case $s in
   tachyon) taskset -c 1 $B/tachyon www --threads 2 --quiet --cache-dir off --listen 127.0.0.1:18080 --listing & P=$!;;
   floor) taskset -c 1 $B/tachyon-bench floor --port 18080 --threads 2 --root www & P=$!;;
  esac
  sleep 0.7; taskset -c 0 wrk -t1 -c1 -d2s http://127.0.0.1:18080/1k >/dev/null
  a=$(cpu $P); out=$(taskset -c 0 wrk -t1 -c1 -d${D:-5}s http://127.0.0.1:18080/1k); b=$(cpu $P)
  n=$(echo "$out" | awk '/requests in/{print $1}')
  python3 -c "print('$s r$r: $n requests, %.2f us server CPU per request' % (($b-$a)*1e4/$n))"
  kill $P; wait $P 2>/dev/null || true
done; done
