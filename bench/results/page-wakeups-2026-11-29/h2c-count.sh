#!/usr/bin/env bash
# h2c-count.sh: system calls and context switches per request, h2c 1k c32 m1 (and c256 m1 64k),
# tachyon (the bench's flags) against lighttpd (the bench's own config), ROUNDS rounds interleaved.
R=${RUN:?the folder of a finished tachyon-bench run --suite h2c (its www and run/lighttpd-lighttpd.conf)}; ROUNDS=${ROUNDS:-3}
TACHYON=${TACHYON:-./target/release/tachyon}
$TACHYON $R/www --threads 2 --quiet --cache-dir off --listen 127.0.0.1:46001 --listing > /tmp/t.out 2>&1 & PT=$!
lighttpd -D -f $R/run/lighttpd-lighttpd.conf > /tmp/lt.out 2>&1 & PL=$!
sleep 3; LP=$(awk '/server.port/{print $3}' $R/run/lighttpd-lighttpd.conf)
LW=$(pgrep -P $PL | paste -sd,)
for cell in "-c32 -m1 /1k" "-c256 -m1 /64k"; do set -- $cell
for r in $(seq $ROUNDS); do
  for pair in "tachyon $PT 46001" "lighttpd $LW $LP"; do set -- $pair; name=$1; pid=$2; port=$3; set -- $cell
    perf stat -x, -e raw_syscalls:sys_enter,context-switches,task-clock -p $pid -o /tmp/ps.$name -- \
      h2load $1 -t1 $2 -D5 http://127.0.0.1:$port$3 > /tmp/h2l.$name 2>&1
    req=$(awk '/^requests:/{print $8}' /tmp/h2l.$name)
    awk -F, -v r=$req -v name=$name -v round=$r -v cell="$cell" '
      /raw_syscalls/{s=$1} /context-switches/{c=$1} /task-clock/{t=$1}
      END{printf "%s round %d %-9s requests %d  syscalls/req %.2f  switches/req %.3f  task-clock us/req %.2f\n", cell, round, name, r, s/r, c/r, t*1000/r}' /tmp/ps.$name
  done
done; done
kill $PT $PL; wait $PT $PL 2>/dev/null
