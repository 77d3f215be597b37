SITE=$1; shift
for spec in "$@"; do
  name=${spec%%=*}; bin=${spec#*=}
  setsid $bin $SITE --listen 127.0.0.1:18383 --no-watch > /tmp/rss-$name.log 2>&1 &
  sleep 12
  pid=$(pgrep -f "$bin $SITE --listen 127.0.0.1:18383" | head -1)
  a=$(awk '/VmRSS/{print $2}' /proc/$pid/status); sleep 4; b=$(awk '/VmRSS/{print $2}' /proc/$pid/status)
  echo "$name RSS ${a} kB, 4 s later ${b} kB; $(grep -c . /tmp/rss-$name.log) log lines"
  kill $pid; sleep 1
done
