#!/bin/bash
# Unsent-bytes bound variants by hand: one probe build of tachyon (see
# probe.diff) run once per VARIANT, beside nginx mainline, ROUNDS rounds of
# 5 s of wrk interleaved. Per response: the server's CPU µs (its process
# tree), wrk's, the machine's (every CPU's busy time, from /proc/stat),
# and the pure ACKs the host received.
#
#   probe.sh PATH THREADS CONNS ROUNDS VARIANT...
#   VARIANT: name=ENV[,ENV...]  e.g. shipped=  no-lowat=TACHYON_NO_LOWAT=1
# Needs a `tachyon-bench run --suite large` folder at /tmp/large10, root
# for nstat; TACHYON names the probe build.
FILE=$1 THREADS=$2 CONNS=$3 ROUNDS=$4
shift 4
T=${TACHYON:-/tmp/probe-target/release/tachyon}
NG=/root/.cache/tachyon-bench/peers/nginx-1.31.4/sbin/nginx
SITE=/tmp/large10/www
COMMON=(--threads 2 --loopback-congestion system --cache-dir off --listing --quiet)
declare -A PORT PIDS
port=38150
PIDLIST=()
for v in "$@"; do
  name=${v%%=*} envs=${v#*=}
  IFS=, read -r -a E <<< "$envs"
  env "${E[@]}" "$T" "$SITE" "${COMMON[@]}" --listen "127.0.0.1:$port" > /dev/null 2>&1 &
  PORT[$name]=$port PIDS[$name]=$!
  PIDLIST+=($!)
  port=$((port + 1))
done
sed "s/^\( *listen 127.0.0.1:\)[0-9]*/\1$port/" /tmp/large10/run/nginx-mainline-nginx-tuned.conf > /tmp/probe-nginx.conf
$NG -c /tmp/probe-nginx.conf -p /tmp > /dev/null 2>&1 &
N=$!
PIDLIST+=($N)
trap 'kill ${PIDLIST[*]}' EXIT
sleep 3
PORT[nginx-mainline]=$port PIDS[nginx-mainline]="$N $(pgrep -P $N | tr '\n' ' ')"
cpu() { for p in "$@"; do awk '{print $14+$15}' "/proc/$p/stat"; done | paste -sd+ | bc; }
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
names=()
for v in "$@"; do names+=("${v%%=*}"); done
names+=(nginx-mainline)
echo "round server responses server_us client_us machine_us pure_acks"
for round in $(seq 1 "$ROUNDS"); do
  for name in "${names[@]}"; do
    # shellcheck disable=SC2086
    c0=$(cpu ${PIDS[$name]}); b0=$(busy); nstat -n
    out=$( { /usr/bin/time -f "CLIENT %U %S" wrk -t"$THREADS" -c"$CONNS" -d5s "http://127.0.0.1:${PORT[$name]}/$FILE"; } 2>&1)
    # shellcheck disable=SC2086
    c1=$(cpu ${PIDS[$name]}); b1=$(busy)
    n=$(awk '/requests in/{print $1}' <<< "$out")
    read -r cu cs < <(awk '/^CLIENT/{print $2, $3}' <<< "$out")
    acks=$(nstat TcpExtTCPPureAcks | awk '/PureAcks/{print $2}')
    python3 -c "print($round, '$name', $n, round(($c1-$c0)*1e4/$n,1), round(($cu+$cs)*1e6/$n,1), round(($b1-$b0)*1e4/$n,1), round(${acks:-0}/$n,1))"
  done
done
