#!/bin/sh
# The same build with placement off: TACHYON_BASELINE=noaff.sh (edit the path).
exec /tmp/cand/bin6/tachyon --no-cpu-affinity "$@"
