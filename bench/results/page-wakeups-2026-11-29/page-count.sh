#!/usr/bin/env bash
# page-count.sh: system calls and context switches per request in the app page cell,
# tachyon (2 workers, and 1) against lighttpd (the bench's own config), from perf's
# counters on the server's threads (tachyon) or worker processes (lighttpd); with
# LATE=<another build>, that build too, with two workers, as late-t2.
# RUN=<folder of `tachyon-bench run --suite real --cells "app page browser h1"
#      --servers tachyon,lighttpd --rounds 1`> ROUNDS=3 [LATE=<build>] bash page-count.sh
# The run's own ports are taken from its results.json; tachyon (2 workers) listens on
# tachyon's, the one-worker tachyon on the next port, LATE on the one after, lighttpd on its own.
D=${RUN:?a finished app page run}; T=$D/run/traffic; ROUNDS=${ROUNDS:-3}
cmd() { python3 -c "
import json
j=json.load(open('$D/results.json'))
print([r['client_command'] for r in j['rows'] if r['server']=='$1'][0])"; }
CMD=$(cmd tachyon); LCMD=$(cmd lighttpd)
TP=$(echo "$CMD" | grep -o 'browser-[0-9]*' | head -1 | cut -d- -f2)
TACHYON=${TACHYON:-./target/release/tachyon}
names=(); pids=(); cmds=()
# serve NAME BINARY THREADS PORT: a tachyon on PORT, its traffic list and command rewritten to it.
serve() {
  [ "$4" = "$TP" ] || sed "s/$TP/$4/g" $T/app-page-browser-$TP.txt > $T/app-page-browser-$4.txt
  $2 $D/www --threads $3 --cache-dir off --listing --listen 127.0.0.1:$4 > /tmp/$1.out 2>&1 &
  names+=("$1"); pids+=($!); cmds+=("${CMD//$TP/$4}")
}
serve tachyon-t2 "$TACHYON" 2 $TP
serve tachyon-t1 "$TACHYON" 1 $((TP + 1))
[ -n "$LATE" ] && serve late-t2 "$LATE" 2 $((TP + 2))
lighttpd -D -f $D/run/lighttpd-lighttpd.conf > /tmp/lt.out 2>&1 & PL=$!
# Every variant built: tachyon reloads once the background build is done.
built() { for n in "${names[@]}"; do grep -q "^reloaded (variants built" /tmp/$n.out || return 1; done; }
for i in $(seq 120); do built && break; sleep 2; done
for n in "${names[@]}"; do tail -1 /tmp/$n.out; done
names+=(lighttpd); pids+=($(pgrep -P $PL | paste -sd,)); cmds+=("$LCMD")
for r in $(seq $ROUNDS); do
  for i in "${!names[@]}"; do
    n=${names[$i]}
    perf stat -x, -e raw_syscalls:sys_enter,context-switches,task-clock -p ${pids[$i]} -o /tmp/ps.$n -- bash -c "${cmds[$i]}" > /tmp/h2l.$n 2>&1
    req=$(awk '/^requests:/{print $2}' /tmp/h2l.$n)
    awk -F, -v r=$req -v name=$n -v round=$r '
      /raw_syscalls/{s=$1} /context-switches/{c=$1} /task-clock/{t=$1}
      END{printf "round %d %-10s requests %d  syscalls/req %.2f  switches/req %.3f  task-clock us/req %.2f\n", round, name, r, s/r, c/r, t*1000/r}' /tmp/ps.$n
  done
done
kill ${pids[@]:0:${#pids[@]}-1} $PL; wait ${pids[@]:0:${#pids[@]}-1} $PL 2>/dev/null
