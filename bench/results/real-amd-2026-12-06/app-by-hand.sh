#!/bin/bash
# app paths identity h1 c32: tachyon (symbols) vs lighttpd, server CPU a request + perf
# Needs the run folder at /tmp/realamd (its www/, traffic lists and lighttpd
# config) and a tachyon built with symbols in /tmp/proftarget.
sed 's/44757/38131/; s#/tmp/realamd/run/lighttpd.pid#/tmp/hm/l.pid#' /tmp/realamd/run/lighttpd-lighttpd.conf > /tmp/hm/l.conf
ulimit -n 65536
lighttpd -D -f /tmp/hm/l.conf > /tmp/hm/l.out 2>&1 &
sleep 1
LP=$(cat /tmp/hm/l.pid)
/tmp/proftarget/release/tachyon /tmp/realamd/www --threads 2 --loopback-congestion system --cache-dir off --listing --listen 127.0.0.1:38130 > /tmp/hm/t.out 2>&1 &
TP=$!
for _ in $(seq 1 300); do grep -q "^reloaded (variants built" /tmp/hm/t.out && break; sleep 1; done
sleep 2
H=(-H 'sec-ch-ua-platform: "Linux"' -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.108 Safari/537.36' -H 'sec-ch-ua: "Not:A-Brand";v="8", "Chromium";v="156", "HeadlessChrome";v="156"' -H 'sec-ch-ua-mobile: ?0' -H 'accept: */*' -H 'sec-fetch-site: same-origin' -H 'sec-fetch-mode: no-cors' -H 'sec-fetch-dest: script' -H 'accept-encoding: identity' -H 'accept-language: en-US,en')
tree_cpu() { for p in $(pgrep -f "$1"); do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc; }
for round in 1 2 3; do
for t in "tachyon:38130:proftarget/release/tachyon" "lighttpd:38131:lighttpd -D -f /tmp/hm/l.conf"; do
  IFS=: read -r name port pat <<< "$t"
  sed "1s#http://127.0.0.1:[0-9]*#http://127.0.0.1:$port#" /tmp/realamd/run/traffic/app-paths-identity-44757.txt > /tmp/hm/app-$name.txt
  c0=$(tree_cpu "$pat")
  if [ $round = 3 ]; then perf record -q -g -a -o /tmp/hm/app-$name.data -- sleep 4 > /dev/null 2>&1 & PP=$!; fi
  out=$(h2load --h1 -c32 -t1 -m1 -D 5 -i /tmp/hm/app-$name.txt "${H[@]}")
  [ $round = 3 ] && wait $PP
  c1=$(tree_cpu "$pat")
  n=$(echo "$out" | awk '/^requests:/{print $8}')
  echo "$round $name $n $(python3 -c "print(round(($c1-$c0)*1e4/$n,2))")"
done; done
kill $TP $LP
