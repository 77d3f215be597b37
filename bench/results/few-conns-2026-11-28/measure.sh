#!/bin/bash
# NAME=<label> SP=<server pid> PORT=<port> [T= C= D= P=] ./measure.sh
# wrk -t$T -c$C on $P for $D s after a 2 s warm-up; prints the rate, the
# server's CPU per request (user, system: clock ticks of process SP from
# /proc, 100 a second) and wrk's own (from time). The twin of
# ../two-threads-1k-2026-11-28/measure.sh (a process group, no client CPU).
PORT=${PORT:-8091}; T=${T:-2}; C=${C:-2}; D=${D:-10}; P=${P:-/512k}
st() { read -a f < /proc/$SP/stat; echo "${f[13]} ${f[14]}"; }
wrk -t$T -c$C -d2s http://127.0.0.1:$PORT$P >/dev/null
read u0 s0 <<<"$(st)"
out=$( { /usr/bin/time -f "CLIENT %U %S" wrk -t$T -c$C -d${D}s http://127.0.0.1:$PORT$P; } 2>&1 )
read u1 s1 <<<"$(st)"
rps=$(echo "$out" | awk '/Requests\/sec/{print $2}'); cl=$(echo "$out" | awk '/^CLIENT/{print $2+$3}')
python3 -c "
r=$rps*$D; print(f'$NAME rps={$rps:.0f} srv_usr={($u1-$u0)*1e4/r:.2f} srv_sys={($s1-$s0)*1e4/r:.2f} srv_total={($u1-$u0+$s1-$s0)*1e4/r:.2f} client={$cl*1e6/r:.1f} req/cpu-s={r/(($u1-$u0+$s1-$s0)/100):.0f}')"
