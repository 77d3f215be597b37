import json,sys,statistics as st
from collections import defaultdict
r=json.load(open(sys.argv[1]))
servers=sys.argv[2].split(',')
d=defaultdict(lambda: defaultdict(list))
for x in r['rows']:
    if not x['ok'] or not x['requests']: continue
    us=(x['server_usr_s']+x['server_sys_s'])*1e6/x['requests']
    cl=x['client_cpu_s']*1e6/x['requests'] if x.get('client_cpu_s') else 0
    kb=(x['bytes_read'] or 0)/x['requests']
    d[x['cell']][x['server']].append((x['rps'],us,cl,kb))
print("| cell | " + " | ".join(f"{s} req/s, µs/req, client µs/req, bytes/resp" for s in servers)+" |")
for cell,v in d.items():
    cols=[]
    for s in servers:
        if s not in v: cols.append('–'); continue
        a=v[s]; m=lambda i: st.median([t[i] for t in a])
        cols.append(f"{m(0)/1000:.1f}k, {m(1):.2f}, {m(2):.2f}, {m(3):.0f}")
    print(f"| {cell} | "+" | ".join(cols)+" |")
