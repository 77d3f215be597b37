#!/bin/bash
# mig3.sh: 64k t1 c1, wrk unpinned: tachyon ($TACHYON, $TACHYON_B: two builds) and nginx alternated x3;
# server CPU per request and how often wrk's busy thread shares a CPU with the server's (coloc.py)
# DIR: the folder of a `tachyon-bench run --suite efficiency --cells "64k t1 c1" --out DIR`
# (its site and its nginx config, kept after the run); NPORT: the port in
# DIR/run/nginx-nginx-tuned.conf; TACHYON: the tachyon binary. Run as root (sysctl).
DIR=${DIR:?}; NPORT=${NPORT:?}; TACHYON=${TACHYON:-tachyon}
W=$DIR/www; RUN=$DIR/run
sysctl -q -w net.ipv4.tcp_congestion_control=cubic
$TACHYON $W --threads 2 --loopback-congestion system --quiet --cache-dir off --listen 127.0.0.1:18090 --listing > /tmp/t.out 2>&1 &
T=$!
${TACHYON_B:?} $W --threads 2 --loopback-congestion system --quiet --cache-dir off --listen 127.0.0.1:18091 --listing > /tmp/t2.out 2>&1 &
T2=$!
/usr/sbin/nginx -c $RUN/nginx-nginx-tuned.conf > /tmp/n.out 2>&1 &
N=$!
sleep 2
for r in 1 2 3; do
for s in "tachyon-a $T 18090" "tachyon-b $T2 18091" "nginx $N $NPORT"; do set -- $s
  pids=$(echo $2; pgrep -P $2)
  wrk -t1 -c1 -d1s http://127.0.0.1:$3/64k > /dev/null
  a=$(for p in $pids; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc)
  wrk -t1 -c1 -d4s http://127.0.0.1:$3/64k > /tmp/wrk.out &
  sleep 0.5
  co=$(python3 $(dirname $0)/coloc.py $(pgrep -n -x wrk) $2 3)
  sleep 0.7
  b=$(for p in $pids; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc)
  req=$(awk '/requests in/{print $1}' /tmp/wrk.out)
  echo "$1 r$r req/s=$((req/4)) us/req=$(echo "($b-$a)*10000/$req" | bc -l | cut -c1-5) $co"
done; done
kill $T $T2 $N
sysctl -q -w net.ipv4.tcp_congestion_control=bbr
