#!/bin/bash
# The Python docs' file list with identity coding, Chrome's headers, 32
# connections: HTTP/1.1 and h2c, one request and ten in flight a
# connection. Prints server CPU (utime+stime of tachyon, clock ticks of
# 10 ms) and TCP segments a request (the client's included). Needs a run
# folder of `tachyon-bench run --suite real` (its www/ and traffic list)
# as $1; ROUNDS and MODES (name:h2load flags, `;` between) override the
# defaults, e.g. MODES='h1-m1:--h1 -m1;h2c-m1-f1M:-m1 -f 1M'.
set -e
RUN=$1
T=${TACHYON:-./target/release/tachyon}
P=38111
LIST=$(ls "$RUN"/run/traffic/docs-paths-identity-*.txt)
sed "1s#http://127.0.0.1:[0-9]*#http://127.0.0.1:$P#" "$LIST" > /tmp/depth-paths.txt
"$T" "$RUN/www" --threads 2 --loopback-congestion system --cache-dir off --listing \
  --listen 127.0.0.1:$P > /tmp/depth-server.out 2>&1 &
SP=$!
trap 'kill $SP' EXIT
# every variant built, so no compressing thread shares the CPU
for _ in $(seq 1 300); do grep -q "^reloaded (variants built" /tmp/depth-server.out && break; sleep 1; done
sleep 2
H=(-H 'sec-ch-ua-platform: "Linux"'
   -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.108 Safari/537.36'
   -H 'sec-ch-ua: "Not:A-Brand";v="8", "Chromium";v="156", "HeadlessChrome";v="156"'
   -H 'sec-ch-ua-mobile: ?0' -H 'accept: */*' -H 'sec-fetch-site: same-origin'
   -H 'sec-fetch-mode: no-cors' -H 'sec-fetch-dest: script'
   -H "referer: http://127.0.0.1:$P/docs/index.html"
   -H 'accept-encoding: identity' -H 'accept-language: en-US,en')
cpu() { awk '{print $14+$15}' /proc/$SP/stat; }
segs() { nstat TcpOutSegs | awk '/TcpOutSegs/{print $2}'; }
echo "round mode requests server_ticks us_per_request segments_per_request"
IFS=';' read -r -a modes <<< "${MODES:-h1-m1:--h1 -m1;h1-m10:--h1 -m10;h2c-m1:-m1;h2c-m10:-m10}"
for round in $(seq 1 "${ROUNDS:-3}"); do
  for mode in "${modes[@]}"; do
    name=${mode%%:*}; flags=${mode#*:}
    nstat -n; c0=$(cpu)
    # shellcheck disable=SC2086
    n=$(h2load $flags -c32 -t1 -D 6 -i /tmp/depth-paths.txt "${H[@]}" | awk '/^requests:/{print $8}')
    c1=$(cpu); s=$(segs)
    python3 -c "print($round, '$name', $n, $c1-$c0, round(($c1-$c0)*1e4/$n, 2), round($s/$n, 2))"
  done
done
