#!/bin/bash
# pin.sh: wrk pinned to CPU 0; each server (one tachyon worker, nginx) pinned to CPU 0, then CPU 1;
# server CPU per request at 64k t1 c1
# DIR: the folder of a `tachyon-bench run --suite efficiency --cells "64k t1 c1" --out DIR`
# (its site and its nginx config, kept after the run); NPORT: the port in
# DIR/run/nginx-nginx-tuned.conf; TACHYON: the tachyon binary. Run as root (sysctl).
DIR=${DIR:?}; NPORT=${NPORT:?}; TACHYON=${TACHYON:-tachyon}
W=$DIR/www; RUN=$DIR/run
sysctl -q -w net.ipv4.tcp_congestion_control=cubic
measure() { # name pid port
  pids=$(echo $2; pgrep -P $2)
  taskset -c 0 wrk -t1 -c1 -d1s http://127.0.0.1:$3/64k > /dev/null
  a=$(for p in $pids; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc)
  out=$(taskset -c 0 wrk -t1 -c1 -d4s --latency http://127.0.0.1:$3/64k)
  b=$(for p in $pids; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc)
  req=$(echo "$out" | awk '/requests in/{print $1}')
  p99=$(echo "$out" | awk '/ 99%/{print $2}')
  echo "$1 req/s=$((req/4)) us/req=$(echo "($b-$a)*10000/$req" | bc -l | cut -c1-5) p99=$p99"
}
for cpu in 0 1; do
 taskset -c $cpu $TACHYON $W --threads 1 --no-cpu-affinity --loopback-congestion system --quiet --cache-dir off --listen 127.0.0.1:18090 --listing > /tmp/t.out 2>&1 &
 T=$!
 taskset -c $cpu /usr/sbin/nginx -c $RUN/nginx-nginx-tuned.conf > /tmp/n.out 2>&1 &
 N=$!
 sleep 2
 for r in 1 2; do
  measure "tachyon-cpu$cpu" $T 18090
  measure "nginx-cpu$cpu" $N $NPORT
 done
 kill $T $N; sleep 1
done
sysctl -q -w net.ipv4.tcp_congestion_control=bbr
