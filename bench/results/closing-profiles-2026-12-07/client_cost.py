# Median µs of client and server CPU a request, tachyon against a peer, from
# the full run's results; args: "folder|cell|peer" ...
import json, os, statistics, sys
base = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../full-2026-12-07/')
cases = [l.split('|') for l in sys.argv[1:]]
for folder, cell, peer in cases:
    d = json.load(open(base + folder + '/results.json'))
    out = []
    for srv in ('tachyon', peer):
        rs = [r for r in d['rows'] if r['cell'] == cell and r['server'] == srv and r['ok']]
        n = lambda r: r['requests'] or r['rps'] * r['duration_s']
        cl = statistics.median(r['client_cpu_s'] / n(r) * 1e6 for r in rs)
        sv = statistics.median((r['server_usr_s'] + r['server_sys_s']) / n(r) * 1e6 for r in rs)
        rps = statistics.median(r['rps'] for r in rs)
        out.append(f"{srv} {rps:,.0f} req/s client {cl:.2f} µs server {sv:.2f} µs")
    print(f"{folder} | {cell}: " + " ; ".join(out))
