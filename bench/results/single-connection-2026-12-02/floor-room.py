#!/usr/bin/env python3
"""Reads `tachyon-bench cells` output on stdin and lists the cells short of
issue 43's per-CPU goal (1.2x the best peer; a single connection's cell:
0.95x the floor) with how far the floor itself is above the best peer: where
floor / best peer is under 1.2x, the goal asks tachyon to cost less than a
server that parses nothing."""
import re
import sys


def ratio(text):
    m = re.search(r"([0-9.]+)×", text)
    return float(m.group(1)) if m else None


print("| suite | cell | tachyon ÷ best peer | tachyon ÷ floor | floor ÷ best peer | kind |")
print("|---|---|---|---|---|---|")
total = short = 0
kinds = {}
for line in sys.stdin:
    if not line.startswith("| ") or line.startswith("| suite"):
        continue
    suite, cell, _raw, per_cpu, floor = [c.strip() for c in line.strip().strip("|").split("|")][:5]
    p, f = ratio(per_cpu), ratio(floor)
    if p is None or f is None:
        continue
    total += 1
    single = any(w in ("c1", "u1") for w in cell.split())
    if (f >= 0.95) if single else (p >= 1.2):
        continue
    short += 1
    ceiling = p / f
    if single:
        kind = "one connection"
    elif f > 1.1:
        # The floor writes from memory where tachyon splices large
        # bodies, and serves identity where it compresses: no ceiling.
        kind = "floor no ceiling"
    elif ceiling < 1.2:
        kind = "floor under 1.2×"
    else:
        kind = "room to the floor"
    kinds[kind] = kinds.get(kind, 0) + 1
    print(f"| {suite} | {cell} | {p:.2f}× | {f:.2f}× | {ceiling:.2f}× | {kind} |")
print(f"\n{short} of {total} cells with a floor figure short: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
