#!/bin/bash
# Where h2load's extra CPU a response goes against tachyon, next to h2o
# 2.2.5: h2c, /1k, 32 connections x 10 streams, 200,000 requests, h2load
# on CPU 1, ROUNDS rounds each, servers alternating. Per run: h2load's
# own CPU (perf stat), the server's CPU and context switches (perf stat
# -p), and system-wide idle entries and wake-up IPIs per CPU (perf stat
# -a -A); then one perf record of h2load against each.
# usage: WWW=<an h2c run's www> H2O_CONF=<that run's run/h2o-h2o.conf>
#        TACHYON=<binary> OUT=<folder> [ROUNDS=3] wakeups.sh
set -u
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
sed -e 's/port: [0-9]*/port: 19003/' -e 's#pid-file: .*#pid-file: /tmp/h2probe-h2o.pid#' \
    -e 's#error-log: .*#error-log: /tmp/h2probe-h2o.err#' "$H2O_CONF" > /tmp/h2probe-h2o.conf
"$TACHYON" "$WWW" -l 127.0.0.1:19002 --quiet --threads 2 & TPID=$!
h2o -c /tmp/h2probe-h2o.conf > /dev/null 2>&1 &
for port in 19002 19003; do
  for _ in $(seq 240); do curl -s -o /dev/null http://127.0.0.1:$port/1k && break; sleep 0.5; done
done
sleep 1
HPIDS=$(pgrep -d, -f "h2o -c /tmp/h2probe-h2o.conf")
LOAD=(taskset -c 1 h2load -n 200000 -c32 -m10 -t1)
for r in $(seq "$ROUNDS"); do
  for server in tachyon h2o; do
    if [ $server = tachyon ]; then port=19002 pids=$TPID; else port=19003 pids=$HPIDS; fi
    f="$OUT/$server-r$r"
    perf stat -x, -e task-clock,context-switches -p "$pids" -o "$f.server.csv" &
    SP=$!
    sleep 0.3
    perf stat -x, -a -A -o "$f.system.csv" \
      -e power:cpu_idle,irq_vectors:call_function_single_entry,irq_vectors:reschedule_entry \
      perf stat -x, -e task-clock -o "$f.client.csv" \
      "${LOAD[@]}" "http://127.0.0.1:$port/1k" > "$f.h2load.txt" 2>&1
    sleep 0.2
    kill -INT $SP; wait $SP
  done
done
for server in tachyon h2o; do
  if [ $server = tachyon ]; then port=19002; else port=19003; fi
  perf record -q -g -o "/tmp/h2probe-$server.data" "${LOAD[@]}" "http://127.0.0.1:$port/1k" > /dev/null 2>&1
  perf report -i "/tmp/h2probe-$server.data" --no-children --sort sym -q -g none 2>/dev/null \
    | head -15 > "$OUT/$server.h2load-profile.txt"
done
kill $TPID; pkill -f "h2o -c /tmp/h2probe-h2o.conf"
