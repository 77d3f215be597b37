#!/bin/bash
# usage: abcpu.sh NAME PID URL N C [extra ab flags]
name=$1 pid=$2 url=$3 n=$4 c=$5; shift 5
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
out=$(ab -q -n$n -c$c "$@" $url 2>&1)
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
rps=$(echo "$out" | grep -o "Requests per second: *[0-9.]*" | grep -o "[0-9.]*$")
fail=$(echo "$out" | grep -o "Failed requests: *[0-9]*" | grep -o "[0-9]*$")
ticks=$((t1-t0))
echo "$name c$c rps=$rps fail=$fail us_per_req=$(echo "scale=1;$ticks*10000/$n" | bc)"
