#!/usr/bin/env python3
"""tachyon against tachyon-baseline in one run: medians over rounds of
user, system and total server CPU µs per request, and the ratios.

    python3 usr.py RUN_DIR
"""
import json
import statistics as st
import sys
from collections import defaultdict

run = json.load(open(sys.argv[1] + "/results.json"))
cells = defaultdict(lambda: defaultdict(list))
for r in run["rows"]:
    if not r["ok"] or not r["requests"] or not r["rps"] or not r["server"].startswith("tachyon"):
        continue
    n = r["requests"]
    usr, sys_ = r["server_usr_s"] / n * 1e6, r["server_sys_s"] / n * 1e6
    cells[r["cell"]][r["server"]].append((usr, sys_, usr + sys_, r["rps"]))
print("| cell | user µs after / before | system µs | CPU µs | CPU ratio | raw ratio |")
print("|---|---|---|---|---|---|")
for cell, by in cells.items():
    a, b = by["tachyon"], by["tachyon-baseline"]
    m = lambda rows, i: st.median(x[i] for x in rows)
    print("| %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f | %.2f |" % (
        cell, m(a, 0), m(b, 0), m(a, 1), m(b, 1), m(a, 2), m(b, 2),
        m(a, 2) / m(b, 2), m(a, 3) / m(b, 3)))
