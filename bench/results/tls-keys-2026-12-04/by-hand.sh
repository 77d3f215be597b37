#!/bin/bash
# by-hand.sh N: alternates the two builds N times; h2load --h1 over TLS, browser fields, /style.css
# Assumes this checkout at /work/main, the baseline build at /tmp/wt-target/release/tachyon
# and a site at /tmp/cg/site holding style.css (Python docs pydoctheme.css).
hdrs=$(sed "s/ -H 'referer: \/'//" /work/main/bench/results/user-time-2026-12-04/chromium-stylesheet-fields.txt)
hz=$(getconf CLK_TCK)
ticks() { local u=0 s=0; for f in /proc/$1/task/*/stat; do set -- $(sed 's/.*) //' $f); u=$((u + ${12})); s=$((s + ${13})); done; echo "$u $s"; }
for i in $(seq $1); do
 for b in after:/work/main/target/release/tachyon before:/tmp/wt-target/release/tachyon; do
  ${b#*:} /tmp/cg/site --quiet --cache-dir off --listen 127.0.0.1:8470 --https 127.0.0.1:8471 --tls-self-signed --no-h3 >/dev/null 2>&1 &
  pid=$!; sleep 1
  eval "h2load --h1 -c8 -t1 -n 30000 $hdrs https://127.0.0.1:8471/style.css" >/dev/null 2>&1
  read ua sa <<< "$(ticks $pid)"
  perf stat -e raw_syscalls:sys_enter,sched:sched_switch,sched:sched_wakeup -p $pid -o /tmp/perf.$$ &
  pp=$!
  out=$(eval "h2load --h1 -c8 -t1 -n 300000 $hdrs https://127.0.0.1:8471/style.css" 2>&1)
  read ub sb <<< "$(ticks $pid)"
  kill -INT $pp; wait $pp 2>/dev/null
  reqs=$(echo "$out" | awk '/^requests:/{print $8}')
  rps=$(echo "$out" | awk '/^finished in/{print $4}')
  sc=$(awk '/sys_enter/{gsub(",","",$1);print $1}' /tmp/perf.$$); cs=$(awk '/sched_switch/{gsub(",","",$1);print $1}' /tmp/perf.$$)
  echo "${b%%:*} rps=$rps usr=$(echo "scale=2;($ub-$ua)*1000000/$hz/$reqs"|bc) sys=$(echo "scale=2;($sb-$sa)*1000000/$hz/$reqs"|bc) syscalls/req=$(echo "scale=2;$sc/$reqs"|bc) switches/req=$(echo "scale=3;$cs/$reqs"|bc)"
  kill $pid; wait $pid 2>/dev/null
 done
done
