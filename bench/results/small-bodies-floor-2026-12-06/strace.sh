# sc.sh NAME BIN: syscalls a response for p24k.html gzip (7.6 KB variant), wrk -t2 -c32 3 s, strace -c -f
NAME=$1; BIN=$2; PORT=18290
setsid $BIN /tmp/ab-site --listen 127.0.0.1:$PORT --no-watch > /dev/null 2>&1 &
sleep 2; pid=$(pgrep -f "$BIN /tmp/ab-site --listen 127.0.0.1:$PORT" | head -1)
wrk -t1 -c4 -d1s -H "Accept-Encoding: gzip" http://127.0.0.1:$PORT/p24k.html > /dev/null
strace -c -f -p $pid -o /tmp/sc-$NAME.txt & S=$!; sleep 1
out=$(wrk -t2 -c32 -d3s -H "Accept-Encoding: gzip" http://127.0.0.1:$PORT/p24k.html)
kill -INT $S; wait $S 2>/dev/null
echo "$NAME $(echo "$out" | awk '/requests in/{print $1}') requests"
kill $pid; sleep 0.5
