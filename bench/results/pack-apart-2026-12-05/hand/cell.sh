#!/bin/bash
# usage: cell.sh PORT PIDS... ; runs the docs page browser h1 c8 cell, prints req/s and server µs/req
PORT=$1; shift; PIDS="$@"
sed "s/PORT/$PORT/" /tmp/pg/page.tmpl > /tmp/pg/page-$PORT.txt
N=${N:-300000}
cpu() { local t=0; for p in $PIDS; do for f in /proc/$p/task/*/stat; do set -- $(sed 's/.*) //' $f); t=$((t + ${12} + ${13})); done; done; echo $t; }
c0=$(cpu)
out=$($PIN h2load --h1 -c${C:-8} -t1 -m1 -n$N -i /tmp/pg/page-$PORT.txt -H 'sec-ch-ua-platform: "Linux"' -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.108 Safari/537.36' -H 'sec-ch-ua: "Not:A-Brand";v="8", "Chromium";v="156", "HeadlessChrome";v="156"' -H 'sec-ch-ua-mobile: ?0' -H 'accept: */*' -H 'sec-fetch-site: same-origin' -H 'sec-fetch-mode: no-cors' -H 'sec-fetch-dest: script' -H "referer: http://127.0.0.1:$PORT/docs/index.html" -H "accept-encoding: ${AE:-gzip, deflate, br, zstd}" -H 'accept-language: en-US,en')
c1=$(cpu)
rps=$(echo "$out" | grep -oP 'finished in [0-9.]+s, \K[0-9.]+')
ok=$(echo "$out" | grep -oP '[0-9]+ succeeded')
echo "rps=$rps $ok cpu_ticks=$((c1-c0)) us_per_req=$(python3 -c "print(round(($c1-$c0)*10000/$N,2))")"
