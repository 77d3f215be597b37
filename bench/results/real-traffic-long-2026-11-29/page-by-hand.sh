#!/usr/bin/env bash
# page-by-hand.sh: RUN=<app-page-7-rounds' run folder> TACHYON=<binary> bash page-by-hand.sh
# By-hand check of the app page cell (that run's site, traffic lists and h2load commands; the
# ports 33351 and 46675 are tachyon's and lighttpd's in it, edit them for another run):
# tachyon with 2 workers (packing decides) and with 1, and lighttpd (the bench's own config),
# interleaved per round; server CPU = utime+stime of the process and its children, from /proc.
D=${RUN:?the folder of a finished app-page run (tachyon-bench run --suite real --cells "app page browser h1" --servers tachyon,lighttpd)}
T=$D/run/traffic
sed 's/33351/33352/' $T/app-page-browser-33351.txt > $T/app-page-browser-33352.txt
CMD=$(python3 -c "
import json
j=json.load(open('$D/results.json'))
print([r['client_command'] for r in j['rows'] if r['server']=='tachyon'][0])")
CMD1=${CMD//33351/33352}
LCMD=$(python3 -c "
import json
j=json.load(open('$D/results.json'))
print([r['client_command'] for r in j['rows'] if r['server']=='lighttpd'][0])")
cpu() { local t=0; for p in $1 $(pgrep -P $1); do t=$((t + $(awk '{print $14+$15}' /proc/$p/stat))); done; echo $t; }
run() { # name pid cmd
  local b; b=$(cpu $2); local out; out=$(eval "$3" 2>&1); local a; a=$(cpu $2)
  local req; req=$(echo "$out" | awk '/^requests:/{print $2}')
  local rps; rps=$(echo "$out" | awk '/finished in/{print $4}')
  echo "$1 rps=$rps reqs=$req us_per_req=$(python3 -c "print(round(($a-$b)*1e4/$req,2))")"
}
${TACHYON:-./target/release/tachyon} $D/www --threads 2 --cache-dir off --listing --listen 127.0.0.1:33351 > /tmp/tp2.out 2>&1 & P2=$!
${TACHYON:-./target/release/tachyon} $D/www --threads 1 --cache-dir off --listing --listen 127.0.0.1:33352 > /tmp/tp1.out 2>&1 & P1=$!
lighttpd -D -f $D/run/lighttpd-lighttpd.conf > /tmp/lt.out 2>&1 & PL=$!
for i in $(seq 60); do
  grep -qE "br (1145|1146|1147|1148|1149|1150) of" /tmp/tp2.out && grep -qE "br (1145|1146|1147|1148|1149|1150) of" /tmp/tp1.out && break; sleep 2
done
tail -1 /tmp/tp2.out; tail -1 /tmp/tp1.out
for r in 1 2 3 4 5; do
  run tachyon-t2 $P2 "$CMD"; run tachyon-t1 $P1 "$CMD1"; run lighttpd $PL "$LCMD"
done
kill $P2 $P1 $PL
