#!/bin/bash
# Header-block octets a response as h2load counts them (h2c, one connection,
# 20,000 requests, 10 streams at a time) for tachyon before (BEFORE) and
# after (AFTER) indexing, and h2o 2.2.5 (file.dir, default config), on /1k
# and on the docs site's paths with Chromium's request headers.
# usage: WWW=<a real-h2c run's www> PATHS=<its docs-paths-browser-*.txt> BEFORE=bin AFTER=bin header-bytes.sh
set -u
H=(-H 'sec-ch-ua-platform: "Linux"' -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.108 Safari/537.36' -H 'sec-ch-ua: "Not:A-Brand";v="8", "Chromium";v="156", "HeadlessChrome";v="156"' -H 'sec-ch-ua-mobile: ?0' -H 'accept: */*' -H 'sec-fetch-site: same-origin' -H 'sec-fetch-mode: no-cors' -H 'sec-fetch-dest: script' -H 'accept-encoding: gzip, deflate, br, zstd' -H 'accept-language: en-US,en')
cat > /tmp/hb-h2o.conf <<CONF
listen: {host: 127.0.0.1, port: 19003}
num-threads: 1
hosts: {default: {paths: {/: {file.dir: $WWW}}}}
CONF
$BEFORE "$WWW" -l 127.0.0.1:19001 --quiet --threads 1 & P1=$!
$AFTER "$WWW" -l 127.0.0.1:19002 --quiet --threads 1 & P2=$!
h2o -c /tmp/hb-h2o.conf >/dev/null 2>&1 & P3=$!
for port in 19001 19002 19003; do
  for _ in $(seq 240); do curl -s -o /dev/null http://127.0.0.1:$port/1k && break; sleep 0.5; done
done
for port in 19001 19002 19003; do
  name=$([ $port = 19001 ] && echo before || ([ $port = 19002 ] && echo after || echo h2o))
  one=$(h2load -n 20000 -c1 -m10 http://127.0.0.1:$port/1k | grep -oP 'total, \K.*headers[^)]*\)')
  sed "1s#http://127.0.0.1:[0-9]*#http://127.0.0.1:$port#" "$PATHS" > /tmp/hb-paths-$port.txt
  docs=$(h2load -n 20000 -c1 -m10 -i /tmp/hb-paths-$port.txt "${H[@]}" | grep -oP 'total, \K.*headers[^)]*\)')
  echo "$name | /1k: $one | docs paths browser: $docs"
done
kill $P1 $P2 $P3
