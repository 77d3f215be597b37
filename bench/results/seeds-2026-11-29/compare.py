#!/usr/bin/env python3
"""compare.py NEW_DIR OLD_DIR SUITE...: one row per cell, tachyon ÷ the best peer
(raw req/s and requests per server CPU-second, medians of the rounds) in the new
run against the same cell of the old one, and ÷ the floor per CPU-second.
Peers are every server but tachyon and the floor; cells below issue 43's goals
(raw ≥ 1.0×, per CPU ≥ 1.2×) are in italics."""
import json, sys, statistics as st
from collections import defaultdict


def medians(path):
    rows = [r for r in json.load(open(path))['rows'] if r.get('ok') and not r.get('idle_conns_held')]
    per, raw, order = defaultdict(lambda: defaultdict(list)), defaultdict(lambda: defaultdict(list)), []
    for r in rows:
        cpu = r['server_usr_s'] + r['server_sys_s']
        if not r['requests'] or cpu <= 0:
            continue
        if r['cell'] not in order:
            order.append(r['cell'])
        per[r['cell']][r['server']].append(r['requests'] / cpu)
        raw[r['cell']][r['server']].append(r['rps'])
    med = lambda d: {c: {s: st.median(v) for s, v in m.items()} for c, m in d.items()}
    return order, med(per), med(raw)


def ratios(per, raw, cell):
    p, r = per[cell], raw[cell]
    peers = [s for s in p if s not in ('tachyon', 'floor')]
    bp, br = max(peers, key=p.get), max(peers, key=r.get)
    floor = p['tachyon'] / p['floor'] if 'floor' in p else None
    return (r['tachyon'] / r[br], br), (p['tachyon'] / p[bp], bp), floor


def fmt(x, goal, name=None):
    # Three decimals where two would hide which side of the goal it is.
    d = 3 if (round(x, 2) >= goal) != (x >= goal) else 2
    s = f"{x:.{d}f}×" + (f" {name}" if name else "")
    return f"*{s}*" if x < goal else s


new_dir, old_dir, suites = sys.argv[1], sys.argv[2], sys.argv[3:]
print("| suite | cell | raw × best peer | per CPU × best peer | per CPU × floor | old host: raw, per CPU |")
print("|---|---|---|---|---|---|")
for suite in suites:
    order, per, raw = medians(f"{new_dir}/{suite}/results.json")
    _, oper, oraw = medians(f"{old_dir}/{suite}/results.json")
    for cell in order:
        (rr, rn), (pr, pn), fl = ratios(per, raw, cell)
        old = "–"
        if cell in oper:
            (orr, _), (opr, _), _ = ratios(oper, oraw, cell)
            old = f"{fmt(orr, 1.0)}, {fmt(opr, 1.2)}"
        fls = f"{fl:.2f}×" if fl else "–"
        print(f"| {suite} | {cell} | {fmt(rr, 1.0, rn)} | {fmt(pr, 1.2, pn)} | {fls} | {old} |")
