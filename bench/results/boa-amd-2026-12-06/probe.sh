#!/bin/bash
# Boa's cell by hand: ab -k -c215 on the 105,165-byte file against tachyon
# and h2o master, 3 rounds of 100,000 responses interleaved; per response:
# server CPU µs (its process tree), ab's, segments sent (both ways, the
# host's), pure ACKs received. Ports outside the ephemeral range (a
# client's port there made a listener's bind fail). Needs the
# `tachyon-bench run --suite boa` folder /tmp/boa (site, h2o config).
T=${TACHYON:-/work/main/target/release/tachyon}
H=/root/.cache/tachyon-bench/peers/h2o-edd7a12/bin/h2o
sed 's/port: [0-9]*/port: 20161/; s#pid-file: .*#pid-file: /tmp/bh-h2o.pid#; s#error-log: .*#error-log: /tmp/bh-h2o.err#' /tmp/boa/run/h2o-master-h2o.conf > h2o.conf
"$T" /tmp/boa/www --threads 2 --loopback-congestion system --cache-dir off --quiet --listen 127.0.0.1:20160 > /dev/null 2>&1 &
A=$!
$H -c h2o.conf > /dev/null 2>&1 &
B=$!
trap 'kill $A $B' EXIT
sleep 3
cpu() { for p in "$@"; do awk '{print $14+$15}' "/proc/$p/stat"; done | paste -sd+ | bc; }
N=${N:-100000}
echo "round server rps server_us ab_us segs_out pure_acks"
for round in 1 2 3; do
  for s in "tachyon:20160:$A" "h2o-master:20161:$B $(pgrep -P $B | tr '\n' ' ')"; do
    IFS=: read -r name port pids <<< "$s"
    # shellcheck disable=SC2086
    c0=$(cpu $pids); nstat -n
    out=$( { /usr/bin/time -f "CLIENT %U %S" ab -q -r -n $N -c 215 -s 30 -k "http://127.0.0.1:$port/boa.bin"; } 2>&1)
    # shellcheck disable=SC2086
    c1=$(cpu $pids)
    rps=$(awk '/Requests per second/{print $4}' <<< "$out")
    read -r cu cs < <(awk '/^CLIENT/{print $2, $3}' <<< "$out")
    read -r segs acks < <(nstat TcpOutSegs TcpExtTCPPureAcks | awk '/TcpOutSegs/{s=$2} /PureAcks/{a=$2} END{print s, a}')
    python3 -c "print($round, '$name', $rps, round(($c1-$c0)*1e4/$N,1), round(($cu+$cs)*1e6/$N,1), round($segs/$N,1), round($acks/$N,1))"
  done
done
