#!/usr/bin/env bash
# h3prof.sh NAME: server user/sys µs per 64 KiB response over HTTP/3 (h3load c1 m10), 3 rounds, then perf.
NAME=$1; R=/tmp/runs/h3; PORT=41997; H3=${H3:-/tmp/tprof/release/tachyon-bench}
case $NAME in
  tachyon*) ${BIN:-/tmp/tprof/release/tachyon} $R/www --threads 2 --quiet --cache-dir off --listen 127.0.0.1:0 --https 127.0.0.1:$PORT \
      --tls-cert $R/run/bench-cert.pem --tls-key $R/run/bench-key.pem > /tmp/h3prof.out 2>&1 & P=$! ;;
  h2o)  sed "s/port: 36385/port: $PORT/; s#pid-file: .*#pid-file: /tmp/h3prof-h2o.pid#" $R/run/h2o-master-h2o-h3.conf > /tmp/h3prof-h2o.conf
        /root/.cache/tachyon-bench/peers/h2o-edd7a12/bin/h2o -c /tmp/h3prof-h2o.conf > /tmp/h3prof.out 2>&1 & P=$! ;;
esac
sleep 2
pids() { echo $P $(pgrep -P $P); }
cpu() { for p in $(pids); do awk '{print $14, $15}' /proc/$p/stat; done | awk '{u+=$1; s+=$2} END {print u, s}'; }
run() { $H3 h3load -c1 -t1 -m${M:-10} -D5 https://127.0.0.1:$PORT/${FILE:-64k} 2>&1 | awk '/^requests:/{print $8}'; }
for i in 1 2 3; do
  read bu bs < <(cpu); n=$(run); read au as < <(cpu)
  python3 -c "n=max($n,1); print('round $i $NAME responses=%d user=%.1f sys=%.1f us/resp' % (n, ($au-$bu)*1e4/n, ($as-$bs)*1e4/n))"
done
perf record -e cpu-clock -F 2000 -g -p $(pids | tr ' ' ',') -o /tmp/perf-$NAME.data -- sleep 5 > /dev/null 2>&1 &
run > /dev/null
wait %perf 2>/dev/null
kill $P; wait $P 2>/dev/null
