import json,collections,statistics as st,sys
d=json.load(open(sys.argv[1]))
by=collections.defaultdict(lambda: collections.defaultdict(list))
order=[]
for r in d['rows']:
    if not r['ok']: continue
    key=(r['suite'],r['cell'])
    if key not in order: order.append(key)
    cpu=(r['server_usr_s'] or 0)+(r['server_sys_s'] or 0)
    by[key][r['server']].append((r['rps'], r['requests']/cpu if cpu else 0))
peer=any('lighttpd' in v for v in by.values())
if peer:
    print("| cell | tachyon raw | baseline raw | lighttpd raw | tachyon /CPU-s | baseline /CPU-s | lighttpd /CPU-s | raw ÷ base | /CPU ÷ base | /CPU ÷ lighttpd |")
    print("|---|---|---|---|---|---|---|---|---|---|")
else:
    print("| cell | tachyon raw | baseline raw | tachyon /CPU-s | baseline /CPU-s | raw ÷ base | /CPU ÷ base |")
    print("|---|---|---|---|---|---|---|")
for k in order:
    v=by[k]
    med=lambda s,i: st.median([x[i] for x in v.get(s,[(0,0)])])
    t,b,l=[med(s,0) for s in ('tachyon','tachyon-baseline','lighttpd')]
    tc,bc,lc=[med(s,1) for s in ('tachyon','tachyon-baseline','lighttpd')]
    f=lambda x: f"{x/1000:.1f}k" if x>=1000 else f"{x:.0f}"
    r=lambda a,b: f"{a/b:.2f}×" if b else "–"
    if peer:
        print(f"| {k[0]} {k[1]} | {f(t)} | {f(b)} | {f(l)} | {f(tc)} | {f(bc)} | {f(lc)} | {r(t,b)} | {r(tc,bc)} | {r(tc,lc)} |")
    else:
        print(f"| {k[0]} {k[1]} | {f(t)} | {f(b)} | {f(tc)} | {f(bc)} | {r(t,b)} | {r(tc,bc)} |")
