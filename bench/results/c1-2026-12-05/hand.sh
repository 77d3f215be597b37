#!/bin/bash
# hand.sh: 64k t1 c1, nginx tuned vs tachyon; strace -c of each worker set
# DIR: the folder of a `tachyon-bench run --suite efficiency --cells "64k t1 c1" --out DIR`
# (its site and its nginx config, kept after the run); NPORT: the port in
# DIR/run/nginx-nginx-tuned.conf; TACHYON: the tachyon binary. Run as root (sysctl).
DIR=${DIR:?}; NPORT=${NPORT:?}; TACHYON=${TACHYON:-tachyon}
W=$DIR/www; RUN=$DIR/run
sysctl -q -w net.ipv4.tcp_congestion_control=cubic
$TACHYON $W --threads 2 --loopback-congestion system --quiet --cache-dir off --listen 127.0.0.1:18090 --listing > /tmp/t.out 2>&1 &
T=$!
/usr/sbin/nginx -c $RUN/nginx-nginx-tuned.conf > /tmp/n.out 2>&1 &
N=$!
sleep 2

for round in 1 2; do
for s in "tachyon $T 18090" "nginx $N $NPORT"; do set -- $s
  pids=$(echo $2; pgrep -P $2)
  wrk -t1 -c1 -d1s http://127.0.0.1:$3/64k > /dev/null
  a=$(for p in $pids; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc)
  out=$(wrk -t1 -c1 -d4s http://127.0.0.1:$3/64k)
  b=$(for p in $pids; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc)
  req=$(echo "$out" | awk '/requests in/{print $1}')
  echo "$1 r$round req=$req ticks=$((b-a)) us/req=$(echo "($b-$a)*10000/$req" | bc -l | cut -c1-5)"
done; done
# syscalls
for s in "tachyon $T 18090" "nginx $N $NPORT"; do set -- $s
  pargs=$(for p in $(echo $2; pgrep -P $2); do echo -n " -p $p"; done)
  timeout 6 strace -c -f $pargs -o /tmp/strace-$1.txt &
  SP=$!
  sleep 1
  out=$(wrk -t1 -c1 -d3s http://127.0.0.1:$3/64k)
  echo "$1 strace req=$(echo "$out" | awk '/requests in/{print $1}')"
  kill -INT $SP 2>/dev/null; sleep 1
done
kill $T $N
sleep 1
sysctl -q -w net.ipv4.tcp_congestion_control=bbr
echo done
