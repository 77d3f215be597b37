#!/bin/bash
# usage: wrkcpu.sh NAME PID URL CONNS DUR
name=$1 pid=$2 url=$3 c=$4 d=${5:-5}
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
out=$(wrk -t1 -c$c -d${d}s $url)
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
req=$(echo "$out" | grep -o "[0-9]* requests in" | grep -o "^[0-9]*")
rps=$(echo "$out" | grep -o "Requests/sec: *[0-9.]*" | grep -o "[0-9.]*$")
ticks=$((t1-t0))
echo "$name c$c rps=$rps req_per_cpu_s=$(echo "$req*100/$ticks" | bc) us_per_req=$(echo "scale=2;$ticks*10000/$req" | bc)"
