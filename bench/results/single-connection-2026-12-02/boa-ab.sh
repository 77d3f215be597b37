#!/bin/bash
# The boa cell by hand: ab -k -c215 on one 105,165-byte file, against
# tachyon (its default: cubic on loopback listeners), tachyon with the
# system's congestion control (bbr on this host), and h2o-master, rounds
# interleaved. Prints req/s, server and ab CPU per request, and the whole
# machine's busy time per request. Run from the checkout's root after
# `cargo build --release -p tachyon` and `tachyon-bench setup`.
set -e
W=${WORK:-/tmp/boa}; B=$PWD/target/release
H=$(ls -d ~/.cache/tachyon-bench/peers/h2o-*/bin/h2o | head -1)
mkdir -p $W/www; chmod 755 $W $W/www
[ -f $W/www/boa.bin ] || head -c 105165 /dev/urandom > $W/www/boa.bin
chmod 644 $W/www/boa.bin
cat > $W/h2o.conf <<CONF
listen:
  host: 127.0.0.1
  port: 18090
num-threads: 2
hosts:
  default:
    paths:
      /:
        file.dir: $W/www
        compress: ON
        file.send-compressed: ON
CONF
cd $W
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
busy() { awk '/^cpu /{print $2+$3+$4+$6+$7+$8}' /proc/stat; }
N=${N:-60000}
for r in $(seq ${1:-3}); do for s in cubic bbr h2o; do
 case $s in
  cubic) $B/tachyon www --threads 2 --quiet --cache-dir off --listen 127.0.0.1:18080 --listing & P=$!; PORT=18080;;
  bbr) $B/tachyon www --threads 2 --quiet --cache-dir off --listen 127.0.0.1:18080 --listing --loopback-congestion system & P=$!; PORT=18080;;
  h2o) $H -c h2o.conf >/dev/null 2>&1 & P=$!; PORT=18090;;
 esac
 sleep 1
 ab -q -r -n 3000 -c 215 -s 30 -k http://127.0.0.1:$PORT/boa.bin >/dev/null
 a=$(cpu $P); m0=$(busy)
 /usr/bin/time -f "%U %S" -o ab.time ab -q -r -n $N -c 215 -s 30 -k http://127.0.0.1:$PORT/boa.bin > ab.out
 b=$(cpu $P); m1=$(busy)
 rps=$(awk '/Requests per second/{print $4}' ab.out)
 read u sy < ab.time
 python3 -c "print('%-6s %6.0f req/s  server %5.1f us/req  ab %5.1f us/req  machine busy %5.1f us/req' % ('$s', $rps, ($b-$a)*1e4/$N, ($u+$sy)*1e6/$N, ($m1-$m0)*1e4/$N))"
 kill $P; wait $P 2>/dev/null || true
done; done
