#!/bin/bash
# new and old, alternating, same site (generated deterministically)
for r in 1 2; do
  rm -rf /tmp/bnew /tmp/bold
  /work/main/target/release/tachyon-bench build --rounds 1 --out /tmp/bnew > /tmp/bcmp-new-$r.txt 2>&1
  /tmp/oldbin/tachyon-bench build --rounds 1 --out /tmp/bold > /tmp/bcmp-old-$r.txt 2>&1
done
echo finished > /tmp/bcmp-done
