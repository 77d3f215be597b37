#!/bin/bash
# usage: ab.sh ROUNDS PORT... ; interleaved cell runs, one line each
R=$1; shift
for r in $(seq 1 $R); do for p in "$@"; do
  pids=$(ss -ltnp "sport = :$p" | grep -oP 'pid=\K[0-9]+' | sort -u)
  [ "$p" = 9102 ] && pids=$(pgrep -f "lighttpd -D -f lighttpd.conf" | tr '\n' ' ')
  echo "r$r $p $(./cell.sh $p $pids)"
done; done
