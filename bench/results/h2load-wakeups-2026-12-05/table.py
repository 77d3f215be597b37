#!/usr/bin/env python3
"""Medians of wakeups.sh's output folder: per 200,000 requests, h2load's
and the server's CPU, the server's context switches, CPU 0's idle entries
and wake-up IPIs, and h2load's rate."""
import re, statistics, sys
from pathlib import Path

def csv(path):
    out = {}
    for line in Path(path).read_text().splitlines():
        if not line or line.startswith('#'):
            continue
        f = line.split(',')
        if f[0].startswith('CPU'):  # -A: CPU, value, unit, event
            out[(f[0], f[3])] = float(f[1])
        else:
            out[f[2]] = float(f[0])
    return out

out = Path(sys.argv[1])
print('| server | req/s (h2load) | h2load CPU ms | server CPU ms | server context switches | CPU 0 idle entries | CPU 0 call-function IPIs | CPU 0 reschedule IPIs |')
print('|---|---|---|---|---|---|---|---|')
for server in ['tachyon', 'h2o']:
    rows = []
    for r in sorted(out.glob(f'{server}-r*.h2load.txt')):
        base = str(r)[:-len('.h2load.txt')]
        rate = float(re.search(r'finished in [\d.]+m?s, ([\d.]+) req/s', r.read_text()).group(1))
        client, server_, system = csv(base + '.client.csv'), csv(base + '.server.csv'), csv(base + '.system.csv')
        rows.append([rate / 1000, client['task-clock'], server_['task-clock'], server_['context-switches'],
                     system[('CPU0', 'power:cpu_idle')],
                     system[('CPU0', 'irq_vectors:call_function_single_entry')],
                     system[('CPU0', 'irq_vectors:reschedule_entry')]])
    med = [statistics.median(c) for c in zip(*rows)]
    cells = [f'{med[0]:.1f}k'] + [f'{v:.0f}' for v in med[1:]]
    print(f'| {server} ({len(rows)} runs) | ' + ' | '.join(cells) + ' |')
