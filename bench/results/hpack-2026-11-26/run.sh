#!/bin/bash
# old vs new tachyon, h2c, h2load -c8 -m32, raw-literal path vs Huffman path; 3 rounds interleaved
for round in 1 2 3; do
for bin in old new; do
  /tmp/tachyon-$bin /tmp/site1 -l 127.0.0.1:18080 -t 1 --cache-dir off --no-watch > /dev/null 2>&1 & pid=$!; sleep 0.7
  for path in /1k /1kr.bin; do
    c0=$(/tmp/cpu_of.sh $pid)
    out=$(h2load -c8 -m32 -n 200000 http://127.0.0.1:18080$path 2>&1)
    c1=$(/tmp/cpu_of.sh $pid)
    rps=$(echo "$out" | grep -oP 'finished in [0-9.]+m?s, \K[0-9.]+')
    ok=$(echo "$out" | grep -oP '\d+ succeeded')
    echo "round=$round bin=$bin path=$path req/s=$rps $ok server_cpu_s=$(echo "scale=3;($c1-$c0)/1000000000" | bc) us_per_req=$(echo "scale=2;($c1-$c0)/1000/200000" | bc)"
  done
  kill $pid; wait $pid 2>/dev/null
done; done
