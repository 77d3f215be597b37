import json,sys,statistics as st
for d in sys.argv[1:]:
    j=json.load(open(d+'/results.json'))
    cells={}
    for r in j['rows']:
        if not r['ok'] and not any(p.startswith('check:') for p in r['problems']): continue
        cpu=r['server_usr_s']+r['server_sys_s']
        cells.setdefault(r['cell'],{}).setdefault(r['server'],[]).append((r['rps'],r['requests']/cpu if cpu else 0,r['client_cpu_s']/max(r['requests'],1)*1e6, cpu/r['requests']*1e6))
    for c,sv in cells.items():
        print(d.split('/')[-1],c)
        for s,v in sv.items():
            print(f"  {s:18} raw {st.median(x[0] for x in v):9.0f}  perCPU {st.median(x[1] for x in v):9.0f}  srv us/req {st.median(x[3] for x in v):5.2f} cli us/req {st.median(x[2] for x in v):5.2f}  n={len(v)}")
