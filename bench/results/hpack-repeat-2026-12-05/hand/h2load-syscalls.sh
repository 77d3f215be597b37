#!/bin/bash
# h2load's system calls and CPU (perf stat) against tachyon and h2o 2.2.5 on
# /1k, h2c, 32 connections x 10 streams, 200,000 requests, h2load on CPU 1.
# usage: WWW=<an h2c run's www> H2O_CONF=<that run's run/h2o-h2o.conf> TACHYON=bin h2load-syscalls.sh
set -u
sed -e 's/port: [0-9]*/port: 19003/' -e 's#pid-file: .*#pid-file: /tmp/h2probe-h2o.pid#' \
    -e 's#error-log: .*#error-log: /tmp/h2probe-h2o.err#' "$H2O_CONF" > /tmp/h2probe-h2o.conf
$TACHYON "$WWW" -l 127.0.0.1:19002 --quiet --threads 2 & P2=$!
h2o -c /tmp/h2probe-h2o.conf >/dev/null 2>&1 & P3=$!
for port in 19002 19003; do
  for _ in $(seq 240); do curl -s -o /dev/null http://127.0.0.1:$port/1k && break; sleep 0.5; done
done
for port in 19002 19003; do
  echo "== port $port"
  perf stat -e 'syscalls:sys_enter_read,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait,task-clock' \
    taskset -c 1 h2load -n 200000 -c32 -m10 -t1 http://127.0.0.1:$port/1k 2>&1 |
    grep -E "finished in|syscalls|task-clock|traffic:"
done
kill $P2 $P3
