# usr.py RUNDIR: per cell, median user µs / request and sys µs / request per server; ratio of CPU per req
import json,statistics,sys,collections
d=json.load(open(sys.argv[1]+'/results.json'))
cells=collections.defaultdict(lambda: collections.defaultdict(list))
for r in d['rows']:
    if not r['ok'] or not r['requests']: continue
    n=r['requests']
    cells[r['cell']][r['server']].append((r['server_usr_s']*1e6/n, r['server_sys_s']*1e6/n))
servers=sorted({s for c in cells.values() for s in c})
print('cell'.ljust(16), ' '.join(f'{s[:12]:>20}' for s in servers), '  new/base cpu')
rat=[];ur=[]
for cell,by in cells.items():
    row=[]
    med={}
    for s in servers:
        v=by.get(s,[])
        u=statistics.median(x[0] for x in v); y=statistics.median(x[1] for x in v)
        tot=statistics.median(x[0]+x[1] for x in v)
        med[s]=(u,y,tot)
        row.append(f'{u:5.2f}u {y:5.2f}s {tot:5.2f}')
    r=med['tachyon'][2]/med['tachyon-baseline'][2] if 'tachyon-baseline' in med else 0
    rat.append(r); ur.append(med['tachyon'][0]-med['tachyon-baseline'][0])
    print(cell.ljust(16),' '.join(f'{x:>20}' for x in row), f'  {r:.3f}')
print('median new/base total CPU per request', statistics.median(rat), 'median user µs diff', statistics.median(ur))
