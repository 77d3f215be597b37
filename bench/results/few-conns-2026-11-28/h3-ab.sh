#!/bin/bash
# ROUNDS "H3LOAD ARGS" PATH: the build as it is, then with ACK_FREQUENCY
# thresholds 4 and 9, interleaved. TACHYON must be a build with
# switches.diff applied (it reads TACHYON_ACKF); /tmp/h3p holds the site
# (root/) and a self-signed cert.pem and key.pem for 127.0.0.1.
cd /tmp/h3p
R=$1; A=$2; P=$3
for r in $(seq $R); do for cfg in none 4 9; do
  if [ $cfg = none ]; then unset TACHYON_ACKF; else export TACHYON_ACKF=$cfg; fi
  ${TACHYON:-tachyon} /tmp/h3p/root --listen 127.0.0.1:0 --https 127.0.0.1:8443 --tls-cert cert.pem --tls-key key.pem --cache-dir off --quiet > srv.log 2>&1 &
  pid=$!; sleep 0.7
  ${BENCH:-tachyon-bench} h3load $A -D2 https://127.0.0.1:8443$P >/dev/null 2>&1
  t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  out=$(${BENCH:-tachyon-bench} h3load $A -D8 https://127.0.0.1:8443$P 2>&1)
  t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null
  n=$(echo "$out" | awk '/^requests:/{print $2}'); rps=$(echo "$out" | awk '/^finished/{print $4}')
  echo "$A $P cfg=$cfg rps=$rps req/cpu-s=$(python3 -c "print(round($n/(($t1-$t0)/100)))")"
done; done
