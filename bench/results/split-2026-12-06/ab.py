import json,sys,statistics as st
d=json.load(open(sys.argv[1]))
cand=sys.argv[2] if len(sys.argv)>2 else 'tachyon-baseline'
ref=sys.argv[3] if len(sys.argv)>3 else 'tachyon'
cells={}
for r in d['rows']:
    if not r['ok']: continue
    us=(r['server_usr_s']+r['server_sys_s'])*1e6/max(r['requests'],1)
    cells.setdefault(r['cell'],{}).setdefault(r['server'],[]).append((r['rps'],us,r['client_cpu_s']/r['duration_s']*100))
print(f"{'cell':34} {ref+' req/s':>14} {cand+' req/s':>14} {'raw x':>6} {ref+' us':>10} {cand+' us':>10} {'cpu x':>6}")
for c,s in cells.items():
    if ref not in s or cand not in s: continue
    a=[st.median(x) for x in zip(*s[ref])]; b=[st.median(x) for x in zip(*s[cand])]
    print(f"{c:34} {a[0]/1e3:13.1f}k {b[0]/1e3:13.1f}k {b[0]/a[0]:6.2f} {a[1]:10.2f} {b[1]:10.2f} {a[1]/b[1]:6.2f}")
