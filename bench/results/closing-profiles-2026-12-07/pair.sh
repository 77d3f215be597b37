#!/bin/bash
# By hand, not a result: a client-bound cell, tachyon against the peer that
# wins it raw, alternated. For each: the client's and the server's CPU and
# syscalls a response (perf stat), the server's req/s from the client.
# usage: pair.sh NAME PEER "client command with PORT" [rounds]
set -u
name=$1; peer=$2; client=$3; rounds=${4:-2}
# RUNS: a folder with bin/ and finished h2c/ and h2/ runs (their configs and www)
R=${RUNS:-/work/runs/full-2026-12-07b}
suite=${SUITE:-h2c}; run=$R/$suite/run; www=$R/$suite/www
tls=""; [ $suite = h2 ] && tls=-tls
out=${OUT:-.}/$name; mkdir -p $out
ev=task-clock,context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,syscalls:sys_enter_write,syscalls:sys_enter_sendto,syscalls:sys_enter_writev
start() {  # $1 server -> sets pid, port
  case $1 in
    tachyon) port=18080; setsid $R/bin/tachyon $www --threads 2 --loopback-congestion system --quiet \
               --cache-dir off --listing $([ -n "$tls" ] && echo --listen 127.0.0.1:0 --https 127.0.0.1:$port --tls-cert $run/bench-cert.pem --tls-key $run/bench-key.pem || echo --listen 127.0.0.1:$port) > $out/tachyon.out 2>&1 & ;;
    h2o) port=$(awk '/port:/ {print $2; exit}' $run/h2o-h2o$tls.conf); setsid h2o -c $run/h2o-h2o$tls.conf > $out/h2o.out 2>&1 & ;;
    nginx-mainline) port=$(grep -o '127.0.0.1:[0-9]*' $run/nginx-mainline-nginx-tuned${tls:--h2c}.conf | head -1 | cut -d: -f2)
       setsid /root/.cache/tachyon-bench/peers/nginx-1.31.4/sbin/nginx -c $run/nginx-mainline-nginx-tuned${tls:--h2c}.conf -p $run -e $out/nginx.err > $out/nginx.out 2>&1 & ;;
    lighttpd) port=$(grep -o 'server.port *= *[0-9]*' $run/lighttpd-lighttpd$tls.conf | grep -o '[0-9]*$')
       setsid lighttpd -D -f $run/lighttpd-lighttpd$tls.conf > $out/lighttpd.out 2>&1 & ;;
  esac
  pid=$!; sleep 2
}
for i in $(seq 1 $rounds); do
  for s in tachyon $peer; do
    start $s
    pids=$(pgrep -d, -g $pid)
    cmd=${client//PORT/$port}
    $cmd > /dev/null 2>&1   # warm-up pass
    perf stat -x, -e $ev -p $pids -o $out/$s-$i.server.txt sleep 5.5 &
    sp=$!
    perf stat -x, -e $ev -o $out/$s-$i.client.txt -- $cmd > $out/$s-$i.client.out 2>&1
    wait $sp
    kill -TERM -- -$pid; sleep 1; kill -KILL -- -$pid 2>/dev/null; sleep 1
  done
done
