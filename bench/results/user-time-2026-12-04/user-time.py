"""user-time.py RUNDIR: per cell, median user and system µs of server CPU per
request for each server, and tachyon's total CPU per request over the
baseline's (tachyon-baseline) and over the best peer's."""
import collections
import json
import statistics
import sys

d = json.load(open(sys.argv[1] + "/results.json"))
cells = collections.defaultdict(lambda: collections.defaultdict(list))
for r in d["rows"]:
    # Rows without a rate (a footprint cell's held connections) have no
    # CPU per request.
    if not r["ok"] or not r["requests"] or not r["rps"]:
        continue
    n = r["requests"]
    cells[r["cell"]][r["server"]].append((r["server_usr_s"] * 1e6 / n, r["server_sys_s"] * 1e6 / n))
servers = sorted({s for c in cells.values() for s in c})
ours = {"tachyon", "tachyon-baseline", "floor"}
print("cell".ljust(40), " ".join(f"{s[:16]:>20}" for s in servers), " ÷base  ÷best peer")
vs_base, vs_peer, user_diff = [], [], []
for cell, by in cells.items():
    med = {}
    for s, v in by.items():
        med[s] = (
            statistics.median(x[0] for x in v),
            statistics.median(x[1] for x in v),
            statistics.median(x[0] + x[1] for x in v),
        )
    row = " ".join(
        f"{med[s][0]:6.2f}u {med[s][1]:6.2f}s" if s in med else " " * 20 for s in servers
    )
    base = med["tachyon"][2] / med["tachyon-baseline"][2] if "tachyon-baseline" in med else float("nan")
    peers = [m[2] for s, m in med.items() if s not in ours]
    peer = med["tachyon"][2] / min(peers) if peers else float("nan")
    vs_base.append(base)
    vs_peer.append(peer)
    if "tachyon-baseline" in med:
        user_diff.append(med["tachyon"][0] - med["tachyon-baseline"][0])
    print(cell[:40].ljust(40), row, f" {base:5.3f}  {peer:5.3f}")
print("median CPU per request ÷ baseline", round(statistics.median(vs_base), 3),
      "÷ best peer", round(statistics.median(vs_peer), 3),
      "user µs − baseline", round(statistics.median(user_diff), 3) if user_diff else "-")
