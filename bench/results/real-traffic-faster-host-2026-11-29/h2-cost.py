# tachyon's µs of server CPU per request, HTTP/2 ÷ HTTP/1.1 on the same traffic (medians of rounds)
# usage: python3 h2-cost.py H1_RESULTS.json H2_RESULTS.json
import json,sys,statistics as st
def costs(path):
    out={}
    for r in json.load(open(path))['rows']:
        if r['server']!='tachyon' or not r['ok'] or not r['requests']: continue
        out.setdefault(r['cell'],[]).append((r['server_usr_s']+r['server_sys_s'])*1e6/r['requests'])
    return {k:st.median(v) for k,v in out.items()}
h1=costs(sys.argv[1]); h2=costs(sys.argv[2])
def key(c): return c.replace(' h2 c32 m10',' h1 c32').replace(' h2 c8 m32',' h1 c8')
for c,v in h2.items():
    if ' h2 ' in c and key(c) in h1:
        print(f"{c:40s} h2 {v:6.1f} µs  h1 {h1[key(c)]:6.1f} µs  ratio {v/h1[key(c)]:.2f}")
