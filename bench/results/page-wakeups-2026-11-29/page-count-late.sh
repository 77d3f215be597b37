#!/usr/bin/env bash
# page-count-late.sh: as page-count.sh, plus LATE=<a build> with two workers as late-t2; system calls and context switches per request in the app page cell,
# tachyon (2 workers, and 1) against lighttpd (the bench's own config), from perf's
# counters on the server's threads (tachyon) or worker processes (lighttpd).
# RUN=<folder of `tachyon-bench run --suite real --cells "app page browser h1"
#      --servers tachyon,lighttpd --rounds 1`> ROUNDS=3 bash count.sh
# The run's own ports are taken from its results.json; tachyon (2 workers) listens on
# tachyon's, the one-worker tachyon on the next port, lighttpd on its own.
D=${RUN:?a finished app page run}; T=$D/run/traffic; ROUNDS=${ROUNDS:-3}
cmd() { python3 -c "
import json
j=json.load(open('$D/results.json'))
print([r['client_command'] for r in j['rows'] if r['server']=='$1'][0])"; }
CMD=$(cmd tachyon); LCMD=$(cmd lighttpd)
TP=$(echo "$CMD" | grep -o 'browser-[0-9]*' | head -1 | cut -d- -f2); TP1=$((TP + 1))
sed "s/$TP/$TP1/g" $T/app-page-browser-$TP.txt > $T/app-page-browser-$TP1.txt
CMD1=${CMD//$TP/$TP1}
TACHYON=${TACHYON:-./target/release/tachyon}
LATE=${LATE:?a build whose first packing trial comes after 30 s}
TP2=$((TP + 2)); sed "s/$TP/$TP2/g" $T/app-page-browser-$TP.txt > $T/app-page-browser-$TP2.txt; CMD2=${CMD//$TP/$TP2}
$TACHYON $D/www --threads 2 --cache-dir off --listing --listen 127.0.0.1:$TP > /tmp/tp2.out 2>&1 & P2=$!
$TACHYON $D/www --threads 1 --cache-dir off --listing --listen 127.0.0.1:$TP1 > /tmp/tp1.out 2>&1 & P1=$!
$LATE $D/www --threads 2 --cache-dir off --listing --listen 127.0.0.1:$TP2 > /tmp/tpl.out 2>&1 & PX=$!
lighttpd -D -f $D/run/lighttpd-lighttpd.conf > /tmp/lt.out 2>&1 & PL=$!
# Every variant built: tachyon reloads once the background build is done.
done_() { grep -q "^reloaded (variants built" $1; }
for i in $(seq 120); do done_ /tmp/tp2.out && done_ /tmp/tp1.out && done_ /tmp/tpl.out && break; sleep 2; done
tail -1 /tmp/tp2.out; tail -1 /tmp/tp1.out
LW=$(pgrep -P $PL | paste -sd,)
for r in $(seq $ROUNDS); do
  for pair in "tachyon-t2 $P2 CMD" "tachyon-t1 $P1 CMD1" "late-t2 $PX CMD2" "lighttpd $LW LCMD"; do
    set -- $pair; c=${!3}
    perf stat -x, -e raw_syscalls:sys_enter,context-switches,task-clock -p $2 -o /tmp/ps.$1 -- bash -c "$c" > /tmp/h2l.$1 2>&1
    req=$(awk '/^requests:/{print $2}' /tmp/h2l.$1)
    awk -F, -v r=$req -v name=$1 -v round=$r '
      /raw_syscalls/{s=$1} /context-switches/{c=$1} /task-clock/{t=$1}
      END{printf "round %d %-10s requests %d  syscalls/req %.2f  switches/req %.3f  task-clock us/req %.2f\n", round, name, r, s/r, c/r, t*1000/r}' /tmp/ps.$1
  done
done
kill $P2 $P1 $PX $PL; wait $P2 $P1 $PX $PL 2>/dev/null
